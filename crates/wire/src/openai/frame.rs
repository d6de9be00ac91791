//! The one OpenAI frame writer: every body, chunk and error the tool sends
//! in OpenAI's chat-completions shape, for the simulated upstreams, the
//! reference proxies (a translated answer, their own errors) and the
//! canary's simulated endpoint alike.
//!
//! - whole answers: a `chat.completion` body ([`FrameWriter::completion`],
//!   with reasoning and tool calls when there are any);
//! - streamed answers, a frame at a time as the pieces come (a relay) or
//!   all at once (a whole answer paced by its sender): the role chunk, a
//!   chunk per piece of text or reasoning, tool-call chunks, the finish
//!   chunk, the usage chunk when the client asked for it, and
//!   `data: [DONE]` ([`FrameWriter::close`]);
//! - errors: the error body ([`error_body`]; OpenRouter's variant with the
//!   HTTP status as its code, [`status_error_body`]), the same object as an
//!   event inside a stream ([`error_event`]), and the HTTP responses that
//!   carry them ([`error_response`], with `Retry-After`).
//!
//! An aggregator such as OpenRouter names the provider that served in a
//! top-level `provider` field of every body and chunk
//! ([`FrameWriter::provider`]).

use super::Usage;
use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::time::Duration;

/// The last frame of every complete stream.
pub const DONE: &str = "data: [DONE]\n\n";

/// An event that is not JSON: the start of a chunk, broken off (a fault).
pub const MALFORMED_EVENT: &str =
    "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"\n\n";

/// What names one answer on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// The completion id.
    pub id: &'a str,
    /// The model id.
    pub model: &'a str,
    /// Unix seconds of creation.
    pub created: u64,
}

/// One tool call of an answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    /// The call id.
    pub id: &'a str,
    /// The function name.
    pub name: &'a str,
    /// The arguments, a JSON object (sent as a JSON string, as OpenAI
    /// does).
    pub arguments: &'a Value,
}

impl ToolCall<'_> {
    fn json(&self) -> Value {
        json!({
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments.to_string()},
        })
    }
}

/// What the assistant message of a whole answer holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Message<'a> {
    /// The text (its `content`: null when it is empty and there are tool
    /// calls, as OpenAI sends it).
    pub text: &'a str,
    /// Reasoning text, sent as `reasoning_content`.
    pub reasoning: Option<&'a str>,
    /// Tool calls, in order.
    pub tool_calls: &'a [ToolCall<'a>],
}

impl<'a> Message<'a> {
    /// A message of text only.
    pub fn text(text: &'a str) -> Self {
        Message {
            text,
            ..Message::default()
        }
    }
}

/// Writes the frames of one answer; see the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameWriter {
    id: String,
    model: String,
    created: u64,
    include_usage: bool,
    provider: Option<String>,
    /// Tool calls started so far (the next call's `index`).
    tool_calls: usize,
}

impl FrameWriter {
    /// A writer for the answer `envelope` names, without a usage chunk.
    pub fn new(envelope: Envelope<'_>) -> Self {
        FrameWriter {
            id: envelope.id.to_string(),
            model: envelope.model.to_string(),
            created: envelope.created,
            include_usage: false,
            provider: None,
            tool_calls: 0,
        }
    }

    /// Sends the usage chunk before `data: [DONE]` (the client's
    /// `stream_options.include_usage`).
    #[must_use]
    pub fn include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// Names `provider` in a top-level `provider` field of every body and
    /// chunk, as OpenRouter does.
    #[must_use]
    pub fn provider(mut self, provider: &str) -> Self {
        self.provider = Some(provider.to_string());
        self
    }

    /// Uses `id` from now on (a translated stream that names its own).
    pub fn set_id(&mut self, id: &str) {
        id.clone_into(&mut self.id);
    }

    /// Uses `model` from now on.
    pub fn set_model(&mut self, model: &str) {
        model.clone_into(&mut self.model);
    }

    /// Tool calls started so far.
    pub fn tool_calls(&self) -> usize {
        self.tool_calls
    }

    /// The answer as one `chat.completion` body that ended for
    /// `finish_reason`.
    pub fn completion(&self, message: Message<'_>, finish_reason: &str, usage: Usage) -> Value {
        let mut body = completion_body(
            &self.id,
            &self.model,
            self.created,
            message.text,
            finish_reason,
            usage,
        );
        if let Some(m) = body.pointer_mut("/choices/0/message") {
            if message.text.is_empty() && !message.tool_calls.is_empty() {
                m["content"] = Value::Null;
            }
            if let Some(reasoning) = message.reasoning {
                m["reasoning_content"] = Value::String(reasoning.to_string());
            }
            if !message.tool_calls.is_empty() {
                m["tool_calls"] = message.tool_calls.iter().map(ToolCall::json).collect();
            }
        }
        self.labelled(body)
    }

    /// The first chunk: the assistant role.
    pub fn role(&self) -> String {
        self.chunk(json!({"role": "assistant", "content": ""}), None)
    }

    /// A chunk with a piece of the text.
    pub fn text(&self, piece: &str) -> String {
        self.chunk(json!({"content": piece}), None)
    }

    /// A chunk with reasoning text (`delta.reasoning_content`).
    pub fn reasoning(&self, text: &str) -> String {
        self.chunk(json!({"reasoning_content": text}), None)
    }

    /// The start of a tool call (id, name, and its arguments so far);
    /// returns its `index` with the frame.
    pub fn tool_start(&mut self, id: &str, name: &str, arguments: &str) -> (usize, String) {
        let index = self.tool_calls;
        self.tool_calls += 1;
        let delta = json!({"tool_calls": [{
            "index": index,
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }]});
        (index, self.chunk(delta, None))
    }

    /// More arguments of the tool call at `index`.
    pub fn tool_arguments(&self, index: usize, arguments: &str) -> String {
        let delta = json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]});
        self.chunk(delta, None)
    }

    /// The last frames: the finish chunk, the usage chunk when asked for,
    /// and `data: [DONE]`, which a fault that drops the end of a stream
    /// drops.
    pub fn close(&self, finish_reason: &str, usage: Usage) -> Vec<String> {
        let mut frames = vec![self.chunk(json!({}), Some(finish_reason))];
        if self.include_usage {
            let body = usage_chunk_body(&self.id, &self.model, self.created, usage);
            frames.push(data_frame(&self.labelled(body)));
        }
        frames.push(DONE.to_string());
        frames
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> String {
        let body = chunk_body(&self.id, &self.model, self.created, delta, finish);
        data_frame(&self.labelled(body))
    }

    /// `body` with the `provider` field, when there is one.
    fn labelled(&self, mut body: Value) -> Value {
        if let (Some(provider), Some(object)) = (&self.provider, body.as_object_mut()) {
            object.insert("provider".into(), Value::String(provider.clone()));
        }
        body
    }
}

/// `value` as one server-sent event: `data: ` and the JSON, then a blank
/// line.
pub fn data_frame(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// A complete non-streaming response body that ended for `finish_reason`.
pub fn completion_body(
    id: &str,
    model: &str,
    created: u64,
    content: &str,
    finish_reason: &str,
    usage: Usage,
) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": finish_reason
        }],
        "usage": usage,
    })
}

/// One streaming chunk. `delta` is the choice's delta object; `finish` the
/// finish reason of the last content chunk.
pub fn chunk_body(
    id: &str,
    model: &str,
    created: u64,
    delta: Value,
    finish: Option<&str>,
) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

/// The final usage chunk sent when `stream_options.include_usage` is set.
pub fn usage_chunk_body(id: &str, model: &str, created: u64, usage: Usage) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": usage,
    })
}

/// An OpenAI error body: `{"error": {"message", "type", "param", "code"}}`.
pub fn error_body(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// OpenRouter's error body: the HTTP status as a numeric `code`, and no
/// `type`: `{"error": {"message", "code"}}`.
pub fn status_error_body(message: &str, status: u16) -> Value {
    json!({"error": {"message": message, "code": status}})
}

/// The error body ([`error_body`]) as an event inside a stream: what a
/// client reads when a stream cannot be completed.
pub fn error_event(message: &str, kind: &str, code: Option<&str>) -> String {
    data_frame(&error_body(message, kind, code))
}

/// `Retry-After` in whole seconds, rounded up, at least 1.
pub fn retry_after_secs(d: Duration) -> u64 {
    (d.as_secs_f64().ceil() as u64).max(1)
}

/// A JSON response with `status`.
pub fn json_response(status: u16, body: String) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// An error response: `status`, the error `body`, and `Retry-After` (in
/// whole seconds, [`retry_after_secs`]) when given.
pub fn error_response(status: u16, body: &Value, retry_after: Option<Duration>) -> Response {
    let mut response = json_response(status, body.to_string());
    if let Some(retry_after) = retry_after {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(retry_after_secs(retry_after)),
        );
    }
    response
}

/// A 200 event stream whose frames are `body`.
pub fn event_stream(body: Body) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::{assemble, read_all};

    const ENVELOPE: Envelope<'static> = Envelope {
        id: "chatcmpl-1",
        model: "m-7",
        created: 7,
    };

    /// A stream written frame by frame reads back, as a client reads it,
    /// as the answer it carries.
    #[test]
    fn a_written_stream_reads_back_as_its_answer() {
        let mut w = FrameWriter::new(ENVELOPE).include_usage(true);
        let (index, start) = w.tool_start("call_1", "lookup", "");
        assert_eq!((index, w.tool_calls()), (0, 1));
        let mut frames = vec![w.role(), w.reasoning("hmm"), w.text("Hel"), w.text("lo")];
        frames.extend([start, w.tool_arguments(0, "{}")]);
        let close = w.close("length", Usage::new(3, 2));
        assert_eq!(close.len(), 3, "finish, usage, [DONE]");
        assert_eq!(close.last().map(String::as_str), Some(DONE));
        frames.extend(close);
        assert!(frames
            .iter()
            .all(|f| f.starts_with("data: ") && f.ends_with("\n\n")));
        let read = assemble(&read_all(frames.concat().as_bytes())).unwrap();
        assert_eq!(read.text, "Hello");
        assert_eq!(read.finish_reason.as_deref(), Some("length"));
        assert_eq!(read.model.as_deref(), Some("m-7"));
        assert!(read.usage);
        assert!(frames[1].contains("\"reasoning_content\":\"hmm\""));
        assert!(frames[5].contains("\"function\":{\"arguments\":\"{}\"},\"index\":0"));
        // Without the client asking, no usage chunk.
        assert_eq!(
            FrameWriter::new(ENVELOPE)
                .close("stop", Usage::default())
                .len(),
            2
        );
    }

    #[test]
    fn a_chunk_is_byte_for_byte_the_chunk_body() {
        let w = FrameWriter::new(ENVELOPE);
        assert_eq!(
            w.text("hi"),
            data_frame(&chunk_body(
                "chatcmpl-1",
                "m-7",
                7,
                json!({"content": "hi"}),
                None
            ))
        );
        assert_eq!(
            w.text("hi"),
            "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":null,\"index\":0}],\"created\":7,\"id\":\"chatcmpl-1\",\"model\":\"m-7\",\"object\":\"chat.completion.chunk\"}\n\n"
        );
    }

    #[test]
    fn a_whole_answer_holds_text_reasoning_and_tool_calls() {
        let w = FrameWriter::new(ENVELOPE);
        let plain = w.completion(Message::text("Oriane."), "stop", Usage::new(4, 2));
        assert_eq!(
            plain,
            completion_body("chatcmpl-1", "m-7", 7, "Oriane.", "stop", Usage::new(4, 2))
        );
        assert_eq!(
            crate::openai::response_text(&plain).as_deref(),
            Some("Oriane.")
        );
        let args = json!({"q": "x"});
        let calls = [ToolCall {
            id: "call_1",
            name: "lookup",
            arguments: &args,
        }];
        let message = Message {
            text: "",
            reasoning: Some("first, look it up"),
            tool_calls: &calls,
        };
        let body = w.completion(message, "tool_calls", Usage::default());
        let m = &body["choices"][0]["message"];
        assert_eq!(m["content"], Value::Null);
        assert_eq!(m["reasoning_content"], "first, look it up");
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"q\":\"x\"}");
        assert_eq!(m["tool_calls"][0]["type"], "function");
    }

    #[test]
    fn a_provider_is_named_in_every_body_and_chunk() {
        let w = FrameWriter::new(ENVELOPE).provider("Atlas");
        let body = w.completion(Message::text("hi"), "stop", Usage::default());
        assert_eq!(body["provider"], "Atlas");
        for frame in [w.role(), w.text("hi")] {
            let chunk: Value = serde_json::from_str(frame.trim_start_matches("data: ")).unwrap();
            assert_eq!(chunk["provider"], "Atlas");
        }
    }

    #[test]
    fn errors_as_bodies_events_and_responses() {
        let body = error_body("down", "server_error", Some("upstream_down"));
        assert_eq!(
            body.to_string(),
            "{\"error\":{\"code\":\"upstream_down\",\"message\":\"down\",\"param\":null,\"type\":\"server_error\"}}"
        );
        let event = error_event("broke", "proxy_error", Some("stream_broken"));
        assert_eq!(
            event,
            data_frame(&error_body("broke", "proxy_error", Some("stream_broken")))
        );
        let read = assemble(&read_all(event.as_bytes())).unwrap_err();
        assert_eq!(read, "error in the stream after 1 chunks: broke");
        assert_eq!(
            status_error_body("slow down", 429).to_string(),
            "{\"error\":{\"code\":429,\"message\":\"slow down\"}}"
        );
        let response = error_response(429, &body, Some(Duration::from_millis(1500)));
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        assert!(error_response(500, &body, None)
            .headers()
            .get(header::RETRY_AFTER)
            .is_none());
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        let stream = event_stream(Body::empty());
        assert_eq!(stream.headers()[header::CONTENT_TYPE], "text/event-stream");
        assert_eq!(stream.headers()[header::CACHE_CONTROL], "no-cache");
    }
}
