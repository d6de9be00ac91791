//! The HTTP face of a reference proxy: `POST /v1/chat/completions` (also
//! under `/chat/completions`) handed to the failover core, `GET /metrics`,
//! and `GET /health`, which lists both upstreams' models and answers 503
//! naming the upstream that failed (an expired fallback key shows there
//! before the fallback is needed). Client headers are never forwarded, so an
//! `Authorization` the client sends stays here, and nothing is logged.

mod responses;

use super::core::{complete_event, Core, Reply, ReplyBody, UpstreamHealth};
use super::events::{EventSink, SwitchEvent, SwitchReason};
use super::metrics::Metrics;
use super::payload::ClientRequest;
use super::{ProxyConfig, ProxyError};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use cb_wire::server::{ConnectionStats, ServerHandle};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Largest client body accepted (long histories with many turns fit);
/// a larger one is answered 413.
pub const BODY_LIMIT: usize = 32 * 1024 * 1024;

/// Most `messages` a client request may hold: 20,000 (a conversation of
/// 10,000 turns). A request with more is answered 413 naming the cap: a
/// failover rebuilds the body, and memory grows with the message count
/// (1.16 million tiny messages in 32 MiB cost 1.64 GB before this cap).
pub const MAX_MESSAGES: usize = 20_000;

/// State of one proxy, shared by its requests: the core (configuration and
/// HTTP client), counters and the event sink. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ProxyState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    core: Core,
    events: EventSink,
    metrics: Metrics,
    requests: AtomicU64,
    /// The server's connection counters, once it serves.
    connections: std::sync::OnceLock<Arc<ConnectionStats>>,
    /// `history`'s stored Responses conversations.
    responses: cb_wire::responses::Store,
}

impl ProxyState {
    /// Builds the state of a proxy, opening `config.events_path` for
    /// appending when set.
    ///
    /// # Errors
    /// A bad upstream URL, an events file that cannot be opened, or an HTTP
    /// client that cannot be built.
    pub fn new(config: ProxyConfig) -> Result<Self, ProxyError> {
        let events = match &config.events_path {
            Some(path) => EventSink::with_file(path).map_err(|source| ProxyError::EventsFile {
                path: path.clone(),
                source,
            })?,
            None => EventSink::in_memory(),
        };
        Ok(ProxyState {
            inner: Arc::new(Inner {
                core: Core::new(config)?,
                events,
                metrics: Metrics::default(),
                requests: AtomicU64::new(0),
                connections: std::sync::OnceLock::new(),
                responses: cb_wire::responses::Store::default(),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ProxyConfig {
        self.inner.core.config()
    }

    /// A copy of the switch events so far (at most
    /// [`super::events::MEMORY_CAP`], oldest first). An event is recorded
    /// before its response is sent (for a relayed stream, before its last
    /// item).
    pub fn events_snapshot(&self) -> Vec<SwitchEvent> {
        self.inner.events.snapshot()
    }

    /// Removes and returns the switch events so far, oldest first.
    pub fn take_events(&self) -> Vec<SwitchEvent> {
        self.inner.events.take()
    }

    /// Both upstreams' state, as `GET /health` reports it: (primary,
    /// fallback).
    pub async fn health(&self) -> (UpstreamHealth, UpstreamHealth) {
        self.inner.core.health().await
    }

    /// The counters.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The HTTP client of the Responses forwarding.
    pub(super) fn http(&self) -> &reqwest::Client {
        self.inner.core.http()
    }

    /// The Responses conversations `history` keeps.
    pub(super) fn responses_store(&self) -> &cb_wire::responses::Store {
        &self.inner.responses
    }

    fn record(&self, event: SwitchEvent) {
        let inner = &self.inner;
        inner.metrics.observe(&event);
        let mode = event.mode;
        if !inner.events.record(event) {
            inner.metrics.event_write_error(mode.as_str());
        }
    }
}

/// The router of a proxy.
pub fn router(state: ProxyState) -> Router {
    let cap = cb_wire::BodyCap {
        bytes: BODY_LIMIT,
        server: "the proxy",
        flag: None,
    };
    cap.layer(
        Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/chat/completions", post(chat))
            .route("/v1/responses", post(responses::responses))
            .route("/metrics", get(metrics))
            .route("/health", get(health))
            .with_state(state),
    )
}

/// Starts a proxy on `listen` (port 0 picks a free one; the handle says
/// which). Returns the server handle and the state, whose
/// [`ProxyState::events_snapshot`] the embedding harness reads.
///
/// # Errors
/// A bad configuration (see [`ProxyState::new`]) or an address that cannot
/// be bound.
pub async fn spawn(
    listen: SocketAddr,
    config: ProxyConfig,
) -> Result<(ServerHandle, ProxyState), ProxyError> {
    let limits = cb_wire::server::Limits {
        write_timeout: config.write_timeout,
        ..cb_wire::server::Limits::default()
    };
    let state = ProxyState::new(config)?;
    let handle =
        cb_wire::server::serve_with(listen, router(state.clone()), limits, |_, _| ()).await?;
    let _ = state.inner.connections.set(handle.stats());
    Ok((handle, state))
}

pub(super) async fn chat(State(state): State<ProxyState>, body: Bytes) -> Response {
    let index = state.inner.requests.fetch_add(1, Ordering::Relaxed);
    let (reply, mut event) = match ClientRequest::parse(body) {
        Some(request) if request.messages > MAX_MESSAGES => {
            let (_, mut event) = invalid(&state, index);
            let reply = Reply::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "the request holds {} messages; this proxy accepts at most {MAX_MESSAGES}",
                    request.messages
                ),
                "too_many_messages",
            );
            event.status = reply.status.as_u16();
            event.model_requested = cb_base::record::bounded_field(&request.model);
            (reply, event)
        }
        Some(request) => state.inner.core.handle(index, &request).await,
        None => invalid(&state, index),
    };
    let body = match reply.body {
        ReplyBody::Full(bytes) => {
            state.record(event);
            Body::from(bytes)
        }
        ReplyBody::Relay(plan) => {
            let recorder = state.clone();
            plan.into_body(move |report| {
                let fallback = recorder.config().fallback_url.clone();
                complete_event(&mut event, report, &fallback);
                recorder.record(event);
            })
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = reply.status;
    if let Some(content_type) = reply.content_type {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
    }
    if let Some(wait) = reply.retry_after {
        // Whole seconds, rounded up: never sooner than the upstream asked.
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

/// `GET /health`: 200 `{"status":"ok",...}` when both upstreams list their
/// models, else 503 `{"status":"degraded",...}` with each one's state.
async fn health(State(state): State<ProxyState>) -> Response {
    let (primary, fallback) = state.inner.core.health().await;
    let word = |h: &UpstreamHealth| {
        if h.ok {
            "ok".to_string()
        } else {
            format!("unhealthy: {}", h.detail)
        }
    };
    let ok = primary.ok && fallback.ok;
    let body = serde_json::json!({
        "status": if ok { "ok" } else { "degraded" },
        "primary": word(&primary),
        "fallback": word(&fallback),
    });
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

async fn metrics(State(state): State<ProxyState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        state.inner.metrics.render() + &connection_lines(state.inner.connections.get()),
    )
        .into_response()
}

/// The server's connection counters in the metrics' text format: open
/// now, served, and refused at the cap ([`cb_wire::server::MAX_CONNECTIONS`]).
fn connection_lines(stats: Option<&Arc<ConnectionStats>>) -> String {
    let Some(stats) = stats else {
        return String::new();
    };
    format!(
        "# HELP continuity_proxy_connections_open Client connections open now.\n\
         # TYPE continuity_proxy_connections_open gauge\n\
         continuity_proxy_connections_open {}\n\
         # HELP continuity_proxy_connections_accepted_total Client connections served.\n\
         # TYPE continuity_proxy_connections_accepted_total counter\n\
         continuity_proxy_connections_accepted_total {}\n\
         # HELP continuity_proxy_connections_refused_total Client connections answered 503 at once because the connection cap was reached.\n\
         # TYPE continuity_proxy_connections_refused_total counter\n\
         continuity_proxy_connections_refused_total {}\n\
         # HELP continuity_proxy_connections_write_timeouts_total Client connections closed because the client read nothing for --write-timeout.\n\
         # TYPE continuity_proxy_connections_write_timeouts_total counter\n\
         continuity_proxy_connections_write_timeouts_total {}\n",
        stats.open(),
        stats.accepted(),
        stats.refused(),
        stats.write_timeouts()
    )
}

/// The reply and event of a body that is not a JSON object.
fn invalid(state: &ProxyState, index: u64) -> (Reply, SwitchEvent) {
    let config = state.config();
    let reply = Reply::error(
        StatusCode::BAD_REQUEST,
        "the request body must be a JSON chat-completions object",
        "invalid_json",
    );
    let event = SwitchEvent {
        request: index,
        mode: config.mode,
        provider_primary: cb_base::url::display_url(&config.primary_url),
        provider_fallback: None,
        model_requested: String::new(),
        model_actual: None,
        reason: SwitchReason::InvalidRequest,
        latency_primary_ms: 0.0,
        latency_fallback_ms: None,
        fallback_attempts: 0,
        primary_attempts: 0,
        continuation: None,
        stream: false,
        status: reply.status.as_u16(),
        cut: false,
        retry_after_clamped: false,
    };
    (reply, event)
}
