//! The slice of the OpenAI chat-completions wire format the harness speaks:
//! requests, non-streaming responses, streaming chunks and error bodies.
//! Shared by the simulated upstreams, the reference proxies and the driver so
//! that all three agree on one shape.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// One chat message. `content` is kept as JSON because clients may send a
/// string or an array of content parts; [`ChatMessage::text`] flattens it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// A string, an array of parts, or null.
    #[serde(default)]
    pub content: Value,
}

impl ChatMessage {
    /// A message with plain-text content.
    pub fn new(role: &str, text: &str) -> Self {
        ChatMessage {
            role: role.to_string(),
            content: Value::String(text.to_string()),
        }
    }

    /// The text of the message: the string, or the `text` of every text part
    /// joined by newlines; empty for null or other shapes.
    pub fn text(&self) -> String {
        self.text_cow().into_owned()
    }

    /// [`ChatMessage::text`], borrowed when the content is a plain string
    /// (the common case), so reading every message of a long history does
    /// not copy it.
    pub fn text_cow(&self) -> Cow<'_, str> {
        match &self.content {
            Value::String(s) => Cow::Borrowed(s),
            Value::Array(parts) => Cow::Owned(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => Cow::Borrowed(""),
        }
    }
}

/// `stream_options` of a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Send a final chunk with token usage.
    #[serde(default)]
    pub include_usage: bool,
}

/// A chat-completions request. Fields the harness does not interpret are kept
/// in `extra` and forwarded unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model id.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Whether to answer as server-sent events.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Every other field, forwarded as is.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens.
    pub prompt_tokens: u32,
    /// Output tokens.
    pub completion_tokens: u32,
    /// Sum of both.
    pub total_tokens: u32,
}

impl Usage {
    /// Usage with the total filled in.
    pub fn new(prompt_tokens: u32, completion_tokens: u32) -> Self {
        Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
        }
    }
}

/// Approximate token count of a text: characters / 4, at least 1 for
/// non-empty text.
pub fn approx_tokens(text: &str) -> u32 {
    let chars = text.chars().count() as u32;
    if chars == 0 {
        0
    } else {
        chars.div_ceil(4)
    }
}

/// A complete non-streaming response body.
pub fn completion_body(id: &str, model: &str, created: u64, content: &str, usage: Usage) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
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

/// An OpenAI-style error body: `{"error": {"message", "type", "code"}}`.
pub fn error_body(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// The assistant text of a non-streaming response body, if it has one.
pub fn response_text(body: &Value) -> Option<String> {
    let content = body
        .get("choices")?
        .get(0)?
        .get("message")?
        .get("content")?;
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(
            ChatMessage {
                role: "assistant".into(),
                content: other.clone(),
            }
            .text(),
        ),
    }
}

/// The model id a response says it came from.
pub fn response_model(body: &Value) -> Option<String> {
    body.get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Assembles the text of a server-sent-events stream of chunks. Returns the
/// text and whether `data: [DONE]` was seen.
///
/// # Errors
/// A `data:` line that is neither `[DONE]` nor JSON, with the line.
pub fn assemble_sse(stream: &str) -> Result<(String, bool), String> {
    let mut text = String::new();
    let mut done = false;
    for line in stream.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            continue;
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("malformed stream chunk {data:?}: {e}"))?;
        if let Some(piece) = chunk
            .get("choices")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("delta"))
            .and_then(|d| d.get("content"))
            .and_then(Value::as_str)
        {
            text.push_str(piece);
        }
    }
    Ok((text, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_keeps_unknown_fields() {
        let raw = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.2,"top_k":5}"#;
        let req: ChatRequest = serde_json::from_str(raw).unwrap();
        assert_eq!(req.extra["temperature"], json!(0.2));
        let back = serde_json::to_value(&req).unwrap();
        assert_eq!(back["top_k"], json!(5));
        assert!(back.get("stream").is_none());
    }

    #[test]
    fn text_of_content_parts() {
        let m: ChatMessage = serde_json::from_value(json!({
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]
        }))
        .unwrap();
        assert_eq!(m.text(), "a\nb");
    }

    #[test]
    fn sse_assembly() {
        let id = "x";
        let s = format!(
            "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            chunk_body(id, "m", 0, json!({"role": "assistant"}), None),
            chunk_body(id, "m", 0, json!({"content": "Hel"}), None),
            chunk_body(id, "m", 0, json!({"content": "lo"}), Some("stop")),
        );
        assert_eq!(assemble_sse(&s).unwrap(), ("Hello".to_string(), true));
        assert!(assemble_sse("data: {nope\n").is_err());
    }

    #[test]
    fn token_estimate() {
        assert_eq!(approx_tokens(""), 0);
        assert_eq!(approx_tokens("abc"), 1);
        assert_eq!(approx_tokens("abcdefgh"), 2);
    }
}
