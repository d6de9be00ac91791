//! What each upstream receives. This is the only place where the two
//! reference gateways differ: the primary always gets the client's request,
//! the `history` fallback gets it too, and the `stateless` fallback gets only
//! the system prompt(s) and the last user message.
//!
//! Bodies are kept as [`serde_json::Value`] so that every field the harness
//! does not know (provider-specific parameters) reaches the upstream as the
//! client sent it; only `model` (when mapped) and, for the stateless fallback,
//! `messages` are replaced.

use super::ProxyMode;
use bytes::Bytes;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// Roles that carry instructions rather than conversation turns. `developer`
/// is OpenAI's newer name for `system`.
const INSTRUCTION_ROLES: [&str; 2] = ["system", "developer"];

/// The model id the client asked for, empty when absent or not a string.
pub fn requested_model(body: &Value) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Whether the client asked for a server-sent-events stream.
pub fn wants_stream(body: &Value) -> bool {
    body.get("stream").and_then(Value::as_bool).unwrap_or(false)
}

/// The body sent to the primary: the client's, with `model` replaced when
/// `model` is set.
pub fn primary_body(client: &Value, model: Option<&str>) -> Value {
    with_model(client.clone(), model)
}

/// The bytes sent to the primary for the client body `raw`, which parsed to
/// the JSON object `client`: `raw` itself (no copy, no re-serialisation)
/// when no model is mapped, otherwise `client` serialised with `model`
/// replaced (the same JSON as [`primary_body`], without cloning it).
///
/// # Errors
/// Only if serialisation fails, which a parsed [`Value`] does not.
pub fn primary_bytes(
    client: &Value,
    raw: &Bytes,
    model: Option<&str>,
) -> Result<Bytes, serde_json::Error> {
    match (model, client.as_object()) {
        (Some(model), Some(body)) => {
            serde_json::to_vec(&WithModel { body, model }).map(Bytes::from)
        }
        (Some(model), None) => {
            serde_json::to_vec(&with_model(client.clone(), Some(model))).map(Bytes::from)
        }
        (None, _) => Ok(raw.clone()),
    }
}

/// A JSON object serialised with its `model` replaced (or added last).
struct WithModel<'a> {
    body: &'a Map<String, Value>,
    model: &'a str,
}

impl Serialize for WithModel<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let has_model = self.body.contains_key("model");
        let len = self.body.len() + usize::from(!has_model);
        let mut map = serializer.serialize_map(Some(len))?;
        for (key, value) in self.body {
            if key == "model" {
                map.serialize_entry(key, self.model)?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        if !has_model {
            map.serialize_entry("model", self.model)?;
        }
        map.end()
    }
}

/// The body sent to the fallback under `mode`, with `model` replaced when
/// `model` is set.
pub fn fallback_body(client: &Value, mode: ProxyMode, model: Option<&str>) -> Value {
    let mut body = with_model(client.clone(), model);
    if mode == ProxyMode::Stateless {
        if let Some(messages) = client.get("messages").and_then(Value::as_array) {
            body["messages"] = Value::Array(stateless_messages(messages));
        }
    }
    body
}

/// The stateless projection of a conversation: every system (or developer)
/// message in order, then the last user message. When there is no user
/// message, the last non-system message stands in for it, so that the
/// fallback still gets something to answer.
pub fn stateless_messages(messages: &[Value]) -> Vec<Value> {
    let is_instruction = |m: &Value| INSTRUCTION_ROLES.contains(&role(m));
    let mut kept: Vec<Value> = messages
        .iter()
        .filter(|m| is_instruction(m))
        .cloned()
        .collect();
    let last = messages
        .iter()
        .rev()
        .find(|m| role(m) == "user")
        .or_else(|| messages.iter().rev().find(|m| !is_instruction(m)));
    if let Some(last) = last {
        kept.push(last.clone());
    }
    kept
}

fn role(message: &Value) -> &str {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn with_model(mut body: Value, model: Option<&str>) -> Value {
    if let (Some(model), Some(obj)) = (model, body.as_object_mut()) {
        obj.insert("model".to_string(), Value::String(model.to_string()));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> Value {
        json!({
            "model": "gpt-client",
            "temperature": 0.3,
            "provider_x": {"top_k": 4},
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "my sister is Oriane"},
                {"role": "assistant", "content": "noted"},
                {"role": "user", "content": "what is my sister called?"}
            ]
        })
    }

    #[test]
    fn primary_keeps_everything_but_the_mapped_model() {
        let body = primary_body(&request(), Some("p-model"));
        let mut expected = request();
        expected["model"] = json!("p-model");
        assert_eq!(body, expected);
        assert_eq!(primary_body(&request(), None), request());
    }

    #[test]
    fn primary_bytes_are_the_client_bytes_or_the_mapped_body() {
        let raw = Bytes::from(serde_json::to_vec(&request()).unwrap());
        let same = primary_bytes(&request(), &raw, None).unwrap();
        assert_eq!(same, raw);
        assert_eq!(same.as_ptr(), raw.as_ptr(), "forwarded without a copy");
        let mapped = primary_bytes(&request(), &raw, Some("p-model")).unwrap();
        let parsed: Value = serde_json::from_slice(&mapped).unwrap();
        assert_eq!(parsed, primary_body(&request(), Some("p-model")));
        // A client body without `model` gets one.
        let bare = json!({"messages": []});
        let added = primary_bytes(&bare, &Bytes::new(), Some("p")).unwrap();
        let parsed: Value = serde_json::from_slice(&added).unwrap();
        assert_eq!(parsed, json!({"messages": [], "model": "p"}));
    }

    #[test]
    fn history_fallback_gets_all_messages_and_its_own_model() {
        let body = fallback_body(&request(), ProxyMode::History, Some("f-model"));
        assert_eq!(body["messages"], request()["messages"]);
        assert_eq!(body["model"], json!("f-model"));
        assert_eq!(body["provider_x"], json!({"top_k": 4}));
    }

    #[test]
    fn stateless_fallback_gets_system_and_last_user_only() {
        let body = fallback_body(&request(), ProxyMode::Stateless, None);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "what is my sister called?"}
            ])
        );
        assert_eq!(body["temperature"], json!(0.3));
        assert_eq!(body["model"], json!("gpt-client"));
    }

    #[test]
    fn stateless_without_system_or_user() {
        let only_user = [json!({"role": "user", "content": "a"})];
        assert_eq!(stateless_messages(&only_user), only_user.to_vec());
        let no_user = [
            json!({"role": "developer", "content": "d"}),
            json!({"role": "assistant", "content": "x"}),
        ];
        assert_eq!(stateless_messages(&no_user), no_user.to_vec());
        assert!(stateless_messages(&[]).is_empty());
    }

    #[test]
    fn stream_flag_and_model() {
        assert!(wants_stream(&json!({"stream": true})));
        assert!(!wants_stream(&json!({"stream": "yes"})));
        assert_eq!(requested_model(&json!({})), "");
        assert_eq!(requested_model(&request()), "gpt-client");
    }
}
