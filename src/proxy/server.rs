//! The HTTP face of a reference proxy: `POST /v1/chat/completions` (also
//! under `/chat/completions`) handed to the failover core, and
//! `GET /metrics`. Client headers are never forwarded, so an
//! `Authorization` the client sends stays here, and nothing is logged.

use super::core::{Core, Reply, ReplyBody};
use super::events::{EventSink, SwitchEvent, REASON_INVALID};
use super::metrics::Metrics;
use super::payload::ClientRequest;
use super::{ProxyConfig, ProxyError};
use crate::server::ServerHandle;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use futures::StreamExt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Largest client body accepted (long histories with many turns fit).
const BODY_LIMIT: usize = 32 * 1024 * 1024;

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
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ProxyConfig {
        self.inner.core.config()
    }

    /// A copy of the switch events so far (at most
    /// [`super::events::MEMORY_CAP`], oldest first). An event is recorded
    /// before its response is sent.
    pub fn events_snapshot(&self) -> Vec<SwitchEvent> {
        self.inner.events.snapshot()
    }

    /// Removes and returns the switch events so far, oldest first.
    pub fn take_events(&self) -> Vec<SwitchEvent> {
        self.inner.events.take()
    }

    /// The counters.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    fn record(&self, event: SwitchEvent) {
        let inner = &self.inner;
        inner.metrics.observe(&event);
        let mode = event.mode.clone();
        if !inner.events.record(event) {
            inner.metrics.event_write_error(&mode);
        }
    }
}

/// The router of a proxy.
pub fn router(state: ProxyState) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .route("/metrics", get(metrics))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
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
    let state = ProxyState::new(config)?;
    let handle = crate::server::serve(listen, router(state.clone())).await?;
    Ok((handle, state))
}

async fn chat(State(state): State<ProxyState>, body: Bytes) -> Response {
    let index = state.inner.requests.fetch_add(1, Ordering::Relaxed);
    let (reply, event) = match ClientRequest::parse(body) {
        Some(request) => state.inner.core.handle(index, &request).await,
        None => invalid(&state, index),
    };
    state.record(event);
    into_response(reply)
}

async fn metrics(State(state): State<ProxyState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        state.inner.metrics.render(),
    )
        .into_response()
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
        mode: config.mode.as_str().to_string(),
        provider_primary: config.primary_url.clone(),
        provider_fallback: None,
        model_requested: String::new(),
        model_actual: None,
        reason: REASON_INVALID.to_string(),
        latency_primary_ms: 0.0,
        latency_fallback_ms: None,
        fallback_attempts: 0,
        stream: false,
        status: reply.status.as_u16(),
    };
    (reply, event)
}

/// The client's response. A piped stream is cut at the overall deadline.
fn into_response(reply: Reply) -> Response {
    let body = match reply.body {
        ReplyBody::Full(bytes) => Body::from(bytes),
        ReplyBody::Stream { response, deadline } => {
            let stop = tokio::time::sleep_until(deadline);
            Body::from_stream(response.bytes_stream().take_until(stop))
        }
        ReplyBody::Translated(frames) => Body::from_stream(frames.0),
    };
    let mut response = Response::new(body);
    *response.status_mut() = reply.status;
    if let Some(content_type) = reply.content_type {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
    }
    response
}
