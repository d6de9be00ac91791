//! The canary's configuration, validated from `canary` and `canary
//! release`'s flags by the command line: the endpoint (the built-in
//! simulated one, or a real one with its key from the environment), the
//! model and routes, the clock, the quarantine policy, the input lists and
//! output files.

use crate::endpoint::SimConfig;
use crate::policy::Policy;
use cb_base::secret::Secret;
use cb_report::dir::OutDir;
use std::path::PathBuf;
use std::time::Duration;

/// The model `canary` probes by default.
pub const CANARY_MODEL: &str = "meta-llama/llama-3.3-70b-instruct";

/// Default probe deadline against a real endpoint: far above the 10 s ttft
/// limit, so that a slow first token is judged, not timed out.
pub const REMOTE_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Shortest default probe deadline offline.
pub const SIM_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the probes go.
#[derive(Debug, Clone)]
pub enum CanaryEndpoint {
    /// The built-in simulated endpoint, served on 127.0.0.1 for the run.
    Simulated(SimConfig),
    /// A real OpenRouter-compatible API.
    Remote {
        /// Base URL without a trailing slash (`https://openrouter.ai/api/v1`).
        url: String,
        /// The variable the key came from (named in errors).
        key_env: String,
        /// `Bearer <key>`, secret to the socket.
        authorization: Secret,
    },
}

impl CanaryEndpoint {
    /// Whether this is the simulated endpoint.
    pub fn is_simulated(&self) -> bool {
        matches!(self, CanaryEndpoint::Simulated(_))
    }
}

/// A validated `canary` run.
#[derive(Debug, Clone)]
pub struct CanaryConfig {
    /// Where the probes go.
    pub endpoint: CanaryEndpoint,
    /// The model probed (`author/slug`).
    pub model: String,
    /// `--routes`, when given (else the routes are discovered).
    pub routes: Option<Vec<String>>,
    /// Rounds to run; `None` runs until Ctrl-C.
    pub rounds: Option<u64>,
    /// Time between round starts (and the clock step under `no_wait`).
    pub interval: Duration,
    /// Rounds back to back on a simulated clock.
    pub no_wait: bool,
    /// The quarantine rules (mode, control, numbers).
    pub policy: Policy,
    /// The reviewed ignore list, read.
    pub reviewed: Vec<String>,
    /// Where the reviewed list came from (a path, or `built-in`).
    pub reviewed_source: String,
    /// The runtime ignore list, re-read every round.
    pub runtime: Option<PathBuf>,
    /// The report directory.
    pub out: OutDir,
    /// `--ignore-out` (default `ignore.json` in the report directory).
    pub ignore_out: Option<PathBuf>,
    /// `--log` (default `decisions.jsonl` in the report directory).
    pub log: Option<PathBuf>,
    /// `--state` (default `state.json` in the report directory).
    pub state: Option<PathBuf>,
    /// Master seed (of the simulated endpoint).
    pub seed: u64,
    /// The ttft contract's limit.
    pub ttft_limit: Duration,
    /// Deadline of one probe request.
    pub probe_timeout: Duration,
    /// Routes probed at once.
    pub concurrency: usize,
    /// Largest reply read.
    pub max_response_bytes: u64,
}

/// A validated `canary release`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryReleaseConfig {
    /// The route to release.
    pub route: String,
    /// The state file.
    pub state: PathBuf,
    /// The decision log to append to.
    pub log: Option<PathBuf>,
}
