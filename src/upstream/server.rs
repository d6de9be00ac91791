//! The upstream HTTP server: an OpenAI-compatible provider that recognises
//! the conversation and turn from the request content, executes the fault
//! the plan gives it on the wire, otherwise answers with the simulated model
//! after the modelled latency, and logs every attempt.
//!
//! Routes: `POST /v1/chat/completions` (JSON or server-sent events) and
//! `GET /v1/models`. Any model id is accepted and echoed in the answer.
//!
//! Faults on the wire:
//! - TIMEOUT: no byte is sent until the hold ends or the client goes away.
//!   When the hold runs out with the client still there, the upstream
//!   answers 504 with an OpenAI-style error body (action `timeout_held`,
//!   status 504); when the client leaves first, status is empty and
//!   `client_gave_up` is true, with the time it waited.
//! - API_ERROR: the profile's 5xx with an error body of type `server_error`.
//! - RATE_LIMIT (and an empty token bucket): 429 with `Retry-After` in whole
//!   seconds (rounded up, at least 1) and a body of type `requests`, code
//!   `rate_limit_exceeded`.
//!
//! A malformed body (not JSON, or no messages) gets 400 and is logged as
//! `bad_request`. A client that goes away while a normal answer is being
//! prepared or streamed is logged as having given up: the attempt's guard
//! records that when hyper drops the handler future or the body stream.

use super::latency::JitterKey;
use super::{model, UpstreamContext};
use crate::faults::plan::rate_limit_body;
use crate::faults::profile::RateLimiterSpec;
use crate::faults::{FaultAction, Role, TokenBucket};
use crate::openai::{
    approx_tokens, chunk_body, completion_body, error_body, usage_chunk_body, ChatRequest, Usage,
};
use crate::record::AttemptRecord;
use crate::server::{serve, ServerHandle};
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Model ids listed by `GET /v1/models`. Any other id is accepted too.
pub const MODEL_IDS: [&str; 3] = ["sim-model", "sim-primary", "sim-fallback"];

/// Largest request body accepted (long histories stay far below it).
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// State of one upstream.
#[derive(Debug, Clone)]
pub struct UpstreamState {
    /// System the upstream belongs to.
    pub system: String,
    /// Primary or fallback.
    pub role: Role,
    /// What all upstreams share.
    pub ctx: UpstreamContext,
}

impl UpstreamState {
    /// The state of `system`'s `role` upstream.
    pub fn new(system: &str, role: Role, ctx: UpstreamContext) -> Self {
        UpstreamState {
            system: system.to_string(),
            role,
            ctx,
        }
    }
}

/// A token bucket with the limiter's parameters.
#[derive(Debug)]
struct Limiter {
    spec: RateLimiterSpec,
    bucket: Mutex<TokenBucket>,
}

/// What the handlers share: the state and, if the profile puts one in front
/// of this upstream, its rate limiter.
#[derive(Debug)]
struct Shared {
    state: UpstreamState,
    limiter: Option<Limiter>,
}

/// The router of one upstream.
pub fn router(state: UpstreamState) -> Router {
    let limiter = state
        .ctx
        .plan
        .profile()
        .rate_limiter
        .clone()
        .filter(|spec| spec.upstream == state.role)
        .map(|spec| Limiter {
            bucket: Mutex::new(TokenBucket::from_spec(&spec, Instant::now())),
            spec,
        });
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(Arc::new(Shared { state, limiter }))
}

/// A running pair.
#[derive(Debug)]
pub struct UpstreamPair {
    /// The primary.
    pub primary: ServerHandle,
    /// The fallback.
    pub fallback: ServerHandle,
}

impl UpstreamPair {
    /// Stops both servers.
    pub async fn shutdown(self) {
        self.primary.shutdown().await;
        self.fallback.shutdown().await;
    }
}

/// Starts a pair for `system`: the primary on `primary`, the fallback on
/// `fallback` (port 0 picks a free port; see the handles for the real ones).
///
/// # Errors
/// When either address cannot be bound.
pub async fn start_pair(
    system: &str,
    primary: SocketAddr,
    fallback: SocketAddr,
    ctx: UpstreamContext,
) -> std::io::Result<UpstreamPair> {
    let p = serve(
        primary,
        router(UpstreamState::new(system, Role::Primary, ctx.clone())),
    )
    .await?;
    let f = serve(
        fallback,
        router(UpstreamState::new(system, Role::Fallback, ctx)),
    )
    .await?;
    Ok(UpstreamPair {
        primary: p,
        fallback: f,
    })
}

async fn models() -> Json<Value> {
    let data: Vec<Value> = MODEL_IDS
        .iter()
        .map(
            |id| json!({"id": id, "object": "model", "created": 0, "owned_by": "continuity-bench"}),
        )
        .collect();
    Json(json!({"object": "list", "data": data}))
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Records one attempt exactly once: through [`AttemptGuard::finish`] when the
/// upstream is done, or on drop when the client went away first (hyper drops
/// the handler future or the body stream on disconnect).
struct AttemptGuard {
    log: super::AttemptLog,
    row: Option<AttemptRecord>,
    start: Instant,
    /// Status already committed to the wire (a stream's 200), for the drop path.
    sent: Option<u16>,
}

impl AttemptGuard {
    fn finish(mut self, status: Option<u16>) {
        if let Some(mut row) = self.row.take() {
            row.status = status;
            row.duration_ms = millis(self.start.elapsed());
            self.log.record(row);
        }
    }

    fn set_retry_after(&mut self, ms: u64) {
        if let Some(row) = self.row.as_mut() {
            row.retry_after_ms = Some(ms);
        }
    }

    fn set_action(&mut self, action: &str) {
        if let Some(row) = self.row.as_mut() {
            action.clone_into(&mut row.action);
        }
    }
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        if let Some(mut row) = self.row.take() {
            row.status = self.sent;
            row.client_gave_up = true;
            row.duration_ms = millis(self.start.elapsed());
            self.log.record(row);
        }
    }
}

fn json_response(status: u16, body: String) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `Retry-After` in whole seconds, rounded up, at least 1.
pub fn retry_after_secs(d: Duration) -> u64 {
    (d.as_secs_f64().ceil() as u64).max(1)
}

/// Who is asking: (conversation index, id) and turn, recognised from the
/// request content (see [`super::index`]).
fn identify(ctx: &UpstreamContext, req: &ChatRequest) -> (Option<usize>, String, u32) {
    let turn = req.messages.iter().filter(|m| m.role == "user").count() as u32;
    let first = req
        .messages
        .iter()
        .find(|m| m.role == "user")
        .map(|m| m.text_cow());
    match first
        .as_deref()
        .and_then(|f| ctx.index.recognise(f, turn as usize))
    {
        Some(r) => (Some(r.index), r.id.to_string(), r.turn as u32),
        None => (None, String::new(), turn),
    }
}

async fn chat_completions(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let start = Instant::now();
    let st = &shared.state;
    let ctx = &st.ctx;
    let run = ctx.run.load(Ordering::SeqCst);
    let arrived_ms = millis(start.saturating_duration_since(ctx.epoch));

    let parsed: Result<ChatRequest, String> = serde_json::from_slice::<ChatRequest>(&body)
        .map_err(|e| format!("the request body is not a valid chat-completions request: {e}"))
        .and_then(|r| {
            if r.messages.is_empty() {
                Err("the request has no messages; send at least one message".to_string())
            } else {
                Ok(r)
            }
        });
    let req = match parsed {
        Ok(r) => r,
        Err(message) => {
            let model = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default();
            let attempt = ctx.log.next_attempt(run, &st.system, st.role, "", 0);
            ctx.log.record(AttemptRecord {
                run,
                system: st.system.clone(),
                role: st.role,
                conversation: String::new(),
                turn: 0,
                attempt,
                arrived_ms,
                action: "bad_request".into(),
                status: Some(400),
                retry_after_ms: None,
                messages: 0,
                approx_tokens: 0,
                model,
                stream: false,
                params: String::new(),
                client_gave_up: false,
                duration_ms: millis(start.elapsed()),
            });
            let body = error_body(&message, "invalid_request_error", None).to_string();
            return json_response(400, body);
        }
    };

    let (conv_index, conversation, turn) = identify(ctx, &req);
    let attempt = ctx
        .log
        .next_attempt(run, &st.system, st.role, &conversation, turn);
    let input_tokens: u32 = req
        .messages
        .iter()
        .map(|m| approx_tokens(&m.text_cow()))
        .sum();
    let mut guard = AttemptGuard {
        log: ctx.log.clone(),
        row: Some(AttemptRecord {
            run,
            system: st.system.clone(),
            role: st.role,
            conversation: conversation.clone(),
            turn,
            attempt,
            arrived_ms,
            action: "ok".into(),
            status: None,
            retry_after_ms: None,
            messages: req.messages.len() as u32,
            approx_tokens: input_tokens,
            model: req.model.clone(),
            stream: req.stream,
            params: param_names(&req),
            client_gave_up: false,
            duration_ms: 0.0,
        }),
        start,
        sent: None,
    };

    let mut action = conv_index.and_then(|i| ctx.plan.action(run, i, turn as usize, st.role));
    if action.is_none() {
        if let Some(limiter) = &shared.limiter {
            let granted = limiter
                .bucket
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .try_take(Instant::now());
            if !granted {
                action = Some(FaultAction::RateLimit {
                    status: limiter.spec.status,
                    retry_after: limiter.spec.retry_after,
                    body: rate_limit_body(&limiter.spec.message),
                });
            }
        }
    }

    match action {
        Some(FaultAction::Timeout { hold }) => {
            guard.set_action("timeout_held");
            // Dropped here (and the guard with it) if the client goes away.
            tokio::time::sleep(hold).await;
            guard.finish(Some(504));
            let message = format!(
                "simulated TIMEOUT: the upstream held the connection for {} without answering",
                humantime::format_duration(hold)
            );
            json_response(
                504,
                error_body(&message, "timeout", Some("timeout")).to_string(),
            )
        }
        Some(FaultAction::ApiError { status, body }) => {
            guard.set_action("api_error");
            guard.finish(Some(status));
            json_response(status, body)
        }
        Some(FaultAction::RateLimit {
            status,
            retry_after,
            body,
        }) => {
            guard.set_action("rate_limited");
            guard.set_retry_after(retry_after_secs(retry_after) * 1000);
            guard.finish(Some(status));
            let mut resp = json_response(status, body);
            resp.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(retry_after_secs(retry_after)),
            );
            resp
        }
        answer_action @ (Some(FaultAction::BodyCut { .. }) | None) => {
            let cut = match answer_action {
                Some(FaultAction::BodyCut { chunks }) => {
                    guard.set_action("body_cut");
                    Some(chunks)
                }
                _ => None,
            };
            let call = Call {
                st,
                req,
                conversation: &conversation,
                turn,
                attempt,
                input_tokens,
            };
            answer(call, guard, cut).await
        }
    }
}

/// The request's top-level parameters other than `model`, `messages`,
/// `stream` and `stream_options`, by name, sorted, space-separated.
fn param_names(req: &ChatRequest) -> String {
    let mut names: Vec<&str> = req.extra.keys().map(String::as_str).collect();
    names.sort_unstable();
    names.join(" ")
}

/// Waits `d`; returns at once when `d` is zero. A zero `tokio::time::sleep`
/// still waits for the timer's next millisecond tick, which would give the
/// `instant` profile about a millisecond of hidden latency.
async fn pause(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}

/// One recognised request to answer.
struct Call<'a> {
    st: &'a UpstreamState,
    req: ChatRequest,
    conversation: &'a str,
    turn: u32,
    attempt: u32,
    input_tokens: u32,
}

/// How long a cut body waits after its last bytes before breaking off, so
/// those bytes have left for the gateway (hyper would otherwise drop the
/// connection with them still in its buffer, before even the status line).
const CUT_AFTER: Duration = Duration::from_millis(100);

/// The error that makes hyper abort a body instead of ending it.
fn cut_error() -> std::io::Error {
    std::io::Error::other("simulated cut: the upstream broke the body off")
}

/// A body that sends `part`, waits [`CUT_AFTER`] and breaks off.
fn broken_body(part: String) -> Body {
    let sent = futures::stream::once(async move { Ok(Bytes::from(part)) });
    let cut = futures::stream::once(async {
        tokio::time::sleep(CUT_AFTER).await;
        Err(cut_error())
    });
    Body::from_stream(futures::StreamExt::chain(sent, cut))
}

/// The normal answer: the simulated model's reply after the modelled
/// latency. With `cut`, the answer breaks off partway (see
/// [`FaultAction::BodyCut`]).
async fn answer(call: Call<'_>, mut guard: AttemptGuard, cut: Option<usize>) -> Response {
    let Call {
        st,
        req,
        conversation,
        turn,
        attempt,
        input_tokens,
    } = call;
    let ctx = &st.ctx;
    let key = JitterKey {
        system: &st.system,
        role: st.role,
        conversation,
        turn,
        attempt,
    };
    let ttft = ctx
        .latency
        .time_to_first_token(ctx.seed, &key, input_tokens);
    let text = model::reply(&req.messages);
    let output_tokens = approx_tokens(&text);
    let usage = Usage::new(input_tokens, output_tokens);
    let id = format!(
        "chatcmpl-sim-{}-{}-{}-{}-{}",
        st.system,
        st.role.as_str(),
        conversation,
        turn,
        attempt
    );
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();

    if !req.stream {
        pause(ttft + ctx.latency.output_time(output_tokens)).await;
        guard.finish(Some(200));
        let body = completion_body(&id, &req.model, created, &text, usage).to_string();
        if cut.is_some() {
            let half = body
                .char_indices()
                .nth(body.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            return Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(broken_body(body[..half].to_string()))
                .unwrap_or_else(|_| json_response(500, String::new()));
        }
        return json_response(200, body);
    }

    pause(ttft).await;
    let model = req.model.as_str();
    let frame = |v: Value| format!("data: {v}\n\n");
    // Each frame carries its due time as an offset from the first one; the
    // content is paced cumulatively, so timer granularity does not add up
    // over many small chunks.
    let mut due = Duration::ZERO;
    let mut frames: Vec<(Duration, String)> = vec![(
        due,
        frame(chunk_body(
            &id,
            model,
            created,
            json!({"role": "assistant", "content": ""}),
            None,
        )),
    )];
    for piece in text.split_inclusive(' ') {
        due += ctx.latency.output_time(approx_tokens(piece));
        frames.push((
            due,
            frame(chunk_body(
                &id,
                model,
                created,
                json!({"content": piece}),
                None,
            )),
        ));
    }
    frames.push((
        due,
        frame(chunk_body(&id, model, created, json!({}), Some("stop"))),
    ));
    if req.stream_options.as_ref().is_some_and(|o| o.include_usage) {
        frames.push((due, frame(usage_chunk_body(&id, model, created, usage))));
    }
    frames.push((due, "data: [DONE]\n\n".to_string()));

    if let Some(chunks) = cut {
        // The role chunk and `chunks` content chunks, then the break.
        frames.truncate(1 + chunks);
    }
    guard.sent = Some(200);
    let first = tokio::time::Instant::now();
    let stream = futures::stream::unfold(
        (frames.into_iter(), Some(guard)),
        move |(mut frames, mut guard)| async move {
            match frames.next() {
                Some((offset, text)) => {
                    let deadline = first + offset;
                    if deadline > tokio::time::Instant::now() {
                        tokio::time::sleep_until(deadline).await;
                    }
                    Some((Ok(Bytes::from(text)), (frames, guard)))
                }
                // Polled once more after the last frame: the stream is done,
                // or breaks off here when cut.
                None => {
                    let g = guard.take()?;
                    g.finish(Some(200));
                    cut?;
                    tokio::time::sleep(CUT_AFTER).await;
                    Some((Err(cut_error()), (frames, None)))
                }
            }
        },
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| json_response(500, String::new()))
}
