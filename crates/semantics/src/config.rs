//! The semantics suite's configuration, validated from `semantics`'s flags
//! by the command line.

use crate::timing::{GiveUpBounds, Timing};
use cb_driver::SystemsConfig;
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
    pub load_fault: crate::load::LoadFault,
    /// The directory the JSON, the Markdown scorecard and the chart go to
    /// (`--out`), claimed: it exists and holds nothing else.
    pub out: Option<PathBuf>,
}
