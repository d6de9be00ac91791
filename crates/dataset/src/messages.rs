//! The messages a chat client sends for one turn of a conversation, in
//! OpenAI shape: one definition for the driver (which sends them) and the
//! simulated upstreams (which compare what reached them with what the
//! client sent, `cb_dialect::survival`).
//!
//! A request carries the client's system prompt, the conversation's own
//! system messages (rich datasets), every earlier turn (the user's message,
//! its tool call and result when it has one, the reply) and the turn's user
//! message, followed by its tool call and result when it has one: the
//! request a client sends once the tool has answered.

use super::{Conversation, ToolExchange};
use cb_wire::openai::{ChatMessage, ChatRequest};
use serde_json::{json, Value};

/// The assistant message that makes `tool`'s call (content null).
pub fn tool_call_message(tool: &ToolExchange) -> ChatMessage {
    ChatMessage {
        content: Value::Null,
        tool_calls: Some(json!([{
            "id": tool.id,
            "type": "function",
            "function": {"name": tool.name, "arguments": tool.arguments},
        }])),
        ..ChatMessage::new("assistant", "")
    }
}

/// The `tool` message that answers `tool`'s call.
pub fn tool_result_message(tool: &ToolExchange) -> ChatMessage {
    ChatMessage {
        tool_call_id: Some(tool.id.clone()),
        ..ChatMessage::new("tool", &tool.result)
    }
}

/// The messages of the request for turn `index` (from 0) of `conversation`,
/// with `reply(k)` as the assistant's reply to earlier turn `k`.
pub fn client_messages<'a>(
    conversation: &Conversation,
    system_prompt: &str,
    index: usize,
    reply: impl Fn(usize) -> &'a str,
) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(4 * index + 4 + conversation.system.len());
    messages.push(ChatMessage::new("system", system_prompt));
    for text in &conversation.system {
        messages.push(ChatMessage::new("system", text));
    }
    for (k, turn) in conversation.turns.iter().enumerate().take(index + 1) {
        messages.push(ChatMessage::new("user", &turn.user));
        if let Some(tool) = &turn.tool {
            messages.push(tool_call_message(tool));
            messages.push(tool_result_message(tool));
        }
        if k < index {
            messages.push(ChatMessage::new("assistant", reply(k)));
        }
    }
    messages
}

/// What the client sent for turn `turn` (from 1) of `conversation`, as far
/// as `cb_dialect::survival` reads it (the replies are left empty:
/// assistant text is not counted).
pub fn client_request(conversation: &Conversation, system_prompt: &str, turn: u32) -> ChatRequest {
    let index = (turn as usize).clamp(1, conversation.n_turns().max(1)) - 1;
    ChatRequest {
        model: String::new(),
        messages: client_messages(conversation, system_prompt, index, |_| ""),
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    }
}

/// The index of the message of `messages` (as [`client_messages`] builds
/// them) that states the conversation's anchor: the first user message, a
/// system message, or the first tool result, as `conversation` places it.
pub fn anchor_message(conversation: &Conversation, messages: &[ChatMessage]) -> Option<usize> {
    let role = match conversation.anchor_place {
        super::AnchorPlace::User => "user",
        super::AnchorPlace::System => "system",
        super::AnchorPlace::ToolResult => "tool",
    };
    let variants = &conversation.anchor.variants;
    messages
        .iter()
        .position(|m| m.role == role && variants.iter().any(|v| m.text_cow().contains(v.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Anchor, AnchorPlace, Category, Turn, TurnKind};

    fn conversation() -> Conversation {
        let turn = |kind, user: &str, tool: Option<ToolExchange>| Turn {
            kind,
            user: user.into(),
            assistant: Some("ok".into()),
            distractor: None,
            tool: tool.map(Box::new),
            asks: None,
        };
        Conversation {
            id: "c1".into(),
            anchor: Anchor {
                category: Category::PersonName,
                subject: "sister's name".into(),
                value: "Oriane".into(),
                variants: vec!["Oriane".into()],
            },
            turns: vec![
                turn(
                    TurnKind::Anchor,
                    "Could you open my note?",
                    Some(ToolExchange {
                        id: "call_1".into(),
                        name: "read_note".into(),
                        arguments: "{}".into(),
                        result: "My sister's name is Oriane.".into(),
                    }),
                ),
                turn(TurnKind::Probe, "What is my sister called?", None),
            ],
            system: vec!["Answer in British English.".into()],
            anchor_place: AnchorPlace::ToolResult,
        }
    }

    #[test]
    fn a_turn_with_a_tool_ends_with_its_result_and_history_keeps_it() {
        let c = conversation();
        let first = client_messages(&c, "Be brief.", 0, |_| "");
        let roles: Vec<&str> = first.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "system", "user", "assistant", "tool"]);
        assert_eq!(first[4].tool_call_id.as_deref(), Some("call_1"));
        let second = client_messages(&c, "Be brief.", 1, |_| "Noted.");
        let roles: Vec<&str> = second.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            [
                "system",
                "system",
                "user",
                "assistant",
                "tool",
                "assistant",
                "user"
            ]
        );
        assert_eq!(second[5].text(), "Noted.");
        let wire = serde_json::to_value(&second[3]).unwrap();
        assert_eq!(wire["content"], Value::Null);
        assert_eq!(wire["tool_calls"][0]["function"]["name"], "read_note");
        assert_eq!(anchor_message(&c, &second), Some(4));
        assert_eq!(
            client_request(&c, "Be brief.", 2).messages,
            client_messages(&c, "Be brief.", 1, |_| "")
        );
    }
}
