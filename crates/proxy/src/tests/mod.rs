//! Loopback tests of the reference proxies: a real HTTP client talks to a
//! proxy bound on 127.0.0.1:0 whose primary and fallback are tiny scripted
//! axum mocks that record what they received and when. The mocks and the
//! helpers are here; the tests of the decision tree, retries, backoff,
//! deadlines, routes and events are in `failover.rs`, those of streams
//! (relay, time limits, continuation) in `streams.rs`.

mod failover;
mod hostile;
mod hostile_numbers;
mod memory;
mod pooled;
mod streams;

use super::backoff::backoff_delay;
use super::{spawn, ProxyConfig, ProxyMode, ProxyState, SwitchEvent};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing;
use axum::Router;
use bytes::Bytes;
use cb_wire::openai::{chunk_body, completion_body, error_body, Usage};
use cb_wire::server::{serve, ServerHandle};
use cb_wire::sse::{assemble, read_all};
use futures::StreamExt;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// What a mock does with one request.
#[derive(Clone)]
enum Step {
    /// Answer JSON with this status, optionally with `Retry-After`.
    Json(u16, Value, Option<&'static str>),
    /// Hold the connection without answering.
    Hold,
    /// Answer 200 with these SSE events; when a gate is given, send the first
    /// one, then wait for the gate before the rest.
    Sse(Vec<String>, Option<Arc<Notify>>),
    /// Answer this status with these headers, then send these body parts
    /// `gap` apart, then (when `hold`) keep the body open without a byte.
    Raw {
        status: u16,
        headers: Vec<(&'static str, &'static str)>,
        parts: Vec<&'static str>,
        gap: Duration,
        hold: bool,
    },
    /// Answer 200 (event stream) with `head`, then `repeat` sent `times`
    /// times `gap` apart (a zero gap sends as fast as the proxy reads),
    /// then end the body; `counter` counts the repeats sent.
    Endless {
        head: Vec<String>,
        repeat: String,
        times: usize,
        gap: Duration,
        counter: Arc<AtomicUsize>,
    },
}

/// One request a mock received.
#[derive(Clone)]
struct Seen {
    at: Instant,
    body: Value,
    headers: HeaderMap,
}

/// A scripted upstream: request i gets step i (the last step repeats).
struct Mock {
    steps: Vec<Step>,
    count: AtomicUsize,
    seen: Mutex<Vec<Seen>>,
}

impl Mock {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn mock_chat(State(mock): State<Arc<Mock>>, headers: HeaderMap, body: Bytes) -> Response {
    let i = mock.count.fetch_add(1, Ordering::SeqCst);
    mock.seen.lock().unwrap().push(Seen {
        at: Instant::now(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        headers,
    });
    let step = mock.steps[i.min(mock.steps.len() - 1)].clone();
    match step {
        Step::Json(status, body, retry_after) => {
            let mut response =
                (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response();
            if let Some(value) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", value.parse().unwrap());
            }
            response
        }
        Step::Hold => {
            // The scripted held connection (paused clock: 30 virtual seconds the proxy's
            // timeout cuts short).
            tokio::time::sleep(Duration::from_secs(30)).await;
            StatusCode::OK.into_response()
        }
        Step::Raw {
            status,
            headers,
            parts,
            gap,
            hold,
        } => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
            tokio::spawn(async move {
                for (k, part) in parts.into_iter().enumerate() {
                    if k > 0 {
                        // The scripted gap between body parts (virtual time).
                        tokio::time::sleep(gap).await;
                    }
                    if tx.send(Ok(Bytes::from(part))).await.is_err() {
                        return;
                    }
                }
                if hold {
                    // The scripted stalled body (virtual time, cut short by the proxy).
                    tokio::time::sleep(Duration::from_secs(600)).await;
                }
                drop(tx);
            });
            let mut response = Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response
                .body(Body::from_stream(
                    tokio_stream::wrappers::ReceiverStream::new(rx),
                ))
                .unwrap()
        }
        Step::Endless {
            head,
            repeat,
            times,
            gap,
            counter,
        } => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
            tokio::spawn(async move {
                for event in head {
                    if tx.send(Ok(Bytes::from(event))).await.is_err() {
                        return;
                    }
                }
                let repeat = Bytes::from(repeat);
                for _ in 0..times {
                    if !gap.is_zero() {
                        // The scripted gap between repeats (virtual time).
                        tokio::time::sleep(gap).await;
                    }
                    if tx.send(Ok(repeat.clone())).await.is_err() {
                        return;
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(
                    tokio_stream::wrappers::ReceiverStream::new(rx),
                ))
                .unwrap()
        }
        Step::Sse(events, gate) => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
            tokio::spawn(async move {
                for (k, event) in events.into_iter().enumerate() {
                    if k == 1 {
                        if let Some(gate) = &gate {
                            gate.notified().await;
                        }
                    }
                    let _ = tx.send(Ok(Bytes::from(event))).await;
                }
            });
            let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap()
        }
    }
}

async fn mock(steps: Vec<Step>) -> (ServerHandle, Arc<Mock>) {
    let mock = Arc::new(Mock {
        steps,
        count: AtomicUsize::new(0),
        seen: Mutex::new(Vec::new()),
    });
    let router = Router::new()
        .route("/v1/chat/completions", routing::post(mock_chat))
        .route("/v1/messages", routing::post(mock_chat))
        .route(
            "/v1/models",
            routing::get(|| async { axum::Json(json!({"object": "list", "data": []})) }),
        )
        .with_state(mock.clone());
    let handle = serve(local(), router).await.unwrap();
    (handle, mock)
}

fn local() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn answer(text: &str) -> Value {
    completion_body("id", "m", 0, text, "stop", Usage::new(1, 1))
}

fn ok(text: &str) -> Step {
    Step::Json(200, answer(text), None)
}

fn err(status: u16) -> Step {
    Step::Json(
        status,
        error_body(&format!("primary says {status}"), "api_error", None),
        None,
    )
}

fn sse(words: &[&str]) -> Vec<String> {
    let mut events: Vec<String> = words
        .iter()
        .map(|w| {
            format!(
                "data: {}\n\n",
                chunk_body("s", "m", 0, json!({"content": w}), None)
            )
        })
        .collect();
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// A config with millisecond timings for tests.
fn config(mode: ProxyMode, primary: &ServerHandle, fallback: &ServerHandle) -> ProxyConfig {
    let mut c = ProxyConfig::new(mode, primary.url(), fallback.url());
    c.attempt_timeout = Duration::from_millis(300);
    c.deadline = Duration::from_secs(3);
    c.backoff_base = Duration::from_millis(20);
    c.backoff_cap = Duration::from_millis(200);
    c
}

async fn start(config: ProxyConfig) -> (ServerHandle, ProxyState) {
    spawn(local(), config).await.unwrap()
}

fn conversation() -> Value {
    json!({
        "model": "client-model",
        "temperature": 0.1,
        "provider_x": {"safe_mode": true},
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "My sister's name is Oriane."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "What is my sister called?"}
        ]
    })
}

async fn post(proxy: &ServerHandle, body: &Value) -> (u16, String) {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .bearer_auth("sk-client-secret")
        .json(body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

fn text_of(body: &str) -> String {
    cb_wire::openai::response_text(&serde_json::from_str(body).unwrap()).unwrap_or_default()
}

fn only_event(state: &ProxyState) -> SwitchEvent {
    let events = state.events_snapshot();
    assert_eq!(events.len(), 1, "{events:?}");
    events[0].clone()
}

/// Gaps between consecutive arrivals at a mock.
fn gaps(seen: &[Seen]) -> Vec<Duration> {
    seen.windows(2).map(|w| w[1].at - w[0].at).collect()
}

/// Streamed events of `words`, without a finish reason or `data: [DONE]`
/// (a stream cut off after them).
fn cut_sse(words: &[&str]) -> Vec<String> {
    let mut events = sse(words);
    events.pop();
    events
}

fn streaming(mut body: Value) -> Value {
    body["stream"] = json!(true);
    body
}

/// The text of a streamed body, read as a strict client does (`Err` when
/// it is not a complete stream).
fn streamed_text(body: &str) -> Result<String, String> {
    assemble(&read_all(body.as_bytes())).map(|a| a.text)
}

/// A config whose stream limits are 300 ms.
fn quick_streams(p: &ServerHandle, f: &ServerHandle) -> ProxyConfig {
    let mut c = config(ProxyMode::History, p, f);
    c.behaviour.first_token_timeout = Some(Duration::from_millis(300));
    c.behaviour.stall_timeout = Some(Duration::from_millis(300));
    c
}
