//! Command-line types (clap derive) and nothing else. Values are validated
//! into typed configurations by `config`; no clap type goes past it.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Measures whether an LLM gateway keeps a conversation alive when its
/// primary provider fails.
#[derive(Debug, Parser)]
#[command(name = "continuity-bench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// Parsed once at start; the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay the dataset through the systems under test while their primary
    /// provider fails, score the answers and write a report.
    Run(RunArgs),
    /// Write a seeded synthetic dataset as JSONL, one conversation a line.
    Generate(GenerateArgs),
    /// Serve a pair of simulated upstreams (primary and fallback) for use
    /// with any gateway, until Ctrl-C.
    Upstreams(UpstreamsArgs),
    /// Serve a reference gateway (stateless or history) until Ctrl-C.
    Proxy(ProxyArgs),
    /// Run the failover-semantics catalogue through every system, on the
    /// wire: error statuses, resets, silent routes, slow, cut, stalled and
    /// malformed streams, context length, content filter, prefill
    /// rejection, a flapping primary, both upstreams failing, model ids,
    /// required parameters and fallback health. Prints a table and a
    /// scorecard per system; exits 1 when a scored case fails.
    Semantics(SemanticsArgs),
    /// Re-render summary.json, summary.md and the plots of a report directory
    /// from its CSV files.
    Report(ReportArgs),
    /// LLM judge tools: measure how far the fast-path scorer and a judge
    /// agree with hand labels.
    Judge(JudgeArgs),
    /// Answer-contract tools: measure each contract against a labelled
    /// calibration set.
    Contracts(ContractsArgs),
    /// Probe every route of a model pinned (fallbacks off), check each reply
    /// against the answer contracts, and quarantine routes that degrade
    /// (observe only unless --enforce). Offline by default, against a
    /// built-in simulated endpoint; `canary release ROUTE` lifts a
    /// quarantine by hand.
    Canary(CanaryArgs),
}

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
    /// and log the release.
    Release(CanaryReleaseArgs),
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
#[derive(Debug, Args)]
pub struct CanaryRunArgs {
    /// An OpenRouter-compatible API base URL, e.g.
    /// https://openrouter.ai/api/v1 (routes are listed from
    /// {URL}/models/{author}/{slug}/endpoints, probes go to
    /// {URL}/chat/completions). Without it, a built-in simulated endpoint
    /// with seeded routes is served on 127.0.0.1 and no key is needed.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
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
    /// Largest reply read from the endpoint, in bytes (default 4 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = crate::systems::DEFAULT_MAX_RESPONSE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_response_bytes: u64,
}

/// Arguments of `contracts`.
#[derive(Debug, Args)]
pub struct ContractsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ContractsCommand,
}

/// Subcommands of `contracts`.
#[derive(Debug, Subcommand)]
pub enum ContractsCommand {
    /// Run every contract on the labelled replies and print, per contract,
    /// the cases it applies to, its agreement with the labels, its
    /// false-positive rate on clean replies, and what it left undetermined.
    /// Exits 1 when a contract misses its goals (no false positive,
    /// agreement of at least 95 % on what it decides).
    Calibrate(ContractsCalibrateArgs),
}

/// Arguments of `contracts calibrate`.
#[derive(Debug, Args)]
pub struct ContractsCalibrateArgs {
    /// Labelled replies (JSONL). Default: the built-in
    /// datasets/contracts-calibration.jsonl.
    #[arg(long)]
    pub cases: Option<PathBuf>,
}

/// Arguments of `generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Master seed; the same seed gives byte-identical output.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Number of conversations to generate, from 1 to 250,000. Up to 300,
    /// values come from curated lists (the default 150 at seed 42 is the
    /// committed dataset, byte for byte); larger datasets compose their
    /// values: names and places from syllables, six- to eight-digit codes
    /// and counts, dates between 1600 and 2026.
    #[arg(long, default_value_t = 150)]
    pub conversations: usize,
    /// Fewest turns in a conversation (a turn is one user message and its reply).
    #[arg(long, default_value_t = 7)]
    pub min_turns: usize,
    /// Most turns in a conversation.
    #[arg(long, default_value_t = 11)]
    pub max_turns: usize,
    /// Output file (JSONL); its directory must exist. Without it the
    /// dataset goes to standard output and the statistics to standard error.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing --out file.
    #[arg(long)]
    pub force: bool,
    /// Rich conversations: two system messages of their own, tool calls
    /// with results on some turns, and the anchor stated in a system
    /// message (a third of them) or a tool result (another third), so that
    /// a gateway that drops either loses it. The 150 at seed 42 are the
    /// committed datasets/continuity-rich-150.jsonl. Off by default.
    #[arg(long)]
    pub rich: bool,
}

/// Latency model of the simulated upstreams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LatencyArg {
    /// No modelled delay (for tests).
    Instant,
    /// A few milliseconds to first token and fast output (the default for runs).
    Fast,
    /// Hundreds of milliseconds to first token, tens of tokens per second.
    Realistic,
}

/// Arguments of `upstreams`.
#[derive(Debug, Args)]
pub struct UpstreamsArgs {
    /// Address of the primary upstream.
    #[arg(long, default_value = "127.0.0.1:9001")]
    pub primary: SocketAddr,
    /// Address of the fallback upstream.
    #[arg(long, default_value = "127.0.0.1:9002")]
    pub fallback: SocketAddr,
    /// Fault profile (TOML): a file, or the name of a built-in one (paper,
    /// storm). Default: the built-in paper profile.
    #[arg(long)]
    pub faults: Option<PathBuf>,
    /// Dataset (JSONL) whose conversations the upstreams recognise. Default:
    /// the built-in datasets/continuity-150.jsonl.
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Master seed of the fault schedule and latency jitter.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Run index whose fault schedule to serve (from 1).
    #[arg(long, default_value_t = 1)]
    pub run: u32,
    /// Latency model.
    #[arg(long, value_enum, default_value_t = LatencyArg::Fast)]
    pub latency: LatencyArg,
    /// Write every attempt as CSV here when stopped.
    #[arg(long)]
    pub attempts: Option<PathBuf>,
    /// A real provider behind the upstreams (pass-through with faults).
    #[command(flatten)]
    pub providers: ProviderOptions,
    /// Deadline of one request to a --provider, connection to last byte.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub provider_timeout: std::time::Duration,
}

/// A real OpenAI-compatible provider behind the simulated upstreams: each
/// upstream becomes a fault-injecting proxy in front of it. Faults fire on
/// the wire as with the simulated model (a faulted attempt never reaches
/// the provider); everything else is forwarded with the provider's model id
/// and key. Shared by `run` and `upstreams`.
#[derive(Debug, Clone, Default, Args)]
pub struct ProviderOptions {
    /// Base URL of an OpenAI-compatible provider both upstreams forward to,
    /// e.g. http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1;
    /// requests go to URL/chat/completions. Without it (and without
    /// --primary-provider) the upstreams answer with the simulated model.
    #[arg(long, value_name = "URL")]
    pub provider: Option<String>,
    /// Model id sent to the --provider (required with it), e.g. gpt-4o-mini.
    #[arg(long, value_name = "MODEL")]
    pub provider_model: Option<String>,
    /// Name of the environment variable holding the --provider's API key,
    /// sent as a Bearer token and never printed or written. Without it no
    /// key is sent (a local server needs none).
    #[arg(long, value_name = "VAR")]
    pub provider_key_env: Option<String>,
    /// Base URL of the provider behind the primary upstream (with
    /// --fallback-provider, instead of --provider).
    #[arg(long, value_name = "URL")]
    pub primary_provider: Option<String>,
    /// Model id sent to the --primary-provider (required with it).
    #[arg(long, value_name = "MODEL")]
    pub primary_provider_model: Option<String>,
    /// Environment variable holding the --primary-provider's key.
    #[arg(long, value_name = "VAR")]
    pub primary_provider_key_env: Option<String>,
    /// Base URL of the provider behind the fallback upstream (with
    /// --primary-provider, instead of --provider).
    #[arg(long, value_name = "URL")]
    pub fallback_provider: Option<String>,
    /// Model id sent to the --fallback-provider (required with it).
    #[arg(long, value_name = "MODEL")]
    pub fallback_provider_model: Option<String>,
    /// Environment variable holding the --fallback-provider's key.
    #[arg(long, value_name = "VAR")]
    pub fallback_provider_key_env: Option<String>,
}

/// Which reference gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProxyModeArg {
    /// The fallback receives the system prompt and the last user message.
    Stateless,
    /// The fallback receives the full history.
    History,
}

/// Arguments of `proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// What the fallback receives.
    #[arg(long, value_enum)]
    pub mode: ProxyModeArg,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Base URL of the primary provider, e.g. http://127.0.0.1:9001.
    #[arg(long)]
    pub primary: String,
    /// Base URL of the fallback provider, e.g. http://127.0.0.1:9002.
    #[arg(long)]
    pub fallback: String,
    /// Model id sent to the primary (default: the client's).
    #[arg(long)]
    pub primary_model: Option<String>,
    /// Model id sent to the fallback (default: the client's).
    #[arg(long)]
    pub fallback_model: Option<String>,
    /// Deadline of one upstream attempt until response headers, e.g. 10s or 500ms.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub attempt_timeout: std::time::Duration,
    /// Deadline of a whole client request across all attempts.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub deadline: std::time::Duration,
    /// Most retries when the fallback answers 429 (with backoff and jitter).
    #[arg(long, default_value_t = 3)]
    pub fallback_retries: u32,
    /// The dialect the fallback speaks: openai, anthropic (Messages,
    /// BASE/v1/messages with anthropic-version) or gemini
    /// (BASE/v1beta/models/MODEL:generateContent). The request is
    /// translated (every system message kept, roles alternated, max_tokens
    /// supplied, tool calls and results mapped) and the answer comes back
    /// in OpenAI format, streamed or not. Default openai.
    #[arg(long, default_value = "openai", value_name = "DIALECT")]
    pub fallback_dialect: crate::dialect::Dialect,
    /// Append one JSON line per request (the switch event) to this file.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Seed of the backoff jitter.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Most extra attempts at the primary before failing over: after a 429
    /// whose Retry-After is at most --retry-after-cap (waited), or after a
    /// --retry-status; 0 keeps the bare decision tree.
    #[arg(long, default_value_t = 1)]
    pub same_route_retries: u32,
    /// Statuses retried on the same route (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "500")]
    pub retry_status: Vec<u16>,
    /// Longest Retry-After waited on the same route; a longer one, or a 429
    /// without it, fails over at once.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub retry_after_cap: std::time::Duration,
    /// Wait before retrying a --retry-status that came without Retry-After.
    #[arg(long, default_value = "100ms", value_parser = humantime::parse_duration)]
    pub retry_delay: std::time::Duration,
    /// A stream whose first token has not come this long after the request
    /// was sent fails over (nothing has reached the client); 0s disables.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub first_token_timeout: std::time::Duration,
    /// A stream silent this long after its first token is broken and is
    /// continued from the fallback; 0s disables.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub stall_timeout: std::time::Duration,
    /// How a stream that broke after its first tokens is continued from the
    /// fallback: prefill (the text sent as an assistant prefill; a clean
    /// restart if the fallback rejects it), restart (the whole answer again,
    /// the text already sent dropped), or off (the break reaches the client).
    #[arg(long, value_enum, default_value_t = ContinuationArg::Prefill)]
    pub continuation: ContinuationArg,
    /// Base URL of a larger-context route for a 400 context_length_exceeded
    /// (default none: the 400 passes through).
    #[arg(long)]
    pub context_fallback: Option<String>,
    /// Model id sent to --context-fallback (default: --fallback-model, else
    /// the client's).
    #[arg(long)]
    pub context_model: Option<String>,
    /// max_tokens added to the fallback's request when the client sent
    /// neither max_tokens nor max_completion_tokens (default none).
    #[arg(long)]
    pub fallback_max_tokens: Option<u32>,
    /// A top-level parameter set on every fallback request, KEY=JSON (e.g.
    /// enable_thinking=false); repeatable.
    #[arg(long, value_parser = parse_param)]
    pub fallback_param: Vec<(String, serde_json::Value)>,
}

/// How the `proxy` continues a broken stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ContinuationArg {
    /// The text sent as an assistant prefill (a clean restart if rejected).
    Prefill,
    /// The whole answer again, the text already sent dropped.
    Restart,
    /// The break reaches the client.
    Off,
}

/// `KEY=JSON`, or `KEY=text` when the value is not JSON.
fn parse_param(arg: &str) -> Result<(String, serde_json::Value), String> {
    let (key, value) = arg
        .split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| format!("{arg:?} is not KEY=VALUE; pass e.g. enable_thinking=false"))?;
    let value = serde_json::from_str(value)
        .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
    Ok((key.to_string(), value))
}

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of runs; each replays every conversation through every system
    /// under a fault schedule of its own.
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Conversations in flight at once, across all systems.
    #[arg(long, default_value_t = 100)]
    pub concurrency: usize,
    /// Most requests in flight at once, across all systems; a conversation
    /// whose next request finds no room waits for it. Default: what the
    /// open-file limit and 64 MiB of this process's memory allow (a request
    /// costs about 160 KiB here for the built-in systems and 64 KiB for each
    /// external gateway, summed over the run's systems); the open-file
    /// limit caps it either way.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_in_flight: Option<u64>,
    /// Dataset (JSONL). Default: the built-in datasets/continuity-150.jsonl
    /// (150 conversations, seed 42).
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Fault profile (TOML): a file, or the name of a built-in one (paper,
    /// storm). Default: the built-in paper profile.
    #[arg(long)]
    pub faults: Option<PathBuf>,
    /// Master seed of the fault schedule, latency jitter, backoff and bootstrap.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Latency model of the simulated upstreams.
    #[arg(long, value_enum, default_value_t = LatencyArg::Fast)]
    pub latency: LatencyArg,
    /// Send only the final turn, with the dataset's scripted history, instead
    /// of replaying every turn live.
    #[arg(long)]
    pub fast_forward: bool,
    /// Ask every system for streamed answers (server-sent events), read to
    /// `data: [DONE]`; a stream cut short, a malformed chunk or an error
    /// chunk is an error with its reason.
    #[arg(long)]
    pub stream: bool,
    /// Per-attempt timeout of the built-in proxies: how long they wait for an
    /// upstream's response headers before failing over (default 1s, 5s
    /// with --latency realistic, whose answers take over a second, and 20s
    /// with a --provider, which is also the deadline of each request to it).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub attempt_timeout: Option<std::time::Duration>,
    /// Deadline of every request the driver sends.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub request_timeout: std::time::Duration,
    /// Report directory. Default: reports/<UTC timestamp>, made unique with
    /// a suffix when it exists. An existing directory that is not empty is
    /// refused unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an existing, non-empty --out directory (its report files
    /// are replaced).
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Exit with status 1 when the CPR of `--fail-system` is below this
    /// percentage (0-100).
    #[arg(long)]
    pub fail_under_cpr: Option<f64>,
    /// The system `--fail-under-cpr` checks (default: history).
    #[arg(long)]
    pub fail_system: Option<String>,
    /// Which systems are under test.
    #[command(flatten)]
    pub systems: SystemOptions,
    /// A real provider behind the upstreams (pass-through with faults).
    #[command(flatten)]
    pub providers: ProviderOptions,
    /// With a --provider that is not on this machine: a run whose estimated
    /// tokens (input and output, printed before the run) exceed this does
    /// not start without --yes.
    #[arg(long, value_name = "N", default_value_t = crate::continuity::cost::DEFAULT_COST_LIMIT_TOKENS)]
    pub cost_limit_tokens: u64,
    /// Start a run against a paid --provider even when its estimate is above
    /// --cost-limit-tokens.
    #[arg(long)]
    pub yes: bool,
    /// The LLM judge for answers the fast path cannot decide.
    #[command(flatten)]
    pub judge: JudgeOptions,
    /// The answer contracts.
    #[command(flatten)]
    pub contracts: ContractOptions,
}

/// Options of the answer contracts every answer is checked against.
/// Shared by every command that checks answers.
#[derive(Debug, Clone, Args)]
pub struct ContractOptions {
    /// The `ttft` contract fails a stream whose first content token came
    /// later than this after the request was sent.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub ttft_limit: std::time::Duration,
}

/// The systems under test: the built-in reference proxies and any external
/// gateways. Shared by every command that drives systems.
#[derive(Debug, Clone, Args)]
pub struct SystemOptions {
    /// Add an OpenAI-compatible gateway as a system under test, as
    /// NAME=URL (base URL without /v1, e.g. litellm=http://127.0.0.1:4000).
    /// Repeatable. Each gets its own upstream pair; the ports are printed at
    /// start and set with --upstream-ports.
    #[arg(long = "gateway", value_name = "NAME=URL")]
    pub gateways: Vec<String>,
    /// Run only the --gateway systems, not the built-in stateless and history
    /// proxies.
    #[arg(long)]
    pub no_builtin: bool,
    /// Ports of a gateway's simulated upstreams, as NAME=PRIMARY,FALLBACK.
    /// Default for the k-th gateway (from 0): 9001+10k and 9002+10k.
    #[arg(long = "upstream-ports", value_name = "NAME=PRIMARY,FALLBACK")]
    pub upstream_ports: Vec<String>,
    /// An extra request header for a gateway, as NAME:HEADER=VALUE; a value
    /// written env:VAR is read from the environment variable VAR. Values are
    /// never printed or written to a report. Repeatable.
    #[arg(long = "header", value_name = "NAME:HEADER=VALUE")]
    pub headers: Vec<String>,
    /// The model id the driver asks every system for (a gateway routes on it).
    #[arg(long, default_value = crate::systems::DRIVER_MODEL)]
    pub model: String,
    /// How long to wait for each --gateway to answer a probe request before
    /// giving up with the configuration it should have.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub gateway_wait: std::time::Duration,
    /// Largest response body, in bytes, read from a system under test
    /// (default 4 MiB). A larger one, plain or streamed, is an `error` and
    /// is not read further.
    #[arg(long, value_name = "BYTES", default_value_t = crate::systems::DEFAULT_MAX_RESPONSE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_response_bytes: u64,
    /// The dialect the built-in systems' fallback speaks: openai, anthropic
    /// (Messages, /v1/messages) or gemini (generateContent). Both
    /// reference proxies translate their fallback request into it and the
    /// answer back; the harness's fallback upstream serves and validates
    /// it. Default openai.
    #[arg(long, default_value = "openai", value_name = "DIALECT")]
    pub fallback_dialect: crate::dialect::Dialect,
}

/// Arguments of `semantics`.
#[derive(Debug, Args)]
pub struct SemanticsArgs {
    /// Which systems are under test.
    #[command(flatten)]
    pub systems: SystemOptions,
    /// Per-attempt timeout of the built-in proxies (how long they wait for
    /// response headers before failing over).
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub attempt_timeout: std::time::Duration,
    /// Bound of every case that sets none of its own (full profile): a
    /// request not answered by then is a hang, and the case fails. Also the
    /// built-in proxies' overall deadline.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub request_timeout: std::time::Duration,
    /// Run the catalogue with its fast times (a first token after 5 s
    /// instead of 20 s, a 5 s flap instead of 60 s, ...), about a minute
    /// per system; the cases and their checks are the same.
    #[arg(long)]
    pub fast: bool,
    /// Run only these cases, comma-separated ids (e.g. 429-retry-after,flap).
    /// Default: the whole catalogue.
    #[arg(long, value_name = "IDS")]
    pub cases: Option<String>,
    /// Most attempts `both-fail` allows at each upstream before the client
    /// gets its error (stacked retries multiply).
    #[arg(long, default_value_t = 2)]
    pub max_attempts_per_upstream: u32,
    /// Longest time `both-fail` allows until the client gets a definitive
    /// error.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub max_give_up: std::time::Duration,
    /// Master seed of the built-in proxies' backoff jitter.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Send every case that is not a streaming case as a streamed request
    /// (server-sent events); the streaming cases always stream.
    #[arg(long)]
    pub stream: bool,
    /// When a gateway sends a case straight to the fallback (it cooled the
    /// primary down after an earlier case), wait this long and send it
    /// again, at most twice; a case that still cannot reach the primary is
    /// inconclusive. 0 disables. LiteLLM's default cooldown is 5 s.
    #[arg(long, default_value = "6s", value_parser = humantime::parse_duration)]
    pub cooldown_wait: std::time::Duration,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write semantics.json, scorecard.md, scorecard.svg and scorecard.png
    /// into this directory; it is created, and refused if it holds files
    /// (a report is never overwritten).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The answer contracts.
    #[command(flatten)]
    pub contracts: ContractOptions,
}

/// Arguments of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A report directory written by `run`.
    pub dir: PathBuf,
}

/// Options selecting the LLM judge that decides what the fast-path scorer
/// leaves undetermined. Shared by every command that scores answers.
#[derive(Debug, Clone, Args)]
pub struct JudgeOptions {
    /// Base URL of an OpenAI-compatible API used as judge, e.g.
    /// https://api.openai.com/v1 (or the full .../chat/completions URL), or
    /// `sim` for the built-in simulated judge. Without it, answers the fast
    /// path cannot decide stay undetermined.
    #[arg(long, value_name = "URL")]
    pub judge: Option<String>,
    /// Model id the judge is asked with (required with a URL; default
    /// `sim-judge` for `--judge sim`).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// Name of the environment variable holding the judge's API key. The key
    /// is sent as a Bearer token and never printed.
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub judge_key_env: String,
    /// JSONL file caching judge verdicts across runs (created if missing);
    /// keyed by model, prompt version, anchor, probe and answer.
    #[arg(long, value_name = "PATH")]
    pub judge_cache: Option<PathBuf>,
    /// Deadline of one judge request; a request that misses it is retried
    /// (3 attempts in all), then the verdict is undetermined.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub judge_timeout: std::time::Duration,
}

/// Arguments of `judge`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: JudgeCommand,
}

/// Subcommands of `judge`.
#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Score the labelled calibration set with the fast path alone and with
    /// fast path plus judge; print agreement, Cohen's kappa and confusion
    /// matrices. Exits 1 if the fast path decided any case wrongly.
    Calibrate(CalibrateArgs),
}

/// Arguments of `judge calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The judge to calibrate (none: fast path only).
    #[command(flatten)]
    pub judge: JudgeOptions,
    /// Labelled cases (JSONL).
    #[arg(long, default_value = crate::judge::calibrate::DEFAULT_CASES)]
    pub cases: PathBuf,
    /// Master seed of the judge's retry backoff jitter.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Judge requests in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
