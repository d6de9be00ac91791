//! Provider dialects other than OpenAI chat completions: Anthropic Messages
//! and Gemini `generateContent`.
//!
//! Real failover often crosses dialects, and that is where history gets lost
//! (all but the last system message, tool results dropped as "orphaned").
//! This module holds the pure parts of crossing over, so that the simulated
//! upstreams and the reference proxy share one definition of each dialect:
//!
//! - strict request validation, as the real API does it, answering with that
//!   API's own 400 body, and yielding the conversation as OpenAI
//!   [`ChatMessage`]s so the simulated model and the conversation index work
//!   unchanged ([`anthropic::validate`], [`gemini::validate`]);
//! - the dialect's responses, whole and streamed, from a [`Reply`], and
//!   one entry point that writes an answer or an error in any dialect,
//!   OpenAI's included ([`frames`]);
//! - translation of an OpenAI request into the dialect and of the dialect's
//!   answer back to OpenAI, whole or as a stream fed chunk by chunk
//!   ([`StreamTranslator`]);
//! - [`survival::survival`]: which system messages, tool results and user
//!   turns of the client's request reached an upstream.
//!
//! [`bridge`] gathers what the reference proxy calls, by [`Dialect`].

pub mod anthropic;
pub mod bridge;
pub mod frames;
pub mod gemini;
mod grouping;
mod history;
pub mod openai_tools;
pub mod survival;
mod tools;

#[cfg(test)]
mod roundtrip;
#[cfg(test)]
mod testgen;

use cb_wire::openai::{ChatMessage, Envelope, FrameWriter, Message, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

pub use survival::{survival, Share, Survival};

/// The wire format an upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// OpenAI chat completions (`POST /v1/chat/completions`).
    #[default]
    Openai,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
}

impl Dialect {
    /// Every dialect, in the order the command line lists them.
    pub const ALL: [Dialect; 3] = [Dialect::Openai, Dialect::Anthropic, Dialect::Gemini];

    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Openai => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dialect name that is none of `openai`, `anthropic`, `gemini`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect {0:?}: use openai, anthropic or gemini")]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownDialect(s.to_string()))
    }
}

/// Why an answer ended, in OpenAI's words (`finish_reason`). Each dialect
/// maps its own reasons onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end or a stop sequence.
    #[default]
    Stop,
    /// The output token limit.
    Length,
    /// The model asked for tool calls.
    ToolCalls,
    /// A safety filter or a refusal.
    ContentFilter,
}

impl FinishReason {
    /// The OpenAI `finish_reason` string.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
        }
    }
}

/// One tool call of an answer, dialect-neutral.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id (`call_...`, `toolu_...`); Gemini answers may have none,
    /// and then one is made up from the call's position.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Value,
}

/// What an upstream answers, before it is put in a dialect's shape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The assistant text.
    pub text: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the answer ended.
    pub finish: FinishReason,
    /// Token counts.
    pub usage: Usage,
}

impl Reply {
    /// A text answer that ended normally.
    pub fn text(text: &str, usage: Usage) -> Self {
        Reply {
            text: text.to_string(),
            tool_calls: Vec::new(),
            finish: FinishReason::Stop,
            usage,
        }
    }
}

/// A request the dialect's real API would refuse: the HTTP status and the
/// API's own error body, ready to send.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Rejection {
    /// The HTTP status (400).
    pub status: u16,
    /// The message inside `body`, for logs.
    pub message: String,
    /// The error body in the dialect's shape.
    pub body: Value,
    /// Whether the rule broken is one of tool calls: a call id the dialect
    /// refuses, a call without its result or a result without its call, a
    /// function name it refuses. What tool-call integrity counts.
    pub about_tools: bool,
}

impl Rejection {
    /// The same rejection, marked as one of the tool-call rules.
    #[must_use]
    pub(crate) fn on_tools(self) -> Self {
        Rejection {
            about_tools: true,
            ..self
        }
    }
}

/// A request that passed a dialect's validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    /// The model id (Anthropic: the body's `model`; Gemini: from the path).
    pub model: String,
    /// Whether the answer must be streamed.
    pub stream: bool,
    /// The output token limit the request set, if any.
    pub max_tokens: Option<u64>,
    /// The conversation in OpenAI shape, in order: the system instruction
    /// first (one `system` message per system block or part), then one
    /// `user` message per user text block (images ride with the text next to
    /// them), one `tool` message (plain text) per tool result, one
    /// `assistant` message per assistant text block (content null when the
    /// message holds only tool calls).
    pub messages: Vec<ChatMessage>,
    /// Whether the request ends with an assistant (model) message, which the
    /// API treats as a prefill of its answer.
    pub prefill: bool,
}

/// What a translation into a dialect changed or could not carry over, so a
/// report can say it. Nothing here is a lost turn: every system message,
/// user turn and tool result is kept, in some form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Note {
    /// Consecutive messages of one role were merged into one (their parts
    /// kept in order).
    MergedMessages {
        /// `user` or `assistant` (a tool result counts as `user`).
        role: String,
        /// How many client messages went into the merged one.
        count: usize,
    },
    /// System messages that sat after the first turn were moved to the
    /// top-level system instruction (their order kept).
    SystemMoved {
        /// How many.
        count: usize,
    },
    /// The conversation started with an assistant message; a placeholder
    /// user message was put before it.
    LeadingUserInserted,
    /// A tool result that answers no tool call of the assistant message
    /// right before it was sent as user text instead.
    OrphanToolResult {
        /// Its `tool_call_id`.
        id: String,
    },
    /// A tool call without a result got a placeholder error result.
    UnansweredToolCall {
        /// The call id.
        id: String,
    },
    /// Tool-call arguments that are not a JSON object were wrapped or
    /// replaced (`{}` when they do not parse).
    ToolArgumentsRewritten {
        /// The call id.
        id: String,
    },
    /// A message with no content got a placeholder text.
    EmptyContent {
        /// The role.
        role: String,
    },
    /// A content part the dialect cannot carry was replaced by a text that
    /// names it.
    UnsupportedPart {
        /// The part's `type`.
        part: String,
    },
    /// A request parameter the dialect has no equivalent for was left out.
    DroppedParameter {
        /// The OpenAI parameter name.
        name: String,
    },
    /// A parameter was changed to fit the dialect's range.
    AdjustedParameter {
        /// The OpenAI parameter name.
        name: String,
        /// What was done.
        detail: String,
    },
    /// `max_tokens` was not given and the dialect requires it.
    DefaultMaxTokens {
        /// The value supplied.
        value: u64,
    },
    /// A JSON-schema keyword the dialect's schema subset lacks was removed.
    SchemaKeywordDropped {
        /// The keyword.
        keyword: String,
        /// Where (a path like `tools[0].parameters.properties.city`).
        at: String,
    },
}

/// An OpenAI request that cannot be translated at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The body is not a JSON object.
    #[error("the client request is not a JSON object; send a chat-completions body")]
    NotAnObject,
    /// `messages` is missing or not an array.
    #[error("the client request has no `messages` array; send at least one message")]
    NoMessages,
}

/// A request translated into a dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    /// The path (and query) to send it to, such as `/v1/messages` or
    /// `/v1beta/models/gemini-x:streamGenerateContent?alt=sse`.
    pub path: String,
    /// The dialect's request body.
    pub body: Value,
    /// What the translation changed or left out, in order.
    pub notes: Vec<Note>,
}

/// An upstream answer (whole body) that cannot be turned into an OpenAI
/// completion.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    /// The body is not JSON.
    #[error("the upstream answer is not JSON ({0}); treat it as a malformed answer")]
    NotJson(String),
    /// The body is the dialect's error object.
    #[error("the upstream answered with an error: {0}")]
    Upstream(String),
    /// The body lacks what every answer has.
    #[error("the upstream answer is malformed: {0}")]
    Malformed(String),
}

/// A streamed upstream answer that is not a complete answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// An event that is not what the dialect sends.
    #[error("malformed upstream stream at event {event}: {detail}; the answer is broken, do not present it as complete")]
    Malformed {
        /// The 1-based event number.
        event: usize,
        /// What was wrong.
        detail: String,
    },
    /// The body ended before the dialect's end of answer.
    #[error(
        "the upstream stream was cut after {events} events: {detail}; the answer is incomplete"
    )]
    Cut {
        /// Events received.
        events: usize,
        /// What was missing.
        detail: String,
    },
    /// The upstream sent an error event inside the stream.
    #[error("the upstream sent an error in the stream after {events} events: {message}")]
    Upstream {
        /// Events received before it.
        events: usize,
        /// The error's message.
        message: String,
    },
}

/// Turns a dialect's streamed answer into OpenAI chat-completion chunks.
/// Feed it the upstream body's bytes as they arrive, in pieces of any size;
/// each call returns the OpenAI server-sent-event frames they complete.
pub trait StreamTranslator: Send {
    /// The next bytes of the upstream body; returns the OpenAI frames
    /// (`data: {...}\n\n`, and `data: [DONE]\n\n` once the answer is
    /// complete) that they complete, possibly none.
    ///
    /// # Errors
    /// The stream is malformed or carries an error event; nothing more
    /// should be fed, and the client must see the answer as broken.
    fn feed(&mut self, bytes: &[u8]) -> Result<String, StreamError>;

    /// The upstream body ended; returns the last frames (ending with
    /// `data: [DONE]`) when the answer was complete.
    ///
    /// # Errors
    /// The stream ended before the answer's end (cut), or mid-event.
    fn finish(&mut self) -> Result<String, StreamError>;
}

/// How the stream translators read a provider's event stream
/// ([`cb_wire::sse::SseReader`]): a body that ends inside a line is cut (a
/// provider always ends its last line; a truncated one is what a broken
/// connection leaves), and nothing is redacted (what is translated is the
/// client's answer, redacted where the harness keeps it).
const STREAM_READING: cb_wire::sse::Options = cb_wire::sse::Options {
    redact: false,
    strict_end: true,
};

/// How a stream translator labels its OpenAI chunks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChunkOptions {
    /// `created` of every chunk (seconds since the epoch; injected).
    pub created: u64,
    /// Send the final usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    /// `id` and `model` to use until (or unless) the stream names its own.
    pub id: String,
    /// See `id`.
    pub model: String,
}

impl ChunkOptions {
    /// The one OpenAI frame writer ([`FrameWriter`]) labelled with these
    /// options.
    pub fn writer(&self) -> FrameWriter {
        FrameWriter::new(Envelope {
            id: &self.id,
            model: &self.model,
            created: self.created,
        })
        .include_usage(self.include_usage)
    }
}

impl ToolCall {
    /// The call as the OpenAI writer takes it.
    fn openai(&self) -> cb_wire::openai::ToolCall<'_> {
        cb_wire::openai::ToolCall {
            id: &self.id,
            name: &self.name,
            arguments: &self.arguments,
        }
    }
}

/// A translated whole answer as an OpenAI `chat.completion`: its content
/// null when it holds tool calls and no text, as OpenAI sends it.
fn completion(
    options: &ChunkOptions,
    text: &str,
    tool_calls: &[ToolCall],
    finish: FinishReason,
    usage: Usage,
) -> Value {
    let calls: Vec<_> = tool_calls.iter().map(ToolCall::openai).collect();
    let message = Message {
        text,
        reasoning: None,
        tool_calls: &calls,
    };
    options.writer().completion(message, finish.as_str(), usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialect_names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.as_str().parse::<Dialect>().unwrap(), d);
            assert_eq!(
                serde_json::to_value(d).unwrap(),
                Value::String(d.to_string())
            );
        }
        assert_eq!(" Gemini ".parse::<Dialect>().unwrap(), Dialect::Gemini);
        let err = "bedrock".parse::<Dialect>().unwrap_err();
        assert!(err.to_string().contains("use openai, anthropic or gemini"));
    }

    #[test]
    fn notes_serialise_with_a_kind_tag() {
        let note = Note::OrphanToolResult {
            id: "call_1".into(),
        };
        assert_eq!(
            serde_json::to_value(&note).unwrap(),
            serde_json::json!({"kind": "orphan_tool_result", "id": "call_1"})
        );
        assert_eq!(
            serde_json::to_value(FinishReason::ToolCalls).unwrap(),
            "tool_calls"
        );
    }
}
