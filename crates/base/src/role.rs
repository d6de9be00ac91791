//! Which of a system's two simulated upstreams an attempt went to: the one
//! vocabulary the fault plan, the upstreams, the attempt log and the reports
//! share.

use serde::{Deserialize, Serialize};

/// Which of a system's two simulated upstreams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The provider the gateway calls first.
    Primary,
    /// The provider the gateway fails over to.
    Fallback,
}

impl Role {
    /// The snake_case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Fallback => "fallback",
        }
    }
}
