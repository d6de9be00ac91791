//! What an Anthropic upstream answers: a `message` object with content
//! blocks, `stop_reason` and `usage`, or the same answer as the API streams
//! it (`event:` and `data:` lines: `message_start`, `content_block_start`,
//! `ping`, `content_block_delta` with `text_delta`, `content_block_stop`,
//! `message_delta`, `message_stop`).

use super::{stop_reason, ErrorKind};
use crate::{FinishReason, Reply, ToolCall};
use serde_json::{json, Value};

/// A complete, non-streamed answer.
pub fn message_body(id: &str, model: &str, reply: &Reply) -> Value {
    let mut content: Vec<Value> = Vec::new();
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.text}));
    }
    content.extend(reply.tool_calls.iter().map(tool_use));
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(reply.finish),
        "stop_sequence": null,
        "usage": {
            "input_tokens": reply.usage.prompt_tokens,
            "output_tokens": reply.usage.completion_tokens,
        },
    })
}

fn tool_use(call: &ToolCall) -> Value {
    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
}

/// One server-sent event as the API writes it.
fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// The `error` event the API sends when a stream fails after it started.
pub fn stream_error_frame(kind: ErrorKind, message: &str) -> String {
    event(
        "error",
        &json!({"type": "error", "error": {"type": kind.as_str(), "message": message}}),
    )
}

/// Writes one streamed answer frame by frame, so an upstream can pace the
/// frames (and break off between them): [`StreamEncoder::open`], any
/// number of [`StreamEncoder::text`] and [`StreamEncoder::tool_call`], then
/// [`StreamEncoder::close`].
#[derive(Debug, Clone)]
pub struct StreamEncoder {
    id: String,
    model: String,
    input_tokens: u32,
    /// Index of the next content block.
    next_block: usize,
    /// The text block is open.
    text_open: bool,
}

impl StreamEncoder {
    /// An encoder for message `id` from `model`, whose prompt counted
    /// `input_tokens`.
    pub fn new(id: &str, model: &str, input_tokens: u32) -> Self {
        StreamEncoder {
            id: id.to_string(),
            model: model.to_string(),
            input_tokens,
            next_block: 0,
            text_open: false,
        }
    }

    /// `reply` as the whole (non-streamed) message this encoder's stream
    /// would carry ([`message_body`]).
    pub fn message_body(&self, reply: &Reply) -> Value {
        message_body(&self.id, &self.model, reply)
    }

    /// `message_start`, the text block's `content_block_start`, and a
    /// `ping`.
    pub fn open(&mut self) -> String {
        let start = json!({
            "type": "message_start",
            "message": {
                "id": self.id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": self.input_tokens, "output_tokens": 1},
            },
        });
        let mut out = event("message_start", &start);
        out.push_str(&self.open_text());
        out.push_str(&event("ping", &json!({"type": "ping"})));
        out
    }

    fn open_text(&mut self) -> String {
        let index = self.next_block;
        self.next_block += 1;
        self.text_open = true;
        event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        )
    }

    fn close_block(&mut self) -> String {
        if !self.text_open {
            return String::new();
        }
        self.text_open = false;
        event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": self.next_block - 1}),
        )
    }

    /// A `text_delta` (opening a text block after a tool call).
    pub fn text(&mut self, piece: &str) -> String {
        let mut out = String::new();
        if !self.text_open {
            out.push_str(&self.open_text());
        }
        out.push_str(&event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": self.next_block - 1, "delta": {"type": "text_delta", "text": piece}}),
        ));
        out
    }

    /// A whole `tool_use` block: its start, its input as one
    /// `input_json_delta`, its stop.
    pub fn tool_call(&mut self, call: &ToolCall) -> String {
        let mut out = self.close_block();
        let index = self.next_block;
        self.next_block += 1;
        out.push_str(&event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        ));
        out.push_str(&event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": call.arguments.to_string()}}),
        ));
        out.push_str(&event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        out
    }

    /// The open block's `content_block_stop`, `message_delta` with the stop
    /// reason and output tokens, and `message_stop`.
    pub fn close(&mut self, finish: FinishReason, output_tokens: u32) -> String {
        let mut out = self.close_block();
        out.push_str(&event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(finish), "stop_sequence": null}, "usage": {"output_tokens": output_tokens}}),
        ));
        out.push_str(&event("message_stop", &json!({"type": "message_stop"})));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_wire::openai::Usage;

    #[test]
    fn message_body_has_blocks_stop_reason_and_usage() {
        let mut reply = Reply::text("Hello", Usage::new(12, 3));
        reply.tool_calls.push(ToolCall {
            id: "toolu_1".into(),
            name: "f".into(),
            arguments: json!({"a": 1}),
        });
        reply.finish = FinishReason::ToolCalls;
        let body = message_body("msg_1", "claude-sim", &reply);
        assert_eq!(body["content"][0], json!({"type": "text", "text": "Hello"}));
        assert_eq!(body["content"][1]["type"], "tool_use");
        assert_eq!(body["stop_reason"], "tool_use");
        assert_eq!(
            body["usage"],
            json!({"input_tokens": 12, "output_tokens": 3})
        );
        let empty = message_body("m", "x", &Reply::default());
        assert_eq!(empty["content"], json!([]));
    }

    #[test]
    fn stream_events_come_in_the_api_order() {
        let mut e = StreamEncoder::new("msg_1", "claude-sim", 9);
        let body = [
            e.open(),
            e.text("Hel"),
            e.text("lo"),
            e.close(FinishReason::Stop, 2),
        ]
        .concat();
        let names: Vec<&str> = body
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert!(body.contains(r#""stop_reason":"end_turn""#));
        assert!(stream_error_frame(ErrorKind::OverloadedError, "Overloaded")
            .starts_with("event: error\ndata: {"));
    }
}
