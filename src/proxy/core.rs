//! The failover core shared by both reference gateways. The two modes differ
//! only in the fallback's body (see [`super::payload`]); everything about
//! when to switch, how long to wait and how to back off lives here.
//!
//! # Decision tree (primary attempt)
//!
//! | Primary outcome                               | Decision      | Client gets                 |
//! |-----------------------------------------------|---------------|-----------------------------|
//! | 2xx                                           | deliver       | the primary's answer        |
//! | 500, 502, 503, 504 and every other 5xx        | fail over     | the fallback's answer       |
//! | 429 rate limited                              | fail over     | the fallback's answer       |
//! | 404 model not found                           | fail over     | the fallback's answer       |
//! | no headers within the attempt timeout         | fail over     | the fallback's answer       |
//! | connection refused / reset before headers     | fail over     | the fallback's answer       |
//! | 2xx whose body broke off (not streaming)      | fail over     | the fallback's answer       |
//! | 400, 401, 402, 403 and every other 4xx        | pass through  | the primary's status + body |
//! | 1xx, 3xx (not expected from an API)           | pass through  | the primary's status + body |
//!
//! Rules around it:
//! - one failover per request; the primary is tried once, the fallback once,
//!   and the only retries are the fallback's own 429s: at most
//!   `fallback_429_retries`, spaced by [`backoff_delay`](super::backoff::backoff_delay) (exponential, full
//!   jitter, never below `Retry-After`), all inside the deadline;
//! - every attempt waits at most `attempt_timeout` for response headers;
//! - the whole request, bodies and backoff included, ends by `deadline`; past
//!   it the client gets 504 with an OpenAI-style error body;
//! - a streamed answer is decided on its status line, before any byte goes
//!   to the client, and then piped as it arrives;
//! - a fallback that fails (timeout, connection error, 5xx, 4xx) is not
//!   retried: its status and body go to the client, or 504/502 when it sent
//!   none.

use super::backoff::{backoff_delay, retry_after};
use super::events::{SwitchEvent, REASON_NONE};
use super::payload::{fallback_body, primary_bytes, ClientRequest};
use super::{ProxyConfig, ProxyError};
use axum::http::{header, HeaderValue, StatusCode};
use bytes::Bytes;
use reqwest::Url;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// What came back from one upstream attempt, as far as the decision needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Response headers arrived with this status.
    Status(u16),
    /// No response headers within the attempt timeout.
    Timeout,
    /// The connection failed before response headers (refused, reset, DNS).
    ConnectError,
    /// A 2xx or passed-through response whose body broke off before it was
    /// complete (non-streaming only; nothing had reached the client).
    BodyError,
}

/// Why a request switched to the fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailoverReason {
    /// The primary sent no headers within the attempt timeout.
    Timeout,
    /// The primary could not be reached.
    ConnectError,
    /// The primary's body broke off.
    BodyError,
    /// The primary answered this transient status (5xx, 429, 404).
    Status(u16),
}

impl FailoverReason {
    /// The label used in switch events and metrics: `timeout`,
    /// `connect_error`, `body_error` or `status_NNN`.
    pub fn label(self) -> String {
        match self {
            FailoverReason::Timeout => "timeout".to_string(),
            FailoverReason::ConnectError => "connect_error".to_string(),
            FailoverReason::BodyError => "body_error".to_string(),
            FailoverReason::Status(code) => format!("status_{code}"),
        }
    }
}

/// What to do with a primary outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Return the primary's answer.
    Deliver,
    /// Return the primary's status and body unchanged: a permanent error that
    /// another provider would not fix (bad request, auth, billing).
    PassThrough,
    /// Switch to the fallback.
    Failover(FailoverReason),
}

/// The decision tree of the module documentation, as one pure function.
pub fn classify(outcome: Outcome) -> Decision {
    match outcome {
        Outcome::Status(200..=299) => Decision::Deliver,
        Outcome::Status(code @ (404 | 429 | 500..=599)) => {
            Decision::Failover(FailoverReason::Status(code))
        }
        Outcome::Status(_) => Decision::PassThrough,
        Outcome::Timeout => Decision::Failover(FailoverReason::Timeout),
        Outcome::ConnectError => Decision::Failover(FailoverReason::ConnectError),
        Outcome::BodyError => Decision::Failover(FailoverReason::BodyError),
    }
}

/// The body of a reply to the client.
#[derive(Debug)]
pub enum ReplyBody {
    /// A complete body.
    Full(Bytes),
    /// An upstream's streamed body, to be piped as it arrives and cut at
    /// `deadline` (the request's overall deadline).
    Stream {
        /// The upstream response whose body is piped.
        response: reqwest::Response,
        /// When to stop piping.
        deadline: Instant,
    },
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
}

impl Reply {
    /// A reply generated by the proxy itself, with an OpenAI-style error body.
    pub fn error(status: StatusCode, message: &str, code: &str) -> Self {
        let kind = if status.is_client_error() {
            "invalid_request_error"
        } else {
            "proxy_error"
        };
        let body = crate::openai::error_body(message, kind, Some(code));
        Reply {
            status,
            content_type: Some(HeaderValue::from_static("application/json")),
            body: ReplyBody::Full(Bytes::from(body.to_string())),
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

/// Result of sending one request, up to its response headers.
enum Sent {
    Headers(reqwest::Response),
    Timeout,
    ConnectError,
    Deadline,
}

/// Why a body could not be read.
enum ReadError {
    Body,
    Deadline,
}

/// The failover core: configuration, HTTP client and resolved endpoints.
/// Holds no per-conversation state.
#[derive(Debug)]
pub struct Core {
    config: ProxyConfig,
    client: reqwest::Client,
    primary: Url,
    fallback: Url,
}

impl Core {
    /// Resolves the endpoints and builds the HTTP client (no retries, no
    /// redirects, no system proxy).
    ///
    /// # Errors
    /// A base URL that is not http(s), or a client that cannot be built.
    pub fn new(config: ProxyConfig) -> Result<Self, ProxyError> {
        let primary = endpoint("--primary", &config.primary_url)?;
        let fallback = endpoint("--fallback", &config.fallback_url)?;
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true)
            .build()?;
        Ok(Core {
            config,
            client,
            primary,
            fallback,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ProxyConfig {
        &self.config
    }

    /// Serves one client request (`index` numbers it for the jitter seed and
    /// the event): tries the primary, fails over per [`classify`], and
    /// returns the reply with its switch event. The primary gets the
    /// client's bytes unchanged unless its model is mapped.
    pub async fn handle(&self, index: u64, client: &ClientRequest) -> (Reply, SwitchEvent) {
        let cfg = &self.config;
        let start = Instant::now();
        let deadline = start + cfg.deadline;
        let stream = client.stream;
        let requested = client.model.clone();
        let mut event = SwitchEvent {
            request: index,
            mode: cfg.mode.as_str().to_string(),
            provider_primary: cfg.primary_url.clone(),
            provider_fallback: None,
            model_requested: requested.clone(),
            model_actual: None,
            reason: REASON_NONE.to_string(),
            latency_primary_ms: 0.0,
            latency_fallback_ms: None,
            fallback_attempts: 0,
            stream,
            status: 0,
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
        let (outcome, response) = match self.send(&self.primary, body, deadline).await {
            Sent::Headers(r) => (Outcome::Status(r.status().as_u16()), Some(r)),
            Sent::Timeout => (Outcome::Timeout, None),
            Sent::ConnectError => (Outcome::ConnectError, None),
            Sent::Deadline => {
                event.latency_primary_ms = ms(start.elapsed());
                return finish(event, Reply::deadline(cfg.deadline));
            }
        };
        let reason = match (classify(outcome), response) {
            (Decision::Failover(reason), _) => reason,
            (Decision::Deliver | Decision::PassThrough, Some(response)) => {
                match read_reply(response, stream, deadline).await {
                    Ok(reply) => {
                        event.latency_primary_ms = ms(start.elapsed());
                        event.model_actual = Some(primary_model.unwrap_or(&requested).into());
                        return finish(event, reply);
                    }
                    Err(ReadError::Deadline) => {
                        event.latency_primary_ms = ms(start.elapsed());
                        return finish(event, Reply::deadline(cfg.deadline));
                    }
                    Err(ReadError::Body) => match classify(Outcome::BodyError) {
                        Decision::Failover(reason) => reason,
                        Decision::Deliver | Decision::PassThrough => FailoverReason::BodyError,
                    },
                }
            }
            // Only a status outcome delivers or passes through, and it has a
            // response; this arm keeps the match total without a panic.
            (Decision::Deliver | Decision::PassThrough, None) => FailoverReason::ConnectError,
        };
        event.latency_primary_ms = ms(start.elapsed());
        event.reason = reason.label();
        event.provider_fallback = Some(cfg.fallback_url.clone());
        let reply = self.fallback(index, client, deadline, &mut event).await;
        finish(event, reply)
    }

    /// The fallback leg: one attempt, plus bounded retries while it answers
    /// 429 and the backoff fits inside the deadline.
    async fn fallback(
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
        let body = match client.value().and_then(|client| {
            serde_json::to_vec(&fallback_body(
                &client,
                cfg.mode,
                cfg.fallback_model.as_deref(),
            ))
        }) {
            Ok(body) => Bytes::from(body),
            Err(e) => {
                event.latency_fallback_ms = Some(0.0);
                return Reply::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("cannot serialise the fallback's request: {e}"),
                    "serialization_error",
                );
            }
        };
        let start = Instant::now();
        let mut rng = crate::seed::rng(cfg.seed, "backoff", index);
        let mut retry = 0u32;
        let reply = loop {
            event.fallback_attempts += 1;
            let response = match self.send(&self.fallback, body.clone(), deadline).await {
                Sent::Headers(r) => r,
                Sent::Deadline => break Reply::deadline(cfg.deadline),
                Sent::Timeout => {
                    break Reply::error(
                        StatusCode::GATEWAY_TIMEOUT,
                        "the fallback sent no response headers within the attempt timeout",
                        "fallback_timeout",
                    )
                }
                Sent::ConnectError => {
                    break Reply::error(
                        StatusCode::BAD_GATEWAY,
                        "the fallback could not be reached",
                        "fallback_unreachable",
                    )
                }
            };
            if response.status() == StatusCode::TOO_MANY_REQUESTS
                && retry < cfg.fallback_429_retries
            {
                let asked = retry_after(response.headers(), SystemTime::now());
                let wait = backoff_delay(retry, cfg.backoff_base, cfg.backoff_cap, asked, &mut rng);
                if Instant::now() + wait < deadline {
                    drop(response);
                    tokio::time::sleep(wait).await;
                    retry += 1;
                    continue;
                }
            }
            match read_reply(response, event.stream, deadline).await {
                Ok(reply) => {
                    event.model_actual = Some(model);
                    break reply;
                }
                Err(ReadError::Deadline) => break Reply::deadline(cfg.deadline),
                Err(ReadError::Body) => {
                    break Reply::error(
                        StatusCode::BAD_GATEWAY,
                        "the fallback's response body broke off",
                        "fallback_body_error",
                    )
                }
            }
        };
        event.latency_fallback_ms = Some(ms(start.elapsed()));
        reply
    }

    /// Sends the JSON `body` to `url` and waits for response headers, at
    /// most the attempt timeout and never past `deadline`.
    async fn send(&self, url: &Url, body: Bytes, deadline: Instant) -> Sent {
        let now = Instant::now();
        if now >= deadline {
            return Sent::Deadline;
        }
        let remaining = deadline - now;
        let limit = self.config.attempt_timeout.min(remaining);
        let request = self
            .client
            .post(url.clone())
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )
            .body(body)
            .send();
        match tokio::time::timeout(limit, request).await {
            Ok(Ok(response)) => Sent::Headers(response),
            Ok(Err(e)) if e.is_timeout() => Sent::Timeout,
            Ok(Err(_)) => Sent::ConnectError,
            Err(_) if self.config.attempt_timeout < remaining => Sent::Timeout,
            Err(_) => Sent::Deadline,
        }
    }
}

/// Turns a response into a reply: a 2xx answer to a streaming request is
/// piped; anything else is read in full before `deadline`.
async fn read_reply(
    response: reqwest::Response,
    stream: bool,
    deadline: Instant,
) -> Result<Reply, ReadError> {
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
    if stream && status.is_success() {
        return Ok(Reply {
            status,
            content_type,
            body: ReplyBody::Stream { response, deadline },
        });
    }
    match tokio::time::timeout_at(deadline, response.bytes()).await {
        Ok(Ok(bytes)) => Ok(Reply {
            status,
            content_type,
            body: ReplyBody::Full(bytes),
        }),
        Ok(Err(_)) => Err(ReadError::Body),
        Err(_) => Err(ReadError::Deadline),
    }
}

fn finish(mut event: SwitchEvent, reply: Reply) -> (Reply, SwitchEvent) {
    event.status = reply.status.as_u16();
    (reply, event)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `BASE/v1/chat/completions`, or `BASE/chat/completions` when the base
/// already ends in `/v1`.
fn endpoint(flag: &'static str, base: &str) -> Result<Url, ProxyError> {
    let bad = || ProxyError::BadUrl {
        flag,
        url: base.to_string(),
    };
    let trimmed = base.trim_end_matches('/');
    let path = if trimmed.ends_with("/v1") {
        "/chat/completions"
    } else {
        "/v1/chat/completions"
    };
    let url = Url::parse(&format!("{trimmed}{path}")).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_table() {
        use Decision::{Deliver, Failover, PassThrough};
        use FailoverReason as R;
        let table = [
            (Outcome::Status(200), Deliver),
            (Outcome::Status(201), Deliver),
            (Outcome::Status(500), Failover(R::Status(500))),
            (Outcome::Status(502), Failover(R::Status(502))),
            (Outcome::Status(503), Failover(R::Status(503))),
            (Outcome::Status(504), Failover(R::Status(504))),
            (Outcome::Status(529), Failover(R::Status(529))),
            (Outcome::Status(429), Failover(R::Status(429))),
            (Outcome::Status(404), Failover(R::Status(404))),
            (Outcome::Status(400), PassThrough),
            (Outcome::Status(401), PassThrough),
            (Outcome::Status(402), PassThrough),
            (Outcome::Status(403), PassThrough),
            (Outcome::Status(409), PassThrough),
            (Outcome::Status(422), PassThrough),
            (Outcome::Status(302), PassThrough),
            (Outcome::Timeout, Failover(R::Timeout)),
            (Outcome::ConnectError, Failover(R::ConnectError)),
            (Outcome::BodyError, Failover(R::BodyError)),
        ];
        for (outcome, expected) in table {
            assert_eq!(classify(outcome), expected, "{outcome:?}");
        }
    }

    #[test]
    fn reason_labels() {
        assert_eq!(FailoverReason::Status(503).label(), "status_503");
        assert_eq!(FailoverReason::Timeout.label(), "timeout");
        assert_eq!(FailoverReason::ConnectError.label(), "connect_error");
    }

    #[test]
    fn endpoints() {
        let url = |b| endpoint("--primary", b).map(|u| u.to_string());
        assert_eq!(
            url("http://127.0.0.1:9001").unwrap(),
            "http://127.0.0.1:9001/v1/chat/completions"
        );
        assert_eq!(
            url("http://h:1/v1/").unwrap(),
            "http://h:1/v1/chat/completions"
        );
        let err = url("127.0.0.1:9001").unwrap_err().to_string();
        assert!(err.contains("--primary"), "{err}");
        assert!(url("ftp://h/").is_err());
    }
}
