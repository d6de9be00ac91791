//! The fallback leg of the failover core: the fallback's request (the
//! mode's body, its model and what it needs), one attempt plus bounded
//! retries of its 429s with backoff inside the deadline, a fallback in
//! another dialect translated both ways, and the larger-context route
//! that a `context_length_exceeded` goes to. Also how a broken primary
//! stream is continued from the fallback ([`Continuer`]).

use super::transport::{not_a_completion, read_full, BodyLimits, Leg, ReadError, Sent};
use super::{ms, serialisation, unanswered, Core, Reply, ReplyBody};
use crate::backoff::backoff_delay;
use crate::events::SwitchEvent;
use crate::events::SwitchReason;
use crate::payload::{add_fallback_needs, fallback_body, ClientRequest};
use crate::relay::{self, Continuer, NotOpened, Plan};
use crate::Continuation;
use axum::http::{header, HeaderValue, StatusCode};
use bytes::Bytes;
use cb_dialect::Dialect;
use reqwest::Url;
use serde_json::Value;
use std::time::SystemTime;
use tokio::time::Instant;

/// What translating a fallback's answer from its dialect needs.
pub(super) struct Translate<'a> {
    dialect: Dialect,
    /// The OpenAI request the fallback's was translated from.
    client: &'a Value,
    /// The id of the translated answer.
    id: String,
    /// Its creation time (seconds since the epoch).
    created: u64,
}

impl Core {
    /// How a broken primary stream is continued; `None` when off.
    pub(super) fn continuer(&self, client: &ClientRequest) -> Option<Continuer> {
        let b = &self.config.behaviour;
        if b.continuation == Continuation::Off {
            return None;
        }
        let body = self
            .fallback_value(client, self.config.fallback_model.as_deref())
            .ok()?;
        Some(Continuer {
            client: self.fresh.clone(),
            url: self.fallback.clone(),
            base: self.config.fallback_url.clone(),
            dialect: b.fallback_dialect,
            body,
            how: b.continuation,
            attempt_timeout: self.config.attempt_timeout,
            first_token_timeout: b.first_token_timeout,
            stall_timeout: b.stall_timeout,
        })
    }

    /// The fallback's request for `client`, with model `model` and what the
    /// fallback needs.
    fn fallback_value(
        &self,
        client: &ClientRequest,
        model: Option<&str>,
    ) -> Result<Value, serde_json::Error> {
        let cfg = &self.config;
        let mut body = fallback_body(&client.value()?, cfg.mode, model);
        add_fallback_needs(
            &mut body,
            cfg.behaviour.fallback_max_tokens,
            &cfg.behaviour.fallback_params,
        );
        Ok(body)
    }

    /// The larger-context route: one attempt with its model id; its answer
    /// or error goes to the client.
    pub(super) async fn context_route(
        &self,
        url: &Url,
        client: &ClientRequest,
        deadline: Instant,
        event: &mut SwitchEvent,
    ) -> Reply {
        let cfg = &self.config;
        let b = &cfg.behaviour;
        let model = b
            .context_model
            .clone()
            .or_else(|| cfg.fallback_model.clone());
        event.reason = SwitchReason::ContextLengthExceeded;
        event.provider_fallback = b.context_fallback.as_deref().map(super::display_url);
        event.fallback_attempts = 1;
        let start = Instant::now();
        let reply = match self.fallback_value(client, model.as_deref()) {
            Ok(body) => {
                let body = Bytes::from(body.to_string());
                match self.send(Leg::Fallback, url, body, &[], deadline).await {
                    Sent::Headers(response) => self.answer_of(response, event.stream, start, deadline, "larger-context route", None).await,
                    Sent::Deadline => Reply::deadline(cfg.deadline),
                    Sent::Timeout => unanswered(StatusCode::GATEWAY_TIMEOUT, "the larger-context route sent no response headers within the attempt timeout", "context_route_timeout"),
                    Sent::ConnectError => unanswered(StatusCode::BAD_GATEWAY, "the larger-context route could not be reached", "context_route_unreachable"),
                }
            }
            Err(e) => serialisation(&e),
        };
        if reply.status.is_success() {
            event.model_actual = Some(model.unwrap_or_else(|| event.model_requested.clone()));
        }
        event.latency_fallback_ms = Some(ms(start.elapsed()));
        reply
    }

    /// An upstream's answer as the client's reply: a stream opened up to
    /// its first token (limit counted from `sent_at`) and relayed without
    /// continuation, or a body read in full. `who` names the upstream in
    /// the proxy's own errors.
    pub(super) async fn answer_of(
        &self,
        response: reqwest::Response,
        stream: bool,
        sent_at: Instant,
        deadline: Instant,
        who: &str,
        translate: Option<&Translate<'_>>,
    ) -> Reply {
        let cfg = &self.config;
        let b = &cfg.behaviour;
        if stream && response.status().is_success() {
            let status = response.status();
            let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
            let first_token_by = b.first_token_timeout.and_then(|t| sent_at.checked_add(t));
            let (source, content_type) = match translate {
                Some(t) => (
                    crate::dialect::translate_source(
                        t.dialect,
                        relay::source_of(response),
                        t.client,
                        b.request_memory,
                    ),
                    Some(HeaderValue::from_static("text/event-stream")),
                ),
                None => (relay::source_of(response), content_type),
            };
            return match relay::open(source, first_token_by, deadline, b.request_memory).await {
                Ok(opened) => Reply {
                    status,
                    content_type,
                    retry_after: None,
                    body: ReplyBody::Relay(Box::new(Plan {
                        opened,
                        stall_timeout: b.stall_timeout,
                        deadline,
                        continuer: None,
                        budget: b.request_memory,
                        stall_clock: b.stall_clock,
                    })),
                },
                Err(NotOpened::NoFirstToken) => unanswered(
                    StatusCode::GATEWAY_TIMEOUT,
                    &format!("the {who}'s stream sent no first token within the time-to-first-token limit"),
                    "first_token_timeout",
                ),
                Err(NotOpened::Broke) => unanswered(
                    StatusCode::BAD_GATEWAY,
                    &format!("the {who}'s stream broke before its first token"),
                    "stream_broken",
                ),
                Err(NotOpened::Deadline) => Reply::deadline(cfg.deadline),
                Err(NotOpened::OverBudget) => unanswered(
                    StatusCode::BAD_GATEWAY,
                    &format!(
                        "the {who}'s stream made the proxy hold more than --request-memory \
                         ({} bytes) before its first token; raise --request-memory to allow more",
                        b.request_memory
                    ),
                    "request_memory_exceeded",
                ),
            };
        }
        match read_full(response, BodyLimits::from_now(self, deadline)).await {
            Ok(reply) => match translate {
                Some(t) => crate::dialect::incoming(t.dialect, reply, t.client, &t.id, t.created),
                // A 2xx that is not a chat completion fails this attempt
                // too: the client gets a clean 502, never the garbage.
                None if reply.status.is_success() => match not_a_completion(&reply) {
                    Some(why) => unanswered(
                        StatusCode::BAD_GATEWAY,
                        &format!("the {who}'s response body {why}"),
                        "fallback_malformed",
                    ),
                    None => reply,
                },
                None => reply,
            },
            Err(ReadError::Deadline) => Reply::deadline(cfg.deadline),
            Err(ReadError::Body(why)) => unanswered(
                StatusCode::BAD_GATEWAY,
                &format!("the {who}'s response body {why}"),
                "fallback_body_error",
            ),
        }
    }

    /// The fallback leg: one attempt, plus bounded retries while it answers
    /// 429 and the backoff fits inside the deadline.
    pub(super) async fn fallback(
        &self,
        index: u64,
        client: &ClientRequest,
        deadline: Instant,
        event: &mut SwitchEvent,
    ) -> Reply {
        let cfg = &self.config;
        let model = cfg
            .fallback_model
            .clone()
            .unwrap_or_else(|| event.model_requested.clone());
        let value = match self.fallback_value(client, cfg.fallback_model.as_deref()) {
            Ok(value) => value,
            Err(e) => {
                event.latency_fallback_ms = Some(0.0);
                return serialisation(&e);
            }
        };
        // A fallback in another dialect (super::dialect): the request in its
        // dialect, its answer back in OpenAI's.
        let dialect = cfg.behaviour.fallback_dialect;
        let (url, body, headers) =
            match crate::dialect::outgoing(dialect, &cfg.fallback_url, &value) {
                None => (
                    self.fallback.clone(),
                    Bytes::from(value.to_string()),
                    &[][..],
                ),
                Some(Ok(out)) => (out.url, out.body, out.headers),
                Some(Err(e)) => {
                    event.latency_fallback_ms = Some(0.0);
                    return Reply::error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &e.to_string(),
                        "translation_error",
                    );
                }
            };
        let created = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let translate = (dialect != Dialect::Openai).then(|| Translate {
            dialect,
            client: &value,
            id: format!("chatcmpl-proxy-{index}"),
            created,
        });
        let start = Instant::now();
        let mut rng = cb_base::seed::rng(cfg.seed, "backoff", index);
        let mut retry = 0u32;
        let reply = loop {
            event.fallback_attempts += 1;
            let sent_at = Instant::now();
            let response = match self
                .send(Leg::Fallback, &url, body.clone(), headers, deadline)
                .await
            {
                Sent::Headers(r) => r,
                Sent::Deadline => break Reply::deadline(cfg.deadline),
                Sent::Timeout => {
                    break unanswered(
                        StatusCode::GATEWAY_TIMEOUT,
                        "the fallback sent no response headers within the attempt timeout",
                        "fallback_timeout",
                    )
                }
                Sent::ConnectError => {
                    break unanswered(
                        StatusCode::BAD_GATEWAY,
                        "the fallback could not be reached",
                        "fallback_unreachable",
                    )
                }
            };
            if response.status() == StatusCode::TOO_MANY_REQUESTS
                && retry < cfg.fallback_429_retries
            {
                // Its body is what the client gets when the retries run
                // out: the wait is read from the headers only.
                let asked = cb_wire::stated_wait(response.headers(), None, SystemTime::now());
                event.retry_after_clamped |= asked.is_some_and(|a| a.clamped);
                let asked = asked.map(|a| a.wait);
                let wait = backoff_delay(retry, cfg.backoff_base, cfg.backoff_cap, asked, &mut rng);
                if Instant::now()
                    .checked_add(wait)
                    .is_some_and(|t| t < deadline)
                {
                    drop(response);
                    // Backoff with full jitter before a fallback retry, never shorter than
                    // Retry-After, within the deadline.
                    tokio::time::sleep(wait).await;
                    retry += 1;
                    continue;
                }
            }
            let reply = self
                .answer_of(
                    response,
                    event.stream,
                    sent_at,
                    deadline,
                    "fallback",
                    translate.as_ref(),
                )
                .await;
            if reply.status.is_success() {
                event.model_actual = Some(model);
            }
            break reply;
        };
        event.latency_fallback_ms = Some(ms(start.elapsed()));
        reply
    }
}
