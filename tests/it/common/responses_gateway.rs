//! Stateful gateways for the Responses API, positive controls of
//! `--api responses`. Each keeps every conversation itself and sends the
//! whole of it as chat completions to the primary and, when the primary
//! fails, to the fallback, and gets one thing wrong
//! ([`ResponsesFault`]). Plain requests only.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use continuity_bench::openai::ChatMessage;
use continuity_bench::responses;
use continuity_bench::server::{serve, ServerHandle};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Deadline of one upstream attempt.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a Responses control gateway gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponsesFault {
    /// A turn the fallback answered is never added to what it stores, so
    /// the turns served during an outage are missing from every later
    /// request.
    StoresPrimaryOnly,
    /// Stores everything, but converts the input's `function_call` items
    /// to nothing: the tool results it forwards answer no call.
    DropsFunctionCalls,
}

#[derive(Clone)]
struct Gateway {
    fault: ResponsesFault,
    primary: String,
    fallback: String,
    client: reqwest::Client,
    /// The stored conversation of each response id given out.
    stored: Arc<Mutex<HashMap<String, Vec<ChatMessage>>>>,
    next: Arc<AtomicU64>,
}

/// Starts the gateway on 127.0.0.1 in front of upstreams to be started on
/// two ports that were free a moment ago: (gateway, primary port, fallback
/// port).
pub async fn start_on_free_ports(fault: ResponsesFault) -> (ServerHandle, u16, u16) {
    let (primary, fallback) = (super::gateways::free_port(), super::gateways::free_port());
    let state = Gateway {
        fault,
        primary: format!("http://127.0.0.1:{primary}"),
        fallback: format!("http://127.0.0.1:{fallback}"),
        client: reqwest::Client::builder().no_proxy().build().unwrap(),
        stored: Arc::default(),
        next: Arc::default(),
    };
    let router = Router::new()
        .route("/v1/responses", post(handle))
        .with_state(state);
    let server = serve(([127, 0, 0, 1], 0).into(), router).await.unwrap();
    (server, primary, fallback)
}

/// The chat answer of `base` to `messages`, when it answered 2xx in time.
async fn ask(g: &Gateway, base: &str, model: &str, messages: &[ChatMessage]) -> Option<String> {
    let response = g
        .client
        .post(format!("{base}/v1/chat/completions"))
        .json(&json!({"model": model, "messages": messages}))
        .timeout(ATTEMPT_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body: Value = response.json().await.ok()?;
    body.pointer("/choices/0/message/content")?
        .as_str()
        .map(str::to_string)
}

async fn handle(State(g): State<Gateway>, Json(request): Json<Value>) -> Response {
    let previous = request["previous_response_id"].as_str().map(str::to_string);
    let stored = match &previous {
        Some(id) => match g.stored.lock().unwrap().get(id) {
            Some(history) => history.clone(),
            None => {
                let (_, body) = responses::not_found(id);
                return (StatusCode::BAD_REQUEST, Json(body)).into_response();
            }
        },
        None => Vec::new(),
    };
    let mut input = responses::messages_of(&request["input"]).unwrap_or_default();
    if g.fault == ResponsesFault::DropsFunctionCalls {
        input.retain(|m| m.tool_calls.is_none());
    }
    let model = request["model"].as_str().unwrap_or_default().to_string();
    let mut conversation = stored.clone();
    conversation.extend(input);
    let mut messages = Vec::new();
    if let Some(text) = request["instructions"].as_str() {
        messages.push(ChatMessage::new("system", text));
    }
    messages.extend(conversation.iter().cloned());
    let (text, kept) = match ask(&g, &g.primary, &model, &messages).await {
        Some(text) => {
            let mut kept = conversation;
            kept.push(ChatMessage::new("assistant", &text));
            (text, kept)
        }
        None => match ask(&g, &g.fallback, &model, &messages).await {
            // The misbehaviour itself: the fallback's turn is not stored.
            Some(text) if g.fault == ResponsesFault::StoresPrimaryOnly => (text, stored),
            Some(text) => {
                let mut kept = conversation;
                kept.push(ChatMessage::new("assistant", &text));
                (text, kept)
            }
            None => {
                let body =
                    json!({"error": {"message": "no upstream answered", "type": "server_error"}});
                return (StatusCode::BAD_GATEWAY, Json(body)).into_response();
            }
        },
    };
    let id = format!("resp_c{}", g.next.fetch_add(1, Ordering::Relaxed) + 1);
    g.stored.lock().unwrap().insert(id.clone(), kept);
    Json(responses::response_body(
        &id,
        &model,
        &text,
        previous.as_deref(),
        (0, 0),
        0,
    ))
    .into_response()
}
