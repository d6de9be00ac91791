//! The pass-through [`Responder`]: what no fault stopped is forwarded to
//! the real provider behind the upstream's role, as `POST
//! {provider}/chat/completions` with the provider's model id substituted,
//! the key as a Bearer token and `stream` as the client asked, under a
//! deadline and the response size cap, redirects not followed. The reply
//! (a stream read chunk by chunk) becomes the same [`Answer`] the simulated
//! model produces, so the upstream frames, degrades and cuts it exactly as
//! it does a simulated one; or, asked live
//! ([`Responder::respond_live`]), its pieces as they arrive
//! (`live.rs`). A provider failure becomes an [`ErrorSpec`]
//! with the provider's status and a redacted excerpt of its body.

use super::reply::{self, ProviderReply};
use super::route::{ProviderRoute, Providers};
use crate::responder::{Answer, Call, LiveAnswer, Responder};
use axum::http::{header, HeaderValue};
use cb_faults::{ErrorKind, ErrorSpec};
use cb_wire::openai::{approx_tokens, Usage};
use cb_wire::sse::TraceReader;
use futures::future::BoxFuture;
use std::time::Duration;
use tokio::time::Instant;

/// Largest error body read from a provider; the excerpt kept is far shorter.
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// Why the pass-through cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum PassThroughError {
    /// The HTTP client could not be built.
    #[error("cannot build the provider HTTP client: {0}")]
    Http(String),
    /// A key that cannot be sent as a header value.
    #[error("the key in {var} holds a line break or a control character and cannot be sent; fix the variable's value (it is not shown here)")]
    Key {
        /// The variable it came from.
        var: String,
    },
}

/// One provider with its `Authorization` value ready (marked sensitive).
#[derive(Debug)]
struct Prepared {
    route: ProviderRoute,
    authorization: Option<HeaderValue>,
}

impl Prepared {
    fn new(route: ProviderRoute) -> Result<Self, PassThroughError> {
        let authorization = match &route.key {
            None => None,
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                    .map_err(|_| PassThroughError::Key {
                        var: route.key_env.clone().unwrap_or_default(),
                    })?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        Ok(Prepared {
            route,
            authorization,
        })
    }
}

/// Forwards every answer to a real provider (see the module documentation).
#[derive(Debug)]
pub struct PassThrough {
    http: reqwest::Client,
    primary: Prepared,
    fallback: Prepared,
    timeout: Duration,
    max_response_bytes: u64,
}

impl PassThrough {
    /// A pass-through to `providers`, each request bounded by `timeout`
    /// (connection to last byte) and `max_response_bytes`.
    ///
    /// # Errors
    /// [`PassThroughError`] when the client cannot be built or a key cannot
    /// be sent.
    pub fn new(
        providers: &Providers,
        timeout: Duration,
        max_response_bytes: u64,
    ) -> Result<Self, PassThroughError> {
        let http = cb_client::hardened()
            .connect_timeout(timeout)
            .build()
            .map_err(|e| PassThroughError::Http(e.to_string()))?;
        Ok(PassThrough {
            http,
            primary: Prepared::new(providers.primary.clone())?,
            fallback: Prepared::new(providers.fallback.clone())?,
            timeout,
            max_response_bytes,
        })
    }

    /// The provider behind `call`'s role.
    fn provider(&self, call: &Call<'_>) -> &Prepared {
        match call.key.role {
            cb_faults::Role::Primary => &self.primary,
            cb_faults::Role::Fallback => &self.fallback,
        }
    }

    /// Sends `call` to its provider and checks the status: a successful
    /// response with its headers read, or the provider's failure.
    async fn send(&self, call: Call<'_>) -> Result<Sent<'_>, ErrorSpec> {
        let provider = self.provider(&call);
        let route = &provider.route;
        let mut body = serde_json::to_value(call.request).map_err(|e| {
            failure(
                500,
                ErrorKind::Server,
                format!("cannot encode the request for the provider: {e}"),
            )
        })?;
        body["model"] = serde_json::Value::String(route.model.clone());
        let mut request = self
            .http
            .post(route.chat_url())
            .timeout(self.timeout)
            .json(&body);
        if let Some(value) = &provider.authorization {
            request = request.header(header::AUTHORIZATION, value.clone());
        }
        let started = Instant::now();
        let response = request
            .send()
            .await
            .map_err(|e| transport(route, &e, self.timeout))?;
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            return Err(failure(
                502,
                ErrorKind::Server,
                format!(
                    "the provider at {} answered a redirect (HTTP {status}), which is not followed; pass the final URL",
                    route.host()
                ),
            ));
        }
        if !response.status().is_success() {
            // Seconds or an HTTP date, read as the reference proxies read it.
            let retry_after =
                cb_wire::retry_after(response.headers(), std::time::SystemTime::now());
            let bytes = read_capped(response, MAX_ERROR_BYTES as u64, None)
                .await
                .unwrap_or_default();
            let mut spec = failure(
                status,
                reply::error_kind(status),
                format!(
                    "the provider at {} answered HTTP {status}: {}",
                    route.host(),
                    reply::error_excerpt(&bytes)
                ),
            );
            spec.retry_after = retry_after;
            return Err(spec);
        }
        let is_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        Ok(Sent {
            response,
            route,
            started,
            is_stream,
        })
    }

    async fn forward(&self, call: Call<'_>) -> Result<Answer, ErrorSpec> {
        let input_tokens = call.input_tokens;
        let Sent {
            response,
            route,
            started,
            is_stream,
        } = self.send(call).await?;
        let malformed = |reason: String| {
            failure(
                502,
                ErrorKind::Server,
                format!(
                    "the provider at {} sent a reply that is not a usable chat completion: {reason}",
                    route.host()
                ),
            )
        };
        let read = if is_stream {
            let mut reader = TraceReader::new();
            read_capped(
                response,
                self.max_response_bytes,
                Some((&mut reader, started)),
            )
            .await
            .map_err(|e| e.spec(route, self.max_response_bytes, self.timeout))?;
            reply::stream(&reader.finish(millis(started)))
        } else {
            let bytes = read_capped(response, self.max_response_bytes, None)
                .await
                .map_err(|e| e.spec(route, self.max_response_bytes, self.timeout))?;
            reply::completion(&bytes)
        };
        let answer = read.map_err(malformed)?;
        Ok(into_answer(answer, input_tokens, route))
    }

    /// Sends `call` and hands its answer on as it arrives.
    async fn forward_live(&self, call: Call<'_>) -> Result<LiveAnswer, ErrorSpec> {
        let sent = self.send(call).await?;
        let limits = Limits {
            host: sent.route.host().to_string(),
            cap: self.max_response_bytes,
            timeout: self.timeout,
        };
        super::live::open(sent.response, sent.is_stream, &sent.route.model, limits).await
    }
}

/// A provider's successful response, its body not read yet.
struct Sent<'a> {
    response: reqwest::Response,
    route: &'a ProviderRoute,
    started: Instant,
    is_stream: bool,
}

/// What bounds reading a provider's reply, and the host its failures name.
#[derive(Debug, Clone)]
pub(super) struct Limits {
    /// Host and port of the provider.
    pub(super) host: String,
    /// Largest body read (`--max-response-bytes`).
    pub(super) cap: u64,
    /// The request's deadline, connection to last byte.
    pub(super) timeout: Duration,
}

impl Responder for PassThrough {
    fn respond<'a>(&'a self, call: Call<'a>) -> BoxFuture<'a, Result<Answer, ErrorSpec>> {
        Box::pin(self.forward(call))
    }

    fn respond_live<'a>(
        &'a self,
        call: Call<'a>,
    ) -> Option<BoxFuture<'a, Result<LiveAnswer, ErrorSpec>>> {
        Some(Box::pin(self.forward_live(call)))
    }
}

/// A provider's reply as the answer the upstream frames: no modelled
/// delay (the provider's own time has passed), the provider's counts or
/// an estimate, and the model it named (or the one asked for).
fn into_answer(reply: ProviderReply, input_tokens: u32, route: &ProviderRoute) -> Answer {
    let usage = reply
        .usage
        .unwrap_or_else(|| Usage::new(input_tokens, approx_tokens(&reply.text)));
    Answer {
        text: reply.text,
        finish_reason: reply.finish_reason,
        usage,
        ttft: Duration::ZERO,
        tokens_per_second: 0.0,
        model: Some(reply.model.unwrap_or_else(|| route.model.clone())),
    }
}

pub(super) fn failure(status: u16, kind: ErrorKind, message: String) -> ErrorSpec {
    ErrorSpec::new(status, kind, cb_base::secret::redact_owned(message))
}

fn millis(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// The provider could not be reached or did not answer in time.
fn transport(route: &ProviderRoute, e: &reqwest::Error, timeout: Duration) -> ErrorSpec {
    if e.is_timeout() {
        failure(
            504,
            ErrorKind::Timeout,
            format!(
                "the provider at {} did not answer within {}",
                route.host(),
                humantime::format_duration(timeout)
            ),
        )
    } else if e.is_connect() {
        failure(
            502,
            ErrorKind::Server,
            format!(
                "cannot connect to the provider at {}; check that it is running and the URL is right",
                route.host()
            ),
        )
    } else {
        failure(
            502,
            ErrorKind::Server,
            format!("the request to the provider at {} failed", route.host()),
        )
    }
}

/// Why a body could not be read whole.
pub(super) enum ReadError {
    /// Larger than the cap.
    TooLarge,
    /// Past the deadline.
    Timeout,
    /// Broken off.
    Broken,
}

impl ReadError {
    /// The failure a body read ended with.
    pub(super) fn of(e: &reqwest::Error) -> Self {
        if e.is_timeout() {
            ReadError::Timeout
        } else {
            ReadError::Broken
        }
    }

    fn spec(&self, route: &ProviderRoute, cap: u64, timeout: Duration) -> ErrorSpec {
        self.spec_at(route.host(), cap, timeout)
    }

    /// The failure this is, at the provider on `host`.
    pub(super) fn spec_at(&self, host: &str, cap: u64, timeout: Duration) -> ErrorSpec {
        match self {
            ReadError::TooLarge => failure(
                502,
                ErrorKind::Server,
                format!("the provider at {host} sent a reply larger than {cap} bytes (--max-response-bytes); it was not read further"),
            ),
            ReadError::Timeout => failure(
                504,
                ErrorKind::Timeout,
                format!(
                    "the provider at {host} did not finish its reply within {}",
                    humantime::format_duration(timeout)
                ),
            ),
            ReadError::Broken => failure(
                502,
                ErrorKind::Server,
                format!("the provider at {host} broke its reply off"),
            ),
        }
    }
}

/// Reads a body chunk by chunk up to `cap` bytes, into `sse` (fed as each
/// chunk arrives) or into the returned bytes.
pub(super) async fn read_capped(
    mut response: reqwest::Response,
    cap: u64,
    mut sse: Option<(&mut TraceReader, Instant)>,
) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    let mut read = 0u64;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                read += chunk.len() as u64;
                if read > cap {
                    return Err(ReadError::TooLarge);
                }
                match sse.as_mut() {
                    Some((reader, started)) => reader.feed(&chunk, millis(*started)),
                    None => bytes.extend_from_slice(&chunk),
                }
            }
            Ok(None) => return Ok(bytes),
            Err(e) => return Err(ReadError::of(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::JitterKey;
    use axum::response::IntoResponse;

    /// A provider that answers every request 429, telling the client to
    /// wait with `retry_after` (a header value as the provider writes it).
    async fn limited_provider(retry_after: String) -> cb_wire::server::ServerHandle {
        let router = axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move || {
                let retry_after = retry_after.clone();
                async move {
                    (
                        axum::http::StatusCode::TOO_MANY_REQUESTS,
                        [(header::RETRY_AFTER, retry_after)],
                        "{\"error\":{\"message\":\"slow down\"}}",
                    )
                        .into_response()
                }
            }),
        );
        cb_wire::server::serve("127.0.0.1:0".parse().unwrap(), router)
            .await
            .unwrap()
    }

    async fn told_wait(retry_after: String) -> Option<Duration> {
        let provider = limited_provider(retry_after).await;
        let url = format!("{}/v1", provider.url());
        let route =
            || ProviderRoute::new(&url, "m", None, ("--provider", "--provider-key-env")).unwrap();
        let pass = PassThrough::new(
            &Providers {
                primary: route(),
                fallback: route(),
            },
            Duration::from_secs(5),
            1 << 20,
        )
        .unwrap();
        let request: cb_wire::openai::ChatRequest = serde_json::from_value(serde_json::json!({
            "model": "asked",
            "messages": [{"role": "user", "content": "hello"}]
        }))
        .unwrap();
        let call = Call {
            request: &request,
            key: JitterKey {
                system: "s",
                role: cb_faults::Role::Primary,
                conversation: "c001",
                turn: 1,
                attempt: 1,
            },
            input_tokens: 1,
        };
        let spec = pass.respond(call).await.unwrap_err();
        assert_eq!(spec.status, 429, "{spec:?}");
        spec.retry_after
    }

    #[tokio::test(start_paused = true)]
    async fn a_providers_retry_after_is_passed_on_in_seconds_or_as_a_date() {
        assert_eq!(told_wait("7".into()).await, Some(Duration::from_secs(7)));
        let in_a_minute = std::time::SystemTime::now() + Duration::from_secs(60);
        let wait = told_wait(httpdate::fmt_http_date(in_a_minute))
            .await
            .unwrap();
        assert!(
            (Duration::from_secs(55)..=Duration::from_secs(60)).contains(&wait),
            "{wait:?}"
        );
        assert_eq!(told_wait("soon".into()).await, None);
        // Absurd values: clamped at one hour or refused, never a panic.
        for absurd in [
            "1e20",
            "1e19",
            "18446744073709551616",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ] {
            assert_eq!(
                told_wait(absurd.into()).await,
                Some(cb_wire::RETRY_AFTER_MAX),
                "{absurd}"
            );
        }
        for refused in ["-1", "NaN", "inf"] {
            assert_eq!(told_wait(refused.into()).await, None, "{refused}");
        }
    }
}
