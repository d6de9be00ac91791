//! The built-in reference systems, named: which of the two reference
//! proxies a system is. The proxies themselves live in `cb-proxy`; the name
//! sits here so that the client, the driver and every report can say which
//! built-in system answered without depending on the proxy's code.

use serde::{Deserialize, Serialize};

/// What the fallback receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProxyMode {
    /// System prompt (if any) and the last user message only.
    Stateless,
    /// The full `messages` array.
    History,
}

impl ProxyMode {
    /// Both modes, in the order the built-in systems run.
    pub const ALL: [ProxyMode; 2] = [ProxyMode::Stateless, ProxyMode::History];

    /// The name used on the command line and in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Stateless => "stateless",
            ProxyMode::History => "history",
        }
    }
}
