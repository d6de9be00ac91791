//! Scripted upstream behaviour for the failover catalogue: what each of a
//! conversation's two upstreams does with each request, decided by rules on
//! the attempt number, the time since the case started and what the
//! request carries (its model id, an assistant prefill, its parameters).
//!
//! Everything here is neutral and pure: an [`Act`] says what to do, not how
//! a dialect puts it on the wire; the upstream server executes it for real
//! (`crate::upstream::scripted`). [`Script::act`] is one pure function, so
//! every rule is tested without a socket.

use super::ErrorSpec;
use cb_wire::openai::ChatRequest;
use serde_json::Value;
use std::time::Duration;

/// What both upstreams of one scripted conversation do.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseScript {
    /// The primary's script.
    pub primary: Script,
    /// The fallback's script.
    pub fallback: Script,
    /// The clock that time rules ([`When::WithinClock`]) read: the case id,
    /// started by the harness when the case starts for a system, so the
    /// requests of one sequence share it.
    pub clock: String,
}

impl CaseScript {
    /// Both upstreams answer normally.
    pub fn answering(clock: &str) -> Self {
        CaseScript {
            primary: Script::answer(),
            fallback: Script::answer(),
            clock: clock.to_string(),
        }
    }

    /// The script of `role`.
    pub fn of(&self, role: super::Role) -> &Script {
        match role {
            super::Role::Primary => &self.primary,
            super::Role::Fallback => &self.fallback,
        }
    }
}

/// Rules tried in order; the first whose condition holds decides, and
/// `otherwise` when none does.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// `(condition, act)` pairs, in order.
    pub rules: Vec<(When, Act)>,
    /// What happens when no rule applies.
    pub otherwise: Act,
}

impl Script {
    /// Answer every request normally.
    pub fn answer() -> Self {
        Script::always(Act::answer())
    }

    /// The same act for every request.
    pub fn always(act: Act) -> Self {
        Script {
            rules: Vec::new(),
            otherwise: act,
        }
    }

    /// `first` for the first `n` attempts, then `then`.
    pub fn first(n: u32, first: Act, then: Act) -> Self {
        Script {
            rules: vec![(When::AttemptAtMost(n), first)],
            otherwise: then,
        }
    }

    /// `act` when `when` holds, otherwise `otherwise`.
    pub fn when(when: When, act: Act, otherwise: Act) -> Self {
        Script {
            rules: vec![(when, act)],
            otherwise,
        }
    }

    /// What to do with the request `facts` describe.
    pub fn act(&self, facts: &Facts<'_>) -> Act {
        self.rules
            .iter()
            .find(|(when, _)| when.holds(facts))
            .map_or_else(|| self.otherwise.clone(), |(_, act)| act.clone())
    }
}

/// A condition on one request.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    /// The attempt number (from 1, per upstream and conversation) is at
    /// most this.
    AttemptAtMost(u32),
    /// Less than this has passed since the case's clock started (always
    /// true when it has not been started).
    WithinClock(Duration),
    /// The last message is an assistant message (a prefill).
    EndsWithAssistant,
    /// The `model` is not this id.
    ModelIsNot(String),
    /// The request has no top-level parameter of this name.
    LacksParam(String),
    /// Thinking is not switched off: neither `enable_thinking: false` nor
    /// `chat_template_kwargs.enable_thinking: false` (Qwen3's two ways).
    ThinkingNotDisabled,
}

impl When {
    fn holds(&self, facts: &Facts<'_>) -> bool {
        let request = facts.request;
        match self {
            When::AttemptAtMost(n) => facts.attempt <= *n,
            When::WithinClock(span) => facts.since_start.is_none_or(|t| t < *span),
            When::EndsWithAssistant => ends_with_assistant(request),
            When::ModelIsNot(model) => request.model != *model,
            When::LacksParam(name) => !request.extra.contains_key(name),
            When::ThinkingNotDisabled => !thinking_disabled(request),
        }
    }
}

/// Whether the request's last message is an assistant message (a prefill).
pub fn ends_with_assistant(request: &ChatRequest) -> bool {
    request
        .messages
        .last()
        .is_some_and(|m| m.role == "assistant")
}

/// Whether the request switches thinking off (`enable_thinking: false` at
/// the top level or in `chat_template_kwargs`).
pub fn thinking_disabled(request: &ChatRequest) -> bool {
    let off = |v: Option<&Value>| v == Some(&Value::Bool(false));
    off(request.extra.get("enable_thinking"))
        || off(request
            .extra
            .get("chat_template_kwargs")
            .and_then(|k| k.get("enable_thinking")))
}

/// What a rule sees of one request.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// Attempt number at this upstream for this conversation, from 1.
    pub attempt: u32,
    /// Time since the case's clock started, if it has.
    pub since_start: Option<Duration>,
    /// The request as received.
    pub request: &'a ChatRequest,
}

/// What an upstream does with one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Answer, shaped as given.
    Answer(Shape),
    /// Answer this error status with its body.
    Error(ErrorSpec),
    /// Accept the request and send no byte for `hold` (or until the client
    /// goes away), then end as `then` says.
    Hold {
        /// How long to hold.
        hold: Duration,
        /// What happens when the hold runs out with the client still there.
        then: HoldEnd,
    },
    /// Reset the connection (TCP RST) before any byte of a response.
    Reset,
    /// Accept the request, send no byte for `after`, then answer this
    /// error (a 429 that comes late, while another request's cooldown is
    /// running).
    LateError {
        /// The silence before the error.
        after: Duration,
        /// The error.
        error: ErrorSpec,
    },
}

impl Act {
    /// A normal answer.
    pub fn answer() -> Self {
        Act::Answer(Shape::default())
    }

    /// An answer shaped by `change` applied to the normal shape.
    pub fn shaped(change: impl FnOnce(&mut Shape)) -> Self {
        let mut shape = Shape::default();
        change(&mut shape);
        Act::Answer(shape)
    }
}

/// How a held connection ends when the hold runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEnd {
    /// A 504 with an error body (the provider gave up).
    GatewayTimeout,
    /// The connection is closed without a response.
    Close,
}

/// The shape of an answer: a normal answer unless a field says otherwise.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// The whole answer comes this late: a plain body (and its headers)
    /// after it, a stream's first content token after it (a reasoning
    /// model at work).
    pub delay: Option<Duration>,
    /// A stream's headers and role chunk go at once, its first content
    /// token after this (a plain body is not affected).
    pub first_token_after: Option<Duration>,
    /// How the answer ends.
    pub end: End,
    /// A stream gets one event that is not JSON after this many content
    /// chunks; every content chunk is still sent.
    pub malformed_after: Option<usize>,
    /// The answer carries reasoning text (`reasoning_content`) before its
    /// content, as a thinking model does unless told not to.
    pub reasoning: bool,
}

/// How an answer ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum End {
    /// Complete: a stream's finish chunk, usage when asked, `data: [DONE]`.
    #[default]
    Complete,
    /// A stream complete at the HTTP level, finish chunk and usage
    /// included, but without `data: [DONE]`.
    NoDone,
    /// The body breaks off: a stream after this many content chunks, no
    /// finish chunk, no `data: [DONE]`; a plain body halfway.
    CutAfter(usize),
    /// A stream sends this many content chunks, goes silent for `silent`,
    /// then the connection is aborted (no finish chunk, no `data:
    /// [DONE]`), as a real stall ends: the provider's side gives up on the
    /// connection, it does not end the body.
    StallAfter {
        /// Content chunks sent before the silence.
        tokens: usize,
        /// How long the stream is silent before it closes.
        silent: Duration,
    },
    /// A stream sends this many content chunks, then only keep-alive
    /// comments (`: ping`), one every `every`, for `silent`, then the
    /// connection closes with no finish chunk and no `data: [DONE]` (a
    /// provider that stopped generating but whose router keeps the
    /// connection warm). A plain body stalls as [`End::StallAfter`] does.
    KeepAliveAfter {
        /// Content chunks sent before the keep-alives.
        tokens: usize,
        /// Gap between two keep-alive comments.
        every: Duration,
        /// How long keep-alives are sent before the connection closes.
        silent: Duration,
    },
    /// A plain body ends cleanly halfway through its JSON: complete at
    /// the HTTP level, a 200 that is not the chat completion it claims to
    /// be. A stream sends one content chunk, then its body ends cleanly
    /// (no finish chunk, no `data: [DONE]`).
    HalfBody,
    /// A stream sends this many content chunks, then its body ends
    /// cleanly: no finish chunk, no `data: [DONE]`, the rest of the answer
    /// missing (a relay that ends its own stream when its provider's
    /// broke). A plain body carries the text cut to this many words, its
    /// finish reason unchanged.
    TruncatedAfter(usize),
    /// The answer stops after this many words with `finish_reason:
    /// "length"` (and the usage of what was sent), complete otherwise: a
    /// stream's finish chunk, usage and `data: [DONE]`; a plain body
    /// whole. An honest partial answer: the client can see that it is cut.
    LengthAfter(usize),
    /// A stream sends this many content chunks (0: only its opening
    /// frame), then an error event in its dialect (an overloaded provider
    /// giving up on the answer it started), then its body ends: no finish,
    /// no end of stream. A plain body is a 200 whose body is the
    /// dialect's error object.
    ErrorAfter(usize),
    /// A plain body's headers and first half go at once, then silence for
    /// `silent`, then the connection breaks off. A stream sends its
    /// headers and role chunk, then the same silence, then the connection
    /// is aborted.
    BodyStall {
        /// How long the body is silent before the connection goes.
        silent: Duration,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use cb_wire::openai::ChatMessage;
    use serde_json::json;

    fn request(model: &str, extra: Value, last: &str) -> ChatRequest {
        ChatRequest {
            model: model.into(),
            messages: vec![ChatMessage::new("user", "hi"), ChatMessage::new(last, "x")],
            stream: false,
            stream_options: None,
            extra: match extra {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            },
        }
    }

    fn facts(request: &ChatRequest, attempt: u32, since: Option<u64>) -> Facts<'_> {
        Facts {
            attempt,
            since_start: since.map(Duration::from_secs),
            request,
        }
    }

    fn error(status: u16) -> Act {
        Act::Error(ErrorSpec::new(status, ErrorKind::Server, "x"))
    }

    #[test]
    fn attempt_and_time_rules() {
        let r = request("m", json!({}), "user");
        let once = Script::first(1, error(500), Act::answer());
        assert_eq!(once.act(&facts(&r, 1, None)), error(500));
        assert_eq!(once.act(&facts(&r, 2, None)), Act::answer());
        let flap = Script::when(
            When::WithinClock(Duration::from_secs(5)),
            error(503),
            Act::answer(),
        );
        assert_eq!(flap.act(&facts(&r, 9, Some(4))), error(503));
        assert_eq!(flap.act(&facts(&r, 9, Some(5))), Act::answer());
        assert_eq!(flap.act(&facts(&r, 1, None)), error(503), "not started yet");
    }

    #[test]
    fn request_rules() {
        let prefill = request("m", json!({}), "assistant");
        let plain = request("m", json!({}), "user");
        let rejects = Script::when(When::EndsWithAssistant, error(400), Act::answer());
        assert_eq!(rejects.act(&facts(&prefill, 1, None)), error(400));
        assert_eq!(rejects.act(&facts(&plain, 1, None)), Act::answer());

        let own = Script::when(When::ModelIsNot("fb".into()), error(404), Act::answer());
        assert_eq!(
            own.act(&facts(&request("p", json!({}), "user"), 1, None)),
            error(404)
        );
        assert_eq!(
            own.act(&facts(&request("fb", json!({}), "user"), 1, None)),
            Act::answer()
        );

        let thinking = Act::shaped(|s| s.reasoning = true);
        let needs = Script {
            rules: vec![
                (When::LacksParam("max_tokens".into()), error(400)),
                (When::ThinkingNotDisabled, thinking.clone()),
            ],
            otherwise: Act::answer(),
        };
        let act = |extra| needs.act(&facts(&request("m", extra, "user"), 1, None));
        assert_eq!(act(json!({})), error(400));
        assert_eq!(act(json!({"max_tokens": 10})), thinking);
        assert_eq!(
            act(json!({"max_tokens": 10, "enable_thinking": false})),
            Act::answer()
        );
        assert_eq!(
            act(json!({"max_tokens": 10, "chat_template_kwargs": {"enable_thinking": false}})),
            Act::answer()
        );
        assert_eq!(
            act(json!({"max_tokens": 10, "enable_thinking": "false"})),
            thinking,
            "only a JSON false switches thinking off"
        );
    }
}
