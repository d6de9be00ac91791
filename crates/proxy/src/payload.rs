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
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// Roles that carry instructions rather than conversation turns. `developer`
/// is OpenAI's newer name for `system`.
const INSTRUCTION_ROLES: [&str; 2] = ["system", "developer"];

/// A client body that is a JSON object, checked without building it.
///
/// [`ClientRequest::parse`] accepts exactly the bodies that
/// `serde_json::from_slice::<Value>` parses to an object (it drives the same
/// parser through `deserialize_any`, so number ranges, escapes, UTF-8,
/// nesting depth and trailing bytes are checked alike), but allocates only
/// for the top-level `model` and `stream` values. The full [`Value`] is built
/// by [`ClientRequest::value`] only when a body must be rewritten (a mapped
/// model, a failover).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRequest {
    /// The bytes the client sent.
    pub raw: Bytes,
    /// The model id the client asked for, as [`requested_model`] reads it.
    pub model: String,
    /// Whether the client asked for a stream, as [`wants_stream`] reads it.
    pub stream: bool,
    /// How many elements its top-level `messages` array has (0 when it
    /// has none), counted without building them.
    pub messages: usize,
}

impl ClientRequest {
    /// Checks `raw`; `None` when it is not a JSON object.
    pub fn parse(raw: Bytes) -> Option<Self> {
        let top: Top = serde_json::from_slice(&raw).ok()?;
        Some(ClientRequest {
            model: top
                .model
                .as_ref()
                .map(requested_model_of)
                .unwrap_or_default(),
            stream: top
                .stream
                .as_ref()
                .and_then(Value::as_bool)
                .unwrap_or(false),
            messages: top.messages,
            raw,
        })
    }

    /// The body as a JSON value.
    ///
    /// # Errors
    /// Never for a body [`ClientRequest::parse`] accepted.
    pub fn value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_slice(&self.raw)
    }
}

fn requested_model_of(model: &Value) -> String {
    model.as_str().unwrap_or_default().to_string()
}

/// The top level of a client body: an object whose `model` and `stream`
/// are kept (the last occurrence wins, as in a parsed [`Value`]).
struct Top {
    model: Option<Value>,
    stream: Option<Value>,
    messages: usize,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TopVisitor;
        impl<'de> Visitor<'de> for TopVisitor {
            type Value = Top;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
                let mut top = Top {
                    model: None,
                    stream: None,
                    messages: 0,
                };
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Model => top.model = Some(map.next_value()?),
                        Key::Stream => top.stream = Some(map.next_value()?),
                        Key::Messages => top.messages = map.next_value::<Count>()?.0,
                        Key::Other => {
                            map.next_value::<Any>()?;
                        }
                    }
                }
                Ok(top)
            }
        }
        deserializer.deserialize_any(TopVisitor)
    }
}

/// An object key, read as a parsed [`Value`] reads keys (`deserialize_str`).
enum Key {
    Model,
    Stream,
    Messages,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "model" => Key::Model,
                    "stream" => Key::Stream,
                    "messages" => Key::Messages,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Any JSON value, checked as [`Any`] checks it: the number of elements
/// when it is an array, else 0.
struct Count(usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountVisitor;
        impl<'de> Visitor<'de> for CountVisitor {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
                let mut n = 0usize;
                while seq.next_element::<Any>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
                while map.next_key::<Key>()?.is_some() {
                    map.next_value::<Any>()?;
                }
                Ok(Count(0))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Count, E> {
                Ok(Count(0))
            }
        }
        deserializer.deserialize_any(CountVisitor)
    }
}

/// Any JSON value, checked as a parsed [`Value`] checks it and dropped.
struct Any;

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AnyVisitor;
        impl<'de> Visitor<'de> for AnyVisitor {
            type Value = Any;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Any, E> {
                Ok(Any)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Any, E> {
                Ok(Any)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Any, E> {
                Ok(Any)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Any, E> {
                // The parser has already rejected numbers out of range.
                Ok(Any)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Any, E> {
                Ok(Any)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Any, E> {
                Ok(Any)
            }
            fn visit_none<E: de::Error>(self) -> Result<Any, E> {
                Ok(Any)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Any, D::Error> {
                Any::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Any, A::Error> {
                while seq.next_element::<Any>()?.is_some() {}
                Ok(Any)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Any, A::Error> {
                while map.next_entry::<Key, Any>()?.is_some() {}
                Ok(Any)
            }
        }
        deserializer.deserialize_any(AnyVisitor)
    }
}

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

/// The bytes sent to the primary: the client's own bytes (no copy, no
/// re-serialisation) when no model is mapped, otherwise the client's body
/// serialised with `model` replaced (the same JSON as [`primary_body`]).
///
/// # Errors
/// Only if the body does not parse, which a checked [`ClientRequest`] does.
pub fn primary_bytes(
    client: &ClientRequest,
    model: Option<&str>,
) -> Result<Bytes, serde_json::Error> {
    let Some(model) = model else {
        return Ok(client.raw.clone());
    };
    let value = client.value()?;
    match value.as_object() {
        Some(body) => serde_json::to_vec(&WithModel { body, model }).map(Bytes::from),
        None => serde_json::to_vec(&with_model(value.clone(), Some(model))).map(Bytes::from),
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

/// Adds what the fallback needs to its request: `max_tokens` when the
/// client sent neither `max_tokens` nor `max_completion_tokens`, and
/// every parameter of `params` (replacing the client's).
pub fn add_fallback_needs(
    body: &mut Value,
    max_tokens: Option<u32>,
    params: &serde_json::Map<String, Value>,
) {
    let Some(object) = body.as_object_mut() else {
        return;
    };
    if let Some(n) = max_tokens {
        if !object.contains_key("max_tokens") && !object.contains_key("max_completion_tokens") {
            object.insert("max_tokens".into(), Value::from(n));
        }
    }
    for (key, value) in params {
        object.insert(key.clone(), value.clone());
    }
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

    fn checked(body: &Value) -> ClientRequest {
        ClientRequest::parse(Bytes::from(serde_json::to_vec(body).unwrap())).unwrap()
    }

    #[test]
    fn primary_bytes_are_the_client_bytes_or_the_mapped_body() {
        let client = checked(&request());
        let same = primary_bytes(&client, None).unwrap();
        assert_eq!(same, client.raw);
        assert_eq!(
            same.as_ptr(),
            client.raw.as_ptr(),
            "forwarded without a copy"
        );
        let mapped = primary_bytes(&client, Some("p-model")).unwrap();
        let parsed: Value = serde_json::from_slice(&mapped).unwrap();
        assert_eq!(parsed, primary_body(&request(), Some("p-model")));
        // A client body without `model` gets one.
        let bare = checked(&json!({"messages": []}));
        let added = primary_bytes(&bare, Some("p")).unwrap();
        let parsed: Value = serde_json::from_slice(&added).unwrap();
        assert_eq!(parsed, json!({"messages": [], "model": "p"}));
    }

    #[test]
    fn client_request_reads_model_and_stream_like_a_parsed_value() {
        let cases = [
            r#"{"model":"m","stream":true,"messages":[]}"#,
            r#"{"model":"a","model":"b","stream":false,"stream":true}"#,
            r#"{"model":7,"stream":"yes"}"#,
            r#"{"model":{"x":1},"stream":null}"#,
            r#"{}"#,
            " {\"model\" : \"sp\\u00e9c\\n\"} \n",
        ];
        for text in cases {
            let value: Value = serde_json::from_str(text).unwrap();
            let client = ClientRequest::parse(Bytes::from(text)).unwrap();
            assert_eq!(client.model, requested_model(&value), "{text}");
            assert_eq!(client.stream, wants_stream(&value), "{text}");
            assert_eq!(client.value().unwrap(), value, "{text}");
        }
    }

    #[test]
    fn client_request_rejects_what_a_parsed_value_rejects() {
        let rejected: [&[u8]; 13] = [
            b"not json",
            b"",
            b"[1, 2]",
            b"\"text\"",
            b"null",
            b"{\"a\": 1} trailing",
            b"{\"a\": 1e400}",
            b"{\"a\": -1e400}",
            b"{\"a\": \"\\ud800\"}",
            b"{\"a\": \"\xff\"}",
            b"{\"a\": [1, 2,]}",
            b"{\"a\": \"\\q\"}",
            b"{\"a\": 01}",
        ];
        for body in rejected {
            let value = serde_json::from_slice::<Value>(body);
            assert!(
                !value.as_ref().is_ok_and(Value::is_object),
                "{:?} parses to an object",
                String::from_utf8_lossy(body)
            );
            assert!(
                ClientRequest::parse(Bytes::from_static(body)).is_none(),
                "{:?} accepted",
                String::from_utf8_lossy(body)
            );
        }
        // Nesting deeper than serde_json's limit is rejected by both.
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(200), "]".repeat(200));
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert!(ClientRequest::parse(Bytes::from(deep)).is_none());
        // Big integers and long floats are fine for both.
        let big = r#"{"a": 123456789012345678901234567890, "b": 1.5e300, "c": -0.0}"#;
        assert!(serde_json::from_str::<Value>(big).is_ok());
        assert!(ClientRequest::parse(Bytes::from(big)).is_some());
    }

    #[test]
    fn history_fallback_gets_all_messages_and_its_own_model() {
        let body = fallback_body(&request(), ProxyMode::History, Some("f-model"));
        assert_eq!(body["messages"], request()["messages"]);
        assert_eq!(body["model"], json!("f-model"));
        assert_eq!(body["provider_x"], json!({"top_k": 4}));
    }

    #[test]
    fn the_fallback_gets_what_it_needs_without_losing_the_clients_values() {
        let mut params = serde_json::Map::new();
        params.insert("enable_thinking".into(), json!(false));
        let mut body = json!({"model": "f", "messages": []});
        add_fallback_needs(&mut body, Some(1024), &params);
        assert_eq!(body["max_tokens"], json!(1024));
        assert_eq!(body["enable_thinking"], json!(false));
        let mut body = json!({"max_tokens": 5, "enable_thinking": true});
        add_fallback_needs(&mut body, Some(1024), &params);
        assert_eq!(
            body["max_tokens"],
            json!(5),
            "the client's max_tokens stays"
        );
        assert_eq!(
            body["enable_thinking"],
            json!(false),
            "a configured parameter wins"
        );
        let mut body = json!({"max_completion_tokens": 5});
        add_fallback_needs(&mut body, Some(1024), &serde_json::Map::new());
        assert!(body.get("max_tokens").is_none());
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
