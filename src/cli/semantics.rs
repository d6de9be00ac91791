//! The flags of `semantics`, the failover catalogue.

use super::{ContractOptions, SystemOptions};
use clap::Args;
use std::path::PathBuf;

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
    /// Whose reading of a stream decides whether it is an answer:
    /// `openai-sdk` (the official OpenAI Python and Node SDKs: a body that
    /// ends cleanly is a complete answer, with or without `data: [DONE]`
    /// or a finish reason) or `strict` (only `data: [DONE]` completes a
    /// stream). A cleanly ended truncated stream is a truncated answer
    /// presented as complete to the first, an error to the second.
    #[arg(long, default_value = "openai-sdk", value_parser = client_profile)]
    pub client: cb_wire::sse::ClientProfile,
    /// When a gateway sends a case straight to the fallback (it cooled the
    /// primary down after an earlier case), wait this long and send it
    /// again, at most twice; a case that still cannot reach the primary is
    /// inconclusive. 0 disables. LiteLLM's default cooldown is 5 s.
    #[arg(long, default_value = "6s", value_parser = humantime::parse_duration)]
    pub cooldown_wait: std::time::Duration,
    /// After the catalogue, a load phase: this many requests (100 when the
    /// flag has no value) sent at once through each system while its
    /// primary answers 429 with Retry-After to every attempt; reports the
    /// upstream attempts per client request (mean and p99, with 95 %
    /// intervals), how bunched the retries are against full jitter, and
    /// the worst time to a definitive answer.
    #[arg(long, num_args = 0..=1, default_missing_value = "100", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub load: Option<u32>,
    /// Which upstreams the load phase rate-limits: `primary-limited` (the
    /// fallback answers: a gateway's own retries and failover) or
    /// `all-limited` (both answer 429: every request fails, so each layer
    /// in front of the upstreams, an SDK's retries over a gateway's retries
    /// over its fallbacks, shows in the attempts per request as their
    /// product).
    #[arg(long, default_value = "primary-limited", value_parser = load_fault, requires = "load")]
    pub load_fault: cb_semantics::load::LoadFault,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write semantics.json, scorecard.md, scorecard.svg and scorecard.png
    /// into this directory; it is created, and refused if it holds files
    /// (a report is never overwritten) unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an existing, non-empty --out directory (its report files
    /// are replaced).
    #[arg(long)]
    pub force: bool,
    /// The answer contracts.
    #[command(flatten)]
    pub contracts: ContractOptions,
}

/// Reads `--load-fault`.
pub(super) fn load_fault(s: &str) -> Result<cb_semantics::load::LoadFault, String> {
    s.parse()
}

/// Reads `--client`.
pub(super) fn client_profile(s: &str) -> Result<cb_wire::sse::ClientProfile, String> {
    s.parse()
}
