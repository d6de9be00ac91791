//! `POST /chat/completions` of the simulated endpoint: the routes allowed
//! by the request's `provider` object (`order`, `allow_fallbacks`, `only`,
//! `ignore`), tried in turn; each draws whether it fails on the wire this
//! time (a 429, a 5xx, a held connection, or down), else answers, degraded
//! as its behaviour says, naming itself in the `provider` field.
//!
//! With `allow_fallbacks: false` only the first route of `order` may
//! answer, and when it fails the client gets its error, never another
//! route. With fallbacks allowed (the default), a failing route hands over
//! at once to the next one of `order`, then to the other routes.

use super::reply;
use super::routes::{Behaviour, SimRoute};
use super::wire::{self, Envelope};
use super::{SimConfig, SimState};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use cb_wire::openai::{approx_tokens, ChatRequest};
use rand::Rng;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// The `provider` object of a request, as far as the endpoint reads it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProviderPrefs {
    /// Routes to try first, in order (tags or provider names).
    #[serde(default)]
    pub order: Vec<String>,
    /// Whether other routes may answer (default true).
    #[serde(default)]
    pub allow_fallbacks: Option<bool>,
    /// Only these routes may answer.
    #[serde(default)]
    pub only: Vec<String>,
    /// These routes may not answer.
    #[serde(default)]
    pub ignore: Vec<String>,
}

/// Whether `entry` of `order`, `only` or `ignore` names `route`: its tag,
/// or its provider (by name, or the tag's part before `/`), ignoring case.
pub fn names(route: &SimRoute, entry: &str) -> bool {
    let entry = entry.trim();
    let provider = route.tag.split('/').next().unwrap_or(&route.tag);
    route.tag.eq_ignore_ascii_case(entry)
        || route.provider_name.eq_ignore_ascii_case(entry)
        || provider.eq_ignore_ascii_case(entry)
}

/// The routes that may answer, in the order they are tried, or why none may.
pub fn candidates<'a>(
    config: &'a SimConfig,
    prefs: &ProviderPrefs,
) -> Result<Vec<&'a SimRoute>, String> {
    let allowed = |r: &SimRoute| {
        (prefs.only.is_empty() || prefs.only.iter().any(|e| names(r, e)))
            && !prefs.ignore.iter().any(|e| names(r, e))
    };
    let fallbacks = prefs.allow_fallbacks.unwrap_or(true);
    let mut out: Vec<&SimRoute> = Vec::new();
    if let Some(first) = prefs.order.first().filter(|_| !fallbacks) {
        out.extend(
            config
                .routes
                .iter()
                .filter(|r| allowed(r) && names(r, first))
                .take(1),
        );
        if out.is_empty() {
            return Err(format!(
                "no endpoint of this model matches provider.order[0] {first:?} (fallbacks are disabled)"
            ));
        }
        return Ok(out);
    }
    for entry in &prefs.order {
        for r in config
            .routes
            .iter()
            .filter(|r| allowed(r) && names(r, entry))
        {
            if !out.iter().any(|o| o.tag == r.tag) {
                out.push(r);
            }
        }
    }
    if fallbacks {
        for r in config.routes.iter().filter(|r| allowed(r)) {
            if !out.iter().any(|o| o.tag == r.tag) {
                out.push(r);
            }
        }
    }
    if out.is_empty() {
        return Err("no endpoint of this model matches the provider preferences".into());
    }
    Ok(out)
}

/// A transport failure of one route on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 with `Retry-After`.
    RateLimited,
    /// HTTP 500, 502 or 503.
    Server(u16),
    /// No byte until the endpoint's `timeout_hold`, then a 504.
    Timeout,
    /// The route is down: 503.
    Down,
}

impl Fault {
    async fn respond(self, config: &SimConfig) -> Response {
        match self {
            Fault::RateLimited => wire::error(
                429,
                "rate limited by the upstream provider; retry shortly",
                Some(2),
            ),
            Fault::Server(status) => {
                wire::error(status, "the upstream provider returned an error", None)
            }
            Fault::Timeout => wire::hold(config.timeout_hold).await,
            Fault::Down => wire::error(503, "this endpoint is unavailable", None),
        }
    }
}

/// Whether `route` fails on the wire this time, drawn from `rng` (always
/// the same draws in the same order, so the rest of the reply's draws do
/// not shift).
pub fn draw_fault(config: &SimConfig, route: &SimRoute, rng: &mut impl Rng) -> Option<Fault> {
    let transient: f64 = rng.random();
    let flaky: f64 = rng.random();
    let kind: u8 = rng.random_range(0..5);
    let fault = |with_timeout: bool| match kind {
        0 => Fault::RateLimited,
        1 => Fault::Server(500),
        2 => Fault::Server(502),
        3 => Fault::Server(503),
        _ if with_timeout => Fault::Timeout,
        _ => Fault::RateLimited,
    };
    if route.behaviour == Behaviour::Down {
        return Some(Fault::Down);
    }
    if transient < config.transient_rate {
        return Some(fault(true));
    }
    match route.behaviour {
        Behaviour::Flaky { rate } if flaky < rate => Some(fault(false)),
        _ => None,
    }
}

/// What a request asks, as the key of its draws: its kind, its session
/// (the `user` field, when it has one) and its last user message. Each
/// copy of a probe has a session of its own, so its draws do not depend on
/// the order the copies arrive in; the two confirmations of a language
/// probe are the same request and share a key (their count tells them
/// apart, and they are alike, so their order does not matter).
pub fn request_key(request: &ChatRequest) -> String {
    let kind = match reply::asked(request) {
        reply::Asked::Structured => "structured",
        reply::Asked::Roleplay => "roleplay",
        reply::Asked::Text => "text",
    };
    let session = request
        .extra
        .get("user")
        .and_then(|u| u.as_str())
        .unwrap_or_default();
    let last = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.text())
        .unwrap_or_default();
    format!("{kind}:{session}:{last}")
}

/// Whether `request`'s session is one of the share a sticky `route`
/// degrades: the session is the request's `user` (what a client sets per
/// end user), else what it asks, so a probe that never varies its
/// identity lands in the same session every time.
pub fn session_degraded(config: &SimConfig, route: &SimRoute, request: &ChatRequest) -> bool {
    let session = request
        .extra
        .get("user")
        .and_then(|u| u.as_str())
        .map_or_else(|| request_key(request), str::to_string);
    let rate = match route.behaviour {
        Behaviour::JunkPrefix { rate }
        | Behaviour::LanguageMix { rate }
        | Behaviour::SchemaBreak { rate }
        | Behaviour::Flaky { rate } => rate,
        _ => 1.0,
    };
    let label = format!("canary-sim-session/{}/{session}", route.tag);
    let draw = cb_base::seed::derive(config.seed, &label, 0) as f64 / (u64::MAX as f64 + 1.0);
    draw < rate
}

/// The handler.
pub async fn completions(State(state): State<Arc<SimState>>, body: Bytes) -> Response {
    let request: ChatRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return wire::error(
                400,
                &format!("the body is not a chat-completions request: {e}"),
                None,
            )
        }
    };
    let prefs: ProviderPrefs = request
        .extra
        .get("provider")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let config = state.config();
    let routes = match candidates(config, &prefs) {
        Ok(routes) => routes,
        Err(message) => return wire::error(404, &message, None),
    };
    let round = state.round();
    let routes: Vec<&SimRoute> = routes.into_iter().filter(|r| r.listed_in(round)).collect();
    if routes.is_empty() {
        return wire::error(404, "this endpoint is no longer listed for the model", None);
    }
    let key = request_key(&request);
    let mut failed = None;
    for route in routes {
        let mut rng = state.draw(&route.tag, &key);
        match draw_fault(config, route, &mut rng) {
            Some(fault) => failed = Some(fault),
            None => return answer(config, route, &request, &mut rng),
        }
    }
    match failed {
        Some(fault) => fault.respond(config).await,
        None => wire::error(404, "no endpoint could answer", None),
    }
}

/// `route`'s reply to `request`.
fn answer(
    config: &SimConfig,
    route: &SimRoute,
    request: &ChatRequest,
    rng: &mut impl Rng,
) -> Response {
    let asked = reply::asked(request);
    let clean = reply::clean(request, rng);
    let session = route
        .sticky
        .then(|| session_degraded(config, route, request));
    let reply = reply::degrade(route.behaviour, asked, clean, session, rng);
    let id = format!("gen-sim-{:016x}", rng.random::<u64>());
    let envelope = Envelope {
        id: &id,
        model: &request.model,
        provider: &route.provider_name,
    };
    let prompt_tokens = request
        .messages
        .iter()
        .map(|m| approx_tokens(&m.text_cow()))
        .sum();
    if request.stream {
        let delay = match route.behaviour {
            Behaviour::SlowFirstToken => config.slow_first_token,
            Behaviour::HungStream => config.timeout_hold,
            _ => Duration::ZERO,
        };
        wire::stream(envelope, &reply, delay)
    } else {
        wire::completion(envelope, &reply, prompt_tokens)
    }
}
