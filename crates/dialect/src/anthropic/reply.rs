//! A whole Anthropic answer back in OpenAI's shape: a `message` as a
//! `chat.completion` ([`to_openai`]; streams are in [`super::stream`]).
//!
//! Text blocks become `content`, `tool_use` blocks become `tool_calls`
//! (input serialised as the `arguments` string), `stop_reason` becomes
//! `finish_reason` ([`finish_of`]), and usage counts input tokens including
//! cache reads and writes.

use super::finish_of;
use crate::{completion, ChunkOptions, FinishReason, ReplyError, ToolCall};
use cb_wire::openai::Usage;
use serde_json::Value;

/// A token count of a `usage` object (0 when absent).
pub(super) fn count(usage: Option<&Value>, key: &str) -> u32 {
    usage
        .and_then(|u| u.get(key))
        .and_then(Value::as_u64)
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// Input tokens of a `usage` object, cache reads and writes included.
pub(super) fn input_tokens(usage: Option<&Value>) -> u32 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| count(usage, k))
    .fold(0, u32::saturating_add)
}

/// `type: message` of an Anthropic error body; `None` for other bodies.
pub(super) fn error_message(body: &Value) -> Option<String> {
    if body.get("type").and_then(Value::as_str) != Some("error") {
        return None;
    }
    let error = body.get("error");
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("");
    Some(format!("{kind}: {message}"))
}

/// A whole Anthropic answer as an OpenAI `chat.completion`, with the
/// message's own id and model (`defaults` stand in when it names none);
/// `defaults.created` is the timestamp (injected).
///
/// # Errors
/// The body is not JSON, is an Anthropic error, or has no `content` list.
pub fn to_openai(body: &[u8], defaults: &ChunkOptions) -> Result<Value, ReplyError> {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| ReplyError::NotJson(e.to_string()))?;
    if let Some(message) = error_message(&body) {
        return Err(ReplyError::Upstream(message));
    }
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ReplyError::Malformed("no `content` list in the message".into()))?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            Some("tool_use") => calls.push(ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: block.get("input").cloned().unwrap_or(Value::Null),
            }),
            _ => {}
        }
    }
    let finish = body
        .get("stop_reason")
        .and_then(Value::as_str)
        .map_or(FinishReason::Stop, finish_of);
    let usage = body.get("usage");
    let mut options = defaults.clone();
    if let Some(id) = body.get("id").and_then(Value::as_str) {
        id.clone_into(&mut options.id);
    }
    if let Some(model) = body.get("model").and_then(Value::as_str) {
        model.clone_into(&mut options.model);
    }
    Ok(completion(
        &options,
        &text,
        &calls,
        finish,
        Usage::new(input_tokens(usage), count(usage, "output_tokens")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::message_body;
    use crate::Reply;
    use serde_json::json;

    fn options() -> ChunkOptions {
        ChunkOptions {
            created: 5,
            include_usage: true,
            id: "fallback-id".into(),
            model: "fallback-model".into(),
        }
    }

    fn weather_call() -> ToolCall {
        ToolCall {
            id: "toolu_1".into(),
            name: "get_weather".into(),
            arguments: json!({"city": "Lyon"}),
        }
    }

    #[test]
    fn a_whole_message_becomes_a_completion() {
        let mut reply = Reply::text("Checking.", Usage::new(20, 4));
        reply.tool_calls.push(weather_call());
        reply.finish = FinishReason::ToolCalls;
        let body = message_body("msg_1", "claude-sim", &reply).to_string();
        let c = to_openai(
            body.as_bytes(),
            &ChunkOptions {
                created: 9,
                ..options()
            },
        )
        .unwrap();
        assert_eq!(c["id"], "msg_1");
        assert_eq!(c["model"], "claude-sim");
        assert_eq!(c["created"], 9);
        assert_eq!(c["choices"][0]["message"]["content"], "Checking.");
        assert_eq!(
            c["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            "{\"city\":\"Lyon\"}"
        );
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(
            c["usage"],
            json!({"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24})
        );
        let cached = json!({"content": [], "usage": {"input_tokens": 1, "cache_read_input_tokens": 10, "output_tokens": 0}});
        assert_eq!(
            to_openai(cached.to_string().as_bytes(), &options()).unwrap()["usage"]["prompt_tokens"],
            11
        );
    }

    #[test]
    fn error_and_malformed_bodies_are_errors() {
        let err = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            to_openai(err.to_string().as_bytes(), &options()),
            Err(ReplyError::Upstream("overloaded_error: Overloaded".into()))
        );
        assert!(matches!(
            to_openai(b"{", &options()),
            Err(ReplyError::NotJson(_))
        ));
        assert!(matches!(
            to_openai(b"{\"id\": 1}", &options()),
            Err(ReplyError::Malformed(_))
        ));
    }
}
