//! The two reference gateways: OpenAI-compatible proxies with one shared
//! failover core that differ only in what the fallback receives.
//!
//! `stateless` forwards the system prompt (if any) and the last user message;
//! `history` forwards the full `messages`.

pub mod backoff;
pub mod core;
pub mod events;
pub mod metrics;
pub mod payload;
pub mod server;

#[cfg(test)]
mod tests;

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
        /// The flag that carried it (`--primary` or `--fallback`).
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

/// What the fallback receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProxyMode {
    /// System prompt (if any) and the last user message only.
    Stateless,
    /// The full `messages` array.
    History,
}

impl ProxyMode {
    /// Both modes, in the order the built-in systems run.
    pub const ALL: [ProxyMode; 2] = [ProxyMode::Stateless, ProxyMode::History];

    /// The name used on the command line and in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Stateless => "stateless",
            ProxyMode::History => "history",
        }
    }
}

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
            seed: crate::seed::DEFAULT_SEED,
            events_path: None,
        }
    }
}
