//! The systems under test as the layers below the command line know them:
//! the built-in reference proxies and any external gateways with their
//! upstream ports and secret headers, the model ids the driver and the
//! built-in fallback use, and how conversations are replayed. The command
//! line validates its flags into these (`continuity-bench`'s `config`).

use cb_base::reference::ProxyMode;
use cb_base::secret::Secret;
use cb_client::SendOptions;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The model id the driver asks for.
pub const DRIVER_MODEL: &str = "continuity-sim";

/// The model id the built-in proxies map the fallback to.
pub const FALLBACK_MODEL: &str = "continuity-sim-fallback";

/// The systems under test, validated; shared by `run` and `semantics`.
#[derive(Debug, Clone)]
pub struct SystemsConfig {
    /// Whether the built-in stateless and history proxies run.
    pub builtin: bool,
    /// External gateways under test.
    pub gateways: Vec<GatewaySpec>,
    /// The model id every request asks for.
    pub model: String,
    /// How long to wait for a gateway's first answer.
    pub gateway_wait: Duration,
    /// Largest response body the driver reads from a system under test
    /// (`--max-response-bytes`); a larger one is an error.
    pub max_response_bytes: u64,
    /// The dialect the built-in systems' fallback speaks
    /// (`--fallback-dialect`).
    pub fallback_dialect: cb_dialect::Dialect,
    /// The API the driver speaks to every system (`--api`).
    pub api: cb_client::Api,
}

impl SystemsConfig {
    /// The names of the systems, in start order.
    pub fn names(&self) -> Vec<String> {
        let builtin = ProxyMode::ALL
            .iter()
            .filter(|_| self.builtin)
            .map(|m| m.as_str().to_string());
        builtin
            .chain(self.gateways.iter().map(|g| g.name.clone()))
            .collect()
    }

    /// How every exchange with these systems is bounded: `deadline` and the
    /// response size cap.
    pub fn send_options(&self, deadline: Duration) -> SendOptions {
        SendOptions {
            deadline,
            max_response_bytes: self.max_response_bytes,
        }
    }
}

/// An external gateway under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewaySpec {
    /// Its name in reports.
    pub name: String,
    /// Its base URL (without `/v1`).
    pub url: String,
    /// Port of its primary simulated upstream on 127.0.0.1.
    pub primary_port: u16,
    /// Port of its fallback simulated upstream on 127.0.0.1.
    pub fallback_port: u16,
    /// Extra request headers; values are secret.
    pub headers: Vec<(String, Secret)>,
    /// The model id it is asked for instead of the run's (`--gateway-model`).
    pub model: Option<String>,
}

/// Reads an environment variable; a seam so tests need not mutate the
/// process environment.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// How conversations are replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// Turn by turn, each request carrying the replies actually received.
    Live,
    /// Only the final turn, with the dataset's scripted history.
    FastForward,
}

impl Replay {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Replay::Live => "live",
            Replay::FastForward => "fast_forward",
        }
    }
}
