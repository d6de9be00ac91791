//! The failover core shared by both reference gateways. The two modes differ
//! only in the fallback's body (see [`super::payload`]); everything about
//! how long to wait and how to back off lives here, and when to switch is
//! [`crate::policy::classify`]:
//!
//! | Primary outcome                               | Decision      | Client gets                 |
//! |-----------------------------------------------|---------------|-----------------------------|
//! | 2xx                                           | deliver       | the primary's answer        |
//! | 500, 502, 503, 504 and every other 5xx        | fail over     | the fallback's answer       |
//! | 429 rate limited                              | fail over     | the fallback's answer       |
//! | 404 model not found                           | fail over     | the fallback's answer       |
//! | no headers within the attempt timeout         | fail over     | the fallback's answer       |
//! | connection refused / reset before headers     | fail over     | the fallback's answer       |
//! | 2xx body broken, stalled or not a completion (not streaming) | fail over | the fallback's answer |
//! | 2xx stream: no first token in time, or broken before it | fail over | the fallback's answer |
//! | 400, 401, 402, 403 and every other 4xx        | pass through  | the primary's status + body |
//! | 1xx, 3xx (not expected from an API)           | pass through  | the primary's status + body |
//!
//! Rules around it ([`super::ProxyBehaviour`] holds the knobs):
//! - before the decision, the primary may be tried again on the same route
//!   ([`crate::policy::same_route_wait`]): by default once, after a 429
//!   whose `Retry-After` is at most 2 s (after waiting it) or after a 500;
//!   never after a timeout, a connection error or any other status;
//! - one failover per request, then the fallback once, and its only
//!   retries are its own 429s: at most `fallback_429_retries`, spaced by
//!   [`backoff_delay`](super::backoff::backoff_delay) (exponential, full
//!   jitter, never below `Retry-After`), all inside the deadline;
//! - a 400 `context_length_exceeded` goes to the larger-context route when
//!   one is configured (else it passes through, as the tree says);
//! - the fallback gets its own model id, and `max_tokens` and the
//!   configured parameters when set;
//! - every attempt waits at most `attempt_timeout` for response headers,
//!   and a non-streamed body must then be whole within another
//!   `attempt_timeout`, with no silence longer than `stall_timeout`, at
//!   most 4 MiB, and (when 2xx) a JSON chat completion; otherwise the
//!   attempt failed (`body_error`) and the request fails over;
//! - the whole request, bodies and backoff included, ends by `deadline`, of
//!   which the primary's leg gets all but one attempt timeout (at most half
//!   the deadline, `primary_end`): reaching its end fails over, so the
//!   fallback always gets its turn; past the deadline the client gets 504
//!   with an OpenAI-style error body;
//! - a streamed answer is held until its first token ([`super::relay`]),
//!   so a stream that breaks or stays silent before it fails over cleanly;
//!   after it, the stream is relayed as it arrives, and one that breaks or
//!   stalls is continued from the fallback (prefill, or a clean restart)
//!   or ended with a clean error event, never handed over as complete;
//! - a fallback that fails (timeout, connection error, 5xx, 4xx) is not
//!   retried: its status and body go to the client, or 504/502 when it sent
//!   none.
//!
//! The primary leg and the decision are here; the fallback leg and the
//! larger-context route are in `fallback.rs`; sending a request and
//! reading a reply, in `transport.rs`.

mod fallback;
mod shape;
mod transport;

pub use transport::{display_url, UpstreamHealth};

use super::events::{SwitchEvent, SwitchReason};
use super::payload::{primary_bytes, ClientRequest};
use super::relay::{self, NotOpened, Plan};
use super::{ProxyConfig, ProxyError};
use crate::policy::{classify, same_route_wait, Decision, FailoverReason, Outcome, RetryRules};
use axum::http::{header, HeaderValue, StatusCode};
use bytes::Bytes;
use cb_wire::parse_retry_after;
use reqwest::Url;
use serde_json::Value;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;
use transport::{endpoint, not_a_completion, read_full, BodyLimits, Leg, ReadError, Sent};

/// The error code of a 400 that sends a request to the larger-context route.
pub const REASON_CONTEXT: &str = "context_length_exceeded";

/// The body of a reply to the client.
#[derive(Debug)]
pub enum ReplyBody {
    /// A complete body.
    Full(Bytes),
    /// An upstream's stream, opened up to its first token, to be relayed
    /// ([`relay::Plan::into_body`]).
    Relay(Box<Plan>),
}

/// What the client gets.
#[derive(Debug)]
pub struct Reply {
    /// Status line.
    pub status: StatusCode,
    /// The upstream's content type, if any.
    pub content_type: Option<HeaderValue>,
    /// The body.
    pub body: ReplyBody,
    /// The wait before a retry that the upstream's error stated (in
    /// `Retry-After`, a reset header or its body), passed on to the client
    /// as `Retry-After`: when every target is rate limited, the client
    /// learns when to come back. `None` for an answer.
    pub retry_after: Option<Duration>,
}

impl Reply {
    /// A reply generated by the proxy itself, with an OpenAI-style error body.
    pub fn error(status: StatusCode, message: &str, code: &str) -> Self {
        let kind = if status.is_client_error() {
            "invalid_request_error"
        } else {
            "proxy_error"
        };
        let body = cb_wire::openai::error_body(message, kind, Some(code));
        Reply {
            status,
            content_type: Some(HeaderValue::from_static("application/json")),
            body: ReplyBody::Full(Bytes::from(body.to_string())),
            retry_after: None,
        }
    }

    fn deadline(deadline: Duration) -> Self {
        Reply::error(
            StatusCode::GATEWAY_TIMEOUT,
            &format!(
                "the proxy's overall deadline of {} ms passed before an upstream answered",
                deadline.as_millis()
            ),
            "deadline_exceeded",
        )
    }
}

/// What the primary leg ended with.
enum Primary {
    /// The client's reply (delivered, passed through, or the deadline).
    Reply(Reply),
    /// Fail over for this reason.
    Failover(FailoverReason),
    /// The primary's context is too small: try the larger-context route,
    /// else pass this reply through.
    ContextLength(Reply),
}

/// The failover core: configuration, HTTP client and resolved endpoints.
/// Holds no per-conversation state.
#[derive(Debug)]
pub struct Core {
    config: ProxyConfig,
    /// The primary's client: kept-alive connections, pooled.
    client: reqwest::Client,
    /// The client of every fallback attempt (the fallback, the
    /// larger-context route, a continuation): a fresh connection each
    /// time, never an idle pooled one. A failover is rare, and the
    /// fallback's idle connections are the ones an upstream closes
    /// (behind one host and port with the primary, or after its
    /// keep-alive limit), so reusing one risks "the fallback could not be
    /// reached" at the moment it is needed. Sending a request again after
    /// such a failure cannot be made safe: a connection closed before the
    /// response cannot be told from an upstream that read the request and
    /// then failed, and a POST would go twice.
    fresh: reqwest::Client,
    primary: Url,
    fallback: Url,
    context: Option<Url>,
    /// The primary's and fallback's base URLs as events show them
    /// ([`display_url`]), worked out once rather than for every request.
    shown_primary: String,
    shown_fallback: String,
}

impl Core {
    /// The pooled client of primary attempts, which the Responses
    /// forwarding shares.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.client
    }

    /// Resolves the endpoints and builds the HTTP client (no retries, no
    /// redirects, no system proxy).
    ///
    /// # Errors
    /// A base URL that is not http(s), or a client that cannot be built.
    pub fn new(config: ProxyConfig) -> Result<Self, ProxyError> {
        let primary = endpoint("--primary", &config.primary_url)?;
        let fallback = endpoint("--fallback", &config.fallback_url)?;
        let context = match &config.behaviour.context_fallback {
            Some(url) => Some(endpoint("--context-fallback", url)?),
            None => None,
        };
        let client = cb_client::hardened()
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(256)
            .build()?;
        let fresh = cb_client::hardened().pool_max_idle_per_host(0).build()?;
        Ok(Core {
            shown_primary: display_url(&config.primary_url),
            shown_fallback: display_url(&config.fallback_url),
            config,
            client,
            fresh,
            primary,
            fallback,
            context,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ProxyConfig {
        &self.config
    }

    /// Serves one client request (`index` numbers it for the jitter seed and
    /// the event): tries the primary (with the bounded same-route retry),
    /// fails over per [`classify`], and returns the reply with its switch
    /// event. The primary gets the client's bytes unchanged unless its
    /// model is mapped. A relayed stream's event is completed by
    /// [`complete_event`] when the stream ends.
    pub async fn handle(&self, index: u64, client: &ClientRequest) -> (Reply, SwitchEvent) {
        let cfg = &self.config;
        let start = Instant::now();
        // The configured deadline is range-checked; a sum past what an
        // Instant holds still cannot panic.
        let deadline = start
            .checked_add(cfg.deadline)
            .unwrap_or_else(|| start + Duration::from_secs(86_400));
        let requested = client.model.clone();
        let mut event = SwitchEvent {
            request: index,
            mode: cfg.mode,
            provider_primary: self.shown_primary.clone(),
            provider_fallback: None,
            model_requested: cb_base::record::bounded_field(&requested),
            model_actual: None,
            reason: SwitchReason::None,
            latency_primary_ms: 0.0,
            latency_fallback_ms: None,
            fallback_attempts: 0,
            primary_attempts: 0,
            continuation: None,
            stream: client.stream,
            status: 0,
            cut: false,
            retry_after_clamped: false,
        };
        let primary_model = cfg.primary_model.as_deref();
        let body = match primary_bytes(client, primary_model) {
            Ok(body) => body,
            Err(e) => {
                let reply = Reply::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("cannot serialise the primary's request: {e}"),
                    "serialization_error",
                );
                return finish(event, reply);
            }
        };
        let leg = self
            .primary(
                index,
                client,
                body,
                primary_end(start, cfg),
                deadline,
                &mut event,
            )
            .await;
        event.latency_primary_ms = ms(start.elapsed());
        let reason = match leg {
            Primary::Reply(reply) => {
                if reply.status.is_success() || reply.status.is_client_error() {
                    event.model_actual = Some(cb_base::record::bounded_field(
                        primary_model.unwrap_or(&requested),
                    ));
                }
                return finish(event, reply);
            }
            Primary::ContextLength(reply) => match &self.context {
                Some(url) => {
                    let reply = self.context_route(url, client, deadline, &mut event).await;
                    return finish(event, reply);
                }
                None => {
                    event.model_actual = Some(cb_base::record::bounded_field(
                        primary_model.unwrap_or(&requested),
                    ));
                    return finish(event, reply);
                }
            },
            Primary::Failover(reason) => reason,
        };
        event.reason = reason.into();
        event.provider_fallback = Some(self.shown_fallback.clone());
        let reply = self.fallback(index, client, deadline, &mut event).await;
        finish(event, reply)
    }

    /// The primary leg: an attempt, the same-route retries the rules allow,
    /// and the decision on the last outcome, all before `deadline` (the
    /// primary's share of the request's, [`primary_end`]): reaching it
    /// fails over, so the fallback always gets its turn.
    async fn primary(
        &self,
        index: u64,
        client: &ClientRequest,
        body: Bytes,
        deadline: Instant,
        overall: Instant,
        event: &mut SwitchEvent,
    ) -> Primary {
        let cfg = &self.config;
        let b = &cfg.behaviour;
        let rules = RetryRules {
            max: b.same_route_retries,
            statuses: &b.retry_statuses,
            retry_after_cap: b.retry_after_cap,
            delay: b.retry_delay,
        };
        let mut retries = 0u32;
        let mut rng = cb_base::seed::rng(cfg.seed, "primary-retry", index);
        loop {
            event.primary_attempts += 1;
            let sent_at = Instant::now();
            let (outcome, response) = match self
                .send(Leg::Primary, &self.primary, body.clone(), &[], deadline)
                .await
            {
                Sent::Headers(r) => (Outcome::Status(r.status().as_u16()), Some(r)),
                Sent::Timeout => (Outcome::Timeout, None),
                Sent::ConnectError => (Outcome::ConnectError, None),
                Sent::Deadline => return Primary::Failover(FailoverReason::Timeout),
            };
            let mut response = response;
            // The wait the response states: Retry-After, else a 429's
            // other headers (`x-ratelimit-reset-*`), else its body, read
            // only when a retry could follow (a 429 is never delivered:
            // it fails over or is retried, so its body can be spent), and
            // briefly (`transport::WAIT_BODY_TIME`).
            let mut asked = response.as_ref().and_then(|r| {
                if outcome == Outcome::Status(429) {
                    cb_wire::stated_wait(r.headers(), None, SystemTime::now())
                } else {
                    parse_retry_after(r.headers(), SystemTime::now())
                }
            });
            if asked.is_none() && outcome == Outcome::Status(429) && retries < rules.max {
                if let Some(r) = response.take() {
                    asked = transport::stated_wait_of(r, deadline).await;
                }
            }
            event.retry_after_clamped |= asked.is_some_and(|a| a.clamped);
            let asked = asked.map(|a| a.wait);
            // A stated wait is kept and spread over one more of it: clients
            // told the same Retry-After must not all come back at once.
            let spread = |wait: Duration, rng: &mut _| match asked {
                Some(stated) if stated == wait => crate::backoff::after_stated(stated, rng),
                _ => wait,
            };
            if let Some(wait) =
                same_route_wait(outcome, asked, retries, &rules).map(|w| spread(w, &mut rng))
            {
                if Instant::now()
                    .checked_add(wait)
                    .is_some_and(|t| t < deadline)
                {
                    drop(response);
                    // The retry wait the rules ask for (Retry-After or a short delay), within
                    // the deadline.
                    tokio::time::sleep(wait).await;
                    retries += 1;
                    continue;
                }
            }
            let Some(response) = response else {
                return match classify(outcome) {
                    Decision::Failover(reason) => Primary::Failover(reason),
                    // Only a status outcome delivers or passes through, and
                    // it has a response; this keeps the match total.
                    Decision::Deliver | Decision::PassThrough => {
                        Primary::Failover(FailoverReason::ConnectError)
                    }
                };
            };
            return match classify(outcome) {
                Decision::Failover(reason) => Primary::Failover(reason),
                Decision::Deliver if client.stream => {
                    let first_token_by = b.first_token_timeout.and_then(|t| sent_at.checked_add(t));
                    let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
                    let source = relay::source_of(response);
                    match relay::open(source, first_token_by, deadline, b.request_memory).await {
                        Ok(opened) => Primary::Reply(Reply {
                            status: StatusCode::OK,
                            content_type,
                            retry_after: None,
                            body: ReplyBody::Relay(Box::new(Plan {
                                opened,
                                stall_timeout: b.stall_timeout,
                                // Once tokens flow, the stream has the
                                // whole request's deadline.
                                deadline: overall,
                                continuer: self.continuer(client),
                                budget: b.request_memory,
                                stall_clock: b.stall_clock,
                            })),
                        }),
                        Err(NotOpened::NoFirstToken) => {
                            Primary::Failover(FailoverReason::FirstTokenTimeout)
                        }
                        Err(NotOpened::Broke) => Primary::Failover(body_error()),
                        Err(NotOpened::Deadline) => Primary::Failover(FailoverReason::Timeout),
                        Err(NotOpened::OverBudget) => {
                            Primary::Failover(FailoverReason::RequestMemory)
                        }
                    }
                }
                Decision::Deliver | Decision::PassThrough => {
                    let status = response.status();
                    match read_full(response, BodyLimits::from_now(self, deadline)).await {
                        Ok(reply)
                            if status == StatusCode::BAD_REQUEST && context_too_long(&reply) =>
                        {
                            Primary::ContextLength(reply)
                        }
                        Ok(reply) if status.is_success() && not_a_completion(&reply).is_some() => {
                            Primary::Failover(body_error())
                        }
                        Ok(reply) => Primary::Reply(reply),
                        Err(ReadError::Deadline) => Primary::Failover(FailoverReason::Timeout),
                        Err(ReadError::Body(_)) => Primary::Failover(body_error()),
                    }
                }
            };
        }
    }
}

/// When the primary leg must end: the request's deadline less the
/// fallback's share, which is one attempt timeout but at most half the
/// deadline. Reaching it fails over instead of answering 504, so the
/// overall deadline never swallows the fallback's turn (defaults: 60 s
/// deadline, the primary's leg ends by 50 s, the fallback has 10 s).
fn primary_end(start: Instant, cfg: &ProxyConfig) -> Instant {
    let reserve = cfg.attempt_timeout.min(cfg.deadline / 2);
    start
        .checked_add(cfg.deadline.saturating_sub(reserve))
        .unwrap_or(start)
}

/// Completes a relayed stream's event with how the stream ended: a
/// continuation from the fallback counts as a switch.
pub fn complete_event(event: &mut SwitchEvent, report: relay::Report, fallback_url: &str) {
    if report.fallback_attempts > 0 {
        event.fallback_attempts += report.fallback_attempts;
        // The continuation's own time and model: the client's answer
        // ends with the fallback's text.
        if let Some(ms) = report.latency_fallback_ms {
            event.latency_fallback_ms = Some(event.latency_fallback_ms.unwrap_or(0.0) + ms);
        }
        if report.fallback_model.is_some() {
            event.model_actual = report.fallback_model;
        }
        if event.provider_fallback.is_none() {
            event.provider_fallback = Some(display_url(fallback_url));
        }
        if event.reason == SwitchReason::None {
            event.reason = SwitchReason::StreamBroken;
        }
    }
    match report.reason {
        // A stall on keep-alives says why the stream switched, as
        // `stream_broken` would.
        Some(SwitchReason::KeepaliveStall)
            if matches!(
                event.reason,
                SwitchReason::None | SwitchReason::StreamBroken
            ) =>
        {
            event.reason = SwitchReason::KeepaliveStall;
        }
        Some(SwitchReason::KeepaliveStall) | None => {}
        // A cut or a budget overrun is how the request ended for the
        // client, whatever it switched on before.
        Some(reason) => event.reason = reason,
    }
    event.continuation = report.continuation;
    event.cut = report.cut;
}

/// The failover reason of a body that broke before anything reached the
/// client, as the tree names it.
fn body_error() -> FailoverReason {
    match classify(Outcome::BodyError) {
        Decision::Failover(reason) => reason,
        Decision::Deliver | Decision::PassThrough => FailoverReason::BodyError,
    }
}

/// Whether a 400's body says the context is too long.
fn context_too_long(reply: &Reply) -> bool {
    let ReplyBody::Full(bytes) = &reply.body else {
        return false;
    };
    let Ok(body) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    body.pointer("/error/code").and_then(Value::as_str) == Some(REASON_CONTEXT)
}

/// A proxy error reply for an upstream that sent no usable answer.
fn unanswered(status: StatusCode, message: &str, code: &str) -> Reply {
    Reply::error(status, message, code)
}

fn serialisation(e: &serde_json::Error) -> Reply {
    Reply::error(
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!("cannot serialise the fallback's request: {e}"),
        "serialization_error",
    )
}

fn finish(mut event: SwitchEvent, reply: Reply) -> (Reply, SwitchEvent) {
    event.status = reply.status.as_u16();
    (reply, event)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
