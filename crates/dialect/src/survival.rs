//! What survived the trip to an upstream: of the system messages, tool
//! results and user turns the client sent, how many reached it, found by
//! content (gateways merge, split, re-wrap and move messages, so position
//! and role are no guide).
//!
//! An item reached the upstream when each of its text parts (trimmed) is
//! found in a message the upstream received that is not an assistant
//! message (assistant text is the model's, and may quote anything): inside
//! its text for a part of [`MIN_CONTAINED`] characters or more, as the
//! whole text or one whole line of it for a shorter part, so that "yes"
//! is not found inside every sentence that contains it. An item with no
//! text is not counted; two identical items count as one content (both
//! reached or neither).

use cb_wire::openai::{ChatMessage, ChatRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::ops::AddAssign;

/// Parts at least this long (in characters) may be found inside a longer
/// text; shorter ones must match a whole text or line.
pub const MIN_CONTAINED: usize = 12;

/// How many of one kind of item the client sent, and how many of those
/// reached the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Share {
    /// Items the client sent.
    pub sent: usize,
    /// Of those, items found in what the upstream received.
    pub reached: usize,
}

impl Share {
    /// `reached / sent`; `None` when nothing was sent.
    pub fn rate(&self) -> Option<f64> {
        (self.sent > 0).then(|| self.reached as f64 / self.sent as f64)
    }

    /// Every item sent reached the upstream.
    pub fn complete(&self) -> bool {
        self.reached == self.sent
    }
}

impl AddAssign for Share {
    fn add_assign(&mut self, other: Share) {
        self.sent += other.sent;
        self.reached += other.reached;
    }
}

/// What survived of one request (or, summed with `+=`, of many).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Survival {
    /// System (and developer) messages.
    pub system: Share,
    /// Tool (and legacy function) results.
    pub tool_results: Share,
    /// User messages.
    pub user_turns: Share,
}

impl Survival {
    /// Everything the client sent reached the upstream.
    pub fn complete(&self) -> bool {
        self.system.complete() && self.tool_results.complete() && self.user_turns.complete()
    }
}

impl AddAssign for Survival {
    fn add_assign(&mut self, other: Survival) {
        self.system += other.system;
        self.tool_results += other.tool_results;
        self.user_turns += other.user_turns;
    }
}

/// The trimmed, non-empty text parts of a message.
fn parts(message: &ChatMessage) -> Vec<&str> {
    let texts: Vec<&str> = match &message.content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    texts
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

/// The texts an upstream received, to search.
struct Received {
    texts: Vec<String>,
}

impl Received {
    fn new(received: &[ChatMessage]) -> Self {
        Received {
            texts: received
                .iter()
                .filter(|m| m.role != "assistant")
                .map(ChatMessage::text)
                .collect(),
        }
    }

    fn has(&self, part: &str) -> bool {
        let long = part.chars().count() >= MIN_CONTAINED;
        self.texts.iter().any(|t| {
            if long {
                t.contains(part)
            } else {
                t.trim() == part || t.lines().any(|l| l.trim() == part)
            }
        })
    }

    fn share<'a>(&self, items: impl Iterator<Item = &'a ChatMessage>) -> Share {
        let mut share = Share::default();
        for item in items {
            let parts = parts(item);
            if parts.is_empty() {
                continue;
            }
            share.sent += 1;
            if parts.iter().all(|p| self.has(p)) {
                share.reached += 1;
            }
        }
        share
    }
}

/// Counts the system messages, tool results and user turns of `client`
/// that are found in `received` (the conversation an upstream got, in
/// OpenAI shape, as [`crate::Validated::messages`] gives it for
/// the other dialects).
pub fn survival(client: &ChatRequest, received: &[ChatMessage]) -> Survival {
    let r = Received::new(received);
    let of = |roles: &'static [&'static str]| {
        r.share(
            client
                .messages
                .iter()
                .filter(move |m| roles.contains(&m.role.as_str())),
        )
    };
    Survival {
        system: of(&["system", "developer"]),
        tool_results: of(&["tool", "function"]),
        user_turns: of(&["user"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(messages: Value) -> ChatRequest {
        serde_json::from_value(json!({"model": "m", "messages": messages})).unwrap()
    }

    fn conversation() -> Value {
        json!([
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "system", "content": "The user's sister is called Oriane."},
            {"role": "user", "content": "What's the weather in Lyon?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 24 degrees in Lyon."},
            {"role": "assistant", "content": "It is sunny."},
            {"role": "user", "content": [{"type": "text", "text": "yes"}, {"type": "text", "text": "What is my sister called?"}]}
        ])
    }

    #[test]
    fn everything_survives_the_full_history() {
        let client = request(conversation());
        let s = survival(&client, &client.messages);
        assert!(s.complete());
        assert_eq!(
            s.system,
            Share {
                sent: 2,
                reached: 2
            }
        );
        assert_eq!(
            s.tool_results,
            Share {
                sent: 1,
                reached: 1
            }
        );
        assert_eq!(
            s.user_turns,
            Share {
                sent: 2,
                reached: 2
            }
        );
        assert_eq!(s.user_turns.rate(), Some(1.0));
    }

    #[test]
    fn a_gateway_that_drops_history_or_system_messages_is_caught() {
        let client = request(conversation());
        // The stateless projection: system messages and the last user turn
        // (what the `stateless` reference proxy forwards).
        let raw = conversation();
        let all = raw.as_array().unwrap();
        let stateless: Vec<ChatMessage> = [&all[0], &all[1], &all[6]]
            .into_iter()
            .map(|m| serde_json::from_value(m.clone()).unwrap())
            .collect();
        let s = survival(&client, &stateless);
        assert_eq!(
            s.system,
            Share {
                sent: 2,
                reached: 2
            }
        );
        assert_eq!(
            s.tool_results,
            Share {
                sent: 1,
                reached: 0
            }
        );
        assert_eq!(
            s.user_turns,
            Share {
                sent: 2,
                reached: 1
            }
        );
        // Only the last system message kept, as public gateways have done.
        let last_system: Vec<ChatMessage> = client.messages.iter().skip(1).cloned().collect();
        let s = survival(&client, &last_system);
        assert_eq!(
            s.system,
            Share {
                sent: 2,
                reached: 1
            }
        );
        assert!(!s.complete());
        assert_eq!(Share::default().rate(), None);
    }

    #[test]
    fn content_counts_wherever_it_went_but_not_in_assistant_text() {
        let client = request(conversation());
        // Everything merged into one user message, the tool result quoted.
        let merged = vec![ChatMessage::new(
            "user",
            "You are a helpful assistant.\nThe user's sister is called Oriane.\nWhat's the weather in Lyon?\nTool result for call c1:\nSunny, 24 degrees in Lyon.\nyes\nWhat is my sister called?",
        )];
        assert!(survival(&client, &merged).complete());
        // The same text inside an assistant message does not count.
        let echoed = vec![ChatMessage::new("assistant", merged[0].text().as_str())];
        assert_eq!(survival(&client, &echoed).user_turns.reached, 0);
        // A short part must match a whole line, not a word inside one.
        let inside = vec![
            ChatMessage::new("user", "yesterday was fine"),
            ChatMessage::new("user", "What is my sister called?"),
        ];
        assert_eq!(
            survival(&client, &inside).user_turns,
            Share {
                sent: 2,
                reached: 0
            }
        );
    }

    #[test]
    fn shares_add_up_over_requests() {
        let mut total = Survival::default();
        let client = request(conversation());
        total += survival(&client, &client.messages);
        total += survival(&client, &[]);
        assert_eq!(
            total.user_turns,
            Share {
                sent: 4,
                reached: 2
            }
        );
        assert_eq!(total.user_turns.rate(), Some(0.5));
    }
}
