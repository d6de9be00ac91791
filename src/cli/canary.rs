//! The flags of `canary` (the probe rounds) and `canary release ROUTE`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Arguments of `canary`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CanaryArgs {
    /// A manual action instead of probe rounds.
    #[command(subcommand)]
    pub action: Option<CanaryAction>,
    /// The probe rounds.
    #[command(flatten)]
    pub run: CanaryRunArgs,
}

/// Manual actions of `canary`.
#[derive(Debug, Subcommand)]
pub enum CanaryAction {
    /// Lift a route's quarantine by hand (its escalation history stays),
    /// log the release and rewrite the ignore list at once. With a canary
    /// running on the same state, the release is handed to it and takes
    /// effect at the end of its round in progress.
    Release(CanaryReleaseArgs),
    /// What the canary can and cannot catch: for each contract and
    /// incidence of its defect, the chance of a quarantine within 6 h, 24 h
    /// and 7 days, the time it takes, a healthy route's chance of a false
    /// quarantine, the probes it costs, and the budget (--repeats) that
    /// catches a target in time. Runs the canary's own quarantine rules on
    /// a paused clock against simulated routes; no network.
    Power(CanaryPowerArgs),
}

/// Reads `--repeats` (`4`, or `language=60,roleplay=2`).
fn repeats(text: &str) -> Result<crate::canary::probe::Repeats, String> {
    crate::canary::probe::Repeats::parse(text).map_err(|e| e.to_string())
}

/// Arguments of `canary power`.
#[derive(Debug, Clone, Args)]
pub struct CanaryPowerArgs {
    /// The incidences to figure, as shares from 0 to 1 of the replies (or,
    /// with --sticky, of the sessions) that carry the defect.
    #[arg(long, value_name = "P,P,...", value_delimiter = ',',
          default_values_t = crate::canary::power::DEFAULT_INCIDENCES.to_vec())]
    pub incidence: Vec<f64>,
    /// The contracts to figure (default: every contract the probes check).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub contracts: Vec<String>,
    /// The defect sticks to sessions: a degraded session degrades every
    /// reply in it. The probes draw a new session every copy and round.
    #[arg(long)]
    pub sticky: bool,
    /// Share (0 to 1) of probe requests lost to a transport error (429,
    /// 5xx, timeout): their contracts are frozen for the round.
    #[arg(long, value_name = "RATE", default_value_t = 0.0)]
    pub transient_rate: f64,
    /// Copies of each probe per round: a count for every probe (4) or per
    /// probe (language=60,roleplay=2; the others stay at 1).
    #[arg(long, value_name = "N|PROBE=N,...", default_value = "1", value_parser = repeats)]
    pub repeats: crate::canary::probe::Repeats,
    /// Time between the starts of two rounds.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    pub interval: std::time::Duration,
    /// Simulated trials per figure (the intervals narrow as its square root).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(100..=100_000))]
    pub trials: u64,
    /// Master seed of the trials.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// The budget question: quarantine a degraded route within this span ...
    #[arg(long, default_value = "24h", value_parser = humantime::parse_duration)]
    pub within: std::time::Duration,
    /// ... with at least this probability ...
    #[arg(long, default_value_t = 0.9)]
    pub confidence: f64,
    /// ... while a healthy route is falsely quarantined within 30 days with
    /// at most this probability.
    #[arg(long, value_name = "P", default_value_t = 0.01)]
    pub max_false: f64,
    /// Print the compact Markdown table the README quotes instead of the
    /// full text tables.
    #[arg(long)]
    pub markdown: bool,
}

/// Arguments of `canary release`.
#[derive(Debug, Args)]
pub struct CanaryReleaseArgs {
    /// The route to release, as the summary names it.
    pub route: String,
    /// The canary state file holding the quarantine.
    #[arg(long)]
    pub state: PathBuf,
    /// Append the release as a JSON line to this decision log.
    #[arg(long)]
    pub log: Option<PathBuf>,
}

/// Arguments of the `canary` probe rounds.
#[derive(Debug, Clone, Args)]
pub struct CanaryRunArgs {
    /// An OpenRouter-compatible API base URL, e.g.
    /// https://openrouter.ai/api/v1 (routes are listed from
    /// {URL}/models/{author}/{slug}/endpoints, probes go to
    /// {URL}/chat/completions). Without it, a built-in simulated endpoint
    /// with seeded routes is served on 127.0.0.1 and no key is needed.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Take the endpoint from this systems file (TOML, as `run --systems`):
    /// its one gateway's url is the endpoint, its `key_env` names the key's
    /// variable and its `model`, if set, the model. Replaces --endpoint and
    /// --key-env.
    #[arg(long = "systems", value_name = "FILE", conflicts_with_all = ["endpoint", "key_env"])]
    pub systems: Option<std::path::PathBuf>,
    /// The model whose routes are probed, as author/slug.
    #[arg(long, default_value = crate::canary::config::CANARY_MODEL)]
    pub model: String,
    /// Name of the environment variable holding the API key (sent as a
    /// Bearer token, never printed). Required with --endpoint.
    #[arg(long, value_name = "VAR", default_value = "OPENROUTER_API_KEY")]
    pub key_env: String,
    /// The routes to probe, comma-separated (endpoint tags or provider
    /// names), instead of listing them from the endpoint.
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    pub routes: Vec<String>,
    /// Rounds to run, then stop. Without it the canary runs until Ctrl-C.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rounds: Option<u64>,
    /// Time between the starts of two rounds, e.g. 30m or 1h.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    pub interval: std::time::Duration,
    /// Run rounds back to back, advancing the state machine's clock by
    /// --interval per round (from 2025-01-01T00:00:00Z, or from the state
    /// file's last round), so two weeks replay in seconds and a rerun
    /// decides the same. Without it the clock is the wall clock.
    #[arg(long)]
    pub no_wait: bool,
    /// Apply the decisions: active quarantines enter the ignore list. By
    /// default the canary only observes and logs what it would do.
    #[arg(long)]
    pub enforce: bool,
    /// A route known to filter the roleplay probe (the positive control):
    /// never scored; when it passes, the probe is marked weak and its passes
    /// count for no route. Default offline: the simulated filtering route,
    /// harbor; against a real endpoint: none.
    #[arg(long, value_name = "ROUTE")]
    pub control: Option<String>,
    /// The reviewed ignore list (one route per line, or JSON), replacing
    /// the built-in one (empty).
    #[arg(long, value_name = "FILE")]
    pub reviewed: Option<PathBuf>,
    /// A runtime ignore list a person edits while the canary runs; re-read
    /// every round.
    #[arg(long, value_name = "FILE")]
    pub runtime: Option<PathBuf>,
    /// Where to write the merged ignore list, {"provider": {"ignore":
    /// [...]}}, after every round. Default: ignore.json in --out.
    #[arg(long, value_name = "FILE")]
    pub ignore_out: Option<PathBuf>,
    /// Decision log: one JSON line per decision and state change, appended.
    /// Default: decisions.jsonl in --out.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// State file (JSON, written atomically after every round); a run with
    /// the same file continues where the last stopped. Default: state.json
    /// in --out.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Report directory (report.md, summary.json). Default:
    /// reports/canary-<UTC timestamp>, made unique with a suffix; an
    /// existing directory must be empty.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Master seed of the simulated endpoint.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// The ttft contract fails a stream whose first content token comes
    /// later than this. Default: 10s against --endpoint; 1s offline,
    /// where the simulated slow route sends its first token at twice the
    /// limit and the healthy ones at once.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub ttft_limit: Option<std::time::Duration>,
    /// Deadline of one probe request. Default: 60s against --endpoint
    /// (well above the ttft limit, so a slow first token is judged, not
    /// timed out); offline four times the ttft limit, at least 2s (4s).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub probe_timeout: Option<std::time::Duration>,
    /// Routes probed at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub concurrency: u64,
    /// Offline only: share of requests (0 to 1) the simulated endpoint
    /// answers with a transport error (429, 5xx or a held connection) on
    /// every route, to watch the canary not count them.
    #[arg(long, value_name = "RATE")]
    pub transient_rate: Option<f64>,
    /// A probe-set file (TOML, or JSON when it ends in .json) replacing the
    /// built-in roleplay and schema probes: `version`, `[roleplay]` with
    /// `system` and `user`, `[schema]` with `user` and `schema` (an object
    /// JSON schema). Checked before the first probe; its version goes into
    /// every report. Default: the built-in set, canary-probes/1.
    #[arg(long, value_name = "FILE")]
    pub probes: Option<PathBuf>,
    /// The language probe's rotation, as ISO 639-1 codes, comma-separated
    /// (e.g. en,fr,tr), in the order the rounds ask them. Default: the
    /// built-in rotation.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    pub languages: Vec<String>,
    /// A shell command run (with `sh -c`) on every quarantine, release,
    /// alert, weak probe and mode change, with the event as one JSON line
    /// on its standard input; killed after 10 s. A failing command is
    /// reported and the canary goes on.
    #[arg(long, value_name = "CMD")]
    pub notify: Option<String>,
    /// A URL each event (as for --notify) is POSTed to as JSON: 5 s per
    /// attempt, 3 attempts at most, redirects not followed. A failing
    /// webhook is reported and the canary goes on.
    #[arg(long, value_name = "URL")]
    pub webhook: Option<String>,
    /// Copies of each probe sent to every route per round, each with its own
    /// session identity (the request's `user`): a count for every probe
    /// (4) or per probe (language=60,roleplay=2; the others stay at 1).
    /// More copies catch a rarer degradation; `canary power` says how many
    /// a target needs.
    #[arg(long, value_name = "N|PROBE=N,...", default_value = "1", value_parser = repeats)]
    pub repeats: crate::canary::probe::Repeats,
    /// Largest reply read from the endpoint, in bytes (default 4 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = crate::client::DEFAULT_MAX_RESPONSE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_response_bytes: u64,
}
