//! The slice of the OpenAI chat-completions wire format the harness speaks:
//! requests, non-streaming responses, streaming chunks and error bodies.
//! Shared by the simulated upstreams, the reference proxies and the driver so
//! that all three agree on one shape: [`frame`] writes every body, chunk and
//! error the tool sends in OpenAI's shape, [`chunk`] reads one chunk of a
//! stream.

pub mod chunk;
pub mod frame;

pub use frame::{
    chunk_body, completion_body, error_body, usage_chunk_body, Envelope, FrameWriter, Message,
    ToolCall,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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
    /// An assistant message's `tool_calls`, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Value>,
    /// A tool message's `tool_call_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A message with plain-text content.
    pub fn new(role: &str, text: &str) -> Self {
        ChatMessage {
            role: role.to_string(),
            content: Value::String(text.to_string()),
            tool_calls: None,
            tool_call_id: None,
        }
    }

    /// The text of the message: the string, or the `text` of every text part
    /// joined by newlines; empty for null or other shapes.
    pub fn text(&self) -> String {
        self.text_cow().into_owned()
    }

    /// [`ChatMessage::text`], borrowed when the content is a plain string
    /// (the common case), so reading every message of a long history does
    /// not copy it. The one reading of `content` ([`crate::content`]).
    pub fn text_cow(&self) -> Cow<'_, str> {
        crate::content::plain_text(&self.content)
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
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
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

/// The assistant text of a non-streaming response body, if it has one.
pub fn response_text(body: &Value) -> Option<String> {
    let content = body
        .get("choices")?
        .get(0)?
        .get("message")?
        .get("content")?;
    match content {
        Value::Null => None,
        other => Some(crate::content::plain_text(other).into_owned()),
    }
}

/// The model id a response says it came from.
pub fn response_model(body: &Value) -> Option<String> {
    body.get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn token_estimate() {
        assert_eq!(approx_tokens(""), 0);
        assert_eq!(approx_tokens("abc"), 1);
        assert_eq!(approx_tokens("abcdefgh"), 2);
    }
}
