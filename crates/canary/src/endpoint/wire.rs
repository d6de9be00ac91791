//! The simulated endpoint's bytes on the wire, in OpenRouter's shapes,
//! written by the one OpenAI frame writer ([`cb_wire::openai::frame`]): a
//! `chat.completion` body or `chat.completion.chunk` events (ending with
//! `data: [DONE]`), each naming the route that served in a top-level
//! `provider` field; error bodies `{"error": {"message", "code"}}` with
//! their real status (and `Retry-After` on a 429); a held connection.

use axum::body::{Body, Bytes};
use axum::response::Response;
use cb_degrade::Completion;
use cb_wire::openai::frame::{error_response, event_stream, json_response, status_error_body};
use cb_wire::openai::{approx_tokens, FrameWriter, Message, Usage};
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

impl Envelope<'_> {
    /// The writer of this reply's frames.
    fn writer(&self) -> FrameWriter {
        FrameWriter::new(cb_wire::openai::Envelope {
            id: self.id,
            model: self.model,
            created: CREATED,
        })
        .provider(self.provider)
    }
}

/// An error response with `status`, an OpenRouter-style body, and
/// `Retry-After` (seconds) when given.
pub fn error(status: u16, message: &str, retry_after: Option<u64>) -> Response {
    let body = status_error_body(message, status);
    error_response(status, &body, retry_after.map(Duration::from_secs))
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
    let body =
        envelope
            .writer()
            .completion(Message::text(&reply.text), &reply.finish_reason, usage);
    json_response(200, body.to_string())
}

/// `reply` as server-sent events: the role chunk at once, the content
/// (one chunk per word) after `first_token_delay`, the finish chunk and
/// `data: [DONE]`.
pub fn stream(envelope: Envelope<'_>, reply: &Completion, first_token_delay: Duration) -> Response {
    let writer = envelope.writer();
    let head = Bytes::from(writer.role());
    let mut rest: Vec<Bytes> = reply
        .text
        .split_inclusive(' ')
        .map(|piece| Bytes::from(writer.text(piece)))
        .collect();
    // No usage chunk: the client does not ask for one.
    rest.extend(
        writer
            .close(&reply.finish_reason, Usage::default())
            .into_iter()
            .map(Bytes::from),
    );
    let first = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(head) });
    let later = futures::stream::once(async move {
        if !first_token_delay.is_zero() {
            // The fault itself: the slow route's late first token.
            tokio::time::sleep(first_token_delay).await;
        }
        futures::stream::iter(rest.into_iter().map(Ok::<Bytes, std::io::Error>))
    });
    let body = futures::StreamExt::chain(first, futures::StreamExt::flatten(later));
    event_stream(Body::from_stream(body))
}
