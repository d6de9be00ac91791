//! Command-line types (clap derive) and nothing else. Values are validated
//! into typed configurations in [`crate::config`]; no clap type goes past it.

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
    /// upstream's response headers before failing over (default 1s, or 5s
    /// with --latency realistic, whose answers take over a second).
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
    #[arg(long, default_value = crate::config::DRIVER_MODEL)]
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
