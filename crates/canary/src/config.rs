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

pub use cb_base::url::display_url;

/// The password (or lone user) of `url`'s credentials, if it has some.
pub fn url_credentials(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (userinfo, _) = rest[..end].rsplit_once('@')?;
    let secret = userinfo.split_once(':').map_or(userinfo, |(_, p)| p);
    (!secret.is_empty()).then(|| secret.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_a_url_are_redacted_and_found() {
        let url = "https://bob:hunter2-secret@api.example.com/v1?x=1";
        assert_eq!(
            display_url(url),
            "https://[redacted]@api.example.com/v1?x=1"
        );
        assert_eq!(
            display_url("https://h/v1?api_key=sk-1"),
            "https://h/v1?api_key=[redacted]"
        );
        assert_eq!(url_credentials(url).as_deref(), Some("hunter2-secret"));
        assert_eq!(display_url("http://h:1/a@b"), "http://h:1/a@b");
        assert_eq!(url_credentials("http://h:1/a@b"), None);
        assert_eq!(
            url_credentials("https://token@h/").as_deref(),
            Some("token")
        );
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
    /// Copies of each probe per route and round (`--repeats`).
    pub repeats: crate::probe::Repeats,
    /// Largest reply read.
    pub max_response_bytes: u64,
    /// The language rotation (`--languages`; empty: the built-in one).
    pub languages: Vec<crate::language::Language>,
    /// The probe set (`--probes FILE`, else the built-in one).
    pub probes: crate::probe::ProbeSet,
    /// `--notify`: a shell command run with each event on its stdin.
    pub notify: Option<String>,
    /// `--webhook`: a URL each event is POSTed to.
    pub webhook: Option<String>,
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
