//! The rows every suite records: one per request sent by the driver, one per
//! attempt an upstream saw. These are the columns of `turns.csv` and
//! `attempts.csv`, and the input of scoring and statistics. A suite's own
//! rows (the `run` suite's failover events) live in the suite.

use crate::faults::Role;
use serde::{Deserialize, Serialize};

/// One request the driver sent to a system under test, and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// Run index, from 1.
    pub run: u32,
    /// System under test.
    pub system: String,
    /// Conversation id.
    pub conversation: String,
    /// Turn number, from 1.
    pub turn: u32,
    /// Number of turns in the conversation.
    pub turns: u32,
    /// Whether this is the final (probe) turn.
    pub is_final: bool,
    /// Number of messages in the request.
    pub messages_sent: u32,
    /// Milliseconds from the start of the run to the request being sent.
    pub sent_at_ms: f64,
    /// HTTP status returned to the client, if a response arrived.
    pub status: Option<u16>,
    /// End-to-end client latency in milliseconds: request sent to last byte
    /// received (or to the failure).
    pub latency_ms: f64,
    /// The assistant text returned, empty if none.
    pub answer: String,
    /// Why the request produced no usable answer, if it did not.
    pub error: Option<String>,
}

/// One request an upstream received, and what it did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// Run index the upstream was serving, from 1.
    pub run: u32,
    /// System the upstream belongs to.
    pub system: String,
    /// Primary or fallback.
    pub role: Role,
    /// Conversation id recognised from the first user message; empty when
    /// the request matched no conversation.
    pub conversation: String,
    /// Turn number: the number of user messages received.
    pub turn: u32,
    /// Attempt number for this (run, system, role, conversation, turn), from 1.
    pub attempt: u32,
    /// Milliseconds from the upstream clock's epoch to arrival.
    pub arrived_ms: f64,
    /// What the upstream did: `ok`, `timeout_held`, `api_error`,
    /// `rate_limited`, or `bad_request`.
    pub action: String,
    /// HTTP status sent, if any (none when a held connection was abandoned).
    pub status: Option<u16>,
    /// The `Retry-After` sent with a 429, in milliseconds (whole seconds on
    /// the wire); empty otherwise.
    pub retry_after_ms: Option<u64>,
    /// Number of messages in the request.
    pub messages: u32,
    /// Approximate input tokens (characters / 4).
    pub approx_tokens: u32,
    /// The `model` field received.
    pub model: String,
    /// Whether the request asked for a stream.
    pub stream: bool,
    /// The request's other top-level parameters, by name, sorted and
    /// space-separated (`max_tokens seed temperature`); empty when none.
    /// Shows which provider parameters a gateway forwards.
    #[serde(default)]
    pub params: String,
    /// Whether the client went away before the upstream finished.
    pub client_gave_up: bool,
    /// Milliseconds from arrival until the upstream finished or saw the
    /// client go away.
    pub duration_ms: f64,
}
