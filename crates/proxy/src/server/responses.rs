//! `POST /v1/responses` of a reference proxy: the Responses API, where the
//! client sends only the turn's new input and `previous_response_id` and
//! the gateway is trusted with the history.
//!
//! - `history` does what a correct stateful gateway does: it stores every
//!   conversation itself (its own response ids, [`cb_wire::responses::Store`])
//!   and sends the whole of it, as chat completions through the same
//!   failover core as every chat request, to whichever upstream answers;
//!   the answer goes back as a response object with the proxy's own id.
//! - `stateless` forwards the request as it came (the new input and the
//!   id) to the primary and, when the primary fails, to the fallback, which
//!   never stored that id and answers the API's 400: the continuity gap
//!   moved server-side.
//!
//! Plain (not streamed) requests only; a streamed one is refused with a 400.

use super::ProxyState;
use crate::ProxyMode;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use cb_wire::openai::ChatMessage;
use cb_wire::responses;
use serde_json::{json, Value};

/// Largest upstream answer read back.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// An OpenAI error reply.
fn error(status: StatusCode, message: &str, code: &str) -> Response {
    (
        status,
        Json(cb_wire::openai::error_body(
            message,
            "invalid_request_error",
            Some(code),
        )),
    )
        .into_response()
}

/// `POST /v1/responses`.
pub(super) async fn responses(State(state): State<ProxyState>, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "the request body is not valid JSON",
            "invalid_json",
        );
    };
    if request.get("stream").and_then(Value::as_bool) == Some(true) {
        return error(
            StatusCode::BAD_REQUEST,
            "this reference proxy answers plain Responses requests only; send stream: false",
            "stream_unsupported",
        );
    }
    match state.config().mode {
        ProxyMode::Stateless => forward(&state, body).await,
        ProxyMode::History => keep_history(state, &request).await,
    }
}

/// `stateless`: the request as it came, to the primary, then to the
/// fallback when the primary did not answer 2xx in time.
async fn forward(state: &ProxyState, body: Bytes) -> Response {
    let config = state.config();
    let mut last = None;
    for base in [&config.primary_url, &config.fallback_url] {
        let url = cb_base::url::under_v1(base, responses::PATH);
        let sent = state
            .http()
            .post(url)
            .header("content-type", "application/json")
            .body(body.clone())
            .timeout(config.attempt_timeout)
            .send()
            .await;
        let Ok(response) = sent else { continue };
        let status = response.status();
        let Some(bytes) = read_capped(response).await else {
            continue;
        };
        if status.is_success() {
            return (status, [("content-type", "application/json")], bytes).into_response();
        }
        last = Some((status, bytes));
    }
    match last {
        Some((status, bytes)) => {
            (status, [("content-type", "application/json")], bytes).into_response()
        }
        None => error(
            StatusCode::BAD_GATEWAY,
            "no upstream answered the Responses request",
            "upstream_unavailable",
        ),
    }
}

/// An upstream's whole body, read to at most [`MAX_ANSWER_BYTES`];
/// `None` when it broke off (a reset, the attempt's deadline) or was
/// larger: a cut answer is never passed on as a whole one.
async fn read_capped(mut response: reqwest::Response) -> Option<Bytes> {
    let mut read = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        if read.len() + chunk.len() > MAX_ANSWER_BYTES {
            return None;
        }
        read.extend_from_slice(&chunk);
    }
    Some(Bytes::from(read))
}

/// `history`: the conversation from the proxy's own store, the new input
/// after it, answered through the chat failover core, stored and returned
/// under the proxy's own id.
async fn keep_history(state: ProxyState, request: &Value) -> Response {
    let previous = request
        .get("previous_response_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut history = match &previous {
        Some(id) => match state.responses_store().chain(id) {
            Some(chain) => chain,
            None => {
                let (_, body) = responses::not_found(id);
                return (StatusCode::BAD_REQUEST, Json(body)).into_response();
            }
        },
        None => Vec::new(),
    };
    let new_input = match responses::messages_of(request.get("input").unwrap_or(&Value::Null)) {
        Ok(messages) => messages,
        Err(reason) => return error(StatusCode::BAD_REQUEST, &reason, "invalid_input"),
    };
    history.extend(new_input.iter().cloned());
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut messages: Vec<ChatMessage> = Vec::with_capacity(history.len() + 1);
    if let Some(text) = request.get("instructions").and_then(Value::as_str) {
        messages.push(ChatMessage::new("system", text));
    }
    messages.extend(history);
    let chat = json!({"model": model, "messages": messages, "stream": false});
    let answered = super::chat(State(state.clone()), Bytes::from(chat.to_string())).await;
    let status = answered.status();
    let Ok(bytes) = axum::body::to_bytes(answered.into_body(), MAX_ANSWER_BYTES).await else {
        return error(
            StatusCode::BAD_GATEWAY,
            "the answer broke off",
            "upstream_error",
        );
    };
    if !status.is_success() {
        return (status, [("content-type", "application/json")], bytes).into_response();
    }
    Json(
        state
            .responses_store()
            .answer("h", previous, new_input, &model, &bytes),
    )
    .into_response()
}
