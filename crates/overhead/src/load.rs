//! One slot's load: a closed loop of `concurrency` clients, each sending
//! its next request when its last one is answered, `warmup` requests left
//! out of the figures and then `requests` measured. Each request is judged
//! as the OpenAI SDK reads it: a plain answer counts when it is a 200 whose
//! JSON has a choice with message content; a stream counts when it is a
//! 200 whose body carries a data event and ends without a transport error
//! (its latency is taken at the first data event) and no data event is an
//! error object, on which the SDK raises. Anything else is a failure, counted beside the latencies with its first reason, never a
//! latency.

use crate::schedule::Mode;
use cb_base::secret::Secret;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where a slot's requests go and how each is bounded.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The full chat-completions URL.
    pub url: String,
    /// Extra request headers; values stay secret up to the socket.
    pub headers: Vec<(String, Secret)>,
}

/// The bodies and bounds every request of a measurement shares.
#[derive(Debug, Clone)]
pub struct Requests {
    /// The plain request body (JSON, `stream: false`).
    pub plain: bytes::Bytes,
    /// The streamed request body (JSON, `stream: true`).
    pub stream: bytes::Bytes,
    /// Deadline of one request, from sending to the end of its answer.
    pub deadline: Duration,
    /// Largest answer read; a longer one is a failure.
    pub max_response_bytes: u64,
}

/// What a slot measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlotOutcome {
    /// Latency of each measured request that succeeded, in milliseconds.
    pub latencies_ms: Vec<f64>,
    /// Measured requests that failed.
    pub failed: usize,
    /// The first failure's reason.
    pub first_failure: Option<String>,
    /// Requests sent, warm-up included.
    pub sent: usize,
    /// Warm-up requests that failed (left out of the figures, but said:
    /// a warm-up request that waits out the deadline holds its slot).
    pub warmup_failed: usize,
    /// The first warm-up failure's reason.
    pub first_warmup_failure: Option<String>,
}

/// Sends `warmup + requests` requests to `endpoint` in `mode` from
/// `concurrency` clients at once (each on its own pooled keep-alive
/// connection), and returns the measured ones.
///
/// # Errors
/// When the HTTP client cannot be built.
pub async fn run_slot(
    endpoint: &Endpoint,
    bodies: &Requests,
    mode: Mode,
    concurrency: usize,
    warmup: usize,
    requests: usize,
) -> anyhow::Result<SlotOutcome> {
    let client = cb_client::hardened()
        .pool_max_idle_per_host(concurrency)
        .build()?;
    let total = warmup + requests;
    let next = Arc::new(AtomicUsize::new(0));
    let outcome = Arc::new(Mutex::new(SlotOutcome {
        latencies_ms: Vec::with_capacity(requests),
        ..SlotOutcome::default()
    }));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (client, endpoint, bodies) = (client.clone(), endpoint.clone(), bodies.clone());
        let (next, outcome) = (next.clone(), outcome.clone());
        workers.spawn(async move {
            // Bounded: every turn of the loop takes one of `total` numbers.
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let result = one(&client, &endpoint, &bodies, mode).await;
                let mut out = outcome.lock().unwrap_or_else(|e| e.into_inner());
                out.sent += 1;
                if i < warmup {
                    if let Err(reason) = result {
                        out.warmup_failed += 1;
                        out.first_warmup_failure.get_or_insert(reason);
                    }
                    continue;
                }
                match result {
                    Ok(ms) => out.latencies_ms.push(ms),
                    Err(reason) => {
                        out.failed += 1;
                        out.first_failure.get_or_insert(reason);
                    }
                }
            }
        });
    }
    while workers.join_next().await.is_some() {}
    let out = outcome.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(out)
}

/// One request: its latency in milliseconds, or why it failed.
async fn one(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    bodies: &Requests,
    mode: Mode,
) -> Result<f64, String> {
    let body = match mode {
        Mode::Plain => bodies.plain.clone(),
        Mode::Stream => bodies.stream.clone(),
    };
    let mut request = client
        .post(&endpoint.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in &endpoint.headers {
        if let Some(v) = value.header_value() {
            request = request.header(name.as_str(), v);
        }
    }
    let started = Instant::now();
    let exchange = async {
        let mut response = request.send().await.map_err(transport)?;
        let status = response.status();
        let mut body = Vec::new();
        let mut first_data = None;
        // Lines before this offset were scanned for a data event already.
        let mut scanned = 0;
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > bodies.max_response_bytes {
                return Err(format!(
                    "the answer passed {} bytes (--max-response-bytes)",
                    bodies.max_response_bytes
                ));
            }
            if mode == Mode::Stream && first_data.is_none() {
                if let Some(event) = first_data_event(&body[scanned..]) {
                    if is_error_event(event) {
                        return Err("the stream's first data event is an error".to_string());
                    }
                    first_data = Some(started.elapsed());
                }
                // Keep the last, maybe unfinished, line for the next chunk.
                scanned = body
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(scanned, |i| i + 1);
            }
        }
        if status != reqwest::StatusCode::OK {
            return Err(format!("HTTP {}", status.as_u16()));
        }
        match mode {
            Mode::Plain => {
                let ended = started.elapsed();
                if !has_content(&body) {
                    return Err("a 200 without a choice's message content".to_string());
                }
                Ok(ended)
            }
            Mode::Stream => {
                let errored = body.split(|&b| b == b'\n').any(|line| {
                    line.strip_prefix(b"data:")
                        .is_some_and(|rest| is_error_event(rest.trim_ascii()))
                });
                if errored {
                    return Err("the stream carried an error event".to_string());
                }
                first_data.ok_or_else(|| "a 200 stream without a data event".to_string())
            }
        }
    };
    match tokio::time::timeout(bodies.deadline, exchange).await {
        Ok(Ok(elapsed)) => Ok(elapsed.as_secs_f64() * 1000.0),
        Ok(Err(reason)) => Err(reason),
        Err(_) => Err(format!(
            "no whole answer within {} ms (--deadline)",
            bodies.deadline.as_millis()
        )),
    }
}

/// A transport error, said without its URL (which may carry a secret).
fn transport(e: reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the body broke off"
    } else {
        "the exchange failed"
    };
    format!("{kind}: {}", e.without_url())
}

/// The first complete server-sent `data:` line of `body` other than
/// `[DONE]`: its value.
fn first_data_event(body: &[u8]) -> Option<&[u8]> {
    let complete = &body[..body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)];
    complete.split(|&b| b == b'\n').find_map(|line| {
        let rest = line.strip_prefix(b"data:")?.trim_ascii();
        (!rest.is_empty() && rest != b"[DONE]").then_some(rest)
    })
}

/// Whether a data event is an error (a JSON object with `error`), as the
/// OpenAI SDK raises on one.
fn is_error_event(event: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(event).is_ok_and(|v| v.get("error").is_some())
}

/// Whether `body` is a chat completion with a choice's message content.
fn has_content(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| {
        v.pointer("/choices/0/message/content")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|s| !s.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server whose first `fail` requests are HTTP 500 and whose later
    /// ones are whole plain answers.
    async fn fails_first(fail: usize) -> String {
        use axum::{routing::post, Router};
        let seen = Arc::new(AtomicUsize::new(0));
        let app = Router::new().route(
            "/v1/chat/completions",
            post(move || {
                let seen = Arc::clone(&seen);
                async move {
                    if seen.fetch_add(1, Ordering::SeqCst) < fail {
                        (
                            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                            "down".to_string(),
                        )
                    } else {
                        (
                            axum::http::StatusCode::OK,
                            r#"{"choices":[{"message":{"role":"assistant","content":"hi"}}]}"#
                                .to_string(),
                        )
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://{}/v1/chat/completions",
            listener.local_addr().unwrap()
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    /// Warm-up requests that fail are counted and their reason kept, though
    /// they stay out of the figures; none is counted when none failed.
    #[tokio::test]
    async fn failed_warm_up_requests_are_counted_beside_the_figures() {
        let bodies = Requests {
            plain: bytes::Bytes::from_static(b"{}"),
            stream: bytes::Bytes::from_static(b"{}"),
            deadline: Duration::from_secs(5),
            max_response_bytes: 1 << 20,
        };
        for (fail, warmup_failed) in [(3, 3), (0, 0)] {
            let endpoint = Endpoint {
                url: fails_first(fail).await,
                headers: Vec::new(),
            };
            let out = run_slot(&endpoint, &bodies, Mode::Plain, 1, 4, 5)
                .await
                .unwrap();
            assert_eq!(out.warmup_failed, warmup_failed, "{out:?}");
            assert_eq!(out.first_warmup_failure.is_some(), fail > 0, "{out:?}");
            assert_eq!((out.failed, out.latencies_ms.len(), out.sent), (0, 5, 9));
        }
    }

    #[test]
    fn a_data_event_is_a_whole_data_line_but_not_done_or_a_comment() {
        assert_eq!(
            first_data_event(b"data: {\"choices\":[]}\n\n"),
            Some(&b"{\"choices\":[]}"[..])
        );
        assert_eq!(
            first_data_event(b": keep-alive\n\ndata:{}\n"),
            Some(&b"{}"[..])
        );
        assert_eq!(first_data_event(b": keep-alive\n\n"), None);
        assert_eq!(first_data_event(b"data: [DONE]\n\n"), None);
        assert_eq!(first_data_event(b"event: ping\n\n"), None);
        assert_eq!(
            first_data_event(b"data: {\"cho"),
            None,
            "a line still arriving"
        );
        assert!(is_error_event(b"{\"error\":{\"message\":\"overloaded\"}}"));
        assert!(!is_error_event(b"{\"choices\":[]}"));
    }

    #[test]
    fn a_plain_answer_needs_message_content() {
        assert!(has_content(
            br#"{"choices":[{"message":{"role":"assistant","content":"hi"}}]}"#
        ));
        assert!(!has_content(br#"{"choices":[{"message":{"content":""}}]}"#));
        assert!(!has_content(br#"{"error":{"message":"no"}}"#));
        assert!(!has_content(b"not json"));
    }
}
