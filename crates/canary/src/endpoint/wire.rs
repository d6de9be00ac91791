//! The simulated endpoint's bytes on the wire, in OpenRouter's shapes: a
//! `chat.completion` body or `chat.completion.chunk` events (ending with
//! `data: [DONE]`), each naming the route that served in a top-level
//! `provider` field; error bodies `{"error": {"message", "code"}}` with
//! their real status (and `Retry-After` on a 429); a held connection.

use cb_wire::openai::{approx_tokens, chunk_body, completion_body, Usage};
use cb_degrade::Completion;
use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::time::Duration;

/// `created` of every simulated answer (2025-01-01T00:00:00Z): the
/// endpoint reads no clock.
const CREATED: u64 = 1_735_689_600;

/// Who answers, for the envelope of a reply.
#[derive(Debug, Clone, Copy)]
pub struct Envelope<'a> {
    /// The completion id.
    pub id: &'a str,
    /// The model id echoed back.
    pub model: &'a str,
    /// The provider name of the route that served.
    pub provider: &'a str,
}

fn with_provider(mut body: Value, provider: &str) -> Value {
    if let Some(object) = body.as_object_mut() {
        object.insert("provider".into(), Value::String(provider.to_string()));
    }
    body
}

/// An error response with `status`, an OpenRouter-style body, and
/// `Retry-After` when given.
pub fn error(status: u16, message: &str, retry_after: Option<u64>) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({"error": {"message": message, "code": status}}).to_string();
    let mut response = (code, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
    }
    response
}

/// No byte for `hold`, then a 504: a timeout as a client sees it.
pub async fn hold(hold: Duration) -> Response {
    // The fault itself: a held connection, then a 504.
    tokio::time::sleep(hold).await;
    error(504, "the upstream provider did not answer in time", None)
}

/// `reply` as one `chat.completion` body.
pub fn completion(envelope: Envelope<'_>, reply: &Completion, prompt_tokens: u32) -> Response {
    let usage = Usage::new(prompt_tokens, approx_tokens(&reply.text));
    let body = with_provider(
        completion_body(
            envelope.id,
            envelope.model,
            CREATED,
            &reply.text,
            &reply.finish_reason,
            usage,
        ),
        envelope.provider,
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `reply` as server-sent events: the role chunk at once, the content
/// (one chunk per word) after `first_token_delay`, the finish chunk and
/// `data: [DONE]`.
pub fn stream(envelope: Envelope<'_>, reply: &Completion, first_token_delay: Duration) -> Response {
    let frame = |delta: Value, finish: Option<&str>| {
        let chunk = with_provider(
            chunk_body(envelope.id, envelope.model, CREATED, delta, finish),
            envelope.provider,
        );
        Bytes::from(format!("data: {chunk}\n\n"))
    };
    let head = frame(json!({"role": "assistant", "content": ""}), None);
    let mut rest: Vec<Bytes> = reply
        .text
        .split_inclusive(' ')
        .map(|piece| frame(json!({"content": piece}), None))
        .collect();
    rest.push(frame(json!({}), Some(&reply.finish_reason)));
    rest.push(Bytes::from_static(b"data: [DONE]\n\n"));
    let first = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(head) });
    let later = futures::stream::once(async move {
        if !first_token_delay.is_zero() {
            // The fault itself: the slow route's late first token.
            tokio::time::sleep(first_token_delay).await;
        }
        futures::stream::iter(rest.into_iter().map(Ok::<Bytes, std::io::Error>))
    });
    let body = futures::StreamExt::chain(first, futures::StreamExt::flatten(later));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| error(500, "cannot build the stream", None))
}
