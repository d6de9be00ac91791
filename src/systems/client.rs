//! Addressing a system under test: who it is ([`Target`]), the driver's
//! HTTP client, and one chat-completions exchange with a deadline
//! ([`send`]): what came back, when its first byte and (for a stream) its
//! first content token arrived, and the reason there is no usable answer
//! when there is none. A request with `stream: true` is read as
//! server-sent events, chunk by chunk, to the end.

use super::sse::{assemble, SseReader, StreamTrace};
use crate::openai::{response_text, ChatRequest};
use crate::proxy::ProxyMode;
use crate::secret::Secret;
use anyhow::Context as _;
use serde_json::Value;
use std::time::{Duration, Instant};

/// What kind of system a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemKind {
    /// A built-in reference proxy.
    Builtin(ProxyMode),
    /// An external gateway given with `--gateway`.
    Gateway,
}

/// A system under test: a name and an OpenAI-compatible base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The system's name in reports.
    pub name: String,
    /// Built-in or external.
    pub kind: SystemKind,
    /// Base URL, e.g. `http://127.0.0.1:8080` (the driver appends
    /// `/v1/chat/completions`).
    pub url: String,
    /// Extra request headers (name, value), e.g. `Authorization`. Values
    /// stay [`Secret`] up to the socket.
    pub headers: Vec<(String, Secret)>,
}

/// What one request produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// HTTP status, if a response arrived.
    pub status: Option<u16>,
    /// The assistant text, if the response was a usable 2xx completion.
    pub answer: Option<String>,
    /// Why there is no usable answer.
    pub error: Option<String>,
    /// Request sent to last byte received (or failure), milliseconds.
    pub latency_ms: f64,
    /// Request sent to response headers, milliseconds, if they came.
    pub ttfb_ms: Option<f64>,
    /// A stream's request sent to its first non-empty content token,
    /// milliseconds, if one came.
    pub ttft_ms: Option<f64>,
    /// `choices[0].finish_reason` of the answer, if it carried one.
    pub finish_reason: Option<String>,
    /// What a stream sent, event by event, and the lines that were not
    /// events; `None` for a plain response.
    pub stream: Option<StreamTrace>,
}

/// Longest excerpt of an error body kept in a reason.
const BODY_EXCERPT: usize = 200;

/// The HTTP client of the driver: no proxy from the environment, no retries,
/// a connection pool large enough for the workers. Idle connections are
/// dropped after 2 s, before the 5 s keep-alive of common gateway servers
/// (uvicorn, Node) closes them under a request that reuses one.
///
/// # Errors
/// When the TLS backend cannot be initialised.
pub fn driver_client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(512)
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .context("cannot build the HTTP client")
}

/// What the body reading produced.
struct Body {
    status: u16,
    ttfb_ms: f64,
    bytes: Vec<u8>,
    stream: Option<StreamTrace>,
}

fn since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Sends `request` to `target` and waits at most `deadline` for the whole
/// response.
pub async fn send(
    client: &reqwest::Client,
    target: &Target,
    request: &ChatRequest,
    deadline: Duration,
) -> Exchange {
    let started = Instant::now();
    let url = format!("{}/v1/chat/completions", target.url.trim_end_matches('/'));
    let mut builder = client.post(&url).json(request);
    for (name, value) in &target.headers {
        if let Some(value) = value.header_value() {
            builder = builder.header(name, value);
        }
    }
    let outcome = tokio::time::timeout(deadline, async {
        let mut response = builder.send().await?;
        let status = response.status().as_u16();
        let ttfb_ms = since(started);
        let streamed = request.stream && (200..300).contains(&status);
        let mut reader = streamed.then(SseReader::new);
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            match reader.as_mut() {
                Some(reader) => reader.feed(&chunk, since(started)),
                None => bytes.extend_from_slice(&chunk),
            }
        }
        Ok::<_, reqwest::Error>(Body {
            status,
            ttfb_ms,
            bytes,
            stream: reader.map(|r| r.finish(since(started))),
        })
    })
    .await;
    let latency_ms = since(started);
    let mut exchange = Exchange {
        status: None,
        answer: None,
        error: None,
        latency_ms,
        ttfb_ms: None,
        ttft_ms: None,
        finish_reason: None,
        stream: None,
    };
    let body = match outcome {
        Err(_) => {
            exchange.error = Some(format!(
                "no complete response within {} ms",
                deadline.as_millis()
            ));
            return exchange;
        }
        Ok(Err(e)) => {
            exchange.error = Some(transport_reason(&e));
            return exchange;
        }
        Ok(Ok(body)) => body,
    };
    exchange.status = Some(body.status);
    exchange.ttfb_ms = Some(body.ttfb_ms);
    let answer = match body.stream {
        Some(trace) => {
            let assembled = assemble(&trace);
            exchange.stream = Some(trace);
            assembled.map(|a| {
                exchange.ttft_ms = a.first_content_ms;
                exchange.finish_reason = a.finish_reason;
                a.text
            })
        }
        None => plain_answer(body.status, &body.bytes).map(|(text, finish)| {
            exchange.finish_reason = finish;
            text
        }),
    };
    match answer {
        Ok(text) if !text.trim().is_empty() => exchange.answer = Some(text),
        Ok(_) => exchange.error = Some("empty assistant message".to_string()),
        Err(reason) => exchange.error = Some(reason),
    }
    exchange
}

/// The text and finish reason of a plain (non-streamed) response body.
fn plain_answer(status: u16, body: &[u8]) -> Result<(String, Option<String>), String> {
    if !(200..300).contains(&status) {
        return Err(format!("HTTP {status}: {}", excerpt(body)));
    }
    let json = serde_json::from_slice::<Value>(body)
        .map_err(|e| format!("malformed response body ({e}): {}", excerpt(body)))?;
    let text = response_text(&json)
        .ok_or_else(|| format!("no choices[0].message.content in body: {}", excerpt(body)))?;
    let finish = json
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((text, finish))
}

/// A transport error as a reason. reqwest's own message names the URL; the
/// reason keeps only the kind and the innermost cause.
fn transport_reason(e: &reqwest::Error) -> String {
    let kind = if e.is_connect() {
        "connection failed"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "response body broken off"
    } else {
        "request failed"
    };
    let mut cause = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = Some(s.to_string());
        source = s.source();
    }
    format!(
        "{kind}: {}",
        cause.unwrap_or_else(|| "no detail".to_string())
    )
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut cut: String = text.chars().take(BODY_EXCERPT).collect();
    if text.chars().count() > BODY_EXCERPT {
        cut.push('…');
    }
    cut.replace(['\n', '\r'], " ")
}
