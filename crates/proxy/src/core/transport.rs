//! How the failover core talks to an upstream: one request sent and its
//! response headers awaited (at most the attempt timeout, never past the
//! deadline), a reply read in full before the deadline, the health check
//! of both upstreams, and the URLs the base URLs resolve to.

use super::{Core, Reply, ReplyBody};
use crate::ProxyError;
use axum::http::{header, HeaderValue};
use bytes::Bytes;
use reqwest::Url;
use tokio::time::Instant;

/// Which leg a request goes out on, and so on which client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leg {
    /// The primary: a pooled, kept-alive connection.
    Primary,
    /// A fallback attempt: a fresh connection (`Core::fresh`).
    Fallback,
}

/// Longest time spent reading a 429's body for the wait it states: an
/// error body is a few hundred bytes, and one that trickles must not hold
/// the failover.
pub(super) const WAIT_BODY_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// Largest 429 body read for the wait it states.
const WAIT_BODY_BYTES: usize = 64 * 1024;

/// The wait a rate-limited `response` states anywhere
/// ([`cb_wire::stated_wait`]): its headers, else its body (at most
/// [`WAIT_BODY_BYTES`], read within [`WAIT_BODY_TIME`] and never past
/// `deadline`; a larger announced body is not read).
pub(super) async fn stated_wait_of(
    response: reqwest::Response,
    deadline: Instant,
) -> Option<cb_wire::RetryAfter> {
    use futures::StreamExt;
    const MAX: usize = WAIT_BODY_BYTES;
    let headers = response.headers().clone();
    if response.content_length().is_some_and(|n| n > MAX as u64) {
        return cb_wire::stated_wait(&headers, None, std::time::SystemTime::now());
    }
    let end = Instant::now()
        .checked_add(WAIT_BODY_TIME)
        .map_or(deadline, |t| t.min(deadline));
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while body.len() < MAX {
        match tokio::time::timeout_at(end, chunks.next()).await {
            Ok(Some(Ok(chunk))) => {
                body.extend_from_slice(&chunk[..chunk.len().min(MAX - body.len())])
            }
            _ => break,
        }
    }
    cb_wire::stated_wait(&headers, Some(&body), std::time::SystemTime::now())
}

/// Result of sending one request, up to its response headers.
pub(super) enum Sent {
    Headers(reqwest::Response),
    Timeout,
    ConnectError,
    Deadline,
}

/// Why a body could not be read.
pub(super) enum ReadError {
    /// It broke off, was larger than [`MAX_BODY_BYTES`], was silent past
    /// the stall limit or was not whole within the body limit.
    Body(&'static str),
    /// The request's deadline passed first.
    Deadline,
}

/// The largest non-streamed body read from an upstream: 4 MiB
/// ([`cb_wire::DEFAULT_MAX_RESPONSE_BYTES`]); a larger one fails the
/// attempt.
pub(super) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a non-streamed body may take once its headers have come.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyLimits {
    /// The whole body must have come by then (headers + the attempt
    /// timeout).
    pub(super) by: Instant,
    /// Longest silence between two reads (`--stall-timeout`); `None`: no
    /// limit but `by`.
    pub(super) gap: Option<std::time::Duration>,
    /// The request's deadline (for the leg reading it).
    pub(super) deadline: Instant,
}

impl BodyLimits {
    /// The limits of a body whose headers came now.
    pub(super) fn from_now(core: &Core, deadline: Instant) -> Self {
        let now = Instant::now();
        BodyLimits {
            by: now
                .checked_add(core.config.attempt_timeout)
                .unwrap_or(deadline),
            gap: core.config.behaviour.stall_timeout,
            deadline,
        }
    }
}

/// What one upstream's state is, for `GET /health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamHealth {
    /// Whether it answered `GET /v1/models` with a 2xx.
    pub ok: bool,
    /// `ok`, `HTTP 401`, `unreachable` or `no answer in time`.
    pub detail: String,
}

impl Core {
    /// The state of both upstreams, from `GET /v1/models` on each (at most
    /// the attempt timeout each, side by side).
    pub async fn health(&self) -> (UpstreamHealth, UpstreamHealth) {
        futures::join!(
            self.upstream_health(Leg::Primary, &self.config.primary_url),
            self.upstream_health(Leg::Fallback, &self.config.fallback_url)
        )
    }

    /// The client a `leg` goes out on: pooled for the primary, a fresh
    /// connection for anything sent to the fallback.
    fn client_of(&self, leg: Leg) -> &reqwest::Client {
        match leg {
            Leg::Primary => &self.client,
            Leg::Fallback => &self.fresh,
        }
    }

    async fn upstream_health(&self, leg: Leg, base: &str) -> UpstreamHealth {
        let Some(url) = models_endpoint(base) else {
            return UpstreamHealth {
                ok: false,
                detail: "not a URL".into(),
            };
        };
        let request = self.client_of(leg).get(url).send();
        match tokio::time::timeout(self.config.attempt_timeout, request).await {
            Ok(Ok(r)) if r.status().is_success() => UpstreamHealth {
                ok: true,
                detail: "ok".into(),
            },
            Ok(Ok(r)) => UpstreamHealth {
                ok: false,
                detail: format!("HTTP {}", r.status().as_u16()),
            },
            Ok(Err(_)) => UpstreamHealth {
                ok: false,
                detail: "unreachable".into(),
            },
            Err(_) => UpstreamHealth {
                ok: false,
                detail: "no answer in time".into(),
            },
        }
    }

    /// Sends the JSON `body` to `url` and waits for response headers, at
    /// most the attempt timeout and never past `deadline`.
    pub(super) async fn send(
        &self,
        leg: Leg,
        url: &Url,
        body: Bytes,
        headers: &[(&str, &str)],
        deadline: Instant,
    ) -> Sent {
        let now = Instant::now();
        if now >= deadline {
            return Sent::Deadline;
        }
        let remaining = deadline - now;
        let limit = self.config.attempt_timeout.min(remaining);
        let request = self
            .client_of(leg)
            .post(url.clone())
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )
            .body(body);
        let request = headers
            .iter()
            .fold(request, |r, (name, value)| r.header(*name, *value))
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

/// Reads a response in full within `limits`: at most [`MAX_BODY_BYTES`],
/// no silence longer than the stall limit, whole by `limits.by`, and
/// never past the deadline.
pub(super) async fn read_full(
    response: reqwest::Response,
    limits: BodyLimits,
) -> Result<Reply, ReadError> {
    use futures::StreamExt;
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
    // An error's headers, for the wait it states.
    let error_headers = (!status.is_success()).then(|| response.headers().clone());
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    let end = limits.by.min(limits.deadline);
    loop {
        let now = Instant::now();
        let wait_until = match limits.gap.and_then(|g| now.checked_add(g)) {
            Some(gap) => gap.min(end),
            None => end,
        };
        match tokio::time::timeout_at(wait_until, chunks.next()).await {
            Ok(Some(Ok(chunk))) => {
                if body.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(ReadError::Body("was larger than 4 MiB"));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Some(Err(_))) => return Err(ReadError::Body("broke off")),
            Ok(None) => break,
            Err(_) if wait_until >= limits.deadline => return Err(ReadError::Deadline),
            Err(_) if wait_until < end => {
                return Err(ReadError::Body("stalled past the stall timeout"))
            }
            Err(_) => return Err(ReadError::Body("was not whole within the attempt timeout")),
        }
    }
    let retry_after = error_headers
        .and_then(|headers| {
            cb_wire::stated_wait(&headers, Some(&body), std::time::SystemTime::now())
        })
        .map(|w| w.wait);
    Ok(Reply {
        status,
        content_type,
        body: ReplyBody::Full(Bytes::from(body)),
        retry_after,
    })
}

/// Why a 2xx non-streamed body is not the chat completion it claims to be
/// (`None` when it is one: a JSON object with a `choices` array), so it
/// fails the attempt as a malformed chunk does in a stream.
pub(super) fn not_a_completion(reply: &Reply) -> Option<&'static str> {
    let ReplyBody::Full(bytes) = &reply.body else {
        return None;
    };
    match super::shape::shape(bytes) {
        Shape::NotJson => Some("was not JSON"),
        Shape::Completion => None,
        Shape::NoChoices => Some("was not a chat completion (no `choices` array)"),
    }
}

use super::shape::Shape;
pub use cb_base::url::display_url;
use cb_base::url::under_v1;

/// `BASE/v1/chat/completions`, or `BASE/chat/completions` when the base
/// already ends in `/v1`.
pub(super) fn endpoint(flag: &'static str, base: &str) -> Result<Url, ProxyError> {
    let bad = || ProxyError::BadUrl {
        flag,
        url: display_url(base),
    };
    let url = Url::parse(&under_v1(base, "/chat/completions")).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad());
    }
    Ok(url)
}

/// `BASE/v1/models`, the route a health check lists.
fn models_endpoint(base: &str) -> Option<Url> {
    Url::parse(&under_v1(base, "/models")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            url("http://h:1/v1?api_key=k").unwrap(),
            "http://h:1/v1/chat/completions?api_key=k"
        );
        assert_eq!(
            url("http://h:1/base/?x=1").unwrap(),
            "http://h:1/base/v1/chat/completions?x=1"
        );
        let err = url("127.0.0.1:9001").unwrap_err().to_string();
        assert!(err.contains("--primary"), "{err}");
        assert!(url("ftp://h/").is_err());
    }
}
