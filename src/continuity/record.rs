//! The `run` suite's own row: one per failover event, the columns of
//! `events.csv` and the input of its summary.

use crate::faults::FaultMode;
use crate::scoring::{Verdict, VerdictMethod};
use serde::{Deserialize, Serialize};

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
