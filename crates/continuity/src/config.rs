//! The continuity suite's configuration, validated from `run`'s flags by
//! the command line, and the resolved form written to `config.json` in
//! every report and read back by `report DIR`.

use cb_base::source::Source;
use cb_driver::Shard;
use cb_driver::{Replay, SystemsConfig};
use cb_report::dir::OutDir;
use cb_stats::CONFIDENCE;
use cb_upstream::provider::{Providers, ResolvedProviders};
use cb_upstream::LatencyProfile;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Bootstrap resamples of the clustered CPR interval.
pub const BOOTSTRAP_RESAMPLES: u32 = 2000;

/// The file judge verdicts are cached in when `--judge-cache` is not given,
/// in the directory above the report (`reports/` by default).
pub const DEFAULT_JUDGE_CACHE_NAME: &str = "judge-cache.jsonl";

/// Default `--attempt-timeout` with a provider: a real model takes seconds
/// to answer, and the upstream's provider deadline is the same.
pub const PROVIDER_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(20);

/// A validated `run` configuration.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Master seed.
    pub seed: u64,
    /// Number of runs, at least 1.
    pub runs: u32,
    /// Conversations in flight at once, at least 1.
    pub concurrency: usize,
    /// `--max-in-flight`: most requests in flight at once, when given.
    pub max_in_flight: Option<usize>,
    /// The dataset: a file or the built-in copy.
    pub dataset: Source,
    /// The fault profile: a file or a built-in copy.
    pub faults: Source,
    /// Latency profile of the simulated upstreams.
    pub latency: LatencyProfile,
    /// Replay mode.
    pub replay: Replay,
    /// Whether the driver asks for streamed answers.
    pub stream: bool,
    /// Whose reading of a stream decides whether it is an answer.
    pub client: cb_client::sse::ClientProfile,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Deadline of every driver request.
    pub request_timeout: Duration,
    /// Where the report goes.
    pub out: OutDir,
    /// No progress bar.
    pub quiet: bool,
    /// Minimum CPR (percent) of `fail_system`.
    pub fail_under_cpr: Option<f64>,
    /// The system checked by `fail_under_cpr` (set whenever it is).
    pub fail_system: Option<String>,
    /// The systems under test.
    pub systems: SystemsConfig,
    /// The LLM judge for what the fast path leaves undetermined, if any.
    pub judge: Option<cb_scoring::judge::JudgeConfig>,
    /// The answer contracts every answer is checked against.
    pub contracts: std::sync::Arc<cb_contracts::Contracts>,
    /// The real providers behind the upstreams (pass-through), if any; the
    /// simulated model answers otherwise.
    pub providers: Option<Providers>,
    /// Above this many estimated tokens a run against a provider that is
    /// not on this machine needs `yes`.
    pub cost_limit_tokens: u64,
    /// `--yes`: start even above `cost_limit_tokens`.
    pub yes: bool,
    /// `--shard K/N`: the conversations this process replays
    /// ([`Shard::WHOLE`]: every one).
    pub shard: Shard,
    /// Which signal stopped the run, once one did (the command's handler
    /// sets it): the report names it.
    pub stopped: cb_base::stop::Stopped,
}

impl RunConfig {
    /// The configuration as written to `config.json`.
    pub fn resolved(&self, conversations: u32, systems: Vec<String>) -> ResolvedConfig {
        ResolvedConfig {
            tool: cb_base::TOOL.to_string(),
            version: cb_base::VERSION.to_string(),
            seed: self.seed,
            runs: self.runs,
            concurrency: self.concurrency,
            dataset: self.dataset.label(),
            conversations,
            fault_profile: self.faults.label(),
            latency: self.latency.name().to_string(),
            replay: self.replay.as_str().to_string(),
            stream: self.stream,
            client: self.client,
            api: self.systems.api,
            attempt_timeout_ms: self.attempt_timeout.as_millis() as u64,
            request_timeout_ms: self.request_timeout.as_millis() as u64,
            max_response_bytes: self.systems.max_response_bytes,
            fallback_dialect: self.systems.fallback_dialect,
            systems,
            judge: self
                .judge
                .as_ref()
                .map(cb_scoring::judge::JudgeConfig::describe),
            interrupted: false,
            interrupted_by: None,
            requests_in_flight: RequestsInFlight::default(),
            model: self.systems.model.clone(),
            gateways: self
                .systems
                .gateways
                .iter()
                .map(|g| ResolvedGateway {
                    name: g.name.clone(),
                    url: cb_base::url::display_url(&g.url),
                    primary_port: g.primary_port,
                    fallback_port: g.fallback_port,
                    header_names: g.headers.iter().map(|(h, _)| h.clone()).collect(),
                    model: g.model.clone(),
                })
                .collect(),
            confidence: CONFIDENCE,
            percentile_method: cb_stats::PERCENTILE_METHOD.to_string(),
            bootstrap_resamples: BOOTSTRAP_RESAMPLES,
            providers: self.providers.as_ref().map(Providers::resolved),
            shard: (!self.shard.is_whole()).then_some(self.shard),
            dataset_sha256: None,
            fault_profile_sha256: None,
            merged_from: Vec::new(),
        }
    }
}

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
    /// Whether the driver asked for streamed answers.
    #[serde(default)]
    pub stream: bool,
    /// Whose reading of a stream decided whether it was an answer
    /// (`strict` in a report written before the driver read streams as
    /// the user's client does).
    #[serde(default = "strict_reader")]
    pub client: cb_client::sse::ClientProfile,
    /// The API the driver spoke (`chat` in a report written before it).
    #[serde(default)]
    pub api: cb_client::Api,
    /// Per-attempt timeout of the built-in proxies, milliseconds.
    pub attempt_timeout_ms: u64,
    /// Deadline of every driver request, milliseconds.
    pub request_timeout_ms: u64,
    /// Largest response body the driver reads, bytes.
    #[serde(default)]
    pub max_response_bytes: u64,
    /// The dialect the built-in systems' fallback spoke.
    #[serde(default)]
    pub fallback_dialect: cb_dialect::Dialect,
    /// Systems under test, in order.
    pub systems: Vec<String>,
    /// The LLM judge (endpoint, model, prompt version; never a key), if any.
    #[serde(default)]
    pub judge: Option<String>,
    /// Whether Ctrl-C or SIGTERM cut the run short (the figures cover what
    /// finished).
    #[serde(default)]
    pub interrupted: bool,
    /// Which signal cut it short, when one did (`sigint` or `sigterm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<cb_base::stop::Stop>,
    /// How many requests could be in flight at once (see
    /// [`cb_driver::gate`]).
    #[serde(default)]
    pub requests_in_flight: RequestsInFlight,
    /// The model id the driver asked for.
    pub model: String,
    /// External gateways (header values are never written, only names).
    pub gateways: Vec<ResolvedGateway>,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// Percentile method.
    pub percentile_method: String,
    /// Bootstrap resamples of the clustered interval.
    pub bootstrap_resamples: u32,
    /// The real providers behind the upstreams (URL without key or query,
    /// model id, the key's variable name), when the run used pass-through;
    /// absent when the simulated model answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<ResolvedProviders>,
    /// The share of the conversations this report covers, for a run made
    /// with `--shard K/N` (every N-th conversation by index, from K);
    /// absent for a whole run and for a merged report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// SHA-256 of the dataset's bytes: `report merge` refuses shards of
    /// different datasets, wherever each machine kept its copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_sha256: Option<String>,
    /// SHA-256 of the fault profile's bytes, for the same check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_profile_sha256: Option<String>,
    /// For a report made by `report merge`: the shards it joined, in shard
    /// order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedShard>,
}

/// One shard of a merged report, as `config.json` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedShard {
    /// Which shard.
    pub shard: Shard,
    /// The directory it was read from, as given to `report merge`.
    pub dir: String,
    /// Its `--concurrency`.
    pub concurrency: usize,
    /// Its room for requests in flight, and the peak it measured.
    pub requests_in_flight: RequestsInFlight,
}

/// The room for requests in flight, as recorded in `config.json`: the
/// open-file limit it was planned for, the cap it set (none when every
/// conversation could have its request in flight) and the peak measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestsInFlight {
    /// The process's open-file limit, raised to its maximum (`None`: the
    /// platform has none the harness reads).
    pub open_file_limit: Option<u64>,
    /// Most requests in flight the limits allowed (open files, memory,
    /// `--max-in-flight`), when fewer than `concurrency`.
    pub cap: Option<usize>,
    /// Which limit set the cap (`open files`, `memory`, `--max-in-flight`);
    /// `None` when nothing was capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<cb_driver::gate::Bound>,
    /// Most requests that were in flight at once.
    pub peak: Option<usize>,
}

/// An external gateway as recorded in `config.json`: no header values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedGateway {
    /// Its name.
    pub name: String,
    /// Its base URL.
    pub url: String,
    /// Port of its primary upstream.
    pub primary_port: u16,
    /// Port of its fallback upstream.
    pub fallback_port: u16,
    /// Names of the extra headers sent (values withheld).
    pub header_names: Vec<String>,
    /// The model id it was asked for instead of the run's
    /// (`--gateway-model`, a systems file's `model`); absent when none was
    /// given for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The client profile of a report written before `client` was recorded:
/// the driver then read every stream strictly.
fn strict_reader() -> cb_client::sse::ClientProfile {
    cb_client::sse::ClientProfile::Strict
}

#[cfg(test)]
mod tests {
    use cb_client::sse::ClientProfile;

    /// A report records whose reading of a stream it took; one written
    /// before the field existed read its streams strictly, and says so
    /// when it is read back.
    #[test]
    fn the_client_profile_is_recorded_and_an_older_report_reads_as_strict() {
        let config = crate::report::fixture::config();
        let mut json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["client"], "openai-sdk");
        let back: super::ResolvedConfig = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.client, ClientProfile::OpenAiSdk);
        json.as_object_mut().unwrap().remove("client");
        let older: super::ResolvedConfig = serde_json::from_value(json).unwrap();
        assert_eq!(older.client, ClientProfile::Strict);
    }
}
