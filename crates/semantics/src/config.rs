//! The semantics suite's configuration, validated from `semantics`'s flags
//! by the command line.

use crate::timing::{GiveUpBounds, Timing};
use cb_driver::SystemsConfig;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// A validated `semantics` configuration.
#[derive(Debug, Clone)]
pub struct SemanticsConfig {
    /// Master seed.
    pub seed: u64,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Deadline of every check request.
    pub request_timeout: Duration,
    /// The systems under test.
    pub systems: SystemsConfig,
    /// Whether every case is sent as a streamed request.
    pub stream: bool,
    /// Whose reading of a stream decides whether it is an answer.
    pub client: cb_wire::sse::ClientProfile,
    /// How long to wait before re-sending a case that skipped the primary.
    pub cooldown_wait: Duration,
    /// Where to write the results as JSON, if anywhere.
    pub json: Option<PathBuf>,
    /// The answer contracts every answer is checked against.
    pub contracts: std::sync::Arc<cb_contracts::Contracts>,
    /// The times of the catalogue (`--fast` or the full profile).
    pub timing: Timing,
    /// What a total failure may cost (`both-fail`).
    pub give_up: GiveUpBounds,
    /// The ids of the cases to run (`--cases`); `None`: every case.
    pub cases: Option<Vec<String>>,
    /// Requests of the load phase sent at once (`--load`); `None`: no
    /// load phase.
    pub load: Option<u32>,
    /// Which upstreams the load phase rate-limits (`--load-fault`).
    pub load_fault: LoadFault,
    /// The directory the JSON, the Markdown scorecard and the chart go to
    /// (`--out`), claimed: it exists and holds nothing else.
    pub out: Option<PathBuf>,
}

/// Which upstreams the phase rate-limits (`--load-fault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LoadFault {
    /// The primary answers 429 to every attempt, the fallback answers: what
    /// a gateway's own retries and its failover cost.
    #[default]
    PrimaryLimited,
    /// Both answer 429 to every attempt: every request ends in an error,
    /// so every layer in front of the upstreams (an SDK's retries over a
    /// gateway's retries over its fallbacks) spends all it has, and the
    /// attempts per request are the layers' product.
    AllLimited,
}

impl LoadFault {
    /// Every fault, in the order `--help` lists them.
    pub const ALL: [LoadFault; 2] = [LoadFault::PrimaryLimited, LoadFault::AllLimited];

    /// The name `--load-fault` takes and the JSON writes.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadFault::PrimaryLimited => "primary-limited",
            LoadFault::AllLimited => "all-limited",
        }
    }

    /// What the upstreams do, in words, with the primary's `Retry-After`.
    pub fn describe(self, retry_after: Duration) -> String {
        let wait = retry_after.as_secs_f64();
        match self {
            LoadFault::PrimaryLimited => format!(
                "the primary answers 429 with Retry-After {wait:.1} s to every attempt and the fallback answers"
            ),
            LoadFault::AllLimited => format!(
                "the primary and the fallback answer 429 with Retry-After {wait:.1} s to every attempt (every layer's retries spent)"
            ),
        }
    }
}

impl std::str::FromStr for LoadFault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoadFault::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown load fault `{s}`: use {}",
                    LoadFault::ALL.map(LoadFault::as_str).join(" or ")
                )
            })
    }
}
