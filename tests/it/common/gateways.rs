//! Small gateways built to trip the harness's detectors (positive controls).
//! They are test fixtures, not product features: each one gets a single
//! thing wrong on purpose, and the tests check that the harness notices.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use continuity_bench::server::{serve, ServerHandle};
use futures::StreamExt;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a control gateway gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehaviour {
    /// Sends the fallback only the last message (drops history).
    LastMessageOnly,
    /// Keeps one memory shared by all sessions (the histories of the last
    /// [`SHARED_POOL`] requests) and sends it to the fallback in place of
    /// the request's own history (leaks between sessions).
    SharedHistory,
    /// Forwards history, but retries a fallback 429 every 10 ms, 20 times,
    /// ignoring `Retry-After` (a retry storm).
    TightRetryLoop,
    /// Sends the fallback only the last 3 messages (truncates history).
    TruncateToLast3,
    /// Forwards history correctly but ends every fallback answer with a
    /// question, which the fast path leaves to a judge.
    AsksBack,
    /// Forwards history and fails over on every non-2xx, a 401 included.
    FallsBackOnAnyError,
    /// Never calls the fallback: the client gets the primary's status and
    /// body, or 504 when the primary sent none in time.
    NeverFallsBack,
    /// As `FallsBackOnAnyError`, and after a primary failure sends every
    /// request straight to the fallback for [`COOLDOWN`], as LiteLLM's
    /// router cools a failing deployment down.
    CoolsDownPrimary,
    /// As `FallsBackOnAnyError`, but sends the fallback only `model` and
    /// `messages`, dropping every other parameter the client set.
    DropsParams,
    /// Forwards history and streams, but cuts the fallback's stream before
    /// its last chunk and `data: [DONE]` (a broken streaming failover path).
    CutsFallbackStreams,
    /// Fails over on any error for a plain request, never for a streamed
    /// one: the primary's status and body go to the streaming client.
    NoStreamFailover,
    /// Buffers a streamed answer and, when the primary's stream breaks off,
    /// sends the client what arrived followed by `data: [DONE]`, so the cut
    /// answer looks complete.
    MasksCutStreams,
    /// Forwards history correctly, but drops the connection (a 200 whose
    /// body breaks off at once) for a fifth of the first turns, chosen by
    /// the first message's text, as an overloaded gateway with a small
    /// listen backlog does.
    DropsFirstTurns,
    /// Never calls its upstreams: answers every request itself by echoing
    /// the user's messages back.
    AnswersItself,
    /// Forwards faithfully, then puts a stray ", " before every answer.
    PrefixesJunk,
    /// Forwards faithfully, then adds two German sentences to every answer.
    TranslatesPart,
    /// Forwards faithfully, then strips the outer braces of every answer
    /// (structured output that no longer parses).
    StripsJsonBraces,
    /// Forwards faithfully, then replaces every answer with a refusal.
    Refuses,
    /// Forwards faithfully, then empties every answer.
    EmptiesAnswers,
    /// Forwards faithfully, then cuts every answer in half and says
    /// `finish_reason: "length"`.
    CutsAnswersShort,
    /// Forwards faithfully, but says `finish_reason: "stop"` whatever the
    /// upstream said (a gateway that normalises the finish reason).
    SaysStop,
    /// Relays the primary's stream byte for byte and ends its own stream
    /// cleanly when the primary's ends, whether that stream ended or broke
    /// off, adding nothing (no `data: [DONE]`): the relay a gateway that
    /// hides a broken upstream stream behind a clean end is.
    RelaysStreamsAsTheyEnd,
    /// Relays the primary's stream without its error events (a `data:`
    /// line whose JSON has an `error`), then ends it with `data: [DONE]`:
    /// a relay that tidies a provider's in-stream error away.
    DropsErrorEvents,
    /// Forwards streams, holding each one back for [`STALL`] before its
    /// first byte.
    StallsFirstToken,
    /// Retries the primary at once, ignoring `Retry-After`, up to
    /// [`HAMMER`] attempts while it fails, then the fallback up to 3 times
    /// (retries stacked in two layers).
    HammersPrimary,
    /// Retries a 429 from the primary once, after its `Retry-After` or,
    /// without one, after 100 ms: a client that reads the wait from the
    /// header only, not from a reset header or the body.
    ReadsOnlyRetryAfter,
    /// Retries a primary 429 after 100, 200, 400, 800 and 1,600 ms
    /// (exponential backoff that reads no stated wait) until it answers,
    /// then the fallback: inside a 1 s window and again after it.
    BacksOffBlindly,
    /// On a primary stream that breaks, sends the fallback the text so far
    /// as an assistant prefill and hands the client whatever it answers:
    /// only the rest of the answer, or its prefill 400.
    ForwardsPrefillError,
    /// No attempt timeout and no time-to-first-token limit: waits for the
    /// primary as long as it takes (a minute), then fails over.
    NoTimeouts,
    /// Forwards a stream that ended without `data: [DONE]` and keeps the
    /// connection open for [`HOLD_WITHOUT_DONE`] waiting for it.
    HoldsWithoutDone,
    /// As `FallsBackOnAnyError`, and after one primary failure never tries
    /// the primary again.
    StaysOnFallback,
    /// Fails over on a status or a silent primary, but hands a 2xx body to
    /// the client as it comes, unchecked and without a body timeout
    /// ([`super::careless::trusting`]).
    TrustsPlainBodies,
    /// Continues a broken stream from the fallback without a seam, but
    /// leaves the fallback's usage as it counted it
    /// ([`super::careless::splicing`]).
    SplicesWithoutAccounting,
    /// The reference proxy, with its stall timer restarted by every line
    /// a stream sends, comments included ([`continuity_bench::proxy::StallClock::EveryLine`]):
    /// a stream kept warm with `: ping` after its first tokens never
    /// stalls, and the client waits until the upstream closes.
    StallTimerCountsEveryLine,
    /// Fails over on any error, sending the fallback its own model id
    /// ([`continuity_bench::config::FALLBACK_MODEL`]), and names the
    /// client's model in the fallback's answer: the whole plain body, the
    /// first chunk of a stream (whose last chunk still names the
    /// fallback's).
    ClaimsPrimaryModel,
    /// Fails over on any error, and reports the fallback's answer with
    /// `usage.completion_tokens` recounted as the answer's words (a
    /// gateway counting with its own tokenizer).
    RecountsUsage,
    /// Fails over on any error, and says on every answer that no fallback
    /// was attempted and the first target answered
    /// (`x-litellm-attempted-fallbacks: 0`,
    /// `x-portkey-last-used-option-index: config.targets[0]`).
    ClaimsNoFallback,
    /// Fails over on any error, and says truthfully in its headers how it
    /// routed each request (fallbacks attempted, the target that answered,
    /// the model it answered as): the routing check's negative control.
    TellsRoutingTruth,
    /// Fails over on any error; once both upstreams have failed a request,
    /// answers every request 503 at once, without a stated wait, for an
    /// hour (a gateway whose cooldown of every target outlasts the
    /// providers' own).
    CoolsEverything,
    /// Forwards faithfully, plain and streamed, after holding every
    /// request for [`HOLD`]: a gateway that adds latency and nothing else.
    HoldsEveryRequest,
    /// Routes on model ids of its own ([`OWN_MODEL_PREFIX`] + the
    /// provider's id, as TensorZero's `tensorzero::model_name::…`): any
    /// other model id is a 400; the prefix is dropped before forwarding
    /// faithfully.
    RoutesOnItsOwnModelNames,
}

/// The prefix `RoutesOnItsOwnModelNames` routes on.
pub const OWN_MODEL_PREFIX: &str = "acme::";

/// The waits of `BacksOffBlindly` before each retry of a 429.
const BLIND_BACKOFF: [Duration; 5] = [
    Duration::from_millis(100),
    Duration::from_millis(200),
    Duration::from_millis(400),
    Duration::from_millis(800),
    Duration::from_millis(1600),
];

/// Most primary attempts of `HammersPrimary`.
pub const HAMMER: usize = 7;

/// How long `HoldsWithoutDone` keeps a stream open after its last byte.
pub const HOLD_WITHOUT_DONE: Duration = Duration::from_secs(5);

/// How long `HoldsEveryRequest` holds each request before forwarding it.
pub const HOLD: Duration = Duration::from_millis(30);

/// How long `StallsFirstToken` holds a stream back: a second past the 5 s
/// ttft limit its test sets (a sleep only ever lasts longer than asked).
pub const STALL: Duration = Duration::from_secs(6);

/// Changes the answer of a completion body the way a contract control
/// gateway does; the others leave it alone.
fn alter(kind: Misbehaviour, json: &mut Value) {
    let Some(content) = json["choices"][0]["message"]["content"].as_str() else {
        return;
    };
    let text = content.to_string();
    let new = match kind {
        Misbehaviour::PrefixesJunk => format!(", {text}"),
        Misbehaviour::TranslatesPart => format!(
            "{text} Ich hoffe, das hilft dir heute weiter. Sag mir bitte Bescheid, wenn du noch etwas anderes brauchst."
        ),
        Misbehaviour::StripsJsonBraces => text
            .trim()
            .trim_start_matches('{')
            .trim_end_matches('}')
            .to_string(),
        Misbehaviour::Refuses => "I'm sorry, but I can't help with that request.".to_string(),
        Misbehaviour::EmptiesAnswers => String::new(),
        Misbehaviour::CutsAnswersShort => {
            let words: Vec<&str> = text.split(' ').collect();
            json["choices"][0]["finish_reason"] = Value::from("length");
            words[..words.len().div_ceil(2)].join(" ")
        }
        Misbehaviour::SaysStop => {
            json["choices"][0]["finish_reason"] = Value::from("stop");
            text
        }
        _ => return,
    };
    json["choices"][0]["message"]["content"] = Value::String(new);
}

/// How long `CoolsDownPrimary` skips the primary after it failed.
pub const COOLDOWN: Duration = Duration::from_millis(500);

/// Requests whose histories `SharedHistory` pools and hands to the fallback.
const SHARED_POOL: usize = 20;

/// Deadline of a primary attempt in the control gateways (the TIMEOUT fault
/// holds far longer): generous, so that a loaded test machine does not make
/// a control skip a primary that would have answered, which the harness
/// then rightly counts as not exercised.
const PRIMARY_TIMEOUT: Duration = Duration::from_secs(3);

/// Deadline of a fallback attempt: generous, so a loaded test machine does
/// not turn a slow answer into an error.
const FALLBACK_TIMEOUT: Duration = Duration::from_secs(10);

/// The primary's attempt deadline for `kind`.
fn primary_timeout(kind: Misbehaviour) -> Duration {
    if kind == Misbehaviour::NoTimeouts {
        Duration::from_secs(60)
    } else {
        PRIMARY_TIMEOUT
    }
}

#[derive(Clone)]
struct Gateway {
    kind: Misbehaviour,
    primary: String,
    fallback: String,
    client: reqwest::Client,
    /// The histories of the last [`SHARED_POOL`] requests, any session's.
    shared: Arc<Mutex<std::collections::VecDeque<Vec<Value>>>>,
    cooled_until: Arc<Mutex<Option<tokio::time::Instant>>>,
    /// Until when `CoolsEverything` answers 503 without calling anyone.
    all_cooled_until: Arc<Mutex<Option<tokio::time::Instant>>>,
    /// Answers sent to the client with a 2xx status.
    answered: Answered,
}

/// How many 2xx answers a control gateway has sent: a readiness signal
/// for a test that must act once a run is under way.
#[derive(Debug, Clone, Default)]
pub struct Answered(Arc<std::sync::atomic::AtomicUsize>);

impl Answered {
    /// 2xx answers so far.
    pub fn count(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until at least `n` answers went out, polling; panics after
    /// `give_up` (a bound on a hang, far above any run's need).
    pub async fn at_least(&self, n: usize, give_up: Duration) {
        let until = tokio::time::Instant::now() + give_up;
        while self.count() < n {
            assert!(
                tokio::time::Instant::now() < until,
                "only {} of {n} answers in {give_up:?}",
                self.count()
            );
            // A poll of the counter, bounded by `give_up`: the count decides.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Starts a control gateway on 127.0.0.1 in front of `primary` and
/// `fallback` (base URLs), with the count of its 2xx answers.
async fn start_counted(
    kind: Misbehaviour,
    primary: String,
    fallback: String,
) -> (ServerHandle, Answered) {
    let answered = Answered::default();
    if kind == Misbehaviour::StallTimerCountsEveryLine {
        return (every_line_proxy(primary, fallback).await, answered);
    }
    let state = Gateway {
        answered: answered.clone(),
        kind,
        primary,
        fallback,
        client: reqwest::Client::builder().no_proxy().build().unwrap(),
        shared: Arc::new(Mutex::new(std::collections::VecDeque::new())),
        cooled_until: Arc::new(Mutex::new(None)),
        all_cooled_until: Arc::new(Mutex::new(None)),
    };
    let router = Router::new()
        .route("/v1/chat/completions", post(counted))
        .with_state(state);
    let server = serve(([127, 0, 0, 1], 0).into(), router).await.unwrap();
    (server, answered)
}

/// The reference proxy (history mode) with the fast profile's stream
/// limits and what the simulated fallback needs, as the catalogue runs it,
/// but with its stall timer restarted by every line.
async fn every_line_proxy(primary: String, fallback: String) -> ServerHandle {
    use continuity_bench::proxy::{ProxyConfig, ProxyMode, StallClock};
    let timing = continuity_bench::semantics::timing::Timing::fast();
    let mut config = ProxyConfig::new(ProxyMode::History, primary, fallback);
    config.behaviour.first_token_timeout = Some(timing.builtin_first_token_timeout);
    config.behaviour.stall_timeout = Some(timing.builtin_stall_timeout);
    config.behaviour.fallback_max_tokens = Some(1024);
    config
        .behaviour
        .fallback_params
        .insert("enable_thinking".into(), Value::Bool(false));
    config.behaviour.stall_clock = StallClock::EveryLine;
    let (server, _state) = continuity_bench::proxy::spawn(([127, 0, 0, 1], 0).into(), config)
        .await
        .unwrap();
    server
}

/// [`handle`], counting its 2xx answers.
async fn counted(State(g): State<Gateway>, body: Json<Value>) -> Response {
    let answered = g.answered.clone();
    let response = handle(State(g), body).await;
    if response.status().is_success() {
        answered.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    response
}

async fn call(g: &Gateway, base: &str, body: &Value, timeout: Duration) -> Option<(u16, Value)> {
    let (status, bytes) = call_raw(g, base, body, timeout).await?;
    // A body that breaks off or is not JSON counts as no answer.
    Some((status, serde_json::from_slice(&bytes).ok()?))
}

/// Sends `body` to `base` and returns status and raw body bytes.
async fn call_raw(
    g: &Gateway,
    base: &str,
    body: &Value,
    timeout: Duration,
) -> Option<(u16, bytes::Bytes)> {
    let url = format!("{base}/v1/chat/completions");
    let response = g
        .client
        .post(url)
        .json(body)
        .timeout(timeout)
        .send()
        .await
        .ok()?;
    let status = response.status().as_u16();
    Some((status, response.bytes().await.ok()?))
}

/// `ReadsOnlyRetryAfter`: the primary once, and again after the wait its
/// 429's `Retry-After` states (100 ms without one).
async fn retry_after_header_only(g: &Gateway, body: &Value) -> Option<(u16, Value)> {
    let first = post_to_primary(g, body).await?;
    let status = first.status().as_u16();
    if status != 429 {
        let bytes = first.bytes().await.ok()?;
        return Some((status, serde_json::from_slice(&bytes).ok()?));
    }
    let wait = first
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.trim().parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .unwrap_or(Duration::from_millis(100));
    drop(first);
    // The misbehaviour itself: the wait read from Retry-After alone.
    tokio::time::sleep(wait).await;
    call(g, &g.primary, body, primary_timeout(g.kind)).await
}

/// `body` sent to the primary, its response unread; `None` when it could
/// not be sent within [`PRIMARY_TIMEOUT`].
async fn post_to_primary(g: &Gateway, body: &Value) -> Option<reqwest::Response> {
    let url = format!("{}/v1/chat/completions", g.primary);
    g.client
        .post(url)
        .json(body)
        .timeout(PRIMARY_TIMEOUT)
        .send()
        .await
        .ok()
}

/// The primary's 2xx stream as it arrived, ended with `data: [DONE]` if it
/// broke off; `None` when the primary did not answer 2xx.
async fn read_masking_cuts(g: &Gateway, body: &Value) -> Option<bytes::Bytes> {
    let mut response = post_to_primary(g, body).await?;
    if !response.status().is_success() {
        return None;
    }
    let mut read = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        read.extend_from_slice(&chunk);
    }
    // Everything up to a break, a silent close or a malformed event, then
    // a terminator, as if the answer were complete.
    let text = String::from_utf8_lossy(&read).into_owned();
    let mut kept = String::new();
    for event in text.split("\n\n").filter(|e| !e.trim().is_empty()) {
        let data = event.trim().strip_prefix("data:").map(str::trim);
        match data {
            Some("[DONE]") => break,
            Some(json) if serde_json::from_str::<Value>(json).is_err() => break,
            _ => kept.push_str(&format!("{event}\n\n")),
        }
    }
    kept.push_str("data: [DONE]\n\n");
    Some(bytes::Bytes::from(kept))
}

/// The primary's stream read to its end: the bytes, and whether it broke
/// off or ended without `data: [DONE]`.
async fn read_stream(g: &Gateway, body: &Value) -> Option<(u16, Vec<u8>, bool)> {
    let mut response = post_to_primary(g, body).await?;
    let status = response.status().as_u16();
    let mut read = Vec::new();
    let mut broke = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => read.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(_) => {
                broke = true;
                break;
            }
        }
    }
    let done = String::from_utf8_lossy(&read).contains("data: [DONE]");
    Some((status, read, broke || !done))
}

/// The content text of the events of a stream.
fn streamed_content(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// A streamed request: the primary's stream when it answers 2xx, else the
/// fallback's, cut short by `CutsFallbackStreams`.
async fn handle_stream(g: &Gateway, body: &Value) -> Response {
    let stall = g.kind == Misbehaviour::StallsFirstToken;
    let sse = |status: u16, bytes: bytes::Bytes| {
        let body = if stall {
            // Headers now, the stream's first byte after the stall.
            axum::body::Body::from_stream(futures::stream::once(async move {
                // The misbehaviour itself: a first token after the stall.
                tokio::time::sleep(STALL).await;
                Ok::<bytes::Bytes, std::io::Error>(bytes)
            }))
        } else {
            axum::body::Body::from(bytes)
        };
        Response::builder()
            .status(status)
            .header("content-type", "text/event-stream")
            .body(body)
            .unwrap()
    };
    if g.kind == Misbehaviour::DropsErrorEvents {
        if let Some((200, read, _)) = read_stream(g, body).await {
            return sse(200, without_error_events(&read));
        }
    }
    if g.kind == Misbehaviour::RelaysStreamsAsTheyEnd {
        if let Some((200, read, _)) = read_stream(g, body).await {
            return sse(200, bytes::Bytes::from(read));
        }
    }
    if g.kind == Misbehaviour::SplicesWithoutAccounting {
        if let Some(r) = super::careless::splicing(&g.client, &g.primary, &g.fallback, body).await {
            return r;
        }
    }
    if g.kind == Misbehaviour::MasksCutStreams {
        if let Some(bytes) = read_masking_cuts(g, body).await {
            return sse(200, bytes);
        }
    }
    if g.kind == Misbehaviour::ForwardsPrefillError {
        if let Some((200, read, true)) = read_stream(g, body).await {
            let mut continued = body.clone();
            if let Some(messages) = continued["messages"].as_array_mut() {
                messages.push(serde_json::json!({
                    "role": "assistant",
                    "content": streamed_content(&read),
                }));
            }
            return match call_raw(g, &g.fallback, &continued, FALLBACK_TIMEOUT).await {
                Some((status, bytes)) if (200..300).contains(&status) => sse(status, bytes),
                Some((status, bytes)) => (
                    StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                    [("content-type", "application/json")],
                    bytes,
                )
                    .into_response(),
                None => StatusCode::GATEWAY_TIMEOUT.into_response(),
            };
        }
    }
    if g.kind == Misbehaviour::HoldsWithoutDone {
        if let Some((200, read, true)) = read_stream(g, body).await {
            let held = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(read))])
                .chain(futures::stream::once(async {
                    // The misbehaviour itself: a stream that stays open without its terminator.
                    tokio::time::sleep(HOLD_WITHOUT_DONE).await;
                    Ok(bytes::Bytes::new())
                }));
            return Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(axum::body::Body::from_stream(held))
                .unwrap();
        }
    }
    match call_raw(g, &g.primary, body, primary_timeout(g.kind)).await {
        Some((status, bytes)) if (200..300).contains(&status) => return sse(status, bytes),
        Some((status, bytes)) if g.kind == Misbehaviour::NoStreamFailover => {
            return (
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                bytes,
            )
                .into_response();
        }
        None if g.kind == Misbehaviour::NoStreamFailover => {
            return StatusCode::GATEWAY_TIMEOUT.into_response();
        }
        _ => {}
    }
    let mut fallback_body = body.clone();
    if g.kind == Misbehaviour::ClaimsPrimaryModel {
        fallback_body["model"] = Value::from(continuity_bench::config::FALLBACK_MODEL);
    }
    match call_raw(g, &g.fallback, &fallback_body, FALLBACK_TIMEOUT).await {
        Some((status, bytes)) if g.kind == Misbehaviour::ClaimsPrimaryModel => {
            sse(status, first_chunk_names(&bytes, &body["model"]))
        }
        Some((200, bytes)) if g.kind == Misbehaviour::DropsErrorEvents => {
            sse(200, without_error_events(&bytes))
        }
        Some((status, bytes)) if g.kind == Misbehaviour::CutsFallbackStreams => {
            let text = String::from_utf8_lossy(&bytes);
            let chunks: Vec<&str> = text.split("\n\n").filter(|c| !c.is_empty()).collect();
            let kept = chunks[..chunks.len().saturating_sub(3)].join("\n\n") + "\n\n";
            sse(status, bytes::Bytes::from(kept))
        }
        Some((status, bytes)) => sse(status, bytes),
        None => StatusCode::GATEWAY_TIMEOUT.into_response(),
    }
}

/// A stream's events without its error events (a `data:` line whose JSON
/// has an `error`) and its terminator, then `data: [DONE]`: an in-stream
/// error tidied away.
fn without_error_events(read: &[u8]) -> bytes::Bytes {
    let text = String::from_utf8_lossy(read).into_owned();
    let mut kept: String = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .filter(|e| {
            let data = e.trim().strip_prefix("data:").map(str::trim);
            data.and_then(|d| serde_json::from_str::<Value>(d).ok())
                .is_none_or(|v| v.get("error").is_none())
        })
        .filter(|e| e.trim() != "data: [DONE]")
        .map(|e| format!("{e}\n\n"))
        .collect();
    kept.push_str("data: [DONE]\n\n");
    bytes::Bytes::from(kept)
}

/// The text of every user message of a request, in order.
fn user_texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// A 200 whose body breaks off before any byte: to the client, a dropped
/// connection.
fn dropped() -> Response {
    let broken = futures::stream::once(async {
        Err::<bytes::Bytes, std::io::Error>(std::io::Error::other("dropped by the control"))
    });
    Response::builder()
        .status(StatusCode::OK)
        .body(axum::body::Body::from_stream(broken))
        .unwrap()
}

async fn handle(State(g): State<Gateway>, Json(mut body): Json<Value>) -> Response {
    if g.kind == Misbehaviour::HoldsEveryRequest {
        tokio::time::sleep(HOLD).await;
    }
    if g.kind == Misbehaviour::RoutesOnItsOwnModelNames {
        let model = body["model"].as_str().unwrap_or_default();
        match model.strip_prefix(OWN_MODEL_PREFIX) {
            Some(provider_model) => body["model"] = provider_model.to_string().into(),
            None => {
                let message = format!("`model` must start with {OWN_MODEL_PREFIX} (got {model:?})");
                return (
                    StatusCode::BAD_REQUEST,
                    Json(serde_json::json!({"error": {"message": message, "type": "invalid_request_error"}})),
                )
                    .into_response();
            }
        }
    }
    if g.kind == Misbehaviour::TrustsPlainBodies {
        return super::careless::trusting(&g.client, &g.primary, &g.fallback, &body).await;
    }
    if body["stream"] == Value::Bool(true) {
        return handle_stream(&g, &body).await;
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let users = user_texts(&messages);
    if g.kind == Misbehaviour::AnswersItself {
        let echo = users.join(" ");
        return Json(serde_json::json!({
            "id": "control-echo",
            "object": "chat.completion",
            "model": body["model"].clone(),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": echo}}],
        }))
        .into_response();
    }
    let preflight = users
        .first()
        .is_some_and(|u| u.starts_with("continuity-bench preflight"));
    if g.kind == Misbehaviour::DropsFirstTurns && users.len() == 1 && !preflight {
        let digest: u32 = users[0].bytes().map(u32::from).sum();
        if digest % 5 == 0 {
            return dropped();
        }
    }
    let leaked: Vec<Value> = {
        let mut pool = g.shared.lock().unwrap();
        let leaked = pool.iter().flatten().cloned().collect();
        pool.push_back(messages.clone());
        if pool.len() > SHARED_POOL {
            pool.pop_front();
        }
        leaked
    };
    let now = tokio::time::Instant::now();
    let all_cooled = g
        .all_cooled_until
        .lock()
        .unwrap()
        .is_some_and(|until| now < until);
    if all_cooled {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"error": {"message": "every target is cooling down", "type": "cooldown"}})),
        )
            .into_response();
    }
    let cooled = g
        .cooled_until
        .lock()
        .unwrap()
        .is_some_and(|until| now < until);
    let tries = if g.kind == Misbehaviour::HammersPrimary {
        HAMMER
    } else {
        1
    };
    let mut primary = None;
    if !cooled && g.kind == Misbehaviour::ReadsOnlyRetryAfter {
        primary = retry_after_header_only(&g, &body).await;
    } else if !cooled && g.kind == Misbehaviour::BacksOffBlindly {
        primary = call(&g, &g.primary, &body, primary_timeout(g.kind)).await;
        for backoff in BLIND_BACKOFF {
            if primary.as_ref().is_none_or(|(s, _)| *s != 429) {
                break;
            }
            tokio::time::sleep(backoff).await;
            primary = call(&g, &g.primary, &body, primary_timeout(g.kind)).await;
        }
    } else if !cooled {
        for _ in 0..tries {
            primary = call(&g, &g.primary, &body, primary_timeout(g.kind)).await;
            if primary.as_ref().is_some_and(|(s, _)| *s < 429 || *s == 404) {
                break;
            }
        }
    }
    let failed = !primary
        .as_ref()
        .is_some_and(|(status, _)| (200..300).contains(status));
    let cooldown = match g.kind {
        Misbehaviour::CoolsDownPrimary => Some(COOLDOWN),
        Misbehaviour::StaysOnFallback => Some(Duration::from_secs(3600)),
        _ => None,
    };
    if let (Some(cooldown), true, false) = (cooldown, failed, cooled) {
        *g.cooled_until.lock().unwrap() = Some(tokio::time::Instant::now() + cooldown);
    }
    match (&primary, g.kind) {
        (Some((status, json)), _) if (200..300).contains(status) => {
            let mut json = json.clone();
            alter(g.kind, &mut json);
            let model = json["model"].as_str().unwrap_or_default().to_string();
            let routed = Routed {
                fallback_tried: false,
                fallback_answered: false,
                model,
                primary: g.primary.clone(),
                fallback: g.fallback.clone(),
            };
            return claim(
                g.kind,
                &routed,
                (StatusCode::OK, Json(json)).into_response(),
            );
        }
        (Some((status, json)), Misbehaviour::NeverFallsBack) => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_GATEWAY);
            return (status, Json(json.clone())).into_response();
        }
        (None, Misbehaviour::NeverFallsBack) => return StatusCode::GATEWAY_TIMEOUT.into_response(),
        _ => {}
    }
    let mut fallback_body = body.clone();
    let last = messages.last().cloned().into_iter().collect::<Vec<_>>();
    fallback_body["messages"] = Value::Array(match g.kind {
        Misbehaviour::LastMessageOnly => last,
        Misbehaviour::SharedHistory => leaked.into_iter().chain(last).collect(),
        Misbehaviour::TightRetryLoop
        | Misbehaviour::AsksBack
        | Misbehaviour::FallsBackOnAnyError
        | Misbehaviour::NeverFallsBack
        | Misbehaviour::CoolsDownPrimary
        | Misbehaviour::DropsParams
        | Misbehaviour::CutsFallbackStreams
        | Misbehaviour::NoStreamFailover
        | Misbehaviour::MasksCutStreams
        | Misbehaviour::DropsFirstTurns
        | Misbehaviour::AnswersItself
        | Misbehaviour::PrefixesJunk
        | Misbehaviour::TranslatesPart
        | Misbehaviour::StripsJsonBraces
        | Misbehaviour::Refuses
        | Misbehaviour::EmptiesAnswers
        | Misbehaviour::CutsAnswersShort
        | Misbehaviour::SaysStop
        | Misbehaviour::RelaysStreamsAsTheyEnd
        | Misbehaviour::DropsErrorEvents
        | Misbehaviour::ReadsOnlyRetryAfter
        | Misbehaviour::BacksOffBlindly
        | Misbehaviour::StallsFirstToken
        | Misbehaviour::HammersPrimary
        | Misbehaviour::ForwardsPrefillError
        | Misbehaviour::NoTimeouts
        | Misbehaviour::HoldsWithoutDone
        | Misbehaviour::StaysOnFallback
        | Misbehaviour::TrustsPlainBodies
        | Misbehaviour::SplicesWithoutAccounting
        | Misbehaviour::StallTimerCountsEveryLine
        | Misbehaviour::ClaimsPrimaryModel
        | Misbehaviour::RecountsUsage
        | Misbehaviour::ClaimsNoFallback
        | Misbehaviour::TellsRoutingTruth
        | Misbehaviour::CoolsEverything
        | Misbehaviour::HoldsEveryRequest
        | Misbehaviour::RoutesOnItsOwnModelNames => messages.clone(),
        Misbehaviour::TruncateToLast3 => messages[messages.len().saturating_sub(3)..].to_vec(),
    });
    if g.kind == Misbehaviour::ClaimsPrimaryModel {
        fallback_body["model"] = Value::from(continuity_bench::config::FALLBACK_MODEL);
    }
    if g.kind == Misbehaviour::DropsParams {
        fallback_body = serde_json::json!({
            "model": fallback_body["model"].clone(),
            "messages": fallback_body["messages"].clone(),
        });
    }
    let tries = match g.kind {
        Misbehaviour::TightRetryLoop => 21,
        Misbehaviour::HammersPrimary => 3,
        _ => 1,
    };
    let mut answer = None;
    // The 10 ms between a tight loop's retries is its misbehaviour: far
    // below any Retry-After, a wait load can only stretch.
    for _ in 0..tries {
        answer = call(&g, &g.fallback, &fallback_body, FALLBACK_TIMEOUT).await;
        match &answer {
            Some((429, _)) => tokio::time::sleep(Duration::from_millis(10)).await,
            Some((500.., _)) | None if g.kind == Misbehaviour::HammersPrimary => {}
            _ => break,
        }
    }
    if let (Misbehaviour::AsksBack, Some((_, json))) = (g.kind, answer.as_mut()) {
        if let Some(text) = json["choices"][0]["message"]["content"].as_str() {
            json["choices"][0]["message"]["content"] =
                Value::String(format!("{text} Anything else I can help with?"));
        }
    }
    if let Some((_, json)) = answer.as_mut() {
        alter(g.kind, json);
        misreport(g.kind, &body, json);
    }
    let both_failed = !answer
        .as_ref()
        .is_some_and(|(status, _)| (200..300).contains(status));
    if g.kind == Misbehaviour::CoolsEverything && both_failed {
        // The misbehaviour itself: every target cooled far past its Retry-After.
        *g.all_cooled_until.lock().unwrap() =
            Some(tokio::time::Instant::now() + Duration::from_secs(3600));
    }
    match answer {
        Some((status, json)) => {
            let routed = Routed {
                fallback_tried: true,
                fallback_answered: (200..300).contains(&status),
                model: json["model"].as_str().unwrap_or_default().to_string(),
                primary: g.primary.clone(),
                fallback: g.fallback.clone(),
            };
            let response = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                Json(json),
            )
                .into_response();
            claim(g.kind, &routed, response)
        }
        None => StatusCode::GATEWAY_TIMEOUT.into_response(),
    }
}

/// How a control routed one plain request, for the headers it sends.
struct Routed {
    fallback_tried: bool,
    fallback_answered: bool,
    /// The model the answering upstream named.
    model: String,
    /// The base URLs of the two upstreams.
    primary: String,
    fallback: String,
}

/// `response` with the routing headers `kind` sends: lies for
/// `ClaimsNoFallback`, the truth for `TellsRoutingTruth`, none otherwise.
fn claim(kind: Misbehaviour, routed: &Routed, mut response: Response) -> Response {
    let (fallbacks, index, model) = match kind {
        Misbehaviour::ClaimsNoFallback => (0, 0, None),
        Misbehaviour::TellsRoutingTruth => (
            u8::from(routed.fallback_tried),
            u8::from(routed.fallback_answered),
            Some(routed.model.as_str()),
        ),
        _ => return response,
    };
    let base = if index == 1 {
        &routed.fallback
    } else {
        &routed.primary
    };
    let headers = response.headers_mut();
    let mut put = |name: &'static str, value: String| {
        if let Ok(value) = axum::http::HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    };
    put("x-litellm-attempted-fallbacks", fallbacks.to_string());
    put(
        "x-portkey-last-used-option-index",
        format!("config.targets[{index}]"),
    );
    put("x-litellm-model-api-base", format!("{base}/v1"));
    if let Some(model) = model {
        put("x-served-model", model.to_string());
    }
    response
}

/// What the honesty controls change in the fallback's plain answer to
/// `request`: the model it names, or its completion count.
fn misreport(kind: Misbehaviour, request: &Value, json: &mut Value) {
    match kind {
        Misbehaviour::ClaimsPrimaryModel => json["model"] = request["model"].clone(),
        Misbehaviour::RecountsUsage => {
            let words = json["choices"][0]["message"]["content"]
                .as_str()
                .map_or(0, |t| t.split_whitespace().count());
            if json["usage"].is_object() {
                json["usage"]["completion_tokens"] = Value::from(words);
            }
        }
        _ => {}
    }
}

/// A fallback stream whose first chunk names `model` (the client's), the
/// rest as the fallback sent them.
fn first_chunk_names(bytes: &[u8], model: &Value) -> bytes::Bytes {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut renamed = false;
    for event in text.split_inclusive("\n\n") {
        let data = event.trim().strip_prefix("data:").map(str::trim);
        match data.and_then(|d| serde_json::from_str::<Value>(d).ok()) {
            Some(mut chunk) if !renamed && chunk.get("model").is_some() => {
                chunk["model"] = model.clone();
                out.push_str(&format!("data: {chunk}\n\n"));
                renamed = true;
            }
            _ => out.push_str(event),
        }
    }
    bytes::Bytes::from(out)
}

/// A control gateway in front of upstreams to be started on two ports that
/// were free a moment ago: (gateway, primary port, fallback port).
pub async fn start_on_free_ports(kind: Misbehaviour) -> (ServerHandle, u16, u16) {
    let (gateway, primary, fallback, _) = start_counted_on_free_ports(kind).await;
    (gateway, primary, fallback)
}

/// As [`start_on_free_ports`], with the count of its 2xx answers.
pub async fn start_counted_on_free_ports(kind: Misbehaviour) -> (ServerHandle, u16, u16, Answered) {
    let (primary, fallback) = (free_port(), free_port());
    let (gateway, answered) = start_counted(
        kind,
        format!("http://127.0.0.1:{primary}"),
        format!("http://127.0.0.1:{fallback}"),
    )
    .await;
    (gateway, primary, fallback, answered)
}

/// A port no other call of this test process was given (see
/// [`cb_testkit::free_port`]).
pub use cb_testkit::free_port;
