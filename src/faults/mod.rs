//! Fault profiles (TOML) and the deterministic fault plan derived from them.
//!
//! A profile says what fails, where and how; the plan turns it, with the master
//! seed and the dataset's shape, into the exact fault every (run, conversation,
//! turn, upstream role) gets. The plan is the same for every system within a
//! run and differs between runs.

pub mod limiter;
pub mod plan;
pub mod profile;
mod schema;

pub use limiter::TokenBucket;
pub use plan::FaultPlan;
pub use profile::{FaultError, FaultProfile, TurnSelector};

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Path of the default fault profile, relative to the repository root.
pub const DEFAULT_PROFILE: &str = "fault_profiles/paper.toml";

/// Which of a system's two simulated upstreams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The provider the gateway calls first.
    Primary,
    /// The provider the gateway fails over to.
    Fallback,
}

impl Role {
    /// The snake_case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Fallback => "fallback",
        }
    }
}

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

/// What an upstream does instead of answering, with every parameter resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// Hold the connection open without sending a byte for `hold`, or until
    /// the client goes away.
    Timeout {
        /// How long to hold.
        hold: Duration,
    },
    /// Answer `status` with `body` (JSON text): a 5xx from a profile, or any
    /// error status in a scripted plan.
    ApiError {
        /// The HTTP status: 500..=599 from a profile, 400..=599 scripted.
        status: u16,
        /// The response body, an OpenAI-style error object as JSON text.
        body: String,
    },
    /// Start a normal 200 answer and break the connection off partway:
    /// after the role chunk and `chunks` content chunks of a stream (no
    /// `data: [DONE]`), or halfway through a plain JSON body. Scripted plans
    /// only; no profile mode schedules it.
    BodyCut {
        /// Content chunks of a stream sent before the cut.
        chunks: usize,
    },
    /// Answer `status` (429) with `Retry-After` and `body` (JSON text).
    RateLimit {
        /// The HTTP status, normally 429.
        status: u16,
        /// The value sent in `Retry-After` (whole seconds on the wire).
        retry_after: Duration,
        /// The response body, an OpenAI-style error object as JSON text.
        body: String,
    },
}

impl FaultAction {
    /// The profile mode this action executes; `None` for a
    /// [`FaultAction::BodyCut`], which no profile schedules.
    pub fn mode(&self) -> Option<FaultMode> {
        match self {
            FaultAction::Timeout { .. } => Some(FaultMode::Timeout),
            FaultAction::ApiError { .. } => Some(FaultMode::ApiError),
            FaultAction::RateLimit { .. } => Some(FaultMode::RateLimit),
            FaultAction::BodyCut { .. } => None,
        }
    }
}
