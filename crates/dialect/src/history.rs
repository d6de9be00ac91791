//! The conversation of an OpenAI request, rearranged for a provider whose
//! API is stricter about its shape, without losing a turn.
//!
//! Both Anthropic and Gemini keep the system instruction out of the
//! messages, want user and assistant turns to alternate, start with the
//! user, and pair every tool result with a tool call of the assistant turn
//! right before it. OpenAI histories break each rule in practice (a system
//! message mid-conversation, two user messages in a row, a tool result whose
//! call was trimmed away). [`Plan::of`] reads the client's `messages` into
//! turns that obey the rules, and records a [`Note`] for each change:
//!
//! - every system (or developer) message becomes one system text, in order;
//! - consecutive messages of one side merge into one turn (a `tool` message
//!   is on the user side), their parts kept in order, tool results first;
//! - a tool result that answers no call of the turn before becomes user
//!   text that names it; a call without a result gets a placeholder error
//!   result, so the pairing holds and nothing the client sent is dropped;
//! - a conversation that would start with the assistant gets a placeholder
//!   user turn first; a turn with no content gets a placeholder text.

use super::Note;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The text of the user turn put before a conversation that starts with
/// the assistant (or has no turn at all).
pub(crate) const LEADING_USER_TEXT: &str = "(conversation continues)";

/// The text of a turn that had no content.
pub(crate) const EMPTY_TEXT: &str = "(empty message)";

/// The result given to a tool call the client sent no result for.
pub(crate) const UNANSWERED_TEXT: &str = "(no result was provided for this tool call)";

/// A tool result that answers no call of the turn before, as user text.
pub(crate) fn orphan_text(id: &str, text: &str) -> String {
    if id.is_empty() {
        format!("Tool result:\n{text}")
    } else {
        format!("Tool result for call {id}:\n{text}")
    }
}

/// Who speaks a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    User,
    Assistant,
}

impl Side {
    fn as_str(self) -> &'static str {
        match self {
            Side::User => "user",
            Side::Assistant => "assistant",
        }
    }
}

/// A tool call of an assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    /// A JSON object.
    pub arguments: Value,
}

/// A tool result of a user turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    pub id: String,
    /// The name of the call it answers (filled in by the pairing).
    pub name: String,
    pub text: String,
    /// A placeholder for a missing result.
    pub is_error: bool,
}

/// One piece of a turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Text(String),
    /// An image by URL (`data:` or `http(s):`).
    Image(String),
    Call(Call),
    Result(ToolResult),
}

/// One turn: a side and its items, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    pub side: Side,
    pub items: Vec<Item>,
}

/// The whole conversation, rearranged.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Plan {
    /// Every non-empty system or developer text, in order.
    pub system: Vec<String>,
    /// Alternating turns, starting with the user.
    pub turns: Vec<Turn>,
    pub notes: Vec<Note>,
}

fn role(message: &Value) -> &str {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The text of a content value: the string, or the text parts joined by
/// newlines ([`cb_wire::content::plain_text`]); empty when absent.
fn text_of(content: Option<&Value>) -> String {
    content
        .map(cb_wire::content::plain_text)
        .unwrap_or_default()
        .into_owned()
}

fn has_text(s: &str) -> bool {
    !s.trim().is_empty()
}

fn unsupported(kind: &str, notes: &mut Vec<Note>) -> Item {
    notes.push(Note::UnsupportedPart {
        part: kind.to_string(),
    });
    Item::Text(format!("[unsupported content part: {kind}]"))
}

/// The items of a user or assistant message's `content`.
fn content_items(content: Option<&Value>, notes: &mut Vec<Note>) -> Vec<Item> {
    let mut items = Vec::new();
    match content {
        Some(Value::String(s)) if has_text(s) => items.push(Item::Text(s.clone())),
        Some(Value::Array(parts)) => {
            for part in parts {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("text");
                match kind {
                    "text" | "refusal" => {
                        let text = part.get(kind).and_then(Value::as_str).unwrap_or_default();
                        if has_text(text) {
                            items.push(Item::Text(text.to_string()));
                        }
                    }
                    "image_url" => {
                        let url = part
                            .get("image_url")
                            .and_then(|i| i.get("url").or(Some(i)))
                            .and_then(Value::as_str);
                        match url {
                            Some(url) => items.push(Item::Image(url.to_string())),
                            None => items.push(unsupported("image_url without url", notes)),
                        }
                    }
                    other => items.push(unsupported(other, notes)),
                }
            }
        }
        _ => {}
    }
    items
}

/// The tool calls of an assistant message, arguments parsed into objects.
fn calls(message: &Value, notes: &mut Vec<Note>) -> Vec<Item> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_string);
            let function = call.get("function");
            let name = function
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("function")
                .to_string();
            let raw = function.and_then(|f| f.get("arguments"));
            let arguments = match raw {
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(Value::Object(o)) => Value::Object(o),
                    Ok(other) => {
                        notes.push(Note::ToolArgumentsRewritten { id: id.clone() });
                        wrap(other)
                    }
                    Err(_) if s.trim().is_empty() => Value::Object(Map::new()),
                    Err(_) => {
                        notes.push(Note::ToolArgumentsRewritten { id: id.clone() });
                        wrap(Value::String(s.clone()))
                    }
                },
                Some(Value::Object(o)) => Value::Object(o.clone()),
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(other) => {
                    notes.push(Note::ToolArgumentsRewritten { id: id.clone() });
                    wrap(other.clone())
                }
            };
            Item::Call(Call {
                id,
                name,
                arguments,
            })
        })
        .collect()
}

fn wrap(value: Value) -> Value {
    let mut o = Map::new();
    o.insert("value".to_string(), value);
    Value::Object(o)
}

/// One client message read as a side and items, or a system text.
enum Read {
    System(String),
    Turn(Side, Vec<Item>),
}

fn read(message: &Value, notes: &mut Vec<Note>) -> Read {
    let content = message.get("content");
    match role(message) {
        "system" | "developer" => Read::System(text_of(content)),
        "assistant" => {
            let mut items = content_items(content, notes);
            items.extend(calls(message, notes));
            Read::Turn(Side::Assistant, items)
        }
        "tool" | "function" => {
            let id = message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            Read::Turn(
                Side::User,
                vec![Item::Result(ToolResult {
                    id,
                    name: String::new(),
                    text: text_of(content),
                    is_error: false,
                })],
            )
        }
        "user" => Read::Turn(Side::User, content_items(content, notes)),
        other => {
            notes.push(Note::UnsupportedPart {
                part: format!("role {other:?} (sent as user)"),
            });
            Read::Turn(Side::User, content_items(content, notes))
        }
    }
}

impl Plan {
    /// Reads and rearranges the client's `messages`.
    pub fn of(messages: &[Value]) -> Plan {
        let mut plan = Plan::default();
        let mut counts: Vec<usize> = Vec::new();
        let mut moved = 0;
        for message in messages {
            match read(message, &mut plan.notes) {
                Read::System(text) => {
                    if !plan.turns.is_empty() {
                        moved += 1;
                    }
                    if has_text(&text) {
                        plan.system.push(text);
                    }
                }
                Read::Turn(side, items) => match plan.turns.last_mut() {
                    Some(last) if last.side == side => {
                        last.items.extend(items);
                        if let Some(c) = counts.last_mut() {
                            *c += 1;
                        }
                    }
                    _ => {
                        plan.turns.push(Turn { side, items });
                        counts.push(1);
                    }
                },
            }
        }
        if moved > 0 {
            plan.notes.push(Note::SystemMoved { count: moved });
        }
        if messages
            .iter()
            .any(|m| m.get("name").is_some_and(Value::is_string))
        {
            // Neither dialect names the participants of a turn.
            plan.notes.push(Note::DroppedParameter {
                name: "messages[].name".into(),
            });
        }
        for (turn, count) in plan.turns.iter().zip(&counts) {
            if *count > 1 {
                plan.notes.push(Note::MergedMessages {
                    role: turn.side.as_str().to_string(),
                    count: *count,
                });
            }
        }
        plan.pair_tools();
        plan.fix_ends();
        plan
    }

    /// Pairs each user turn's tool results with the calls of the assistant
    /// turn before it; see the module doc.
    fn pair_tools(&mut self) {
        let mut i = 0;
        while i < self.turns.len() {
            if self.turns[i].side == Side::Assistant {
                let calls: Vec<Call> = self.turns[i]
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        Item::Call(c) => Some(c.clone()),
                        _ => None,
                    })
                    .collect();
                if !calls.is_empty() && self.turns.get(i + 1).is_none() {
                    self.turns.push(Turn {
                        side: Side::User,
                        items: Vec::new(),
                    });
                }
                if let Some(next) = self.turns.get_mut(i + 1) {
                    let notes = pair(next, &calls);
                    self.notes.extend(notes);
                }
            } else if i == 0 || self.turns[i - 1].side != Side::Assistant {
                // A user turn after nothing: every result in it is orphaned.
                let notes = pair(&mut self.turns[i], &[]);
                self.notes.extend(notes);
            }
            i += 1;
        }
    }

    /// A leading user turn, and content in every turn.
    fn fix_ends(&mut self) {
        if self.turns.first().is_none_or(|t| t.side == Side::Assistant) {
            self.turns.insert(
                0,
                Turn {
                    side: Side::User,
                    items: vec![Item::Text(LEADING_USER_TEXT.to_string())],
                },
            );
            self.notes.push(Note::LeadingUserInserted);
        }
        for turn in &mut self.turns {
            if turn.items.is_empty() {
                turn.items.push(Item::Text(EMPTY_TEXT.to_string()));
                self.notes.push(Note::EmptyContent {
                    role: turn.side.as_str().to_string(),
                });
            }
        }
    }
}

/// Pairs `turn`'s tool results with `calls`: a result answering a call gets
/// the call's name; any other becomes text; a call left unanswered gets a
/// placeholder result. Results go first in the turn, in order.
fn pair(turn: &mut Turn, calls: &[Call]) -> Vec<Note> {
    let mut notes = Vec::new();
    let mut answered: HashSet<&str> = HashSet::new();
    let mut results = Vec::new();
    let mut rest = Vec::new();
    for item in std::mem::take(&mut turn.items) {
        match item {
            Item::Result(mut r) => {
                let call = calls
                    .iter()
                    .find(|c| c.id == r.id && !answered.contains(c.id.as_str()));
                match call {
                    Some(call) => {
                        answered.insert(call.id.as_str());
                        r.name.clone_from(&call.name);
                        results.push(Item::Result(r));
                    }
                    None => {
                        notes.push(Note::OrphanToolResult { id: r.id.clone() });
                        rest.push(Item::Text(orphan_text(&r.id, &r.text)));
                    }
                }
            }
            other => rest.push(other),
        }
    }
    for call in calls {
        if !answered.contains(call.id.as_str()) {
            notes.push(Note::UnansweredToolCall {
                id: call.id.clone(),
            });
            results.push(Item::Result(ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                text: UNANSWERED_TEXT.to_string(),
                is_error: true,
            }));
        }
    }
    results.extend(rest);
    turn.items = results;
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(turn: &Turn) -> Vec<String> {
        turn.items
            .iter()
            .map(|i| match i {
                Item::Text(t) => t.clone(),
                Item::Image(u) => format!("image:{u}"),
                Item::Call(c) => format!("call:{}:{}", c.id, c.name),
                Item::Result(r) => format!("result:{}:{}:{}", r.id, r.name, r.text),
            })
            .collect()
    }

    fn call(id: &str, name: &str, args: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
    }

    #[test]
    fn system_messages_are_all_kept_and_turns_merge() {
        let plan = Plan::of(&[
            json!({"role": "system", "content": "one"}),
            json!({"role": "user", "content": "a", "name": "ana"}),
            json!({"role": "developer", "content": [{"type": "text", "text": "two"}]}),
            json!({"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "image_url", "image_url": {"url": "https://x/i.png"}}]}),
            json!({"role": "assistant", "content": "c"}),
            json!({"role": "assistant", "content": "d"}),
            json!({"role": "system", "content": "  "}),
            json!({"role": "user", "content": "e"}),
        ]);
        assert_eq!(plan.system, vec!["one", "two"]);
        assert_eq!(plan.turns.len(), 3);
        assert_eq!(
            texts(&plan.turns[0]),
            vec!["a", "b", "image:https://x/i.png"]
        );
        assert_eq!(texts(&plan.turns[1]), vec!["c", "d"]);
        assert!(plan.notes.contains(&Note::SystemMoved { count: 2 }));
        assert!(plan.notes.contains(&Note::DroppedParameter {
            name: "messages[].name".into()
        }));
        assert!(plan.notes.contains(&Note::MergedMessages {
            role: "user".into(),
            count: 2
        }));
    }

    #[test]
    fn tool_results_pair_with_the_calls_before_them() {
        let plan = Plan::of(&[
            json!({"role": "user", "content": "q"}),
            json!({"role": "assistant", "content": null, "tool_calls": [call("c1", "f", "{\"x\":1}"), call("c2", "g", "")]}),
            json!({"role": "user", "content": "interjection"}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "r1"}),
            json!({"role": "tool", "tool_call_id": "zz", "content": "stray"}),
            json!({"role": "assistant", "content": "done", "tool_calls": [call("c3", "h", "not json")]}),
        ]);
        let turns: Vec<Vec<String>> = plan.turns.iter().map(texts).collect();
        assert_eq!(
            turns,
            vec![
                vec!["q".to_string()],
                vec!["call:c1:f".into(), "call:c2:g".into()],
                vec![
                    "result:c1:f:r1".into(),
                    format!("result:c2:g:{UNANSWERED_TEXT}"),
                    "interjection".into(),
                    orphan_text("zz", "stray"),
                ],
                vec!["done".into(), "call:c3:h".into()],
                vec![format!("result:c3:h:{UNANSWERED_TEXT}")],
            ]
        );
        assert!(plan
            .notes
            .contains(&Note::OrphanToolResult { id: "zz".into() }));
        assert!(plan
            .notes
            .contains(&Note::UnansweredToolCall { id: "c2".into() }));
        assert!(plan
            .notes
            .contains(&Note::ToolArgumentsRewritten { id: "c3".into() }));
        let Item::Call(c3) = &plan.turns[3].items[1] else {
            panic!("not a call")
        };
        assert_eq!(c3.arguments, json!({"value": "not json"}));
    }

    #[test]
    fn a_leading_assistant_and_empty_turns_get_placeholders() {
        let plan = Plan::of(&[
            json!({"role": "assistant", "content": "Hi, how can I help?"}),
            json!({"role": "user", "content": ""}),
        ]);
        assert_eq!(texts(&plan.turns[0]), vec![LEADING_USER_TEXT]);
        assert_eq!(texts(&plan.turns[1]), vec!["Hi, how can I help?"]);
        assert_eq!(texts(&plan.turns[2]), vec![EMPTY_TEXT]);
        assert!(plan.notes.contains(&Note::LeadingUserInserted));
        // Only system messages: still one user turn to answer.
        let only = Plan::of(&[json!({"role": "system", "content": "s"})]);
        assert_eq!(only.turns.len(), 1);
        // A tool result with nothing before it is user text.
        let orphan = Plan::of(&[json!({"role": "tool", "tool_call_id": "c", "content": "r"})]);
        assert_eq!(texts(&orphan.turns[0]), vec![orphan_text("c", "r")]);
    }
}
