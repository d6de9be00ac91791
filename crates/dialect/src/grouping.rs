//! Turning one dialect message (a list of blocks or parts) into OpenAI
//! messages for the simulated upstream, so that it counts turns and finds
//! the first user message as it does for an OpenAI request.
//!
//! A translation merges consecutive client messages into one dialect
//! message with several text blocks; splitting at each text block gives
//! them back. So: one OpenAI message per text, images joining the text
//! before them (or the next one, when they come first), each tool result
//! its own `tool` message with plain text, and an assistant message that
//! holds only tool calls has null content, as OpenAI writes it.

use cb_wire::openai::ChatMessage;
use serde_json::{json, Value};

/// Groups the blocks of one message; call [`Grouper::flush`] at its end.
#[derive(Debug)]
pub(crate) struct Grouper {
    role: &'static str,
    parts: Vec<Value>,
    has_text: bool,
    has_call: bool,
}

impl Grouper {
    /// A grouper for a message of `role` (`user` or `assistant`).
    pub fn new(role: &'static str) -> Self {
        Grouper {
            role,
            parts: Vec::new(),
            has_text: false,
            has_call: false,
        }
    }

    /// A text block: a new message, unless the current one has no text yet.
    pub fn text(&mut self, text: &str, out: &mut Vec<ChatMessage>) {
        if self.has_text {
            self.flush(out);
        }
        self.parts.push(json!({"type": "text", "text": text}));
        self.has_text = true;
    }

    /// An image, by URL: joins the current message.
    pub fn image(&mut self, url: &str) {
        self.parts
            .push(json!({"type": "image_url", "image_url": {"url": url}}));
    }

    /// A tool call: the current message has one (it is not sent as text).
    pub fn tool_call(&mut self) {
        self.has_call = true;
    }

    /// A tool result: its own `tool` message.
    pub fn tool_result(&mut self, text: &str, out: &mut Vec<ChatMessage>) {
        self.flush(out);
        out.push(ChatMessage::new("tool", text));
    }

    /// Ends the current message, if it has anything.
    pub fn flush(&mut self, out: &mut Vec<ChatMessage>) {
        let parts = std::mem::take(&mut self.parts);
        let content = match parts.as_slice() {
            [] => Value::Null,
            [only] if only["type"] == "text" => only["text"].clone(),
            _ => Value::Array(parts),
        };
        if !content.is_null() || self.has_call {
            out.push(ChatMessage {
                role: self.role.to_string(),
                content,
                tool_calls: None,
                tool_call_id: None,
            });
        }
        self.has_text = false;
        self.has_call = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_each_text_and_keeps_images_with_a_text() {
        let mut out = Vec::new();
        let mut g = Grouper::new("user");
        g.tool_result("r1", &mut out);
        g.image("https://x/a.png");
        g.text("first", &mut out);
        g.text("second", &mut out);
        g.image("https://x/b.png");
        g.flush(&mut out);
        let got: Vec<(String, Value)> = out.into_iter().map(|m| (m.role, m.content)).collect();
        assert_eq!(
            got,
            vec![
                ("tool".into(), json!("r1")),
                (
                    "user".into(),
                    json!([{"type": "image_url", "image_url": {"url": "https://x/a.png"}}, {"type": "text", "text": "first"}])
                ),
                (
                    "user".into(),
                    json!([{"type": "text", "text": "second"}, {"type": "image_url", "image_url": {"url": "https://x/b.png"}}])
                ),
            ]
        );
    }

    #[test]
    fn an_assistant_message_of_tool_calls_only_has_null_content() {
        let mut out = Vec::new();
        let mut g = Grouper::new("assistant");
        g.tool_call();
        g.flush(&mut out);
        g.flush(&mut out);
        assert_eq!(
            out,
            vec![ChatMessage {
                role: "assistant".into(),
                content: Value::Null,
                tool_calls: None,
                tool_call_id: None,
            }]
        );
        let mut g = Grouper::new("assistant");
        g.tool_call();
        g.text("calling", &mut out);
        g.flush(&mut out);
        assert_eq!(out[1], ChatMessage::new("assistant", "calling"));
    }
}
