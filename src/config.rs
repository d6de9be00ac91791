//! The validated, typed configuration of a run. clap types stop at the
//! command-line boundary; everything past it works on these. The resolved
//! configuration is written as `config.json` in every report and read back by
//! `report DIR`.

use serde::{Deserialize, Serialize};

/// The resolved configuration of a run, as written to `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedConfig {
    /// Tool name.
    pub tool: String,
    /// Tool version.
    pub version: String,
    /// Master seed.
    pub seed: u64,
    /// Number of runs.
    pub runs: u32,
    /// Conversations in flight at once.
    pub concurrency: usize,
    /// Dataset file.
    pub dataset: String,
    /// Conversations in the dataset.
    pub conversations: u32,
    /// Fault profile file.
    pub fault_profile: String,
    /// Latency model of the simulated upstreams.
    pub latency: String,
    /// `live` or `fast_forward`.
    pub replay: String,
    /// Per-attempt timeout of the built-in proxies, milliseconds.
    pub attempt_timeout_ms: u64,
    /// Deadline of every driver request, milliseconds.
    pub request_timeout_ms: u64,
    /// Systems under test, in order.
    pub systems: Vec<String>,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// Percentile method.
    pub percentile_method: String,
    /// Bootstrap resamples of the clustered interval.
    pub bootstrap_resamples: u32,
}
