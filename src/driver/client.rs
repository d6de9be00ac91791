//! One chat-completions request from the driver, with a deadline, and what
//! came back: status, assistant text, or the reason there is none. A
//! request with `stream: true` is read as server-sent events to the end.

use crate::openai::{response_text, ChatRequest};
use std::time::{Duration, Instant};

/// A system under test: a name and an OpenAI-compatible base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The system's name in reports.
    pub name: String,
    /// Base URL, e.g. `http://127.0.0.1:8080` (the driver appends
    /// `/v1/chat/completions`).
    pub url: String,
    /// Extra request headers (name, value), e.g. `Authorization`. Values are
    /// never written to a report or log.
    pub headers: Vec<(String, String)>,
}

/// What one request produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status, if a response arrived.
    pub status: Option<u16>,
    /// The assistant text, if the response was a usable 2xx completion.
    pub answer: Option<String>,
    /// Why there is no usable answer.
    pub error: Option<String>,
    /// Request sent to last byte received (or failure), milliseconds.
    pub latency_ms: f64,
}

/// Longest excerpt of an error body kept in a reason.
const BODY_EXCERPT: usize = 200;

/// Sends `request` to `target` and waits at most `deadline` for the whole
/// response.
pub async fn send(
    client: &reqwest::Client,
    target: &Target,
    request: &ChatRequest,
    deadline: Duration,
) -> Reply {
    let started = Instant::now();
    let url = format!("{}/v1/chat/completions", target.url.trim_end_matches('/'));
    let mut builder = client.post(&url).json(request);
    for (name, value) in &target.headers {
        builder = builder.header(name, value);
    }
    let outcome = tokio::time::timeout(deadline, async {
        let response = builder.send().await?;
        let status = response.status().as_u16();
        let body = response.bytes().await?;
        Ok::<_, reqwest::Error>((status, body))
    })
    .await;
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let failed = |status: Option<u16>, error: String| Reply {
        status,
        answer: None,
        error: Some(error),
        latency_ms,
    };
    match outcome {
        Err(_) => failed(
            None,
            format!("no complete response within {} ms", deadline.as_millis()),
        ),
        Ok(Err(e)) => failed(None, transport_reason(&e)),
        Ok(Ok((status, body))) if !(200..300).contains(&status) => {
            failed(Some(status), format!("HTTP {status}: {}", excerpt(&body)))
        }
        Ok(Ok((status, body))) if request.stream => match super::sse::stream_text(&body) {
            Ok(text) if !text.trim().is_empty() => Reply {
                status: Some(status),
                answer: Some(text),
                error: None,
                latency_ms,
            },
            Ok(_) => failed(Some(status), "empty assistant message".to_string()),
            Err(reason) => failed(Some(status), reason),
        },
        Ok(Ok((status, body))) => match serde_json::from_slice::<serde_json::Value>(&body) {
            Err(e) => failed(
                Some(status),
                format!("malformed response body ({e}): {}", excerpt(&body)),
            ),
            Ok(json) => match response_text(&json) {
                Some(text) if !text.trim().is_empty() => Reply {
                    status: Some(status),
                    answer: Some(text),
                    error: None,
                    latency_ms,
                },
                Some(_) => failed(Some(status), "empty assistant message".to_string()),
                None => failed(
                    Some(status),
                    format!("no choices[0].message.content in body: {}", excerpt(&body)),
                ),
            },
        },
    }
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
