//! The rows the harness records: one per request sent by the driver, one per
//! failover event, one per attempt an upstream saw. These are the columns of
//! `turns.csv`, `events.csv` and `attempts.csv`, and the input of scoring and
//! statistics.

use crate::faults::{FaultMode, Role};
use crate::scoring::{Verdict, VerdictMethod};
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

/// One failover event: a (run, system, conversation) whose final turn was
/// faulted at the primary upstream, with its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Run index, from 1.
    pub run: u32,
    /// System under test.
    pub system: String,
    /// Conversation id.
    pub conversation: String,
    /// Number of turns in the conversation.
    pub turns: u32,
    /// The fault executed at the primary on the final turn.
    pub fault_mode: FaultMode,
    /// HTTP status the client received, if any.
    pub client_status: Option<u16>,
    /// End-to-end client latency of the final turn in milliseconds.
    pub latency_ms: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Which scorer decided the verdict.
    pub method: VerdictMethod,
    /// Why the scorer decided so (or why the request failed).
    pub reason: String,
    /// Ids of other conversations whose anchor appeared in the answer,
    /// separated by `;` (context bleed). Empty when none.
    pub bleed_from: String,
    /// The first 160 characters of the answer.
    pub answer_excerpt: String,
    /// Requests the primary upstream saw for this final turn.
    pub primary_attempts: u32,
    /// Requests the fallback upstream saw for this final turn.
    pub fallback_attempts: u32,
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
