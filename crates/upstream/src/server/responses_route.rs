//! `POST /v1/responses` of a simulated upstream: the OpenAI Responses API
//! with `store: true`, as a provider keeps it. Each upstream stores the
//! responses it gave (the input items of the request and the answer, with
//! the response it followed), so a request's `previous_response_id` is
//! looked up in this upstream's own store: a fallback asked to continue a
//! response the primary gave answers the API's 400
//! (`previous_response_not_found`), as the real API does for an id it
//! never stored. The conversation rebuilt from the chain, with the
//! request's `instructions` first and its new input last, is served by the
//! pipeline every request takes (recognised, logged, faulted or answered),
//! and a 2xx chat answer goes back as a response object.
//!
//! The store ([`cb_wire::responses::Store`]) keeps at most
//! [`cb_wire::responses::MAX_STORED`] responses, oldest out first (an
//! id past that is unknown, as an expired one is). Streamed Responses
//! requests are refused with a 400.

use super::{Received, Shared};
use crate::wire;
use axum::body::Bytes;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use cb_base::record::ToolCalls;
use cb_dialect::Dialect;
use cb_wire::openai::{ChatMessage, ChatRequest};
use cb_wire::responses;
use serde_json::Value;
use std::sync::Arc;
use tokio::time::Instant;

/// Largest chat answer body read back to rebuild a response.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// An OpenAI error reply.
fn refuse(status: u16, body: Value) -> Response {
    let status =
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::BAD_REQUEST);
    (status, Json(body)).into_response()
}

/// `POST /v1/responses`.
pub(super) async fn responses(
    State(shared): State<Arc<Shared>>,
    socket: Option<Extension<ConnectInfo<crate::listen::Socket>>>,
    body: Bytes,
) -> Response {
    let start = Instant::now();
    // A request that cannot be read is logged as `bad_request`, as the chat
    // route logs one.
    let unreadable = |reason: &str| {
        let model = super::model_of(&body);
        match shared.bad_request(model, start, Dialect::Openai, None) {
            Some(expired) => expired,
            None => wire::bad_request(reason),
        }
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return unreadable("the request body is not valid JSON");
    };
    if request.get("stream").and_then(Value::as_bool) == Some(true) {
        return unreadable(
            "this simulated Responses endpoint answers plain requests only; send stream: false",
        );
    }
    let new_input = match responses::messages_of(request.get("input").unwrap_or(&Value::Null)) {
        Ok(messages) => messages,
        Err(reason) => return unreadable(&reason),
    };
    let previous = request
        .get("previous_response_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let store = &shared.responses;
    let mut messages = Vec::new();
    if let Some(text) = request.get("instructions").and_then(Value::as_str) {
        messages.push(ChatMessage::new("system", text));
    }
    if let Some(id) = &previous {
        let Some(chain) = store.chain(id) else {
            // Logged as a refused request, placed by its new input.
            let partial = ChatRequest {
                model: String::new(),
                messages: new_input,
                stream: false,
                stream_options: None,
                extra: serde_json::Map::new(),
            };
            let who = shared.state.ctx.index.identify(&partial);
            let model = super::model_of(&body);
            if let Some(expired) =
                shared.bad_request(model, start, Dialect::Openai, Some((who, ToolCalls::None)))
            {
                return expired;
            }
            let (status, error) = responses::not_found(id);
            return refuse(status, error);
        };
        messages.extend(chain);
    }
    messages.extend(new_input.iter().cloned());
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let request = ChatRequest {
        model: model.clone(),
        messages,
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    let tools = match cb_dialect::openai_tools::check(&request.messages) {
        Ok(any) => ToolCalls::from_any(any),
        Err(rejection) => {
            // Logged as refused for its tool calls, placed in its
            // conversation.
            let who = shared.state.ctx.index.identify(&request);
            let refused = Some((who, ToolCalls::Refused));
            let bounded = cb_base::record::bounded_field(&model);
            if let Some(expired) = shared.bad_request(bounded, start, Dialect::Openai, refused) {
                return expired;
            }
            return refuse(rejection.status, rejection.body);
        }
    };
    let received = Received {
        request,
        params: Vec::new(),
        dialect: Dialect::Openai,
        json_array: false,
        tools,
    };
    let answered = shared.serve(received, socket, start).await;
    if !answered.status().is_success() {
        return answered;
    }
    let Ok(bytes) = axum::body::to_bytes(answered.into_body(), MAX_ANSWER_BYTES).await else {
        return refuse(
            502,
            cb_wire::openai::error_body("the answer broke off", "server_error", None),
        );
    };
    let prefix = match shared.state.role {
        cb_faults::Role::Primary => "p",
        cb_faults::Role::Fallback => "f",
    };
    Json(store.answer(prefix, previous, new_input, &model, &bytes)).into_response()
}
