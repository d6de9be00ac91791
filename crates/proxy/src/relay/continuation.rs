//! Continuing a stream that broke after its first tokens reached the
//! client: the fallback is asked for the rest (the text sent as an
//! assistant prefill) or for the whole answer again (the text sent is
//! dropped from it), and its answer is spliced onto what the client has
//! without a duplicated or a missing word ([`Splice`]); when it cannot be,
//! the client gets a clean error event.

use super::read::{Kind, Read, Relayed};
use super::{aborted, cut, open, source_of, Chunk, NotOpened, Opened, Report, Source, DONE};
use crate::Continuation;
use axum::http::{header, HeaderValue};
use bytes::Bytes;
use cb_dialect::Dialect;
use reqwest::Url;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Continuing a broken stream from the fallback.
#[derive(Debug, Clone)]
pub struct Continuer {
    /// The HTTP client.
    pub client: reqwest::Client,
    /// The fallback's chat endpoint (OpenAI dialect).
    pub url: Url,
    /// The fallback's base URL, for a fallback in another dialect.
    pub base: String,
    /// The fallback's dialect: another one gets the request translated
    /// and its stream translated back.
    pub dialect: Dialect,
    /// The fallback's request (streamed), without a prefill.
    pub body: Value,
    /// How to continue.
    pub how: Continuation,
    /// Deadline of the fallback's response headers.
    pub attempt_timeout: Duration,
    /// The time-to-first-token limit of the continuation.
    pub first_token_timeout: Option<Duration>,
    /// The stall limit of the continuation.
    pub stall_timeout: Option<Duration>,
}

/// A clean error event for the client: the stream cannot be completed.
pub(super) fn error_event(message: &str) -> Bytes {
    Bytes::from(cb_wire::openai::frame::error_event(
        message,
        "proxy_error",
        Some("stream_broken"),
    ))
}

/// The fallback request with `text` as an assistant prefill.
pub(super) fn with_prefill(body: &Value, text: &str) -> Value {
    let mut body = body.clone();
    if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
        messages.push(json!({"role": "assistant", "content": text}));
    }
    body
}

/// How the continuation's text is joined to what the client has.
#[derive(Debug)]
pub(super) enum Splice {
    /// New text, unless the fallback ignored the prefill and repeats the
    /// text sent from its start: held until that is clear.
    Echo {
        sent: String,
        seen: String,
        held: Vec<Bytes>,
    },
    /// The fallback answers from the start: this much must match the text
    /// sent and is dropped.
    Skip(String),
    /// Everything goes on.
    Through,
}

/// What to do with one continuation event's content.
pub(super) enum Joined {
    /// Send the event with this content.
    Send(String),
    /// Hold the event (it may be an echo).
    Hold(String),
    /// Drop the held events and send the event with this content.
    DropHeld(String),
    /// Send these held events, then the event with this content.
    FlushHeld(Vec<Bytes>, String),
    /// The answers diverge.
    Mismatch,
}

impl Splice {
    pub(super) fn join(&mut self, piece: &str) -> Joined {
        match self {
            Splice::Through => Joined::Send(piece.to_string()),
            Splice::Skip(rest) => {
                if let Some(left) = rest.strip_prefix(piece) {
                    *rest = left.to_string();
                    Joined::Send(String::new())
                } else if let Some(new) = piece.strip_prefix(rest.as_str()) {
                    let new = new.to_string();
                    *self = Splice::Through;
                    Joined::Send(new)
                } else {
                    Joined::Mismatch
                }
            }
            Splice::Echo { sent, seen, held } => {
                seen.push_str(piece);
                if seen.len() > sent.len() && seen.starts_with(sent.as_str()) {
                    let new = seen[sent.len()..].to_string();
                    *self = Splice::Through;
                    Joined::DropHeld(new)
                } else if seen == sent {
                    *self = Splice::Through;
                    Joined::DropHeld(String::new())
                } else if sent.starts_with(seen.as_str()) {
                    Joined::Hold(piece.to_string())
                } else {
                    // Not an echo after all: what was held is new text,
                    // taken before the state (and its held list) goes.
                    let held = std::mem::take(held);
                    *self = Splice::Through;
                    Joined::FlushHeld(held, piece.to_string())
                }
            }
        }
    }

    pub(super) fn held(&mut self) -> Vec<Bytes> {
        match self {
            Splice::Echo { held, .. } => std::mem::take(held),
            Splice::Skip(_) | Splice::Through => Vec::new(),
        }
    }
}

/// A continuation event with `content` as its text and no role, as bytes;
/// `None` when nothing is left in it.
pub(super) fn rewrite(mut value: Value, content: &str) -> Option<Bytes> {
    let finish = value
        .pointer("/choices/0/finish_reason")
        .is_some_and(|f| !f.is_null());
    let usage = value.get("usage").is_some_and(|u| !u.is_null());
    if let Some(delta) = value
        .pointer_mut("/choices/0/delta")
        .and_then(Value::as_object_mut)
    {
        delta.remove("role");
        if content.is_empty() {
            delta.remove("content");
        } else {
            delta.insert("content".into(), Value::String(content.to_string()));
        }
    }
    let empty_delta = value
        .pointer("/choices/0/delta")
        .and_then(Value::as_object)
        .is_none_or(serde_json::Map::is_empty);
    (!empty_delta || finish || usage)
        .then(|| Bytes::from(cb_wire::openai::frame::data_frame(&value)))
}

/// How the `usage` of a continued stream counts what the client received.
///
/// The rule: after a prefill, the fallback generated only the rest, so
/// `completion_tokens` = the primary's part as the client received it
/// (characters / 4, rounded up: its cut stream carried no usage) + the
/// fallback's completion tokens, and `prompt_tokens` = the fallback's less
/// that prefill (it counted the text already sent as prompt). After a
/// restart the fallback generated the whole answer the client ends up
/// with (its repeated start was dropped, not sent twice), so its usage
/// stands as it is. `total_tokens` is their sum.
#[derive(Debug, Clone, Copy)]
struct Accounting {
    prefill: bool,
    sent_tokens: u32,
}

impl Accounting {
    /// Rewrites a chunk's `usage` (if it has one) by the rule.
    fn apply(self, value: &mut Value) {
        if !self.prefill {
            return;
        }
        let Some(usage) = value.get_mut("usage").and_then(Value::as_object_mut) else {
            return;
        };
        let read = |usage: &serde_json::Map<String, Value>, key: &str| {
            usage
                .get(key)
                .and_then(Value::as_u64)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        };
        let (Some(prompt), Some(completion)) = (
            read(usage, "prompt_tokens"),
            read(usage, "completion_tokens"),
        ) else {
            return;
        };
        let completion = completion.saturating_add(self.sent_tokens);
        let prompt = prompt.saturating_sub(self.sent_tokens);
        usage.insert("prompt_tokens".into(), json!(prompt));
        usage.insert("completion_tokens".into(), json!(completion));
        usage.insert(
            "total_tokens".into(),
            json!(prompt.saturating_add(completion)),
        );
    }
}

/// The fallback's answer to a continuation request: its status and body.
struct Answered {
    status: reqwest::StatusCode,
    body: Source,
}

impl Answered {
    fn status(&self) -> reqwest::StatusCode {
        self.status
    }
}

impl Continuer {
    /// Sends `body` to the fallback (translated to its dialect) and waits
    /// for its headers.
    async fn attempt(
        &self,
        body: &Value,
        deadline: Instant,
        budget: usize,
    ) -> Result<Answered, String> {
        let limit = Instant::now()
            .checked_add(self.attempt_timeout)
            .map_or(deadline, |t| t.min(deadline));
        let (url, bytes, headers) = match crate::dialect::outgoing(self.dialect, &self.base, body) {
            Some(Ok(out)) => (out.url, out.body, out.headers),
            Some(Err(e)) => return Err(e.to_string()),
            None => (
                self.url.clone(),
                Bytes::from(serde_json::to_vec(body).map_err(|e| e.to_string())?),
                &[][..],
            ),
        };
        let mut request = self.client.post(url).header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        match tokio::time::timeout_at(limit, request.body(bytes).send()).await {
            Ok(Ok(response)) => {
                let status = response.status();
                let source = source_of(response);
                let body = if status.is_success() {
                    crate::dialect::translate_source(self.dialect, source, body, budget)
                } else {
                    source
                };
                Ok(Answered { status, body })
            }
            Ok(Err(_)) => Err("the fallback could not be reached".into()),
            Err(_) => Err("the fallback sent no response headers in time".into()),
        }
    }

    /// Continues after `sent` reached the client; returns how it ended and
    /// the last item.
    pub(super) async fn run(
        self,
        sent: String,
        tx: &mpsc::Sender<Chunk>,
        deadline: Instant,
        budget: usize,
    ) -> (Report, Option<Chunk>) {
        let mut attempts = 1u32;
        let began = Instant::now();
        let since = move || Some(began.elapsed().as_secs_f64() * 1000.0);
        let failed = |why: String, attempts: u32| {
            (
                Report {
                    continuation: Some(format!("failed: {why}")),
                    fallback_attempts: attempts,
                    fallback_model: None,
                    latency_fallback_ms: since(),
                    reason: None,
                    cut: true,
                },
                Some(Ok(error_event(&format!(
                    "the upstream's stream broke and could not be continued: {why}"
                )))),
            )
        };
        let prefill = self.how == Continuation::Prefill && !sent.is_empty();
        let first = if prefill {
            self.attempt(&with_prefill(&self.body, &sent), deadline, budget)
                .await
        } else {
            self.attempt(&self.body, deadline, budget).await
        };
        let (response, splice, how) = match first {
            Ok(r) if r.status().is_success() && prefill => (
                r,
                Splice::Echo {
                    sent: sent.clone(),
                    seen: String::new(),
                    held: Vec::new(),
                },
                "prefill",
            ),
            Ok(r) if r.status().is_success() => (r, Splice::Skip(sent.clone()), "restart"),
            // The fallback does not take a prefill: ask for the whole
            // answer and drop what the client has.
            Ok(r) if prefill && r.status() == reqwest::StatusCode::BAD_REQUEST => {
                drop(r);
                attempts += 1;
                match self.attempt(&self.body, deadline, budget).await {
                    Ok(r) if r.status().is_success() => {
                        (r, Splice::Skip(sent.clone()), "prefill rejected, restart")
                    }
                    Ok(r) => {
                        return failed(
                            format!("the fallback answered HTTP {}", r.status().as_u16()),
                            attempts,
                        )
                    }
                    Err(why) => return failed(why, attempts),
                }
            }
            Ok(r) => {
                return failed(
                    format!("the fallback answered HTTP {}", r.status().as_u16()),
                    attempts,
                )
            }
            Err(why) => return failed(why, attempts),
        };
        let first_token_by = self
            .first_token_timeout
            .and_then(|t| Instant::now().checked_add(t));
        let opened = match open(response.body, first_token_by, deadline, budget).await {
            Ok(opened) => opened,
            Err(NotOpened::NoFirstToken) => {
                return failed("the fallback sent no first token in time".into(), attempts)
            }
            Err(NotOpened::Broke) => return failed("the fallback's stream broke".into(), attempts),
            Err(NotOpened::Deadline) => {
                return failed("the request's deadline passed".into(), attempts)
            }
            Err(NotOpened::OverBudget) => {
                return failed(
                    format!("the fallback's stream went past --request-memory ({budget} bytes) before its first token"),
                    attempts,
                )
            }
        };
        let model = self
            .body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
        let report = |how: &str| Report {
            continuation: Some(how.to_string()),
            fallback_attempts: attempts,
            fallback_model: model.clone(),
            latency_fallback_ms: since(),
            reason: None,
            cut: false,
        };
        let accounting = Accounting {
            prefill: how == "prefill",
            sent_tokens: cb_wire::openai::approx_tokens(&sent),
        };
        let mut splice = splice;
        let Opened {
            mut upstream,
            head,
            mut finished,
            ..
        } = opened;
        let mut queue: std::collections::VecDeque<Relayed> = head.into();
        // The stall timer counts content, as the primary's relay does.
        let mut last_content = Instant::now();
        loop {
            let line = match queue.pop_front() {
                Some(line) => line,
                None => match upstream
                    .next_line(
                        self.stall_timeout.and_then(|s| last_content.checked_add(s)),
                        deadline,
                    )
                    .await
                {
                    Read::Line(line) => line,
                    Read::End if finished => {
                        for held in splice.held() {
                            if tx.send(Ok(held)).await.is_err() {
                                return (
                                    Report {
                                        cut: true,
                                        ..report(how)
                                    },
                                    None,
                                );
                            }
                        }
                        return (report(how), Some(Ok(Bytes::from_static(DONE))));
                    }
                    Read::End | Read::Broke | Read::Silent => {
                        return failed("the fallback's stream broke too".into(), attempts)
                    }
                    Read::OverBudget => {
                        return failed(
                            format!(
                                "the fallback's stream went past --request-memory ({budget} bytes)"
                            ),
                            attempts,
                        )
                    }
                    Read::Deadline => {
                        return (
                            Report {
                                reason: cut().reason,
                                cut: true,
                                ..report(how)
                            },
                            Some(Err(aborted("deadline"))),
                        )
                    }
                },
            };
            let event = match line.kind {
                Kind::Done => {
                    for held in splice.held() {
                        if tx.send(Ok(held)).await.is_err() {
                            return (
                                Report {
                                    cut: true,
                                    ..report(how)
                                },
                                None,
                            );
                        }
                    }
                    return (report(how), Some(Ok(line.raw)));
                }
                Kind::Other => continue,
                Kind::Malformed => {
                    return failed("the fallback's stream broke too".into(), attempts)
                }
                Kind::Event(e) if e.error => {
                    return failed("the fallback's stream sent an error".into(), attempts)
                }
                Kind::Event(e) => e,
            };
            finished |= event.finish;
            if event.token() {
                last_content = Instant::now();
            }
            let mut event = event;
            accounting.apply(&mut event.value);
            let mut flushed = Vec::new();
            let (out, drop_held) = match splice.join(&event.content) {
                Joined::Send(c) => (rewrite(event.value, &c), false),
                Joined::FlushHeld(held, c) => {
                    flushed = held;
                    (rewrite(event.value, &c), false)
                }
                Joined::Hold(c) => {
                    if let (Some(bytes), Splice::Echo { held, .. }) =
                        (rewrite(event.value, &c), &mut splice)
                    {
                        held.push(bytes);
                    }
                    continue;
                }
                Joined::DropHeld(c) => (rewrite(event.value, &c), true),
                Joined::Mismatch => {
                    return failed(
                        "the fallback's answer does not begin with the text already sent".into(),
                        attempts,
                    )
                }
            };
            let held = splice.held();
            let mut items: Vec<Bytes> = if drop_held { Vec::new() } else { held };
            items.append(&mut flushed);
            items.extend(out);
            for item in items {
                if tx.send(Ok(item)).await.is_err() {
                    return (
                        Report {
                            cut: true,
                            ..report(how)
                        },
                        None,
                    );
                }
            }
        }
    }
}
