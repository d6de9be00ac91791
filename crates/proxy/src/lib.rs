//! The two reference gateways: OpenAI-compatible proxies with one shared
//! failover core that differ only in what the fallback receives.
//!
//! `stateless` forwards the system prompt (if any) and the last user message;
//! `history` forwards the full `messages`.

pub mod backoff;
pub mod core;
pub mod dialect;
pub mod events;
pub mod metrics;
pub mod payload;
pub mod policy;
pub mod reason;
pub mod relay;
pub mod server;

#[cfg(test)]
mod tests;

pub use core::{display_url, UpstreamHealth};
pub use events::SwitchEvent;
pub use server::{router, spawn, ProxyState};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Why a reference proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// An upstream base URL is not an http(s) URL.
    #[error("{flag} {url:?} is not an http(s) base URL; pass e.g. http://127.0.0.1:9001")]
    BadUrl {
        /// The flag that carried it (`--primary`, `--fallback` or
        /// `--context-fallback`).
        flag: &'static str,
        /// The value given.
        url: String,
    },
    /// The events file cannot be opened for appending.
    #[error("cannot append to --events {path}: {source}; check that its directory exists and is writable")]
    EventsFile {
        /// The path given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The HTTP client cannot be built (TLS backend unavailable).
    #[error("cannot build the upstream HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    /// The listen address cannot be bound.
    #[error("{0}")]
    Bind(#[from] std::io::Error),
}

pub use cb_base::reference::ProxyMode;

/// A reference proxy's resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProxyConfig {
    /// What the fallback receives.
    pub mode: ProxyMode,
    /// Base URL of the primary provider (`http://127.0.0.1:9001`).
    pub primary_url: String,
    /// Base URL of the fallback provider.
    pub fallback_url: String,
    /// Model id sent to the primary; `None` keeps the client's.
    pub primary_model: Option<String>,
    /// Model id sent to the fallback; `None` keeps the client's.
    pub fallback_model: Option<String>,
    /// Deadline of one upstream attempt, until response headers arrive.
    pub attempt_timeout: Duration,
    /// Deadline of the whole client request, across all attempts.
    pub deadline: Duration,
    /// Most retries of the fallback when it answers 429.
    pub fallback_429_retries: u32,
    /// First backoff step when the fallback answers 429 (grows 2x per retry,
    /// full jitter, never below the `Retry-After` asked).
    pub backoff_base: Duration,
    /// Largest backoff step.
    pub backoff_cap: Duration,
    /// Seed of the backoff jitter.
    pub seed: u64,
    /// Append one JSON line per request (the switch event) to this file.
    pub events_path: Option<PathBuf>,
    /// Longest time a write to a client may make no progress (the client
    /// reads nothing); past it the connection is closed and its stream's
    /// upstream dropped (default [`cb_wire::server::WRITE_TIMEOUT`], 30 s).
    pub write_timeout: Duration,
    /// Same-route retries, stream limits, continuation, the context route
    /// and what the fallback needs.
    pub behaviour: ProxyBehaviour,
}

/// How a broken stream is continued from the fallback, once its first
/// tokens have reached the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Continuation {
    /// The fallback gets the request with the text already sent as an
    /// assistant prefill and continues it; if it rejects the prefill with a
    /// 400, the request is sent again without it, as in `restart`.
    Prefill,
    /// The fallback gets the request without a prefill; its answer must
    /// begin with the text already sent, and only the rest goes to the
    /// client (otherwise the client gets a clean error event).
    Restart,
    /// The break reaches the client (the stream is aborted).
    Off,
}

impl Continuation {
    /// The name used on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Continuation::Prefill => "prefill",
            Continuation::Restart => "restart",
            Continuation::Off => "off",
        }
    }
}

/// What a reference proxy does beyond the decision tree: a bounded
/// same-route retry, time limits on a stream, continuation of a broken
/// stream, a larger-context route, and what its fallback needs. Every
/// field has a documented default ([`ProxyBehaviour::default`]); the
/// `proxy` command sets each with a flag.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProxyBehaviour {
    /// Most extra attempts at the primary before failing over (default 1):
    /// for a 429 whose `Retry-After` is at most `retry_after_cap`, after
    /// waiting it, and for a status in `retry_statuses`.
    pub same_route_retries: u32,
    /// Statuses retried on the same route (default 500).
    pub retry_statuses: Vec<u16>,
    /// Longest `Retry-After` waited on the same route (default 2 s); a
    /// longer one, or a 429 without it, fails over at once.
    pub retry_after_cap: Duration,
    /// Wait before retrying a status that came without `Retry-After`
    /// (default 100 ms).
    pub retry_delay: Duration,
    /// A stream whose first token has not come this long after the
    /// request was sent fails over (nothing has reached the client yet);
    /// `None` disables (default 10 s).
    pub first_token_timeout: Option<Duration>,
    /// A stream silent this long after its first token is broken and is
    /// continued from the fallback; `None` disables (default 10 s).
    pub stall_timeout: Option<Duration>,
    /// How a broken stream is continued (default `prefill`).
    pub continuation: Continuation,
    /// Base URL of a larger-context route, tried when the primary answers
    /// 400 `context_length_exceeded` (default none: the 400 passes through).
    pub context_fallback: Option<String>,
    /// Model id sent to the larger-context route (default: the fallback's,
    /// else the client's).
    pub context_model: Option<String>,
    /// `max_tokens` added to the fallback's request when the client sent
    /// neither `max_tokens` nor `max_completion_tokens` (default none).
    pub fallback_max_tokens: Option<u32>,
    /// Top-level parameters set on every fallback request (default none),
    /// e.g. `enable_thinking: false`.
    pub fallback_params: serde_json::Map<String, serde_json::Value>,
    /// The dialect the fallback speaks (default `openai`); another one is
    /// translated to and from ([`dialect`]).
    pub fallback_dialect: cb_dialect::Dialect,
    /// Most bytes one request may make the proxy hold (default
    /// [`REQUEST_MEMORY`], 16 MiB), counted separately for: what a stream
    /// sends before its first token (comments and token-less chunks
    /// included), the text relayed and kept for a continuation, and what
    /// a dialect translator holds without output. Past it the request
    /// ends as `request_memory_exceeded`: a failover when nothing reached
    /// the client, else an error event and no continuation.
    pub request_memory: usize,
    /// What restarts the stall timer of a relayed stream (default
    /// [`StallClock::Content`]). No flag sets it: the other value is the
    /// control of the `stream-keepalive` catalogue case.
    pub stall_clock: StallClock,
}

/// What restarts the stall timer (`stall_timeout`) of a relayed stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallClock {
    /// Only a chunk carrying a token: comments and empty chunks do not, so
    /// a stream sending only keep-alives is a stall.
    #[default]
    Content,
    /// Every line, comments included (the behaviour before keep-alive
    /// stalls were detected; a stream kept warm with `: ping` never
    /// stalls). Only for the catalogue's control gateway.
    EveryLine,
}

/// The default of [`ProxyBehaviour::request_memory`]: 16 MiB.
pub const REQUEST_MEMORY: usize = 16 * 1024 * 1024;

impl Default for ProxyBehaviour {
    fn default() -> Self {
        ProxyBehaviour {
            same_route_retries: 1,
            retry_statuses: vec![500],
            retry_after_cap: Duration::from_secs(2),
            retry_delay: Duration::from_millis(100),
            first_token_timeout: Some(Duration::from_secs(10)),
            stall_timeout: Some(Duration::from_secs(10)),
            continuation: Continuation::Prefill,
            context_fallback: None,
            context_model: None,
            fallback_max_tokens: None,
            fallback_params: serde_json::Map::new(),
            fallback_dialect: cb_dialect::Dialect::Openai,
            request_memory: REQUEST_MEMORY,
            stall_clock: StallClock::Content,
        }
    }
}

impl ProxyConfig {
    /// A configuration with the documented defaults for `mode`.
    pub fn new(mode: ProxyMode, primary_url: String, fallback_url: String) -> Self {
        ProxyConfig {
            mode,
            primary_url,
            fallback_url,
            primary_model: None,
            fallback_model: None,
            attempt_timeout: Duration::from_secs(10),
            deadline: Duration::from_secs(60),
            fallback_429_retries: 3,
            backoff_base: Duration::from_millis(100),
            backoff_cap: Duration::from_secs(5),
            seed: cb_base::seed::DEFAULT_SEED,
            events_path: None,
            write_timeout: cb_wire::server::WRITE_TIMEOUT,
            behaviour: ProxyBehaviour::default(),
        }
    }
}
