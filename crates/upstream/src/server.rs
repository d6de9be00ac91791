//! The upstream HTTP server: an OpenAI-compatible provider. Each request is
//! parsed, recognised ([`super::identify`]), logged ([`super::attempt`]),
//! given the fault the plan (or the fallback's rate limiter) holds for it and executed
//! on the wire ([`super::wire`]), or else answered by the context's
//! [`Responder`](super::responder::Responder) and framed as JSON or
//! server-sent events ([`super::render`]).
//!
//! Routes: `POST /v1/chat/completions` (JSON or server-sent events) and
//! `GET /v1/models`. Any model id is accepted and echoed in the answer.
//! An upstream whose key the harness expired
//! ([`UpstreamContext::set_expired`]) answers 401 to both.
//!
//! Faults on the wire:
//! - TIMEOUT: no byte is sent until the hold ends or the client goes away.
//!   When the hold runs out with the client still there, the upstream
//!   answers 504 with an OpenAI-style error body (action `timeout_held`,
//!   status 504); when the client leaves first, status is empty and
//!   `client_gave_up` is true, with the time it waited.
//! - API_ERROR: the profile's 5xx with an error body of type `server_error`.
//! - RATE_LIMIT (and the rate limiter's refusals): 429 with `Retry-After` in
//!   whole seconds (rounded up, at least 1) and a body of type `requests`,
//!   code `rate_limit_exceeded`. The limiter ([`cb_faults::limiter`])
//!   decides per (run, conversation, turn) at its upstream, by attempt
//!   number and by whether the client waited its `Retry-After`.
//!
//! A conversation of a case-scripted plan gets what its script decides,
//! at either upstream ([`super::scripted`]), instead of the plan's fault.
//!
//! A malformed body (not JSON, or no messages) gets 400 and is logged as
//! `bad_request`. A client that goes away while a normal answer is being
//! prepared or streamed is logged as having given up: the attempt's guard
//! records that when hyper drops the handler future or the body stream.

mod responses_route;

use super::answer::{answer, Asked};
use super::attempt::{millis, AttemptGuard};
use super::identify::Identity;
use super::listen::{serve, Socket};
use super::log::TurnKey;
use super::{wire, UpstreamContext};
use axum::body::Bytes;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use cb_base::record::{AttemptAction, AttemptRecord, ToolCalls};
use cb_dialect::{anthropic, Dialect};
use cb_faults::profile::RateLimiterSpec;
use cb_faults::{End, ErrorKind, ErrorSpec, FaultAction, RetryLimiter, Role, Shape};
use cb_wire::openai::{approx_tokens, ChatRequest};
use cb_wire::server::ServerHandle;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Model ids listed by `GET /v1/models`. Any other id is accepted too.
pub const MODEL_IDS: [&str; 3] = ["sim-model", "sim-primary", "sim-fallback"];

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

/// A turn at one upstream, as the rate limiter keys it (the upstream fixes
/// the system and role): run, conversation id, turn.
type LimiterKey = (u32, String, u32);

/// The rate limiter of one upstream, with the spec its 429s come from.
#[derive(Debug)]
struct Limiter {
    spec: RateLimiterSpec,
    turns: Mutex<RetryLimiter<LimiterKey>>,
}

/// What the handlers share: the state and, if the profile puts one in front
/// of this upstream, its rate limiter.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) state: UpstreamState,
    limiter: Option<Limiter>,
    /// The Responses API's stored responses ([`responses_route`]).
    pub(super) responses: cb_wire::responses::Store,
}

impl Shared {
    /// A 429 when this upstream's rate limiter refuses the attempt of
    /// `key` that arrived at `arrived`.
    fn limited(&self, key: LimiterKey, arrived: Instant) -> Option<FaultAction> {
        let limiter = self.limiter.as_ref()?;
        let decision = limiter
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .decide(key, arrived.saturating_duration_since(self.state.ctx.epoch));
        decision
            .is_limited()
            .then(|| FaultAction::Error(limiter.spec.error()))
    }
}

/// The router of one upstream.
pub fn router(state: UpstreamState) -> Router {
    let limiter = state
        .ctx
        .plan
        .profile()
        .and_then(|p| p.rate_limiter.clone())
        .filter(|spec| spec.upstream == state.role)
        .map(|spec| Limiter {
            turns: Mutex::new(RetryLimiter::new(&spec)),
            spec,
        });
    let cap = cb_wire::BodyCap {
        bytes: state.ctx.max_body_bytes,
        server: "this simulated upstream",
        flag: Some("upstreams --max-body-bytes"),
    };
    let router = Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/v1/responses", post(responses_route::responses))
        .route(anthropic::PATH, post(super::dialect_routes::messages))
        .route(
            "/v1beta/models/{*call}",
            post(super::dialect_routes::gemini),
        )
        .with_state(Arc::new(Shared {
            state,
            limiter,
            responses: Default::default(),
        }));
    cap.layer(router)
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
        futures::future::join(self.primary.shutdown(), self.fallback.shutdown()).await;
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

/// The 401 of an upstream whose key expired.
fn expired_key() -> ErrorSpec {
    ErrorSpec::new(
        401,
        ErrorKind::Auth,
        "Incorrect API key provided: the key has expired (simulated).",
    )
}

async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let st = &shared.state;
    st.ctx.count_model_list(&st.system, st.role);
    if st.ctx.is_expired(&st.system, st.role) {
        return super::render::error_response(&expired_key(), Dialect::Openai);
    }
    axum::response::IntoResponse::into_response(model_list())
}

fn model_list() -> Json<Value> {
    let data: Vec<Value> = MODEL_IDS
        .iter()
        .map(
            |id| json!({"id": id, "object": "model", "created": 0, "owned_by": "continuity-bench"}),
        )
        .collect();
    Json(json!({"object": "list", "data": data}))
}

/// The request as parsed, or why it cannot be read.
fn parse(body: &[u8]) -> Result<ChatRequest, String> {
    serde_json::from_slice::<ChatRequest>(body)
        .map_err(|e| format!("the request body is not a valid chat-completions request: {e}"))
        .and_then(|r| {
            if r.messages.is_empty() {
                Err("the request has no messages; send at least one message".to_string())
            } else {
                Ok(r)
            }
        })
}

/// The `model` of a body that is not a valid request, bounded as a
/// record field ([`cb_base::record::bounded_field`]): read in place, so a
/// 30 MB model string costs no copy of itself.
pub(super) fn model_of(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Model<'a> {
        #[serde(borrow, default)]
        model: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Model<'_>>(body)
        .ok()
        .and_then(|m| m.model)
        .map(|m| cb_base::record::bounded_field(&m))
        .unwrap_or_default()
}

async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    socket: Option<Extension<ConnectInfo<Socket>>>,
    body: Bytes,
) -> Response {
    let start = Instant::now();
    let req = match parse(&body) {
        Ok(r) => r,
        Err(message) => {
            let model = model_of(&body);
            if let Some(expired) = shared.bad_request(model, start, Dialect::Openai, None) {
                return expired;
            }
            return wire::bad_request(&message);
        }
    };
    // OpenAI's own tool-call rules, as the real API applies them.
    let tools = match cb_dialect::openai_tools::check(&req.messages) {
        Ok(any) => ToolCalls::from_any(any),
        Err(rejection) => {
            let who = shared.state.ctx.index.identify(&req);
            let model = cb_base::record::bounded_field(&req.model);
            let refused = Some((who, ToolCalls::Refused));
            if let Some(expired) = shared.bad_request(model, start, Dialect::Openai, refused) {
                return expired;
            }
            return super::render::rejection_response(&rejection);
        }
    };
    let params = param_names(&req);
    let received = Received {
        request: req,
        params,
        dialect: Dialect::Openai,
        json_array: false,
        tools,
    };
    // Parsed: the bytes are not needed while the request is served (a
    // held TIMEOUT keeps this future for seconds, thousands at once).
    drop(body);
    shared.serve(received, socket, start).await
}

/// A request as an upstream received it, in OpenAI shape whatever its
/// dialect.
#[derive(Debug)]
pub(super) struct Received {
    /// The request (for another dialect, its validated conversation).
    pub request: ChatRequest,
    /// Its top-level parameters besides the model, messages and stream.
    pub params: Vec<String>,
    /// The dialect it came in.
    pub dialect: Dialect,
    /// Gemini's stream without `alt=sse`.
    pub json_array: bool,
    /// Its tool calls, as the dialect's rules judged them.
    pub tools: ToolCalls,
}

/// Most parameter names an attempt row keeps.
const MAX_PARAMS: usize = 64;

/// The parameter names a row keeps: at most [`MAX_PARAMS`], each bounded
/// ([`cb_base::record::bounded_field`]), and a last one saying how many
/// were left out.
fn bounded_params(params: Vec<String>) -> Vec<String> {
    let total = params.len();
    let mut kept: Vec<String> = params
        .iter()
        .take(MAX_PARAMS)
        .map(|p| cb_base::record::bounded_field(p))
        .collect();
    if total > MAX_PARAMS {
        kept.push(format!("…[{} more]", total - MAX_PARAMS));
    }
    kept
}

impl Shared {
    /// Logs a request that could not be read (`bad_request`, 400), its
    /// `model` already bounded as a record field; the
    /// 401 to send instead when this upstream's key has expired.
    pub(super) fn bad_request(
        &self,
        model: String,
        start: Instant,
        dialect: Dialect,
        refused: Option<(Identity, ToolCalls)>,
    ) -> Option<Response> {
        let st = &self.state;
        let ctx = &st.ctx;
        let (who, tools) = refused.unwrap_or_else(|| (Identity::default(), ToolCalls::None));
        let run = ctx.run_of(&who);
        let attempt = ctx.log.next_attempt(TurnKey {
            run,
            system: &st.system,
            role: st.role,
            conversation: &who.id,
            turn: who.turn,
        });
        ctx.log.record(AttemptRecord {
            action: AttemptAction::BadRequest,
            status: Some(400),
            // Bounded once, by the caller (`model_of` reads it in place).
            model,
            duration_ms: millis(start.elapsed()),
            tools,
            ..self.row(run, start, who.id, who.turn, attempt)
        });
        ctx.is_expired(&st.system, st.role)
            .then(|| super::render::error_response(&expired_key(), dialect))
    }

    fn row(
        &self,
        run: u32,
        start: Instant,
        conversation: String,
        turn: u32,
        attempt: u32,
    ) -> AttemptRecord {
        let st = &self.state;
        AttemptRecord {
            run,
            system: st.system.clone(),
            role: st.role,
            conversation,
            turn,
            attempt,
            arrived_ms: millis(start.saturating_duration_since(st.ctx.epoch)),
            action: AttemptAction::Ok,
            status: None,
            retry_after_ms: None,
            messages: 0,
            approx_tokens: 0,
            model: String::new(),
            stream: false,
            params: Vec::new(),
            degradation: String::new(),
            client_gave_up: false,
            duration_ms: 0.0,
            answered_by: String::new(),
            answer: String::new(),
            provider_error: String::new(),
            tools: cb_base::record::ToolCalls::None,
        }
    }

    /// Serves a readable request that arrived at `start`: recognised,
    /// logged, faulted or answered, in its dialect.
    pub(super) async fn serve(
        &self,
        received: Received,
        socket: Option<Extension<ConnectInfo<Socket>>>,
        start: Instant,
    ) -> Response {
        let st = &self.state;
        let ctx = &st.ctx;
        let Received {
            request: req,
            params,
            dialect,
            json_array,
            tools,
        } = received;
        let expired = ctx.is_expired(&st.system, st.role);
        let who = ctx.index.identify(&req);
        let run = ctx.run_of(&who);
        let attempt = ctx.log.next_attempt(TurnKey {
            run,
            system: &st.system,
            role: st.role,
            conversation: &who.id,
            turn: who.turn,
        });
        let input_tokens: u32 = req
            .messages
            .iter()
            .map(|m| approx_tokens(&m.text_cow()))
            .sum();
        let mut guard = AttemptGuard::new(
            ctx.log.clone(),
            AttemptRecord {
                messages: req.messages.len() as u32,
                approx_tokens: input_tokens,
                model: cb_base::record::bounded_field(&req.model),
                stream: req.stream,
                params: bounded_params(params),
                tools,
                ..self.row(run, start, who.id.clone(), who.turn, attempt)
            },
            start,
        );
        super::survived::note(
            ctx,
            &st.system,
            st.role,
            &who,
            attempt,
            dialect,
            &req.messages,
        );

        if expired {
            return wire::error(guard, &expired_key(), dialect);
        }
        if let Some(spec) = super::survived::squeezed(ctx, st.role, input_tokens, dialect) {
            return wire::error(guard, &spec, dialect);
        }
        let asked = Asked {
            ctx,
            system: &st.system,
            role: st.role,
            request: &req,
            who: &who,
            run,
            attempt,
            input_tokens,
            dialect,
            json_array,
        };
        if let Some(script) = who.conversation.and_then(|i| ctx.plan.case_script(i)) {
            let socket = socket.as_ref().map(|Extension(ConnectInfo(s))| s);
            return Box::pin(super::scripted::execute(script, asked, guard, socket)).await;
        }
        let action = who
            .conversation
            .and_then(|i| ctx.plan.action(run, i, who.turn as usize, st.role))
            .or_else(|| self.limited((run, who.id.clone(), who.turn), start));
        let (shape, degraded) = match action {
            Some(FaultAction::Timeout { hold }) => {
                // The hold needs nothing of the request: free it for the
                // seconds the connection is held.
                drop(req);
                return wire::hold(guard, hold, dialect).await;
            }
            Some(FaultAction::Error(spec)) => return wire::error(guard, &spec, dialect),
            Some(FaultAction::BodyCut { chunks }) => {
                guard.set_action(AttemptAction::BodyCut);
                let shape = Shape {
                    end: End::CutAfter(chunks),
                    ..Shape::default()
                };
                (shape, None)
            }
            Some(FaultAction::Degrade(d)) => {
                guard.set_degradation(d.degradation.name());
                (Shape::default(), Some(d))
            }
            None => (Shape::default(), None),
        };
        // Boxed: the answer's state is large, and without the box every
        // request's future (a held TIMEOUT's too, thousands at once) would
        // be allocated at its size.
        Box::pin(answer(asked, guard, &shape, degraded)).await
    }
}

/// The request's top-level parameters other than `model`, `messages`,
/// `stream` and `stream_options`, by name, sorted.
fn param_names(req: &ChatRequest) -> Vec<String> {
    let mut names: Vec<String> = req.extra.keys().cloned().collect();
    names.sort_unstable();
    names
}
