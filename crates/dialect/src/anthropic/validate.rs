//! Strict validation of a `POST /v1/messages` request, in the order the API
//! checks: the version header, the body's fields and types, each message and
//! block, then the conversation's shape (first message from the user, roles,
//! every `tool_use` answered by a `tool_result` in the next message and
//! every `tool_result` answering the message before, content in every
//! message but a final assistant prefill).
//!
//! A valid request comes back as [`Validated`]: the conversation in OpenAI
//! shape, so the simulated model and the conversation index read it as they
//! read an OpenAI request.

use super::blocks::{self, at, object, only, Block, Speaker};
use super::{invalid, params, Rules};
use crate::grouping::Grouper;
use crate::{Rejection, Validated};
use cb_wire::openai::ChatMessage;
use serde_json::Value;

/// Top-level fields the API accepts.
const FIELDS: [&str; 14] = [
    "model",
    "messages",
    "max_tokens",
    "system",
    "metadata",
    "stop_sequences",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "tools",
    "tool_choice",
    "thinking",
    "service_tier",
];

/// `anthropic-version` values the API knows.
const VERSIONS: [&str; 2] = ["2023-06-01", "2023-01-01"];

/// A checked message.
struct Message {
    assistant: bool,
    blocks: Vec<Block>,
}

/// Validates a Messages request: `version` is the `anthropic-version`
/// header, `body` the raw body.
///
/// # Errors
/// The API's 400 for the first rule the request breaks.
pub fn validate(version: Option<&str>, body: &[u8], rules: &Rules) -> Result<Validated, Rejection> {
    match version.map(str::trim) {
        None | Some("") => return Err(invalid("anthropic-version: header is required".into())),
        Some(v) if !VERSIONS.contains(&v) => {
            return Err(invalid(format!(
                "anthropic-version: {v:?} is not a valid version"
            )))
        }
        Some(_) => {}
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        invalid(format!(
            "There was an error parsing the body of your request: {e}"
        ))
    })?;
    let top = value.as_object().ok_or_else(|| {
        invalid("Input should be a valid dictionary or object to extract fields from".into())
    })?;
    if let Some(key) = top.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(at(key, "Extra inputs are not permitted"));
    }
    let model = match top.get("model") {
        None => return Err(at("model", "Field required")),
        Some(Value::String(m)) => m.clone(),
        Some(_) => return Err(at("model", "Input should be a valid string")),
    };
    let max_tokens = match top.get("max_tokens") {
        None => return Err(at("max_tokens", "Field required")),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n,
            _ if v.as_i64().is_some() => {
                return Err(at(
                    "max_tokens",
                    "Input should be greater than or equal to 1",
                ))
            }
            _ => return Err(at("max_tokens", "Input should be a valid integer")),
        },
    };
    params::check(top)?;
    let system = system(top.get("system"))?;
    let messages = match top.get("messages") {
        None => return Err(at("messages", "Field required")),
        Some(Value::Array(m)) => m,
        Some(_) => return Err(at("messages", "Input should be a valid list")),
    };
    if messages.is_empty() {
        return Err(at("messages", "at least one message is required"));
    }
    let checked = messages
        .iter()
        .enumerate()
        .map(|(i, m)| message(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    shape(&checked, rules)?;
    let prefill = checked.last().is_some_and(|m| m.assistant);
    Ok(Validated {
        model,
        stream: top.get("stream").and_then(Value::as_bool).unwrap_or(false),
        max_tokens: Some(max_tokens),
        messages: conversation(&system, &checked),
        prefill,
    })
}

/// The texts of `system`: a string, or a list of text blocks.
fn system(value: Option<&Value>) -> Result<Vec<String>, Rejection> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s.is_empty() => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(
                |(i, b)| match blocks::block(&format!("system.{i}"), b, Speaker::System)? {
                    Block::Text(t) => Ok(t),
                    _ => Err(at(&format!("system.{i}"), "Input should be a text block")),
                },
            )
            .collect(),
        Some(_) => Err(at(
            "system",
            "Input should be a valid string or a valid list",
        )),
    }
}

fn message(i: usize, value: &Value) -> Result<Message, Rejection> {
    let path = format!("messages.{i}");
    let m = object(&path, value)?;
    only(&path, m, &["role", "content"])?;
    let assistant = match m.get("role").and_then(Value::as_str) {
        Some("user") => false,
        Some("assistant") => true,
        Some("system") => {
            return Err(at(
                "messages",
                "Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.",
            ))
        }
        None if !m.contains_key("role") => return Err(at(&format!("{path}.role"), "Field required")),
        _ => return Err(at(&format!("{path}.role"), "Input should be 'user' or 'assistant'")),
    };
    let speaker = if assistant {
        Speaker::Assistant
    } else {
        Speaker::User
    };
    let blocks = blocks::content(&path, m.get("content"), speaker)?;
    Ok(Message { assistant, blocks })
}

fn tool_uses(m: &Message) -> Vec<&str> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id } => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

/// The conversation's shape; see the module doc.
fn shape(messages: &[Message], rules: &Rules) -> Result<(), Rejection> {
    if messages.first().is_some_and(|m| m.assistant) {
        return Err(at("messages", "first message must use the \"user\" role"));
    }
    let last = messages.len() - 1;
    for (i, m) in messages.iter().enumerate() {
        if rules.require_alternation && i > 0 && messages[i - 1].assistant == m.assistant {
            let role = if m.assistant { "assistant" } else { "user" };
            return Err(at(
                "messages",
                &format!("roles must alternate between \"user\" and \"assistant\", but found multiple \"{role}\" roles in a row"),
            ));
        }
        if m.blocks.is_empty() && !(i == last && m.assistant) {
            return Err(at(
                &format!("messages.{i}"),
                "all messages must have non-empty content except for the optional final assistant message",
            ));
        }
        // Every tool_result answers a tool_use of the message right before.
        let before: Vec<&str> = match i.checked_sub(1).map(|j| &messages[j]) {
            Some(prev) if prev.assistant => tool_uses(prev),
            _ => Vec::new(),
        };
        let mut seen_other = false;
        for (j, b) in m.blocks.iter().enumerate() {
            match b {
                Block::ToolResult { id, .. } => {
                    if !before.contains(&id.as_str()) {
                        return Err(at(
                            &format!("messages.{i}.content.{j}"),
                            &format!("unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."),
                        )
                        .on_tools());
                    }
                    if seen_other {
                        return Err(at(
                            &format!("messages.{i}"),
                            "`tool_result` blocks must come first in the message content, before any other block",
                        )
                        .on_tools());
                    }
                }
                _ => seen_other = true,
            }
        }
        // Every tool_use is answered in the next message.
        let uses = tool_uses(m);
        if !uses.is_empty() {
            let answered: Vec<&str> = messages
                .get(i + 1)
                .filter(|n| !n.assistant)
                .map(|n| {
                    n.blocks
                        .iter()
                        .filter_map(|b| match b {
                            Block::ToolResult { id, .. } => Some(id.as_str()),
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let missing: Vec<&str> = uses
                .into_iter()
                .filter(|id| !answered.contains(id))
                .collect();
            if !missing.is_empty() {
                return Err(at(
                    &format!("messages.{i}"),
                    &format!("`tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", missing.join(", ")),
                )
                .on_tools());
            }
        }
    }
    let final_message = &messages[last];
    if final_message.assistant {
        if rules.reject_prefill {
            return Err(invalid(
                "This model does not support assistant message prefill. The conversation must end with a user message.".into(),
            ));
        }
        if let Some(Block::Text(t)) = final_message.blocks.last() {
            if t.ends_with(char::is_whitespace) {
                return Err(at(
                    "messages",
                    "final assistant content cannot end with trailing whitespace",
                ));
            }
        }
    }
    Ok(())
}

/// The conversation in OpenAI shape; see [`Validated::messages`].
fn conversation(system: &[String], messages: &[Message]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = system
        .iter()
        .map(|s| ChatMessage::new("system", s))
        .collect();
    for m in messages {
        let mut group = Grouper::new(if m.assistant { "assistant" } else { "user" });
        for b in &m.blocks {
            match b {
                Block::Text(t) => group.text(t, &mut out),
                Block::Image(url) => group.image(url),
                Block::ToolResult { text, .. } => group.tool_result(text, &mut out),
                Block::ToolUse { .. } => group.tool_call(),
            }
        }
        group.flush(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::VERSION;
    use serde_json::json;

    fn check(body: Value) -> Result<Validated, Rejection> {
        check_with(body, &Rules::default())
    }

    fn check_with(body: Value, rules: &Rules) -> Result<Validated, Rejection> {
        validate(Some(VERSION), body.to_string().as_bytes(), rules)
    }

    fn refused(body: Value) -> String {
        let r = check(body).unwrap_err();
        assert_eq!(r.status, 400);
        assert_eq!(r.body["type"], "error");
        assert_eq!(r.body["error"]["type"], "invalid_request_error");
        assert_eq!(r.body["error"]["message"], r.message.as_str());
        r.message
    }

    fn base() -> Value {
        json!({"model": "claude-sim", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]})
    }

    fn with(key: &str, value: Value) -> Value {
        let mut b = base();
        b[key] = value;
        b
    }

    fn tool_use(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "f", "input": {}})
    }

    fn tool_result(id: &str) -> Value {
        json!({"type": "tool_result", "tool_use_id": id, "content": format!("result {id}")})
    }

    #[test]
    fn a_valid_request_yields_the_conversation_in_openai_shape() {
        let v = check(json!({
            "model": "claude-sim",
            "max_tokens": 100,
            "stream": true,
            "system": [{"type": "text", "text": "rule one"}, {"type": "text", "text": "rule two"}],
            "temperature": 0.5,
            "stop_sequences": ["x"],
            "metadata": {"user_id": "u"},
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "auto"},
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "my sister is Oriane"}, {"type": "text", "text": "and you?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "let me look"}, tool_use("toolu_1"), tool_use("toolu_2")]},
                {"role": "user", "content": [tool_result("toolu_1"), tool_result("toolu_2"), {"type": "text", "text": "so?"}]},
                {"role": "assistant", "content": "Her name"}
            ]
        }))
        .unwrap();
        assert!(v.stream && v.prefill);
        assert_eq!(v.model, "claude-sim");
        assert_eq!(v.max_tokens, Some(100));
        let got: Vec<(String, String)> = v
            .messages
            .iter()
            .map(|m| (m.role.clone(), m.text()))
            .collect();
        let want: Vec<(String, String)> = [
            ("system", "rule one"),
            ("system", "rule two"),
            ("user", "my sister is Oriane"),
            ("user", "and you?"),
            ("assistant", "let me look"),
            ("tool", "result toolu_1"),
            ("tool", "result toolu_2"),
            ("user", "so?"),
            ("assistant", "Her name"),
        ]
        .iter()
        .map(|(r, t)| (r.to_string(), t.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_header_and_required_fields_are_checked_first() {
        let body = base().to_string();
        let r = validate(None, body.as_bytes(), &Rules::default()).unwrap_err();
        assert_eq!(r.message, "anthropic-version: header is required");
        let r = validate(Some("2099-01-01"), body.as_bytes(), &Rules::default()).unwrap_err();
        assert!(r.message.contains("is not a valid version"));
        assert!(validate(Some(VERSION), b"{nope", &Rules::default()).is_err());
        let mut no_max = base();
        no_max.as_object_mut().unwrap().remove("max_tokens");
        assert_eq!(refused(no_max), "max_tokens: Field required");
        assert_eq!(
            refused(with("max_tokens", json!(0))),
            "max_tokens: Input should be greater than or equal to 1"
        );
        assert_eq!(
            refused(with("max_tokens", json!("10"))),
            "max_tokens: Input should be a valid integer"
        );
        assert_eq!(
            refused(with("model", json!(3))),
            "model: Input should be a valid string"
        );
        assert_eq!(
            refused(with("messages", json!([]))),
            "messages: at least one message is required"
        );
        assert_eq!(
            refused(with("response_format", json!({}))),
            "response_format: Extra inputs are not permitted"
        );
        assert_eq!(
            refused(with("temperature", json!(1.5))),
            "temperature: Input should be less than or equal to 1"
        );
        assert!(
            refused(with("system", json!([{"type": "image"}]))).contains("expected tags: 'text'")
        );
        assert!(refused(with(
            "tools",
            json!([{"name": "f", "input_schema": {"type": "string"}}])
        ))
        .contains("input_schema.type"));
        assert!(
            refused(with("tool_choice", json!({"type": "sometimes"}))).starts_with("tool_choice")
        );
    }

    #[test]
    fn roles_and_order_are_checked() {
        let m = |messages: Value| with("messages", messages);
        assert_eq!(
            refused(m(json!([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]))),
            "messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role."
        );
        assert_eq!(
            refused(m(json!([{"role": "tool", "content": "x"}]))),
            "messages.0.role: Input should be 'user' or 'assistant'"
        );
        assert_eq!(
            refused(m(json!([{"role": "assistant", "content": "x"}]))),
            "messages: first message must use the \"user\" role"
        );
        assert_eq!(
            refused(m(json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]))),
            "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"
        );
        assert_eq!(
            refused(m(json!([{"role": "user", "content": ""}]))),
            "messages.0: all messages must have non-empty content except for the optional final assistant message"
        );
        assert!(
            refused(m(json!([{"role": "user", "content": "a", "name": "x"}])))
                .contains("messages.0.name: Extra inputs")
        );
        assert!(refused(m(
            json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b "}])
        ))
        .contains("trailing whitespace"));
        // The lenient rules: consecutive roles merge; an empty final prefill is fine.
        let lenient = Rules {
            require_alternation: false,
            ..Rules::default()
        };
        let two_users = m(
            json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "assistant", "content": ""}]),
        );
        assert!(check_with(two_users, &lenient).unwrap().prefill);
    }

    #[test]
    fn tool_results_and_tool_uses_must_pair_up() {
        let m = |messages: Value| with("messages", messages);
        let orphan = m(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "no tools here"},
            {"role": "user", "content": [tool_result("toolu_9")]}
        ]));
        assert_eq!(
            refused(orphan),
            "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
        );
        let unanswered = m(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [tool_use("toolu_1"), tool_use("toolu_2")]},
            {"role": "user", "content": [tool_result("toolu_1")]}
        ]));
        assert_eq!(
            refused(unanswered),
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        );
        let trailing_call = m(
            json!([{"role": "user", "content": "q"}, {"role": "assistant", "content": [tool_use("toolu_1")]}]),
        );
        assert!(refused(trailing_call).contains("without `tool_result`"));
        let text_first = m(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [tool_use("toolu_1")]},
            {"role": "user", "content": [{"type": "text", "text": "here"}, tool_result("toolu_1")]}
        ]));
        assert!(refused(text_first).contains("must come first"));
    }

    #[test]
    fn prefill_can_be_refused() {
        let strict = Rules {
            reject_prefill: true,
            ..Rules::default()
        };
        let prefill = with(
            "messages",
            json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "The answer is"}]),
        );
        assert!(check(prefill.clone()).unwrap().prefill);
        let r = check_with(prefill, &strict).unwrap_err();
        assert_eq!(
            r.message,
            "This model does not support assistant message prefill. The conversation must end with a user message."
        );
        assert!(!check_with(base(), &strict).unwrap().prefill);
    }
}
