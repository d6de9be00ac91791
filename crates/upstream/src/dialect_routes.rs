//! The Anthropic and Gemini routes of a simulated upstream: each request is
//! validated as strictly as the real API validates it
//! ([`cb_dialect::anthropic::validate`],
//! [`cb_dialect::gemini::validate`]); a request the API would refuse
//! gets the API's own 400 body and is logged as `bad_request` (with the
//! API's message kept beside the log, [`super::log::RejectionRow`]); a
//! valid one is read as an OpenAI conversation and served by the one
//! pipeline every upstream request takes ([`super::server`]), its answer,
//! faults and errors rendered in the dialect.

use super::listen::Socket;
use super::render::{error_response, rejection_response};
use super::server::{Received, Shared};
use super::survived::note_rejection;
use axum::body::Bytes;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::Extension;
use cb_base::record::ToolCalls;
use cb_dialect::{anthropic, gemini, Dialect, Rejection, Validated};
use cb_faults::{ErrorKind, ErrorSpec};
use cb_wire::openai::ChatRequest;
use serde_json::Value;
use std::sync::Arc;
use tokio::time::Instant;

/// Top-level fields that carry the conversation or the stream choice
/// rather than a parameter.
const NOT_PARAMS: [&str; 7] = [
    "model",
    "messages",
    "stream",
    "system",
    "contents",
    "systemInstruction",
    "system_instruction",
];

/// The top-level parameters of a dialect's body, by name, sorted.
fn params_of(body: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
        .unwrap_or_default();
    names.retain(|n| !NOT_PARAMS.contains(&n.as_str()));
    names.sort_unstable();
    names
}

/// The tool calls of a request its dialect accepted: paired (the
/// validator checked them) when there are any.
fn tools_of(request: &ChatRequest) -> ToolCalls {
    ToolCalls::from_any(
        request
            .messages
            .iter()
            .any(|m| m.role == "tool" || m.tool_calls.is_some()),
    )
}

/// A validated request as the OpenAI request the pipeline reads.
fn request_of(v: Validated) -> ChatRequest {
    let mut extra = serde_json::Map::new();
    if let Some(n) = v.max_tokens {
        extra.insert("max_tokens".into(), n.into());
    }
    ChatRequest {
        model: v.model,
        messages: v.messages,
        stream: v.stream,
        stream_options: None,
        extra,
    }
}

/// Logs and answers a refused request.
/// `model`: the model the request named where it names it outside the
/// body (Gemini's URL path); otherwise read from the body.
fn refused(
    shared: &Shared,
    body: &[u8],
    start: Instant,
    dialect: Dialect,
    r: &Rejection,
    model: Option<&str>,
) -> Response {
    let model = model.map_or_else(
        || super::server::model_of(body),
        cb_base::record::bounded_field,
    );
    // Placed leniently, so that a refusal counts against its conversation.
    let who = shared.state.ctx.index.identify_raw(body);
    let tools = if r.about_tools {
        ToolCalls::Refused
    } else {
        ToolCalls::None
    };
    if let Some(expired) = shared.bad_request(model, start, dialect, Some((who, tools))) {
        return expired;
    }
    let st = &shared.state;
    note_rejection(&st.ctx, &st.system, st.role, dialect, r);
    rejection_response(r)
}

/// `POST /v1/messages`.
pub(super) async fn messages(
    State(shared): State<Arc<Shared>>,
    socket: Option<Extension<ConnectInfo<Socket>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let start = Instant::now();
    let version = headers
        .get(anthropic::VERSION_HEADER)
        .and_then(|v| v.to_str().ok());
    match anthropic::validate(version, &body, &anthropic::Rules::default()) {
        Err(r) => refused(&shared, &body, start, Dialect::Anthropic, &r, None),
        Ok(v) => {
            let request = request_of(v);
            let received = Received {
                tools: tools_of(&request),
                request,
                params: params_of(&body),
                dialect: Dialect::Anthropic,
                json_array: false,
            };
            shared.serve(received, socket, start).await
        }
    }
}

/// `POST /v1beta/models/{model}:generateContent` and
/// `:streamGenerateContent` (`?alt=sse` for server-sent events, else one
/// JSON array of chunks).
pub(super) async fn gemini(
    State(shared): State<Arc<Shared>>,
    socket: Option<Extension<ConnectInfo<Socket>>>,
    uri: Uri,
    body: Bytes,
) -> Response {
    let start = Instant::now();
    let Some(call) = gemini::parse_call(uri.path(), uri.query()) else {
        let message = format!(
            "The requested URL {} was not found on this server.",
            uri.path()
        );
        return error_response(
            &ErrorSpec::new(404, ErrorKind::ModelNotFound, message),
            Dialect::Gemini,
        );
    };
    match gemini::validate(&call, &body) {
        Err(r) => refused(
            &shared,
            &body,
            start,
            Dialect::Gemini,
            &r,
            Some(&call.model),
        ),
        Ok(v) => {
            let json_array = matches!(call.method, gemini::Method::Stream { sse: false });
            let mut request = request_of(v);
            request.stream = matches!(call.method, gemini::Method::Stream { .. });
            let received = Received {
                tools: tools_of(&request),
                request,
                params: params_of(&body),
                dialect: Dialect::Gemini,
                json_array,
            };
            shared.serve(received, socket, start).await
        }
    }
}
