//! The OpenAI Responses API (`POST /v1/responses`) as every end of the
//! harness speaks it: an application sends only the turn's new input and
//! `previous_response_id`, and the server keeps the conversation (`store:
//! true`). This module holds the pure parts shared by the driver, the
//! simulated upstreams and the reference proxies: input items to and from
//! chat messages, the response body, its text, and the 400 a server
//! answers for a response id it does not know.
//!
//! Plain (not streamed) responses only; a streamed Responses request is
//! refused by the harness's own servers, and the driver does not send one.

use crate::openai::ChatMessage;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The path of the endpoint under `/v1`.
pub const PATH: &str = "/responses";

/// The input items of `messages` (chat messages, in order): text messages
/// as `{"role", "content"}`, an assistant's tool calls as `function_call`
/// items, a tool message as a `function_call_output` item.
pub fn input_items(messages: &[ChatMessage]) -> Vec<Value> {
    let mut items = Vec::with_capacity(messages.len());
    for m in messages {
        if m.role == "tool" {
            items.push(json!({
                "type": "function_call_output",
                "call_id": m.tool_call_id.clone().unwrap_or_default(),
                "output": m.text_cow(),
            }));
            continue;
        }
        let calls = m.tool_calls.as_ref().and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            items.push(json!({
                "type": "function_call",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
            }));
        }
        let text = m.text_cow();
        if calls.is_none() || !text.is_empty() {
            items.push(json!({"role": m.role, "content": text}));
        }
    }
    items
}

/// A request body: `input` after `previous` (when given), with the
/// system prompt as `instructions` (which a server does not carry over from
/// an earlier response, so a client sends it every time).
pub fn request_body(
    model: &str,
    instructions: &str,
    input: Vec<Value>,
    previous: Option<&str>,
) -> Value {
    let mut body = json!({
        "model": model,
        "instructions": instructions,
        "input": input,
        "store": true,
    });
    if let Some(id) = previous {
        body["previous_response_id"] = Value::from(id);
    }
    body
}

/// The text of an item's `content`: a string, or its text parts joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// The chat messages of a request's `input` (a string, or a list of
/// items), in order: messages, `function_call` and
/// `function_call_output` items; other item types are passed over.
///
/// # Errors
/// An `input` that is neither a string nor a list, or a message whose role
/// is not a message role, in words.
pub fn messages_of(input: &Value) -> Result<Vec<ChatMessage>, String> {
    let items = match input {
        Value::String(text) => return Ok(vec![ChatMessage::new("user", text)]),
        Value::Array(items) => items,
        Value::Null => return Ok(Vec::new()),
        _ => return Err("input must be a string or a list of items".into()),
    };
    let mut messages = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "message" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("");
                let role = match role {
                    "developer" => "system",
                    "user" | "assistant" | "system" => role,
                    other => {
                        return Err(format!("input[{i}].role {other:?} is not a message role"))
                    }
                };
                let text = content_text(item.get("content").unwrap_or(&Value::Null));
                messages.push(ChatMessage::new(role, &text));
            }
            "function_call" => messages.push(ChatMessage {
                content: Value::Null,
                tool_calls: Some(json!([{
                    "id": item["call_id"],
                    "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]},
                }])),
                ..ChatMessage::new("assistant", "")
            }),
            "function_call_output" => messages.push(ChatMessage {
                tool_call_id: item["call_id"].as_str().map(str::to_string),
                ..ChatMessage::new("tool", &content_text(&item["output"]))
            }),
            // Items the simulated model reads nothing from (reasoning, a
            // built-in tool's call, an item reference) are passed over, as
            // a provider that accepts them would not fail the request.
            _ => {}
        }
    }
    Ok(messages)
}

/// Most responses a [`Store`] keeps.
pub const MAX_STORED: usize = 200_000;

/// Most bytes of message text (plus `MESSAGE_OVERHEAD` per message) a
/// [`Store`] keeps: whatever a peer sends, the store stays under it.
pub const MAX_STORED_BYTES: usize = 256 * 1024 * 1024;

/// What one stored message costs beside its text, for the byte budget.
const MESSAGE_OVERHEAD: usize = 128;

/// Most responses a chain may link back through; a longer one is treated
/// as unknown (a conversation of 10,000 turns is far past any dataset).
pub const MAX_CHAIN: usize = 10_000;

/// One stored response: the one it followed, the messages it added (the
/// request's new input, then the answer), and what they cost.
#[derive(Debug)]
struct Stored {
    previous: Option<String>,
    added: Vec<ChatMessage>,
    bytes: usize,
}

/// The entries, their order, and the bytes they hold.
#[derive(Debug, Default)]
struct Entries {
    map: HashMap<String, Stored>,
    order: VecDeque<String>,
    bytes: usize,
}

/// Stored responses, bounded: each keeps the response it followed and the
/// messages it added, so a conversation costs its messages once, however
/// many responses continue it. At most [`MAX_STORED`] responses and
/// [`MAX_STORED_BYTES`], oldest out first: an evicted id is unknown, as an
/// expired one is at the real API.
#[derive(Debug, Default)]
pub struct Store {
    entries: Mutex<Entries>,
    next: AtomicU64,
}

impl Store {
    /// The conversation up to and including response `id`, oldest message
    /// first; `None` when this store does not know `id` or a response of
    /// its chain, or the chain is longer than [`MAX_CHAIN`].
    pub fn chain(&self, id: &str) -> Option<Vec<ChatMessage>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut parts = Vec::new();
        let mut at = Some(id);
        for _ in 0..MAX_CHAIN {
            let Some(key) = at else {
                return Some(parts.into_iter().rev().flatten().cloned().collect());
            };
            let stored = entries.map.get(key)?;
            parts.push(&stored.added);
            at = stored.previous.as_deref();
        }
        None
    }

    /// Stores a response and returns its id (`resp_` and the role's
    /// initial, so the two upstreams of a pair never share one).
    pub fn store(&self, prefix: &str, previous: Option<String>, added: Vec<ChatMessage>) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("resp_{prefix}{n}");
        let bytes = added
            .iter()
            .map(|m| m.text_cow().len() + MESSAGE_OVERHEAD)
            .sum::<usize>()
            + previous.as_ref().map_or(0, String::len);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        while !entries.order.is_empty()
            && (entries.order.len() >= MAX_STORED || entries.bytes + bytes > MAX_STORED_BYTES)
        {
            if let Some(oldest) = entries.order.pop_front() {
                if let Some(gone) = entries.map.remove(&oldest) {
                    entries.bytes -= gone.bytes;
                }
            }
        }
        entries.bytes += bytes;
        entries.map.insert(
            id.clone(),
            Stored {
                previous,
                added,
                bytes,
            },
        );
        entries.order.push_back(id.clone());
        id
    }
}

impl Store {
    /// The response to a request that continued `previous` with
    /// `new_input` and was answered by `chat_completion` (a chat completion
    /// body; its text, empty when it has none): stored under a new id
    /// starting with `prefix`, and returned as the response body.
    pub fn answer(
        &self,
        prefix: &str,
        previous: Option<String>,
        mut new_input: Vec<ChatMessage>,
        model: &str,
        chat_completion: &[u8],
    ) -> Value {
        let completion = serde_json::from_slice::<Value>(chat_completion).unwrap_or_default();
        let text = completion
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let tokens = |key: &str| {
            completion
                .pointer(&format!("/usage/{key}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let usage = (tokens("prompt_tokens"), tokens("completion_tokens"));
        let created = completion
            .get("created")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        new_input.push(ChatMessage::new("assistant", &text));
        let id = self.store(prefix, previous.clone(), new_input);
        response_body(&id, model, &text, previous.as_deref(), usage, created)
    }
}

/// A completed response with `text` as its one message, `usage` its
/// (input, output) tokens, `created_at` its Unix time.
pub fn response_body(
    id: &str,
    model: &str,
    text: &str,
    previous: Option<&str>,
    usage: (u64, u64),
    created_at: u64,
) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": "completed",
        "error": null,
        "incomplete_details": null,
        "model": model,
        "previous_response_id": previous,
        "store": true,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": usage.0,
            "output_tokens": usage.1,
            "total_tokens": usage.0 + usage.1,
        },
        "output": [{
            "type": "message",
            "id": format!("msg_{id}"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }],
    })
}

/// The text of a response body: its `output_text` parts, joined; `None`
/// when it has no message output.
pub fn output_text(body: &Value) -> Option<String> {
    let parts: Vec<&str> = body
        .get("output")?
        .as_array()?
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.concat())
}

/// The 400 the API answers for a `previous_response_id` it does not know
/// (never stored, stored elsewhere, or expired): status and body.
pub fn not_found(id: &str) -> (u16, Value) {
    (
        400,
        json!({"error": {
            "message": format!("Previous response with id '{id}' not found."),
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_goes_to_items_and_back() {
        let messages = vec![
            ChatMessage::new("system", "Be brief."),
            ChatMessage::new("user", "Open my note."),
            ChatMessage {
                content: Value::Null,
                tool_calls: Some(
                    json!([{"id": "functions.read:4", "type": "function", "function": {"name": "read", "arguments": "{}"}}]),
                ),
                ..ChatMessage::new("assistant", "")
            },
            ChatMessage {
                tool_call_id: Some("functions.read:4".into()),
                ..ChatMessage::new("tool", "My code is 1234567.")
            },
            ChatMessage::new("assistant", "Noted."),
        ];
        let items = input_items(&messages);
        assert_eq!(items.len(), 5);
        assert_eq!(items[2]["type"], "function_call");
        assert_eq!(items[3]["type"], "function_call_output");
        let back = messages_of(&Value::Array(items)).unwrap();
        assert_eq!(back, messages);
        assert_eq!(
            messages_of(&json!("hello")).unwrap(),
            vec![ChatMessage::new("user", "hello")]
        );
        assert_eq!(
            messages_of(&json!([{"type": "reasoning", "summary": []}])),
            Ok(Vec::new())
        );
        assert!(messages_of(&json!(7)).is_err());
        assert!(messages_of(&json!([{"role": "tool", "content": "x"}])).is_err());
        let parts = json!([{"role": "developer", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]}]);
        assert_eq!(
            messages_of(&parts).unwrap(),
            vec![ChatMessage::new("system", "ab")]
        );
    }

    #[test]
    fn a_chain_is_rebuilt_oldest_first_and_an_unknown_id_is_none() {
        let store = Store::default();
        let first = store.store(
            "p",
            None,
            vec![
                ChatMessage::new("user", "a"),
                ChatMessage::new("assistant", "b"),
            ],
        );
        let second = store.store(
            "p",
            Some(first.clone()),
            vec![ChatMessage::new("user", "c")],
        );
        let texts: Vec<String> = store
            .chain(&second)
            .unwrap()
            .iter()
            .map(|m| m.text_cow().into_owned())
            .collect();
        assert_eq!(texts, ["a", "b", "c"]);
        assert_eq!(store.chain("resp_f1"), None);
        assert!(first.starts_with("resp_p"));
    }

    #[test]
    fn the_store_keeps_to_its_byte_budget_and_chain_bound() {
        let store = Store::default();
        let big = "x".repeat(MAX_STORED_BYTES / 3);
        let ids: Vec<String> = (0..4)
            .map(|_| store.store("p", None, vec![ChatMessage::new("user", &big)]))
            .collect();
        // The oldest went to make room; the newest are still there.
        assert_eq!(store.chain(&ids[0]), None);
        assert!(store.chain(&ids[3]).is_some());
        assert!(store.entries.lock().unwrap().bytes <= MAX_STORED_BYTES);
        // A chain longer than the bound is unknown.
        let mut last = None;
        for _ in 0..=MAX_CHAIN {
            last = Some(store.store("p", last, vec![ChatMessage::new("user", "a")]));
        }
        assert_eq!(store.chain(last.as_deref().unwrap()), None);
    }

    #[test]
    fn a_response_carries_its_text_and_an_unknown_id_is_a_400() {
        let body = response_body(
            "resp_1",
            "m",
            "Your code is 1234567.",
            Some("resp_0"),
            (10, 6),
            0,
        );
        assert_eq!(body["usage"]["total_tokens"], 16);
        assert_eq!(output_text(&body).as_deref(), Some("Your code is 1234567."));
        assert_eq!(output_text(&json!({"output": []})), None);
        let request = request_body(
            "m",
            "Be brief.",
            vec![json!({"role": "user", "content": "hi"})],
            Some("resp_1"),
        );
        assert_eq!(request["previous_response_id"], "resp_1");
        assert!(request_body("m", "", Vec::new(), None)
            .get("previous_response_id")
            .is_none());
        let (status, error) = not_found("resp_9");
        assert_eq!(status, 400);
        assert_eq!(error["error"]["code"], "previous_response_not_found");
    }
}
