//! An OpenAI chat-completions request as a Gemini `generateContent`
//! request.
//!
//! The conversation is rearranged by [`Plan`] (every system message a part
//! of `systemInstruction`, roles alternated by merging, tool results paired)
//! with one Gemini rule more: a turn of function responses holds only them,
//! so the user text that followed the results goes into the next `user`
//! content. Parameters map as follows:
//!
//! | OpenAI | Gemini |
//! | --- | --- |
//! | model (or the mapped one), `stream` | the path ([`super::request_path`]) |
//! | `max_completion_tokens`, else `max_tokens` | `generationConfig.maxOutputTokens` (only when given: Gemini does not require it) |
//! | `temperature`, `top_p`, `top_k`, `seed` | `temperature`, `topP`, `topK`, `seed` |
//! | `stop` | `stopSequences` (at most 5) |
//! | `n` | `candidateCount` |
//! | `presence_penalty`, `frequency_penalty` | `presencePenalty`, `frequencyPenalty` |
//! | `logprobs`, `top_logprobs` | `responseLogprobs`, `logprobs` |
//! | `response_format` `json_object` / `json_schema` | `responseMimeType: application/json` (+ `responseSchema`) |
//! | `tools` (functions) | `tools[0].functionDeclarations` (schema rewritten into Gemini's subset) |
//! | `tool_choice` | `toolConfig.functionCallingConfig` (`AUTO`/`ANY`/`NONE`, `allowedFunctionNames`) |
//! | `image_url` parts | `inlineData` (`data:` URLs) or `fileData` (other URLs) |
//! | tool calls / `tool` messages | `functionCall` / `functionResponse` (`response.output`; a missing result `response.error`) |
//!
//! Cannot be mapped, left out with a [`Note::DroppedParameter`]:
//! `parallel_tool_calls`, `user`, `logit_bias`, `modalities`, `audio`,
//! `prediction`, `reasoning_effort`, `metadata`, `store`, `service_tier`,
//! legacy `functions`, participant `name`s on messages, and any other field. Function names that start with
//! a digit get a leading `_` (Gemini requires a letter or `_`).

use super::schema;
use crate::history::{Item, Plan, Side};
use crate::tools::function_tools;
use crate::{Note, TranslateError, Translation};
use serde_json::{json, Map, Value};

/// Fields read by the translation; any other is noted as dropped.
const HANDLED: [&str; 19] = [
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "n",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "logprobs",
    "top_logprobs",
    "response_format",
    "tools",
    "tool_choice",
];

/// Most stop sequences the API takes.
const MAX_STOP_SEQUENCES: usize = 5;

/// Translates `client` (an OpenAI body); `model` replaces the client's
/// model id in the path when set.
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
    let mut notes = std::mem::take(&mut plan.notes);
    let mut body = Map::new();
    if !plan.system.is_empty() {
        let parts: Vec<Value> = plan.system.iter().map(|s| json!({"text": s})).collect();
        body.insert("systemInstruction".into(), json!({"parts": parts}));
    }
    let mut contents = Vec::new();
    for turn in &plan.turns {
        contents.extend(turn_contents(turn.side, &turn.items, &mut notes));
    }
    body.insert("contents".into(), Value::Array(contents));
    let config = generation_config(top, &mut notes);
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    tools(top, &mut body, &mut notes);
    for key in top.keys().filter(|k| !HANDLED.contains(&k.as_str())) {
        notes.push(Note::DroppedParameter { name: key.clone() });
    }
    let model = model
        .or_else(|| top.get("model").and_then(Value::as_str))
        .unwrap_or_default();
    let stream = top.get("stream").and_then(Value::as_bool) == Some(true);
    Ok(Translation {
        path: super::request_path(model, stream),
        body: Value::Object(body),
        notes,
    })
}

/// A function name Gemini accepts: a leading digit (or other character
/// OpenAI allows but Gemini does not start with) gets a `_` first.
pub(crate) fn function_name(name: &str) -> String {
    if name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.to_string()
    } else {
        format!("_{name}")
    }
}

fn media(url: &str, notes: &mut Vec<Note>) -> Value {
    if let Some((mime, data)) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    {
        return json!({"inlineData": {"mimeType": mime, "data": data}});
    }
    notes.push(Note::AdjustedParameter {
        name: "image_url".into(),
        detail: "a URL image was sent as fileData; Gemini reads only uploaded-file URIs".into(),
    });
    json!({"fileData": {"fileUri": url}})
}

/// One turn as Gemini contents: a user turn with tool results becomes a
/// content of function responses, then (if anything else) a user content.
fn turn_contents(side: Side, items: &[Item], notes: &mut Vec<Note>) -> Vec<Value> {
    let mut responses = Vec::new();
    let mut parts = Vec::new();
    for item in items {
        match item {
            Item::Text(t) if t.is_empty() => {}
            Item::Text(t) => parts.push(json!({"text": t})),
            Item::Image(url) => parts.push(media(url, notes)),
            Item::Call(c) => parts.push(
                json!({"functionCall": {"name": function_name(&c.name), "args": c.arguments}}),
            ),
            Item::Result(r) => {
                let key = if r.is_error { "error" } else { "output" };
                responses.push(json!({"functionResponse": {"name": function_name(&r.name), "response": {key: r.text}}}));
            }
        }
    }
    let role = match side {
        Side::User => "user",
        Side::Assistant => "model",
    };
    let mut out = Vec::new();
    if !responses.is_empty() {
        out.push(json!({"role": role, "parts": responses}));
    }
    if !parts.is_empty() {
        out.push(json!({"role": role, "parts": parts}));
    }
    out
}

fn generation_config(top: &Map<String, Value>, notes: &mut Vec<Note>) -> Map<String, Value> {
    let mut g = Map::new();
    let max = top
        .get("max_completion_tokens")
        .or_else(|| top.get("max_tokens"))
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1);
    if let Some(n) = max {
        g.insert("maxOutputTokens".into(), json!(n));
    }
    let numbers = [
        ("temperature", "temperature"),
        ("top_p", "topP"),
        ("presence_penalty", "presencePenalty"),
        ("frequency_penalty", "frequencyPenalty"),
    ];
    for (from, to) in numbers {
        if let Some(v) = top.get(from).and_then(Value::as_f64) {
            g.insert(to.into(), json!(v));
        }
    }
    let integers = [
        ("top_k", "topK"),
        ("seed", "seed"),
        ("top_logprobs", "logprobs"),
    ];
    for (from, to) in integers {
        if let Some(v) = top.get(from).and_then(Value::as_i64) {
            g.insert(to.into(), json!(v));
        }
    }
    if let Some(n) = top.get("n").and_then(Value::as_u64).filter(|n| *n > 1) {
        g.insert("candidateCount".into(), json!(n));
    }
    if top.get("logprobs").and_then(Value::as_bool) == Some(true) {
        g.insert("responseLogprobs".into(), json!(true));
    }
    let mut stops: Vec<Value> = match top.get("stop") {
        Some(Value::String(s)) => vec![json!(s)],
        Some(Value::Array(list)) => list.iter().filter(|s| s.is_string()).cloned().collect(),
        _ => Vec::new(),
    };
    if stops.len() > MAX_STOP_SEQUENCES {
        notes.push(Note::AdjustedParameter {
            name: "stop".into(),
            detail: format!(
                "{} stop sequences; Gemini takes {MAX_STOP_SEQUENCES}, the rest were left out",
                stops.len()
            ),
        });
        stops.truncate(MAX_STOP_SEQUENCES);
    }
    if !stops.is_empty() {
        g.insert("stopSequences".into(), Value::Array(stops));
    }
    match top
        .get("response_format")
        .and_then(|f| f.get("type"))
        .and_then(Value::as_str)
    {
        Some("json_object") => {
            g.insert("responseMimeType".into(), json!("application/json"));
        }
        Some("json_schema") => {
            g.insert("responseMimeType".into(), json!("application/json"));
            if let Some(s) = top
                .get("response_format")
                .and_then(|f| f.pointer("/json_schema/schema"))
            {
                g.insert(
                    "responseSchema".into(),
                    schema::from_json_schema(s, "response_format.json_schema.schema", notes),
                );
            }
        }
        _ => {}
    }
    g
}

fn tools(top: &Map<String, Value>, body: &mut Map<String, Value>, notes: &mut Vec<Note>) {
    let mut decls = Vec::new();
    for tool in function_tools(top, notes) {
        let mut decl = json!({"name": function_name(tool.name)});
        if let Some(d) = tool.description {
            decl["description"] = json!(d);
        }
        let has_properties = tool
            .parameters
            .and_then(|p| p.get("properties"))
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if let (Some(p), true) = (tool.parameters, has_properties) {
            let at = format!("tools[{}].parameters", tool.index);
            decl["parameters"] = schema::from_json_schema(p, &at, notes);
        }
        decls.push(decl);
    }
    if decls.is_empty() {
        if top.contains_key("tool_choice") {
            notes.push(Note::DroppedParameter {
                name: "tool_choice (no function tools)".into(),
            });
        }
        return;
    }
    body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
    let config = match top.get("tool_choice") {
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Some(json!({"mode": "AUTO"})),
            "required" => Some(json!({"mode": "ANY"})),
            "none" => Some(json!({"mode": "NONE"})),
            _ => None,
        },
        Some(v @ Value::Object(_)) => v
            .pointer("/function/name")
            .and_then(Value::as_str)
            .map(|n| json!({"mode": "ANY", "allowedFunctionNames": [function_name(n)]})),
        _ => None,
    };
    if let Some(c) = config {
        body.insert("toolConfig".into(), json!({"functionCallingConfig": c}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemini::{parse_call, validate};
    use cb_wire::openai::ChatMessage;

    fn translate(client: Value) -> Translation {
        translate_request(&client, Some("gemini-sim")).unwrap()
    }

    fn valid(t: &Translation) -> crate::Validated {
        let (path, query) = t
            .path
            .split_once('?')
            .map_or((t.path.as_str(), None), |(p, q)| (p, Some(q)));
        let call = parse_call(path, query).unwrap();
        validate(&call, t.body.to_string().as_bytes())
            .unwrap_or_else(|r| panic!("{}: {}", r.message, t.body))
    }

    #[test]
    fn system_messages_and_turns() {
        let t = translate(json!({
            "model": "gpt-x",
            "stream": true,
            "messages": [
                {"role": "system", "content": "rule one"},
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "rule two"},
                {"role": "user", "content": "again"},
                {"role": "assistant", "content": "hello"}
            ]
        }));
        assert_eq!(
            t.path,
            "/v1beta/models/gemini-sim:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            t.body["systemInstruction"],
            json!({"parts": [{"text": "rule one"}, {"text": "rule two"}]})
        );
        assert_eq!(
            t.body["contents"][0],
            json!({"role": "user", "parts": [{"text": "hi"}, {"text": "again"}]})
        );
        assert_eq!(t.body["contents"][1]["role"], "model");
        assert!(t.body.get("generationConfig").is_none());
        let v = valid(&t);
        assert!(v.stream && v.prefill);
        assert_eq!(v.messages[2], ChatMessage::new("user", "hi"));
        assert_eq!(v.messages[3], ChatMessage::new("user", "again"));
    }

    #[test]
    fn tools_calls_and_results() {
        let t = translate(json!({
            "model": "gpt-x",
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Lyon\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
                {"role": "user", "content": "and tomorrow?"}
            ],
            "tools": [
                {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": false}}},
                {"type": "function", "function": {"name": "3d_ping", "parameters": {"type": "object", "properties": {}}}}
            ],
            "tool_choice": "required",
            "parallel_tool_calls": true
        }));
        let c = &t.body["contents"];
        assert_eq!(
            c[1]["parts"][0],
            json!({"functionCall": {"name": "get_weather", "args": {"city": "Lyon"}}})
        );
        assert_eq!(
            c[2],
            json!({"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}}]})
        );
        assert_eq!(
            c[3],
            json!({"role": "user", "parts": [{"text": "and tomorrow?"}]})
        );
        let decls = &t.body["tools"][0]["functionDeclarations"];
        assert_eq!(
            decls[0]["parameters"],
            json!({"type": "OBJECT", "properties": {"city": {"type": "STRING"}}})
        );
        assert_eq!(decls[1], json!({"name": "_3d_ping"}));
        assert_eq!(
            t.body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY"}})
        );
        assert!(t.notes.contains(&Note::DroppedParameter {
            name: "parallel_tool_calls".into()
        }));
        assert!(t.notes.iter().any(|n| matches!(n, Note::SchemaKeywordDropped { keyword, .. } if keyword == "additionalProperties")));
        let v = valid(&t);
        assert_eq!(
            v.messages[1],
            ChatMessage {
                role: "assistant".into(),
                content: Value::Null,
                tool_calls: None,
                tool_call_id: None,
            }
        );
        assert_eq!(v.messages[2], ChatMessage::new("tool", "sunny"));
    }

    #[test]
    fn generation_parameters_map() {
        let t = translate(json!({
            "model": "gpt-x",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 77,
            "temperature": 1.5,
            "top_p": 0.5,
            "seed": 4,
            "n": 2,
            "stop": ["a", "b", "c", "d", "e", "f"],
            "presence_penalty": 0.1,
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}},
            "user": "u"
        }));
        let g = &t.body["generationConfig"];
        assert_eq!(g["maxOutputTokens"], 77);
        assert_eq!(g["temperature"], 1.5);
        assert_eq!(g["topP"], 0.5);
        assert_eq!(g["seed"], 4);
        assert_eq!(g["candidateCount"], 2);
        assert_eq!(g["stopSequences"].as_array().unwrap().len(), 5);
        assert_eq!(g["presencePenalty"], 0.1);
        assert_eq!(g["responseMimeType"], "application/json");
        assert_eq!(g["responseSchema"]["properties"]["a"]["type"], "INTEGER");
        assert!(t.notes.contains(&Note::DroppedParameter {
            name: "user".into()
        }));
        assert_eq!(t.path, "/v1beta/models/gemini-sim:generateContent");
        assert_eq!(valid(&t).max_tokens, Some(77));
    }

    #[test]
    fn images_map_to_inline_or_file_data() {
        let t = translate(
            json!({"model": "g", "messages": [{"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}
            ]}]}),
        );
        let parts = &t.body["contents"][0]["parts"];
        assert_eq!(
            parts[1],
            json!({"inlineData": {"mimeType": "image/png", "data": "AAAA"}})
        );
        assert_eq!(
            parts[2],
            json!({"fileData": {"fileUri": "https://example.com/cat.jpg"}})
        );
        valid(&t);
    }
}
