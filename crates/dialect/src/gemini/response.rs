//! What a Gemini upstream answers: a `GenerateContentResponse` with
//! `candidates[0].content.parts`, `finishReason` and `usageMetadata`, or the
//! same answer as chunks, each a `GenerateContentResponse`, sent as `data:`
//! events (`alt=sse`, no end marker: the last chunk carries the
//! `finishReason`) or as one JSON array.

use super::finish_reason;
use crate::{FinishReason, Reply, ToolCall};
use cb_wire::openai::Usage;
use serde_json::{json, Value};

fn usage_metadata(usage: Usage) -> Value {
    json!({
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": usage.completion_tokens,
        "totalTokenCount": usage.total_tokens,
    })
}

fn call_part(call: &ToolCall) -> Value {
    json!({"functionCall": {"name": call.name, "args": call.arguments}})
}

fn response(
    id: &str,
    model: &str,
    parts: Vec<Value>,
    finish: Option<FinishReason>,
    usage: Value,
) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(f) = finish {
        candidate["finishReason"] = json!(finish_reason(f));
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": id,
    })
}

/// A complete `generateContent` answer.
pub fn generate_body(id: &str, model: &str, reply: &Reply) -> Value {
    let mut parts = Vec::new();
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        parts.push(json!({"text": reply.text}));
    }
    parts.extend(reply.tool_calls.iter().map(call_part));
    response(
        id,
        model,
        parts,
        Some(reply.finish),
        usage_metadata(reply.usage),
    )
}

/// One chunk as a server-sent event (`data: ...` and a blank line, CRLF as
/// the API writes them).
pub fn sse_frame(chunk: &Value) -> String {
    format!("data: {chunk}\r\n\r\n")
}

/// The chunks as the JSON array `streamGenerateContent` answers without
/// `alt=sse`.
pub fn json_array(chunks: &[Value]) -> String {
    Value::Array(chunks.to_vec()).to_string()
}

/// Writes one streamed answer chunk by chunk: any number of
/// [`StreamEncoder::text`] and [`StreamEncoder::tool_call`], then
/// [`StreamEncoder::close`]. Gemini has no opening event; the first chunk
/// carries text.
#[derive(Debug, Clone)]
pub struct StreamEncoder {
    id: String,
    model: String,
    prompt_tokens: u32,
}

impl StreamEncoder {
    /// An encoder for answer `id` from `model`, whose prompt counted
    /// `prompt_tokens`.
    pub fn new(id: &str, model: &str, prompt_tokens: u32) -> Self {
        StreamEncoder {
            id: id.to_string(),
            model: model.to_string(),
            prompt_tokens,
        }
    }

    /// `reply` as the whole `generateContent` answer this encoder's chunks
    /// would carry ([`generate_body`]).
    pub fn generate_body(&self, reply: &Reply) -> Value {
        generate_body(&self.id, &self.model, reply)
    }

    fn partial_usage(&self) -> Value {
        json!({"promptTokenCount": self.prompt_tokens, "totalTokenCount": self.prompt_tokens})
    }

    /// A chunk with a piece of text.
    pub fn text(&self, piece: &str) -> Value {
        response(
            &self.id,
            &self.model,
            vec![json!({"text": piece})],
            None,
            self.partial_usage(),
        )
    }

    /// A chunk with a whole function call.
    pub fn tool_call(&self, call: &ToolCall) -> Value {
        response(
            &self.id,
            &self.model,
            vec![call_part(call)],
            None,
            self.partial_usage(),
        )
    }

    /// The last chunk: `finishReason` and the full `usageMetadata`.
    pub fn close(&self, finish: FinishReason, usage: Usage) -> Value {
        response(
            &self.id,
            &self.model,
            vec![json!({"text": ""})],
            Some(finish),
            usage_metadata(usage),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_answer_has_parts_finish_reason_and_usage() {
        let mut reply = Reply::text("Hi", Usage::new(10, 1));
        reply.tool_calls.push(ToolCall {
            id: String::new(),
            name: "f".into(),
            arguments: json!({"a": 1}),
        });
        reply.finish = FinishReason::ToolCalls;
        let body = generate_body("r1", "gemini-sim", &reply);
        let candidate = &body["candidates"][0];
        assert_eq!(candidate["content"]["role"], "model");
        assert_eq!(candidate["content"]["parts"][0], json!({"text": "Hi"}));
        assert_eq!(
            candidate["content"]["parts"][1]["functionCall"]["name"],
            "f"
        );
        assert_eq!(candidate["finishReason"], "STOP");
        assert_eq!(body["usageMetadata"]["totalTokenCount"], 11);
        let empty = generate_body("r", "m", &Reply::default());
        assert_eq!(
            empty["candidates"][0]["content"]["parts"],
            json!([{"text": ""}])
        );
    }

    #[test]
    fn chunks_frame_as_sse_or_a_json_array() {
        let e = StreamEncoder::new("r1", "gemini-sim", 4);
        let chunks = [
            e.text("Hel"),
            e.text("lo"),
            e.close(FinishReason::Length, Usage::new(4, 2)),
        ];
        assert!(chunks[0]["candidates"][0].get("finishReason").is_none());
        assert_eq!(chunks[2]["candidates"][0]["finishReason"], "MAX_TOKENS");
        let frame = sse_frame(&chunks[0]);
        assert!(frame.starts_with("data: {") && frame.ends_with("}\r\n\r\n"));
        let array: Value = serde_json::from_str(&json_array(&chunks)).unwrap();
        assert_eq!(array.as_array().unwrap().len(), 3);
    }
}
