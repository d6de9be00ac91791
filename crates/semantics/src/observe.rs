//! Sending one case request through a system and seeing what happened:
//! the client's view (status, the answer against the simulated model's
//! canonical one, `finish_reason`, `model`, `usage`, wall time) and every
//! attempt the system's upstreams saw for it, read from their attempt log
//! and the scripts' details, never from a header a gateway may strip.

use crate::config::SemanticsConfig;
use cb_base::record::AttemptAction;
use cb_client::{send, Exchange, Target};
use cb_contracts::{ContractInput, Language};
use cb_faults::Role;
use cb_upstream::log::TurnKey;
use cb_upstream::{SimulatedModel, UpstreamContext};
use cb_wire::openai::ChatRequest;
use cb_wire::sse::ClientProfile;
use serde::Serialize;
use std::time::Duration;

/// Longest wait, after a request's answer, for its upstream attempts still
/// in flight to be recorded.
const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// What the client saw of one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientView {
    /// The status, if a response came.
    pub status: Option<u16>,
    /// Why there is no usable answer, if there is none.
    pub error: Option<String>,
    /// Whether the client got a usable answer (2xx, readable to its end).
    pub answered: bool,
    /// Whether that answer is the simulated model's whole answer, no more,
    /// no less.
    pub complete: bool,
    /// Whether that answer is an honest part of the whole answer: not
    /// empty, the whole answer's beginning, and `finish_reason: "length"`
    /// saying it is cut.
    pub marked_partial: bool,
    /// Characters of the answer the client got.
    pub answer_chars: usize,
    /// Characters of the whole answer.
    pub expected_chars: usize,
    /// `finish_reason` of the answer.
    pub finish_reason: Option<String>,
    /// The `model` the answer names.
    pub model: Option<String>,
    /// The `model` values the answer names, in order: a plain body's, or
    /// a stream's, a run of chunks naming the same one kept once, the last
    /// chunk's last (a stream whose chunks disagree names two or more).
    pub models: Vec<String>,
    /// Whether the answer carried `usage`.
    pub usage: bool,
    /// Its `completion_tokens`, when it had a number there.
    pub completion_tokens: Option<u32>,
    /// Its `prompt_tokens`, when it had a number there.
    pub prompt_tokens: Option<u32>,
    /// The headers in which the system said how it routed the request
    /// (lowercase name, value; see [`cb_client::routing_header`]).
    pub routing: Vec<(String, String)>,
    /// The wait an error stated before a retry, milliseconds (wherever it
    /// stated it); `None` for an answer or an error that states none.
    pub stated_wait_ms: Option<u64>,
    /// Request sent to response headers, milliseconds, if they came: what
    /// a header says was written then, before anything the system did
    /// later (a failover after a stream's first event).
    pub headers_ms: Option<f64>,
    /// The simulated model's token count of the answer the client got
    /// ([`cb_wire::openai::approx_tokens`]).
    pub answer_tokens: u32,
    /// Request sent to last byte (or failure), milliseconds.
    pub latency_ms: f64,
    /// Whether the request was cut at the case's bound.
    pub hung: bool,
    /// Answer contracts the answer broke, as `name: reason`.
    pub contract_violations: Vec<String>,
}

/// One attempt an upstream saw for a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptView {
    /// Which upstream.
    pub role: Role,
    /// Its attempt number for the conversation at that upstream, from 1.
    pub attempt: u32,
    /// Milliseconds from the request being sent to the attempt's arrival.
    pub at_ms: f64,
    /// The status the upstream sent, if any.
    pub status: Option<u16>,
    /// What the upstream did, as its attempt log records it.
    pub action: AttemptAction,
    /// What the upstream did, in words (`answer`, `error 503`, `reset
    /// before headers`, ...).
    pub act: String,
    /// The model id it received.
    pub model: String,
    /// Top-level parameter names it received.
    pub params: Vec<String>,
    /// Whether the request ended with an assistant prefill.
    pub prefill: bool,
    /// The `max_tokens` it received.
    pub max_tokens: Option<serde_json::Value>,
    /// Whether thinking was switched off.
    pub thinking_disabled: bool,
    /// Whether the answer carried reasoning text.
    pub reasoning: bool,
    /// Whether the system went away before the upstream finished.
    pub gave_up: bool,
    /// Milliseconds the upstream spent on it.
    pub duration_ms: f64,
    /// What the upstream billed for its answer; `None` when it sent none.
    pub billed: Option<cb_wire::openai::Usage>,
}

/// One request of a case, as sent and as seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sent {
    /// The id the upstreams logged it under.
    pub conversation: String,
    /// Milliseconds from the case's start to the request being sent.
    pub sent_ms: f64,
    /// The client's view.
    pub client: ClientView,
    /// Every attempt the upstreams saw, in arrival order.
    pub attempts: Vec<AttemptView>,
    /// The parameters the client sent (top-level, other than `model`,
    /// `messages`, `stream`, `stream_options`).
    pub params_sent: Vec<String>,
}

impl Sent {
    /// The attempts at `role`, in arrival order.
    pub fn at(&self, role: Role) -> impl Iterator<Item = &AttemptView> {
        self.attempts.iter().filter(move |a| a.role == role)
    }

    /// How many attempts `role` saw.
    pub fn count(&self, role: Role) -> u32 {
        self.at(role).count() as u32
    }

    /// Whether the answer came from the primary (the client was answered
    /// and the fallback saw nothing).
    pub fn served_by_primary(&self) -> bool {
        self.client.answered && self.count(Role::Fallback) == 0
    }
}

/// Where one request goes.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    /// The system.
    pub target: &'a Target,
    /// What every upstream shares.
    pub ctx: &'a UpstreamContext,
    /// The command's configuration.
    pub config: &'a SemanticsConfig,
    /// The system's upstream ports (primary, fallback).
    pub ports: Option<(u16, u16)>,
}

/// Sends `request` (logged as `conversation`) and observes it; it is cut
/// at `bound`. `case_start_ms` is the case's start on the upstream clock.
pub async fn send_one(
    client: &reqwest::Client,
    to: Destination<'_>,
    conversation: &str,
    request: &ChatRequest,
    bound: Duration,
    case_start_ms: f64,
) -> Sent {
    let Destination {
        target,
        ctx,
        config,
        ..
    } = to;
    let sent_ms = now_ms(ctx);
    let reply = send(client, target, request, config.systems.send_options(bound)).await;
    // A held connection the system gave up on is recorded when the
    // upstream notices, which can be just after the client's answer.
    for role in [Role::Primary, Role::Fallback] {
        let key = TurnKey {
            run: ctx.current_run(),
            system: &target.name,
            role,
            conversation,
            turn: 1,
        };
        ctx.log.settle_key(key, SETTLE_WAIT).await;
    }
    let attempts = attempts_of(ctx, &target.name, conversation, sent_ms);
    let mut params_sent: Vec<String> = request.extra.keys().cloned().collect();
    params_sent.sort_unstable();
    Sent {
        conversation: conversation.to_string(),
        sent_ms: sent_ms - case_start_ms,
        client: client_view(config, request, &reply, bound),
        attempts,
        params_sent,
    }
}

/// Milliseconds on the upstream clock (what `arrived_ms` counts).
pub fn now_ms(ctx: &UpstreamContext) -> f64 {
    ctx.epoch.elapsed().as_secs_f64() * 1000.0
}

/// The attempts of `conversation` at `system`'s upstreams that arrived
/// from `since_ms` on, with their scripts' details, in arrival order.
fn attempts_of(
    ctx: &UpstreamContext,
    system: &str,
    conversation: &str,
    since_ms: f64,
) -> Vec<AttemptView> {
    let details = ctx.log.details();
    let mut rows: Vec<_> = ctx
        .log
        .snapshot()
        .into_iter()
        .filter(|r| r.system == system && r.conversation == conversation)
        .filter(|r| r.arrived_ms >= since_ms - 0.5)
        .collect();
    rows.sort_by(|a, b| a.arrived_ms.total_cmp(&b.arrived_ms));
    rows.into_iter()
        .map(|r| {
            let detail = details.iter().find(|d| {
                d.system == r.system
                    && d.role == r.role
                    && d.conversation == r.conversation
                    && d.turn == r.turn
                    && d.attempt == r.attempt
            });
            AttemptView {
                role: r.role,
                attempt: r.attempt,
                at_ms: (r.arrived_ms - since_ms).max(0.0),
                status: r.status,
                action: r.action,
                act: detail.map_or_else(|| r.action.as_str().to_string(), |d| d.act.clone()),
                model: r.model,
                params: r.params,
                prefill: detail.is_some_and(|d| d.prefill),
                max_tokens: detail.and_then(|d| d.max_tokens.clone()),
                thinking_disabled: detail.is_some_and(|d| d.thinking_disabled),
                reasoning: detail.is_some_and(|d| d.reasoning),
                gave_up: r.client_gave_up,
                duration_ms: r.duration_ms,
                billed: detail.and_then(|d| d.billed),
            }
        })
        .collect()
}

/// What the user's client makes of a reply: the answer it returns, or
/// why it raises.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientReading {
    /// The text the client returns, if it returns one.
    pub answer: Option<String>,
    /// `finish_reason` of the answer.
    pub finish_reason: Option<String>,
    /// The `model` the answer names.
    pub model: Option<String>,
    /// The `model` values the answer names, in order, the last chunk's last.
    pub models: Vec<String>,
    /// Whether the answer carried `usage`.
    pub usage: bool,
    /// Its `completion_tokens`, when it had a number there.
    pub completion_tokens: Option<u32>,
    /// Its `prompt_tokens`, when it had a number there.
    pub prompt_tokens: Option<u32>,
    /// Request sent to the first non-empty content token, milliseconds.
    pub ttft_ms: Option<f64>,
    /// Why the client raises (or what status it got), if it does.
    pub error: Option<String>,
}

/// `reply` read by `profile`: a 2xx stream whose body ended cleanly is
/// read again as that client reads it (to the official SDKs a clean end
/// without `data: [DONE]` is the end of the answer, whatever came); a
/// plain body, a status or a body that broke off reads as the driver's
/// client read it (every profile agrees there). What is read again is
/// redacted again, as the driver's client redacts what it reads.
pub fn read_as(profile: ClientProfile, reply: &Exchange) -> ClientReading {
    let mut read = reply.clone();
    read.read_as(profile);
    ClientReading {
        answer: read.answer,
        finish_reason: read.finish_reason,
        model: read.model,
        models: read.models,
        usage: read.usage,
        completion_tokens: read.completion_tokens,
        prompt_tokens: read.prompt_tokens,
        ttft_ms: read.ttft_ms,
        error: read.error,
    }
}

/// The client's view of `reply` to `request`, cut at `bound`.
fn client_view(
    config: &SemanticsConfig,
    request: &ChatRequest,
    reply: &Exchange,
    bound: Duration,
) -> ClientView {
    let success = reply.status.is_some_and(|s| (200..300).contains(&s));
    let reading = read_as(config.client, reply);
    let answered = success && reading.answer.is_some() && reading.error.is_none();
    let expected = SimulatedModel::text_for(request);
    let contract_violations = match (answered, reply.status) {
        (true, Some(status)) => violations(config, request, reply, &reading, status),
        _ => Vec::new(),
    };
    let ClientReading {
        answer,
        finish_reason,
        model,
        models,
        usage,
        completion_tokens,
        prompt_tokens,
        error,
        ..
    } = reading;
    let got = answer.as_deref().unwrap_or_default();
    ClientView {
        status: reply.status,
        hung: error
            .as_deref()
            .is_some_and(|e| e.starts_with("no complete response within"))
            || reply.latency_ms >= bound.as_secs_f64() * 1000.0,
        error,
        answered,
        complete: answered && same_answer(got, &expected),
        marked_partial: answered
            && finish_reason.as_deref() == Some("length")
            && is_beginning(got, &expected),
        answer_chars: got.chars().count(),
        expected_chars: expected.chars().count(),
        finish_reason,
        model,
        models,
        usage,
        completion_tokens,
        prompt_tokens,
        routing: reply.routing.clone(),
        stated_wait_ms: reply.stated_wait_ms,
        headers_ms: reply.ttfb_ms,
        answer_tokens: cb_wire::openai::approx_tokens(got),
        latency_ms: reply.latency_ms,
        contract_violations,
    }
}

/// Whether `got` is a non-empty beginning of `expected` (outer whitespace
/// aside): what an answer cut short but not changed is.
fn is_beginning(got: &str, expected: &str) -> bool {
    let got = got.trim();
    !got.is_empty() && expected.trim_start().starts_with(got)
}

/// Whether `got` is `expected`: the same text (outer whitespace aside), or
/// the same JSON value for structured output.
fn same_answer(got: &str, expected: &str) -> bool {
    if got.trim() == expected.trim() {
        return true;
    }
    match (
        serde_json::from_str::<serde_json::Value>(got),
        serde_json::from_str::<serde_json::Value>(expected),
    ) {
        (Ok(a), Ok(b)) => a == b && b.is_object(),
        _ => false,
    }
}

/// The answer contracts `text` broke, as `name: reason`.
fn violations(
    config: &SemanticsConfig,
    request: &ChatRequest,
    reply: &Exchange,
    reading: &ClientReading,
    status: u16,
) -> Vec<String> {
    let ms = |v: Option<f64>| v.map(|ms| Duration::from_secs_f64(ms / 1000.0));
    // What the client read (its text, finish reason and first token), as
    // the verdict reads it; the headers' time is the wire's.
    let input = ContractInput {
        request,
        expected_language: Some(Language::En),
        status,
        stream: request.stream,
        text: reading.answer.as_deref().unwrap_or_default(),
        finish_reason: reading.finish_reason.as_deref(),
        ttft: ms(reading.ttft_ms),
        ttfb: ms(reply.ttfb_ms),
    };
    config
        .contracts
        .check(&input)
        .into_iter()
        .filter_map(|r| match r.outcome {
            Some(o) if o.is_fail() => Some(format!(
                "{}: {}",
                r.name.as_str(),
                o.reason().unwrap_or_default()
            )),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_honest_part_is_the_beginning_of_the_answer() {
        assert!(is_beginning(
            "Your sister is",
            "Your sister is called Oriane."
        ));
        assert!(is_beginning(
            " Your sister is ",
            "Your sister is called Oriane."
        ));
        assert!(!is_beginning("", "Your sister is called Oriane."));
        assert!(!is_beginning(
            "sister is called",
            "Your sister is called Oriane."
        ));
        assert!(!is_beginning(
            "Your sister is Ana",
            "Your sister is called Oriane."
        ));
    }

    #[test]
    fn answers_compare_as_text_or_as_json() {
        assert!(same_answer(" a b \n", "a b"));
        assert!(!same_answer("a b c", "a b"));
        assert!(same_answer(r#"{"x": 1, "y": "z"}"#, r#"{"y":"z","x":1}"#));
        assert!(!same_answer("1", "1.0"));
    }
}
