//! The rows every suite records: one per request sent by the driver, one per
//! attempt an upstream saw. These are the columns of `turns.csv` and
//! `attempts.csv`, and the input of scoring and statistics. A suite's own
//! rows (the `run` suite's failover events) live in the suite.
//!
//! A turn's answer is kept whole in memory (scoring and bleed detection read
//! all of it) but written cut at [`ANSWER_BOUND`] characters, with its full
//! length beside it, so that a gateway sending megabytes per answer cannot
//! make turns.csv as large as everything it sent.

use crate::contract::{ContractCheck, ContractName};
use crate::role::Role;
use serde::{Deserialize, Serialize};

/// Most characters of an answer written to a file (turns.csv); the
/// `answer_chars` column keeps the full length. Ten times a long chat
/// answer; far more than any scorer needs to see in a report.
pub const ANSWER_BOUND: usize = 4000;

/// One request the driver sent to a system under test, and what came back.
/// Typed throughout: `turns.csv`'s columns are written and read by the
/// continuity suite, which owns that file.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// The assistant text returned, empty if none: whole in memory, cut at
    /// [`ANSWER_BOUND`] characters when written.
    pub answer: String,
    /// Length of the whole answer in characters (turns.csv holds at most
    /// [`ANSWER_BOUND`] of them); 0 in reports written before this column.
    pub answer_chars: u64,
    /// Why the request produced no usable answer, if it did not.
    pub error: Option<String>,
    /// Ids of other conversations whose anchor appeared in this answer
    /// (context bleed, on any turn), in order; empty when none.
    pub bleed_from: Vec<String>,
    /// Request sent to response headers, milliseconds, if they came.
    pub ttfb_ms: Option<f64>,
    /// A stream's request sent to its first non-empty content token,
    /// milliseconds, if one came.
    pub ttft_ms: Option<f64>,
    /// `choices[0].finish_reason` of the answer, if it carried one.
    pub finish_reason: Option<String>,
    /// Every answer contract that applied to the answer, with its outcome
    /// (a failure's carries its reason), in contract order; empty when none
    /// was checked.
    pub contracts: Vec<ContractCheck>,
}

impl TurnRecord {
    /// The contracts the answer broke, in contract order.
    pub fn violations(&self) -> impl Iterator<Item = ContractName> + '_ {
        self.contracts.iter().filter(|c| c.failed()).map(|c| c.name)
    }

    /// Cuts the in-memory answer to what a file holds ([`ANSWER_BOUND`]
    /// characters), freeing the rest; `answer_chars` keeps the full length.
    /// For the collector, once every check that reads the whole answer
    /// (scoring, bleed) has run, so a long run does not hold every answer.
    pub fn bound_answer(&mut self) {
        if let Some((end, _)) = self.answer.char_indices().nth(ANSWER_BOUND) {
            self.answer.truncate(end);
            self.answer.shrink_to_fit();
        }
    }
}

/// `text` cut at [`ANSWER_BOUND`] characters (borrowed: no copy).
pub fn bounded_answer(text: &str) -> &str {
    bounded_to(text, ANSWER_BOUND)
}

/// Most bytes of a field copied from a request into a record (a model
/// id, a parameter name, a user agent, an error text): 256. A longer one
/// is cut at a character boundary and marked ([`bounded_field`]), so a
/// client sending a 30 MB model id cannot make a log as large.
pub const FIELD_BOUND: usize = 256;

/// `text` as a record keeps it: whole when at most [`FIELD_BOUND`] bytes,
/// else its first bytes (at a character boundary) followed by
/// `…[cut: N bytes]` naming the full length. The one function every
/// record uses for a field that came from a peer.
pub fn bounded_field(text: &str) -> String {
    if text.len() <= FIELD_BOUND {
        return text.to_string();
    }
    let mut end = FIELD_BOUND;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[cut: {} bytes]", &text[..end], text.len())
}

/// `text` cut at `chars` characters (borrowed: no copy).
pub fn bounded_to(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod field_tests {
    use super::*;

    #[test]
    fn a_long_field_is_cut_and_marked() {
        assert_eq!(bounded_field("gpt-4o"), "gpt-4o");
        let long = "é".repeat(1000);
        let kept = bounded_field(&long);
        assert!(kept.ends_with("…[cut: 2000 bytes]"), "{kept}");
        assert!(kept.len() <= FIELD_BOUND + 24);
        assert!(kept.starts_with("éé"));
        let exact = "a".repeat(FIELD_BOUND);
        assert_eq!(bounded_field(&exact), exact);
    }
}

/// One request an upstream received, and what it did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// Run index, from 1: the run of the request's conversation. A
    /// request that named no known conversation (`conversation` empty) is
    /// given the earliest run in progress when it arrived; the runs of
    /// `run --runs N` overlap, so it may belong to the next.
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
    /// What the upstream did.
    pub action: AttemptAction,
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
    /// The request's other top-level parameters, by name, sorted; written
    /// space-separated (`max_tokens seed temperature`), empty when none.
    /// Shows which provider parameters a gateway forwards.
    #[serde(default, with = "space_separated")]
    pub params: Vec<String>,
    /// The degradation the answer got (`junk_prefix`, `slow_first_token`,
    /// ...); empty when none.
    #[serde(default)]
    pub degradation: String,
    /// Whether the client went away before the upstream finished.
    pub client_gave_up: bool,
    /// Milliseconds from arrival until the upstream finished or saw the
    /// client go away.
    pub duration_ms: f64,
    /// The model that produced the answer as the provider reported it, in
    /// front of a real provider (pass-through); `simulated` for the
    /// simulated model; empty when no answer was produced.
    #[serde(default)]
    pub answered_by: String,
    /// The answer's text as produced (before the wire cut it, after a
    /// degradation changed it), cut at [`ATTEMPT_ANSWER_BOUND`] characters,
    /// where it says what turns.csv does not: a real provider's answer, one
    /// a degradation changed, one on a faulted turn, one the wire cut.
    /// Empty when no answer was produced, and in a `run` for a plain
    /// simulated answer on another turn (the client got it as it was:
    /// turns.csv has it).
    #[serde(default)]
    pub answer: String,
    /// Why the provider behind a pass-through upstream gave no answer (its
    /// status and a redacted excerpt of its body, a timeout, a malformed
    /// reply); empty otherwise.
    #[serde(default)]
    pub provider_error: String,
    /// The tool calls the request carried, as this upstream's dialect
    /// judged them: none, each paired with its result, or refused by one of
    /// the dialect's tool-call rules (an id it does not accept, a call
    /// without its result).
    #[serde(default)]
    pub tools: ToolCalls,
}

/// The tool calls of one request, as the upstream's dialect judged them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalls {
    /// The request carried no tool call and no tool result.
    #[default]
    None,
    /// Every tool call was answered by its result, with ids the dialect
    /// accepts.
    Paired,
    /// The dialect refused the request for one of its tool-call rules.
    Refused,
}

impl ToolCalls {
    /// `Paired` when an accepted request carried any tool call or result.
    pub fn from_any(any: bool) -> Self {
        if any {
            ToolCalls::Paired
        } else {
            ToolCalls::None
        }
    }
}

/// Most characters of an answer kept in an attempt row: enough to read
/// what the model said, small enough for attempts.csv at scale.
pub const ATTEMPT_ANSWER_BOUND: usize = 200;

/// What an upstream did with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptAction {
    /// Answered normally.
    Ok,
    /// Held the connection without a byte (TIMEOUT).
    TimeoutHeld,
    /// Answered an error status other than a rate limit.
    ApiError,
    /// Answered a rate limit (429), with `Retry-After` when the fault has one.
    RateLimited,
    /// The request was malformed; answered 400.
    BadRequest,
    /// Started a 200 answer and broke the body off.
    BodyCut,
    /// Answered 200 with a degraded answer (see the `degradation` column).
    Degraded,
    /// The real provider behind a pass-through upstream failed (an error
    /// status, a timeout, a malformed or oversized reply): its error was
    /// passed on, see the `provider_error` column.
    ProviderError,
}

impl AttemptAction {
    /// The snake_case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptAction::Ok => "ok",
            AttemptAction::TimeoutHeld => "timeout_held",
            AttemptAction::ApiError => "api_error",
            AttemptAction::RateLimited => "rate_limited",
            AttemptAction::BadRequest => "bad_request",
            AttemptAction::BodyCut => "body_cut",
            AttemptAction::Degraded => "degraded",
            AttemptAction::ProviderError => "provider_error",
        }
    }
}

/// A list of words written as one space-separated field (CSV has no lists).
mod space_separated {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(words: &[String], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&words.join(" "))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        let text = String::deserialize(d)?;
        Ok(text.split_whitespace().map(str::to_string).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_answer_is_kept_whole_and_a_long_one_cut() {
        let short = "Your sister is called Oriane.";
        let mut record = TurnRecord {
            answer: short.into(),
            answer_chars: 29,
            ..TurnRecord::default()
        };
        assert_eq!(bounded_answer(&record.answer), short);
        record.bound_answer();
        assert_eq!((record.answer.as_str(), record.answer_chars), (short, 29));
        let mut long = TurnRecord {
            answer: "é".repeat(ANSWER_BOUND + 5),
            answer_chars: (ANSWER_BOUND + 5) as u64,
            ..TurnRecord::default()
        };
        long.bound_answer();
        assert_eq!(long.answer.chars().count(), ANSWER_BOUND);
        assert_eq!(long.answer_chars, (ANSWER_BOUND + 5) as u64);
    }

    #[test]
    fn actions_are_written_in_snake_case() {
        for (action, name) in [
            (AttemptAction::Ok, "ok"),
            (AttemptAction::TimeoutHeld, "timeout_held"),
            (AttemptAction::RateLimited, "rate_limited"),
            (AttemptAction::BodyCut, "body_cut"),
        ] {
            assert_eq!(action.as_str(), name);
            assert_eq!(serde_json::to_value(action).unwrap(), name);
        }
    }
}
