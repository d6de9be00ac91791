//! An OpenAI chat-completions request as an Anthropic Messages request.
//!
//! The conversation is rearranged by [`Plan`] (every system message kept in
//! the top-level `system`, roles alternated by merging, tool results paired);
//! parameters map as follows:
//!
//! | OpenAI | Anthropic |
//! | --- | --- |
//! | `max_completion_tokens`, else `max_tokens` | `max_tokens` (required; [`DEFAULT_MAX_TOKENS`] when absent) |
//! | `temperature` (0-2) | `temperature` (0-1, clamped) |
//! | `top_p`, `top_k` | `top_p`, `top_k` |
//! | `stop` (string or list) | `stop_sequences` |
//! | `stream` | `stream` (usage is always streamed; `stream_options` is the translator's job) |
//! | `user` | `metadata.user_id` |
//! | `tools` (functions) | `tools` (`input_schema` = `parameters`) |
//! | `tool_choice`, `parallel_tool_calls` | `tool_choice` (`auto`/`any`/`tool`/`none`, `disable_parallel_tool_use`) |
//! | `image_url` parts (`data:` or `http(s):`) | `image` blocks (`base64` or `url` source) |
//!
//! Cannot be mapped, left out with a [`Note::DroppedParameter`]: `n`,
//! `logprobs`, `top_logprobs`, `presence_penalty`, `frequency_penalty`,
//! `seed`, `logit_bias`, `response_format`, `modalities`, `audio`,
//! `prediction`, `reasoning_effort`, legacy `functions` / `function_call`,
//! participant `name`s on messages, and any other field; non-function tools; audio and file parts (sent as a
//! text that names them). Tool ids outside `[A-Za-z0-9_-]` have those
//! characters replaced by `_`.

use super::blocks::is_tool_id;
use crate::history::{Item, Plan, Side};
use crate::tools::function_tools;
use crate::{Note, TranslateError, Translation};
use serde_json::{json, Map, Value};

/// `max_tokens` sent when the client gave none (Anthropic requires it).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// Fields read by the translation; any other is noted as dropped.
const HANDLED: [&str; 14] = [
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "stream",
    "stream_options",
    "user",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
];

/// Image media types Anthropic accepts in a `base64` source.
const MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Translates `client` (an OpenAI body); `model` replaces the client's
/// model id when set.
///
/// # Errors
/// The body is not an object or has no `messages` array.
pub fn translate_request(
    client: &Value,
    model: Option<&str>,
) -> Result<Translation, TranslateError> {
    let top = client.as_object().ok_or(TranslateError::NotAnObject)?;
    let messages = top
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(TranslateError::NoMessages)?;
    let mut plan = Plan::of(messages);
    trim_final_assistant(&mut plan);
    let mut notes = std::mem::take(&mut plan.notes);
    let mut body = Map::new();
    let model = model
        .map(str::to_string)
        .or_else(|| top.get("model").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens(top, &mut notes)));
    if !plan.system.is_empty() {
        let blocks: Vec<Value> = plan
            .system
            .iter()
            .map(|s| json!({"type": "text", "text": s}))
            .collect();
        body.insert("system".into(), Value::Array(blocks));
    }
    let turns: Vec<Value> = plan
        .turns
        .iter()
        .map(|t| turn(t.side, &t.items, &mut notes))
        .collect();
    body.insert("messages".into(), Value::Array(turns));
    if top.get("stream").and_then(Value::as_bool) == Some(true) {
        body.insert("stream".into(), json!(true));
    }
    parameters(top, &mut body, &mut notes);
    for key in top.keys().filter(|k| !HANDLED.contains(&k.as_str())) {
        notes.push(Note::DroppedParameter { name: key.clone() });
    }
    Ok(Translation {
        path: super::PATH.to_string(),
        body: Value::Object(body),
        notes,
    })
}

/// The API refuses a final assistant text that ends in whitespace.
fn trim_final_assistant(plan: &mut Plan) {
    if let Some(last) = plan.turns.last_mut().filter(|t| t.side == Side::Assistant) {
        if let Some(Item::Text(t)) = last.items.last_mut() {
            let trimmed = t.trim_end().len();
            t.truncate(trimmed);
        }
    }
}

fn max_tokens(top: &Map<String, Value>, notes: &mut Vec<Note>) -> u64 {
    let given = top
        .get("max_completion_tokens")
        .or_else(|| top.get("max_tokens"))
        .filter(|v| !v.is_null());
    match given.and_then(Value::as_u64) {
        Some(n) if n >= 1 => n,
        _ => {
            if given.is_some() {
                notes.push(Note::AdjustedParameter {
                    name: "max_tokens".into(),
                    detail: format!("not a positive integer; sent {DEFAULT_MAX_TOKENS}"),
                });
            } else {
                notes.push(Note::DefaultMaxTokens {
                    value: DEFAULT_MAX_TOKENS,
                });
            }
            DEFAULT_MAX_TOKENS
        }
    }
}

/// A tool id made to match `^[a-zA-Z0-9_-]+$`.
pub(crate) fn tool_id(id: &str) -> String {
    if is_tool_id(id) {
        return id.to_string();
    }
    let cleaned: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "toolu_unnamed".to_string()
    } else {
        cleaned
    }
}

fn image(url: &str, notes: &mut Vec<Note>) -> Value {
    if let Some((media, data)) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    {
        if MEDIA_TYPES.contains(&media) {
            return json!({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}});
        }
        notes.push(Note::UnsupportedPart {
            part: format!("image of type {media}"),
        });
        return json!({"type": "text", "text": format!("[unsupported content part: image of type {media}]")});
    }
    if url.starts_with("https://") || url.starts_with("http://") {
        return json!({"type": "image", "source": {"type": "url", "url": url}});
    }
    notes.push(Note::UnsupportedPart {
        part: "image_url that is neither data: nor http(s):".into(),
    });
    json!({"type": "text", "text": "[unsupported content part: image_url]"})
}

fn turn(side: Side, items: &[Item], notes: &mut Vec<Note>) -> Value {
    let content: Vec<Value> = items
        .iter()
        .filter(|i| !matches!(i, Item::Text(t) if t.is_empty()))
        .map(|item| match item {
            Item::Text(t) => json!({"type": "text", "text": t}),
            Item::Image(url) => image(url, notes),
            Item::Call(c) => json!({"type": "tool_use", "id": tool_id(&c.id), "name": tool_id(&c.name), "input": c.arguments}),
            Item::Result(r) => {
                let mut block = json!({"type": "tool_result", "tool_use_id": tool_id(&r.id)});
                if !r.text.is_empty() {
                    block["content"] = json!(r.text);
                }
                if r.is_error {
                    block["is_error"] = json!(true);
                }
                block
            }
        })
        .collect();
    let role = match side {
        Side::User => "user",
        Side::Assistant => "assistant",
    };
    json!({"role": role, "content": content})
}

fn parameters(top: &Map<String, Value>, body: &mut Map<String, Value>, notes: &mut Vec<Note>) {
    if let Some(t) = top.get("temperature").and_then(Value::as_f64) {
        let clamped = t.clamp(0.0, 1.0);
        if clamped != t {
            notes.push(Note::AdjustedParameter {
                name: "temperature".into(),
                detail: format!("{t} is outside Anthropic's 0-1; sent {clamped}"),
            });
        }
        body.insert("temperature".into(), json!(clamped));
    }
    if let Some(p) = top.get("top_p").and_then(Value::as_f64) {
        body.insert("top_p".into(), json!(p.clamp(0.0, 1.0)));
    }
    if let Some(k) = top.get("top_k").and_then(Value::as_u64) {
        body.insert("top_k".into(), json!(k));
    }
    let stops: Vec<Value> = match top.get("stop") {
        Some(Value::String(s)) => vec![json!(s)],
        Some(Value::Array(list)) => list.iter().filter(|s| s.is_string()).cloned().collect(),
        _ => Vec::new(),
    };
    if !stops.is_empty() {
        body.insert("stop_sequences".into(), Value::Array(stops));
    }
    if let Some(user) = top.get("user").and_then(Value::as_str) {
        body.insert("metadata".into(), json!({"user_id": user}));
    }
    tools(top, body, notes);
}

fn tools(top: &Map<String, Value>, body: &mut Map<String, Value>, notes: &mut Vec<Note>) {
    let mut defs = Vec::new();
    for tool in function_tools(top, notes) {
        let i = tool.index;
        let mut schema = tool
            .parameters
            .filter(|p| p.is_object())
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        if schema.get("type") != Some(&json!("object")) {
            notes.push(Note::AdjustedParameter {
                name: format!("tools[{i}].parameters"),
                detail: "not an object schema; sent type object".into(),
            });
            schema["type"] = json!("object");
        }
        let mut def = json!({"name": tool_id(tool.name), "input_schema": schema});
        if let Some(d) = tool.description {
            def["description"] = json!(d);
        }
        defs.push(def);
    }
    let parallel_off = top.get("parallel_tool_calls").and_then(Value::as_bool) == Some(false);
    let choice = match top.get("tool_choice") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Some(json!({"type": "auto"})),
            "required" => Some(json!({"type": "any"})),
            "none" => Some(json!({"type": "none"})),
            _ => None,
        },
        Some(v) => v
            .get("function")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(|name| json!({"type": "tool", "name": tool_id(name)})),
    };
    if defs.is_empty() {
        if top.contains_key("tool_choice") {
            notes.push(Note::DroppedParameter {
                name: "tool_choice (no function tools)".into(),
            });
        }
        return;
    }
    body.insert("tools".into(), Value::Array(defs));
    let choice = match choice {
        Some(c) => Some(c),
        None if parallel_off => Some(json!({"type": "auto"})),
        None => None,
    };
    if let Some(mut choice) = choice {
        if parallel_off && choice["type"] != "none" {
            choice["disable_parallel_tool_use"] = json!(true);
        }
        body.insert("tool_choice".into(), choice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::{validate, Rules, VERSION};

    fn translate(client: Value) -> Translation {
        translate_request(&client, Some("claude-sim")).unwrap()
    }

    fn valid(t: &Translation) -> crate::Validated {
        let bytes = serde_json::to_vec(&t.body).unwrap();
        validate(Some(VERSION), &bytes, &Rules::default())
            .unwrap_or_else(|r| panic!("{}: {}", r.message, t.body))
    }

    #[test]
    fn every_system_message_reaches_the_top_level_system() {
        let t = translate(json!({
            "model": "gpt-x",
            "messages": [
                {"role": "system", "content": "first rule"},
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "second rule"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "bye"}
            ]
        }));
        assert_eq!(
            t.body["system"],
            json!([{"type": "text", "text": "first rule"}, {"type": "text", "text": "second rule"}])
        );
        assert_eq!(t.body["model"], "claude-sim");
        assert_eq!(t.body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert!(t.notes.contains(&Note::DefaultMaxTokens {
            value: DEFAULT_MAX_TOKENS
        }));
        let v = valid(&t);
        let systems: Vec<String> = v
            .messages
            .iter()
            .filter(|m| m.role == "system")
            .map(|m| m.text())
            .collect();
        assert_eq!(systems, ["first rule", "second rule"]);
    }

    #[test]
    fn parameters_map_and_the_unmappable_are_noted() {
        let t = translate(json!({
            "model": "gpt-x",
            "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": 50,
            "max_tokens": 10,
            "temperature": 1.4,
            "top_p": 0.9,
            "stop": "END",
            "user": "u-1",
            "stream": true,
            "seed": 3,
            "n": 1,
            "tools": [
                {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
                {"type": "web_search"}
            ],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "parallel_tool_calls": false
        }));
        let b = &t.body;
        assert_eq!(b["max_tokens"], 50);
        assert_eq!(b["temperature"], 1.0);
        assert_eq!(b["top_p"], 0.9);
        assert_eq!(b["stop_sequences"], json!(["END"]));
        assert_eq!(b["metadata"], json!({"user_id": "u-1"}));
        assert_eq!(b["stream"], true);
        assert_eq!(
            b["tools"][0]["input_schema"]["properties"]["city"]["type"],
            "string"
        );
        assert_eq!(b["tools"].as_array().unwrap().len(), 1);
        assert_eq!(
            b["tool_choice"],
            json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true})
        );
        for name in ["seed", "n"] {
            assert!(
                t.notes
                    .contains(&Note::DroppedParameter { name: name.into() }),
                "{name}"
            );
        }
        assert!(t
            .notes
            .iter()
            .any(|n| matches!(n, Note::AdjustedParameter { name, .. } if name == "temperature")));
        assert!(valid(&t).stream);
    }

    #[test]
    fn tool_calls_and_results_become_tool_use_and_tool_result() {
        let t = translate(json!({
            "model": "gpt-x",
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call.1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Lyon\"}"}}]},
                {"role": "tool", "tool_call_id": "call.1", "content": "sunny"},
                {"role": "assistant", "content": "It is sunny. "}
            ]
        }));
        let m = &t.body["messages"];
        assert_eq!(
            m[1]["content"][0],
            json!({"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Lyon"}})
        );
        assert_eq!(
            m[2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"})
        );
        assert_eq!(m[3]["content"][0]["text"], "It is sunny.");
        let v = valid(&t);
        assert!(v.prefill);
        assert_eq!(
            v.messages[2],
            cb_wire::openai::ChatMessage::new("tool", "sunny")
        );
    }

    #[test]
    fn images_map_to_image_blocks() {
        let t = translate(json!({
            "model": "gpt-x",
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                {"type": "image_url", "image_url": {"url": "data:image/tiff;base64,AAAA"}},
                {"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}
            ]}]
        }));
        let c = &t.body["messages"][0]["content"];
        assert_eq!(
            c[1]["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0K"})
        );
        assert_eq!(
            c[2]["source"],
            json!({"type": "url", "url": "https://example.com/cat.jpg"})
        );
        assert_eq!(c[3]["type"], "text");
        assert_eq!(c[4]["text"], "[unsupported content part: input_audio]");
        valid(&t);
    }

    #[test]
    fn tool_ids_are_made_valid() {
        assert_eq!(tool_id("call_abc-1"), "call_abc-1");
        assert_eq!(tool_id("call:1/x"), "call_1_x");
        assert_eq!(tool_id(""), "toolu_unnamed");
        assert!(translate_request(&json!([]), None).is_err());
        assert_eq!(
            translate_request(&json!({"model": "m"}), None),
            Err(TranslateError::NoMessages)
        );
    }
}
