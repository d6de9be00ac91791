//! The OpenAI chat-completions rendering of what an upstream sends: error
//! responses from a neutral [`ErrorSpec`], and an [`Answer`] as one JSON body
//! or as timed server-sent-event frames. Faults and answers stay neutral up
//! to here; another dialect renders them its own way.

use super::responder::Answer;
use cb_faults::ErrorSpec;
use cb_wire::openai::{approx_tokens, chunk_body, completion_body, error_body, usage_chunk_body};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::time::Duration;

/// `Retry-After` in whole seconds, rounded up, at least 1.
pub fn retry_after_secs(d: Duration) -> u64 {
    (d.as_secs_f64().ceil() as u64).max(1)
}

/// A JSON response with `status`.
pub fn json_response(status: u16, body: String) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The OpenAI error object of `spec`, as JSON text.
pub fn error_json(spec: &ErrorSpec) -> String {
    let (kind, code) = spec.kind.openai();
    error_body(&spec.message, kind, code).to_string()
}

/// The error response of `spec`: its status, its OpenAI error body, and
/// `Retry-After` when it has one.
pub fn error_response(spec: &ErrorSpec) -> Response {
    let mut response = json_response(spec.status, error_json(spec));
    if let Some(retry_after) = spec.retry_after {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(retry_after_secs(retry_after)),
        );
    }
    response
}

/// What identifies one answer on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Envelope<'a> {
    /// The completion id.
    pub id: &'a str,
    /// The model id echoed back.
    pub model: &'a str,
    /// Unix seconds of creation.
    pub created: u64,
}

/// What a thinking model says before its answer when thinking is not
/// switched off.
pub const REASONING_TEXT: &str =
    "The user wants a plain answer; let me think it through before I write it.";

/// An event that is not JSON: the start of a chunk, broken off.
pub const MALFORMED_EVENT: &str =
    "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"\n\n";

/// `answer` as one `chat.completion` JSON body.
pub fn completion_json(envelope: Envelope<'_>, answer: &Answer) -> String {
    completion_json_with(envelope, answer, None)
}

/// `answer` as one `chat.completion` JSON body, with `reasoning` as the
/// message's `reasoning_content` when given.
pub fn completion_json_with(
    envelope: Envelope<'_>,
    answer: &Answer,
    reasoning: Option<&str>,
) -> String {
    let mut body = completion_body(
        envelope.id,
        envelope.model,
        envelope.created,
        &answer.text,
        &answer.finish_reason,
        answer.usage,
    );
    if let (Some(text), Some(message)) = (reasoning, body.pointer_mut("/choices/0/message")) {
        message["reasoning_content"] = Value::String(text.to_string());
    }
    body.to_string()
}

/// One stream chunk carrying `text` as `delta.reasoning_content`.
pub fn reasoning_frame(envelope: Envelope<'_>, text: &str) -> String {
    let Envelope { id, model, created } = envelope;
    format!(
        "data: {}\n\n",
        chunk_body(id, model, created, json!({"reasoning_content": text}), None)
    )
}

/// `answer` as server-sent-event frames, each with its due time as an
/// offset from the first: the role chunk, one chunk per word (paced at the
/// answer's output rate, cumulatively, so timer granularity does not add up
/// over many small chunks), the finish chunk, the usage chunk when asked
/// for, and `data: [DONE]`.
pub fn stream_frames(
    envelope: Envelope<'_>,
    answer: &Answer,
    include_usage: bool,
) -> Vec<(Duration, String)> {
    let Envelope { id, model, created } = envelope;
    let frame = |v: Value| format!("data: {v}\n\n");
    let mut due = Duration::ZERO;
    let mut frames: Vec<(Duration, String)> = vec![(
        due,
        frame(chunk_body(
            id,
            model,
            created,
            json!({"role": "assistant", "content": ""}),
            None,
        )),
    )];
    for piece in answer.text.split_inclusive(' ') {
        due += answer.output_time(approx_tokens(piece));
        frames.push((
            due,
            frame(chunk_body(
                id,
                model,
                created,
                json!({"content": piece}),
                None,
            )),
        ));
    }
    frames.push((
        due,
        frame(chunk_body(
            id,
            model,
            created,
            json!({}),
            Some(&answer.finish_reason),
        )),
    ));
    if include_usage {
        frames.push((
            due,
            frame(usage_chunk_body(id, model, created, answer.usage)),
        ));
    }
    frames.push((due, "data: [DONE]\n\n".to_string()));
    frames
}
