//! Fault profiles (TOML) and the deterministic fault plan derived from them.
//!
//! A profile says what fails, where and how; the plan turns it, with the master
//! seed and the dataset's shape, into the exact fault every (run, conversation,
//! turn, upstream role) gets, and each conversation's failover event. The plan
//! is the same for every system within a run and differs between runs. A
//! profile that could not produce a scorable event is refused: at parse, or
//! by the checks against the dataset and the systems ([`checks`]). The rate
//! limiter of storm profiles ([`limiter`]) decides by attempt numbers and
//! waits, never by wall-clock refill, so verdicts do not depend on load.

pub mod checks;
pub mod limiter;
pub mod plan;
pub mod profile;
pub mod script;

pub use checks::{Reach, TurnReach};
pub use limiter::{Decision, RetryLimiter, RETRY_AFTER_SLACK};
pub use plan::{FaultPlan, PlannedEvent, ProfileSchedule, Schedule};
pub use profile::{degrade, FaultError, FaultProfile, TurnSelector};
pub use script::{Act, CaseScript, End, Facts, HoldEnd, Script, Shape, When};

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Path of the default fault profile, relative to the repository root.
pub const DEFAULT_PROFILE: &str = "fault_profiles/paper.toml";

/// The fault profiles compiled into the binary; the first is the default.
pub static BUILTIN_PROFILES: [cb_base::source::BuiltIn; 5] = [
    cb_base::source::BuiltIn {
        path: DEFAULT_PROFILE,
        text: include_str!("../../../fault_profiles/paper.toml"),
    },
    cb_base::source::BuiltIn {
        path: "fault_profiles/storm.toml",
        text: include_str!("../../../fault_profiles/storm.toml"),
    },
    cb_base::source::BuiltIn {
        path: "fault_profiles/degraded.toml",
        text: include_str!("../../../fault_profiles/degraded.toml"),
    },
    cb_base::source::BuiltIn {
        path: "fault_profiles/fallback-degraded.toml",
        text: include_str!("../../../fault_profiles/fallback-degraded.toml"),
    },
    cb_base::source::BuiltIn {
        path: "fault_profiles/outage.toml",
        text: include_str!("../../../fault_profiles/outage.toml"),
    },
];

pub use cb_base::role::Role;

/// How an upstream fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FaultMode {
    /// The connection is held open without a byte past the gateway's timeout.
    Timeout,
    /// A real 5xx response with an OpenAI-style error body.
    ApiError,
    /// A real 429 response with `Retry-After`.
    RateLimit,
}

impl FaultMode {
    /// Every mode, in report order.
    pub const ALL: [FaultMode; 3] = [
        FaultMode::Timeout,
        FaultMode::ApiError,
        FaultMode::RateLimit,
    ];

    /// The name used in files and reports ("TIMEOUT", "API_ERROR", "RATE_LIMIT").
    pub fn as_str(self) -> &'static str {
        match self {
            FaultMode::Timeout => "TIMEOUT",
            FaultMode::ApiError => "API_ERROR",
            FaultMode::RateLimit => "RATE_LIMIT",
        }
    }
}

/// What kind of error an upstream reports, independent of any wire format:
/// each dialect renders it its own way (for OpenAI, the `type` and `code` of
/// the error object, see [`ErrorKind::openai`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The provider failed (5xx).
    Server,
    /// Too many requests (429).
    RateLimit,
    /// The request is malformed (400).
    InvalidRequest,
    /// The API key is wrong (401).
    Auth,
    /// The account has no credit (402).
    Payment,
    /// The key may not use the model (403).
    Permission,
    /// The model does not exist (404).
    ModelNotFound,
    /// The provider gave up waiting (a held connection that ran out).
    Timeout,
    /// The request is longer than the model's context window (400).
    ContextLength,
    /// The provider's safety system rejected the request (400).
    ContentPolicy,
}

impl ErrorKind {
    /// The OpenAI error object's `type` and `code` for this kind.
    pub fn openai(self) -> (&'static str, Option<&'static str>) {
        match self {
            ErrorKind::Server => ("server_error", None),
            ErrorKind::RateLimit => ("requests", Some("rate_limit_exceeded")),
            ErrorKind::InvalidRequest => ("invalid_request_error", None),
            ErrorKind::Auth => ("invalid_request_error", Some("invalid_api_key")),
            ErrorKind::Payment => ("insufficient_quota", Some("payment_required")),
            ErrorKind::Permission => ("invalid_request_error", Some("permission_denied")),
            ErrorKind::ModelNotFound => ("invalid_request_error", Some("model_not_found")),
            ErrorKind::Timeout => ("timeout", Some("timeout")),
            ErrorKind::ContextLength => ("invalid_request_error", Some("context_length_exceeded")),
            ErrorKind::ContentPolicy => ("invalid_request_error", Some("content_policy_violation")),
        }
    }
}

/// Where a rate-limited (or overloaded) response says how long to wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WaitIn {
    /// `Retry-After`, whole seconds.
    #[default]
    RetryAfter,
    /// Only `x-ratelimit-reset-requests` (OpenAI's duration format,
    /// `2s`): a client that reads `Retry-After` alone sees no wait.
    ResetRequests,
    /// Only `x-ratelimit-reset-tokens` (the token window, same format).
    ResetTokens,
    /// Only the body's JSON: `error.retry_after` (seconds).
    BodyField,
    /// Only the body's text: the message says "Please retry after 2s.".
    BodyText,
}

/// An error response, neutral: the upstream renders it in its dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorSpec {
    /// The HTTP status.
    pub status: u16,
    /// What kind of error it is.
    pub kind: ErrorKind,
    /// The human-readable message.
    pub message: String,
    /// The wait sent with it (whole seconds on the wire), if any.
    pub retry_after: Option<Duration>,
    /// Where that wait is stated.
    pub wait_in: WaitIn,
}

impl ErrorSpec {
    /// An error without `Retry-After`.
    pub fn new(status: u16, kind: ErrorKind, message: impl Into<String>) -> Self {
        ErrorSpec {
            status,
            kind,
            message: message.into(),
            retry_after: None,
            wait_in: WaitIn::RetryAfter,
        }
    }

    /// The same error with its wait stated in `place` instead.
    #[must_use]
    pub fn wait_stated_in(mut self, place: WaitIn) -> Self {
        self.wait_in = place;
        self
    }

    /// The same error with `Retry-After: retry_after`.
    #[must_use]
    pub fn with_retry_after(mut self, retry_after: Duration) -> Self {
        self.retry_after = Some(retry_after);
        self
    }
}

/// What an upstream does instead of answering normally, with every
/// parameter resolved. Neutral: nothing here is in a wire format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// Hold the connection open without sending a byte for `hold`, or until
    /// the client goes away.
    Timeout {
        /// How long to hold.
        hold: Duration,
    },
    /// Answer with this error (a 5xx from a profile's API_ERROR, a 429 with
    /// `Retry-After` from its RATE_LIMIT, any error status in a script).
    Error(ErrorSpec),
    /// Answer 200, degraded (a slow first token, junk, a drift, ...).
    Degrade(degrade::Degraded),
    /// Start a normal 200 answer and break the connection off partway:
    /// after the role chunk and `chunks` content chunks of a stream (no
    /// `data: [DONE]`), or halfway through a plain JSON body. Scripted plans
    /// only; no profile mode schedules it.
    BodyCut {
        /// Content chunks of a stream sent before the cut.
        chunks: usize,
    },
}

#[cfg(test)]
mod builtin_tests {
    use super::*;

    #[test]
    fn every_built_in_profile_parses() {
        for b in &BUILTIN_PROFILES {
            let p = FaultProfile::parse(b.text, b.path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(p.name, b.stem(), "{}", b.path);
        }
    }
}
