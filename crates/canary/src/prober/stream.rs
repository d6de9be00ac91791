//! The streamed probe on the wire, read so that a hung stream can be told
//! from a timeout: the design fails a route whose open stream shows no
//! text within the ttft limit, and a timeout before the headers is a
//! transport error. [`cb_client::send_to`] bounds the whole
//! exchange with one deadline and keeps nothing of a stream it gave up on,
//! so this reads the stream itself, with the one SSE reader
//! ([`cb_wire::sse::TraceReader`]) and the one assembler, and keeps what
//! arrived when the deadline hits. (A follow-up could give `send_to` a
//! partial trace on timeout and drop this file.)
//!
//! Bounded like every exchange: one deadline from request to last byte, a
//! size cap, no redirect followed (the client follows none), every line
//! redacted as it is read.

use cb_base::secret::{redact_owned, Secret};
use cb_client::sse::{assemble, StreamTrace, TraceReader};
use cb_client::Exchange;
use cb_wire::openai::ChatRequest;
use serde_json::Value;
use std::time::Duration;
use tokio::time::Instant;

/// Longest excerpt of an error body kept.
const EXCERPT: usize = 200;

/// What reading a stream came to.
#[derive(Debug)]
pub enum Streamed {
    /// A reply to judge, a refusal, or a transport error (as an
    /// [`Exchange`] for [`super::classify`]).
    Exchange(Box<Exchange>),
    /// The stream opened (2xx headers) and no text came before the
    /// deadline: a hung stream, a ttft failure.
    Hung {
        /// Request sent to headers, milliseconds.
        ttfb_ms: f64,
    },
}

fn since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

fn failed(status: Option<u16>, error: String, started: Instant) -> Exchange {
    Exchange {
        status,
        error: Some(redact_owned(error)),
        latency_ms: since(started),
        ..Exchange::default()
    }
}

/// Whether some event so far carried text content.
fn has_text(trace_events: &[cb_client::sse::TimedEvent]) -> bool {
    trace_events.iter().any(|e| {
        serde_json::from_str::<Value>(&e.data)
            .ok()
            .and_then(|v| {
                v.pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    .map(|s| !s.is_empty())
            })
            .unwrap_or(false)
    })
}

/// Sends the streamed `request` to `url` and reads it within `deadline`,
/// at most `cap` bytes.
pub async fn send_stream(
    client: &reqwest::Client,
    url: &str,
    headers: &[(String, Secret)],
    request: &ChatRequest,
    deadline: Duration,
    cap: u64,
) -> Streamed {
    let started = Instant::now();
    let give_up = started + deadline;
    let timeout = || format!("no complete response within {} ms", deadline.as_millis());
    let mut builder = client.post(url).json(request);
    for (name, value) in headers {
        if let Some(value) = value.header_value() {
            builder = builder.header(name, value);
        }
    }
    let mut response = match tokio::time::timeout_at(give_up, builder.send()).await {
        Err(_) => return Streamed::Exchange(Box::new(failed(None, timeout(), started))),
        Ok(Err(e)) => {
            let kind = if e.is_connect() {
                "connection failed"
            } else {
                "request failed"
            };
            return Streamed::Exchange(Box::new(failed(None, kind.to_string(), started)));
        }
        Ok(Ok(r)) => r,
    };
    let status = response.status().as_u16();
    let ttfb_ms = since(started);
    let mut read = 0u64;
    let mut reader = TraceReader::new();
    let mut body = Vec::new();
    let ok = (200..300).contains(&status);
    loop {
        let chunk = match tokio::time::timeout_at(give_up, response.chunk()).await {
            Err(_) if ok => {
                let trace = reader.finish(since(started));
                if has_text(&trace.events) {
                    return Streamed::Exchange(Box::new(failed(None, timeout(), started)));
                }
                return Streamed::Hung { ttfb_ms };
            }
            Err(_) => return Streamed::Exchange(Box::new(failed(None, timeout(), started))),
            Ok(Err(_)) => {
                let error = "response body broken off".to_string();
                return Streamed::Exchange(Box::new(failed(ok.then_some(status), error, started)));
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => chunk,
        };
        read = read.saturating_add(chunk.len() as u64);
        if read > cap {
            let error = format!("response larger than {cap} bytes; stopped reading it");
            return Streamed::Exchange(Box::new(failed(Some(status), error, started)));
        }
        if ok {
            reader.feed(&chunk, since(started));
        } else {
            body.extend_from_slice(&chunk);
        }
    }
    if !ok {
        let text: String = String::from_utf8_lossy(&body)
            .chars()
            .take(EXCERPT)
            .collect();
        let mut e = failed(Some(status), format!("HTTP {status}: {text}"), started);
        e.ttfb_ms = Some(ttfb_ms);
        return Streamed::Exchange(Box::new(e));
    }
    let trace = reader.finish(since(started));
    Streamed::Exchange(Box::new(judged_exchange(status, ttfb_ms, trace, started)))
}

/// The exchange of a complete stream.
fn judged_exchange(status: u16, ttfb_ms: f64, trace: StreamTrace, started: Instant) -> Exchange {
    let provider = trace
        .events
        .iter()
        .take_while(|e| e.data != "[DONE]")
        .find_map(|e| {
            serde_json::from_str::<Value>(&e.data)
                .ok()?
                .get("provider")?
                .as_str()
                .map(str::to_string)
        })
        .map(redact_owned);
    let mut exchange = failed(Some(status), String::new(), started);
    exchange.error = None;
    exchange.ttfb_ms = Some(ttfb_ms);
    exchange.provider = provider;
    match assemble(&trace) {
        Ok(a) => {
            exchange.ttft_ms = a.first_content_ms;
            exchange.finish_reason = a.finish_reason;
            exchange.model = a.model;
            exchange.usage = a.usage;
            exchange.completion_tokens = a.completion_tokens;
            exchange.answer = Some(redact_owned(a.text));
        }
        Err(reason) => exchange.error = Some(redact_owned(reason)),
    }
    exchange.stream = Some(trace);
    exchange
}
