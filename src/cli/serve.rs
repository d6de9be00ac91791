//! The flags of the smaller commands: `generate` (a dataset), `upstreams`
//! (a simulated pair for any gateway) and `proxy` (one reference gateway).

use super::{LatencyArg, ProviderOptions};
use clap::{Args, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

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
    /// Probes past the fault: a probe of the anchor at turn 3, a second
    /// fact (a seven-digit code) stated at turn 4 (in a tool result in every
    /// other rich conversation) and probes of it at turns 5 and 6, so that
    /// an outage of turns 3 to 5 (`--faults outage`) is scored on the turns
    /// during and after it. Needs --min-turns 4 or more. `--rich --later-probes` at seed 42
    /// is the committed datasets/continuity-outage-150.jsonl. Off by default.
    #[arg(long)]
    pub later_probes: bool,
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
    /// Fault profile (TOML); the help lists the built-in ones.
    #[arg(long, help = super::builtins::faults_help())]
    pub faults: Option<PathBuf>,
    /// Dataset (JSONL) whose conversations the upstreams recognise; the
    /// help lists the built-in ones.
    #[arg(long, help = super::builtins::dataset_help(" whose conversations the upstreams recognise"))]
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
    /// Largest request body, in bytes, either upstream reads (default
    /// 8 MiB, 1 KiB to 1 GiB). A larger one is answered 413 naming this
    /// flag, refused from its Content-Length before a byte is read.
    #[arg(long, default_value_t = crate::upstream::DEFAULT_MAX_BODY_BYTES as u64)]
    pub max_body_bytes: u64,
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
    /// Stop when standard input ends: a harness that starts the proxy as
    /// its child (`bench overhead`) keeps a pipe open to it, so the proxy
    /// never outlives the harness, however the harness ends.
    #[arg(long, hide = true)]
    pub exit_on_stdin_eof: bool,
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
    /// Most memory one request may make the proxy hold, in bytes or with a
    /// KiB, MiB or GiB suffix (64KiB to 1GiB). It bounds, each on its own:
    /// what a stream sends before its first token (comments and token-less
    /// chunks included), the streamed text kept for a continuation, and
    /// what a dialect translator holds without output. Past it the request
    /// ends as request_memory_exceeded: a failover when nothing reached the
    /// client yet, else an error event (and no continuation).
    #[arg(long, default_value = "16MiB", value_parser = parse_bytes)]
    pub request_memory: u64,
    /// A client that reads nothing for this long while the proxy has bytes
    /// for it is disconnected, its stream's upstream dropped, and counted in
    /// /metrics (continuity_proxy_connections_write_timeouts_total).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub write_timeout: std::time::Duration,
}

/// A byte count: digits, optionally followed by KiB, MiB or GiB.
fn parse_bytes(arg: &str) -> Result<u64, String> {
    let arg = arg.trim();
    let (digits, unit) = match arg.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => arg.split_at(at),
        None => (arg, ""),
    };
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => {
            return Err(format!(
                "{arg:?} is not a size; pass bytes, or e.g. 512KiB, 16MiB, 1GiB"
            ))
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("{arg:?} is not a size; pass bytes, or e.g. 512KiB, 16MiB, 1GiB"))
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
