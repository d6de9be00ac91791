//! The OpenAI side of translating an answer back: a `chat.completion` body
//! with text, tool calls, finish reason and usage, and the chunk frames a
//! stream translator writes. Shared by both dialects so that the client
//! sees one shape whichever provider answered.

use super::{ChunkOptions, FinishReason, ToolCall};
use cb_wire::openai::{chunk_body, usage_chunk_body, Usage};
use serde_json::{json, Value};

/// The final frame of every complete OpenAI stream.
pub(crate) const DONE: &str = "data: [DONE]\n\n";

/// One tool call in OpenAI's shape (`arguments` as a JSON string).
pub(crate) fn tool_call_json(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments.to_string()},
    })
}

/// A complete `chat.completion` body. `content` is null when the answer
/// holds tool calls and no text, as OpenAI sends it.
pub(crate) fn completion(
    options: &ChunkOptions,
    text: &str,
    tool_calls: &[ToolCall],
    finish: FinishReason,
    usage: Usage,
) -> Value {
    let content = if text.is_empty() && !tool_calls.is_empty() {
        Value::Null
    } else {
        Value::String(text.to_string())
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.iter().map(tool_call_json).collect();
    }
    json!({
        "id": options.id,
        "object": "chat.completion",
        "created": options.created,
        "model": options.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish.as_str()}],
        "usage": usage,
    })
}

/// Writes the OpenAI chunk frames of one translated stream.
#[derive(Debug, Clone)]
pub(crate) struct ChunkWriter {
    pub options: ChunkOptions,
    /// Tool calls announced so far (the next call's `index`).
    pub tool_calls: usize,
}

impl ChunkWriter {
    pub fn new(options: ChunkOptions) -> Self {
        ChunkWriter {
            options,
            tool_calls: 0,
        }
    }

    fn frame(&self, delta: Value, finish: Option<FinishReason>) -> String {
        let o = &self.options;
        let chunk = chunk_body(
            &o.id,
            &o.model,
            o.created,
            delta,
            finish.map(|f| f.as_str()),
        );
        format!("data: {chunk}\n\n")
    }

    /// The first chunk: the assistant role.
    pub fn role(&self) -> String {
        self.frame(json!({"role": "assistant", "content": ""}), None)
    }

    /// A piece of text.
    pub fn text(&self, piece: &str) -> String {
        self.frame(json!({"content": piece}), None)
    }

    /// The start of a tool call (id, name, and the arguments so far);
    /// returns its OpenAI index with the frame.
    pub fn tool_start(&mut self, id: &str, name: &str, arguments: &str) -> (usize, String) {
        let index = self.tool_calls;
        self.tool_calls += 1;
        let delta = json!({"tool_calls": [{
            "index": index,
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }]});
        (index, self.frame(delta, None))
    }

    /// More arguments of the tool call at `index`.
    pub fn tool_arguments(&self, index: usize, arguments: &str) -> String {
        let delta = json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]});
        self.frame(delta, None)
    }

    /// The end: the finish chunk, the usage chunk when asked for, and
    /// `data: [DONE]`.
    pub fn end(&self, finish: FinishReason, usage: Usage) -> String {
        let mut out = self.frame(json!({}), Some(finish));
        if self.options.include_usage {
            let o = &self.options;
            out.push_str(&format!(
                "data: {}\n\n",
                usage_chunk_body(&o.id, &o.model, o.created, usage)
            ));
        }
        out.push_str(DONE);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ChunkOptions {
        ChunkOptions {
            created: 7,
            include_usage: true,
            id: "id-1".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn completion_with_tool_calls_has_null_content() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "lookup".into(),
            arguments: json!({"q": "x"}),
        };
        let body = completion(
            &options(),
            "",
            &[call],
            FinishReason::ToolCalls,
            Usage::new(3, 2),
        );
        let message = &body["choices"][0]["message"];
        assert_eq!(message["content"], Value::Null);
        assert_eq!(
            message["tool_calls"][0]["function"]["arguments"],
            "{\"q\":\"x\"}"
        );
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(body["usage"]["total_tokens"], 5);
        let text = completion(&options(), "hi", &[], FinishReason::Stop, Usage::default());
        assert_eq!(cb_wire::openai::response_text(&text).as_deref(), Some("hi"));
    }

    #[test]
    fn a_written_stream_assembles_like_an_openai_one() {
        let mut w = ChunkWriter::new(options());
        let (index, start) = w.tool_start("call_1", "f", "");
        assert_eq!(index, 0);
        let body = [
            w.role(),
            w.text("Hel"),
            w.text("lo"),
            start,
            w.tool_arguments(0, "{}"),
            w.end(FinishReason::Stop, Usage::new(1, 1)),
        ]
        .concat();
        assert_eq!(
            cb_wire::sse::stream_text(body.as_bytes()).unwrap(),
            "Hello"
        );
        assert!(body.contains("\"usage\""));
    }
}
