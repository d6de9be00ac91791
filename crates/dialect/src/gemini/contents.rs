//! Checking Gemini `contents` and `systemInstruction`: roles `user` and
//! `model`, non-empty `parts`, exactly one data field per part, and the
//! function-calling order the API enforces (a `functionCall` turn comes
//! right after a user turn, a `functionResponse` turn right after the
//! `functionCall` turn it answers, with as many responses as calls and the
//! same names). Then the conversation in OpenAI shape.

use super::invalid;
use super::names::{self, get, join, rule};
use crate::grouping::Grouper;
use crate::Rejection;
use cb_wire::openai::ChatMessage;
use serde_json::{Map, Value};

/// The data fields of a `Part`, of which exactly one is set.
const DATA: [&str; 7] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

/// Every field of a `Part`.
const PART_FIELDS: [&str; 10] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "thought",
    "thoughtSignature",
    "videoMetadata",
];

/// A checked part.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Part {
    Text {
        text: String,
        thought: bool,
    },
    /// Inline data as a `data:` URL, or a file by URI.
    Media(String),
    Call {
        name: String,
    },
    Response {
        name: String,
        text: String,
    },
    /// Code execution parts, which the simulated model does not read.
    Other,
}

/// A checked `Content`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Content {
    pub model: bool,
    pub parts: Vec<Part>,
}

impl Content {
    fn calls(&self) -> Vec<&str> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Call { name } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    fn responses(&self) -> Vec<&str> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Response { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }
}

fn required<'a>(
    path: &str,
    o: &'a Map<String, Value>,
    camel: &str,
) -> Result<&'a Value, Rejection> {
    get(o, camel).ok_or_else(|| rule(&join(path, camel), "field is required"))
}

fn name(path: &str, o: &Map<String, Value>) -> Result<String, Rejection> {
    let p = join(path, "name");
    let name = names::string(&p, required(path, o, "name")?)?;
    if name.is_empty() {
        return Err(rule(&p, "Name cannot be empty."));
    }
    Ok(name.to_string())
}

/// The text a function response carries: its `output` (or `content`,
/// `error`) when that is a string, else the whole response as JSON.
pub(super) fn response_text(response: &Map<String, Value>) -> String {
    ["output", "content", "error"]
        .iter()
        .find_map(|k| response.get(*k).and_then(Value::as_str))
        .map_or_else(
            || Value::Object(response.clone()).to_string(),
            str::to_string,
        )
}

fn part(path: &str, value: &Value) -> Result<Part, Rejection> {
    let p = names::object(path, value)?;
    names::only(path, p, &PART_FIELDS)?;
    let set: Vec<&str> = DATA
        .iter()
        .copied()
        .filter(|d| get(p, d).is_some())
        .collect();
    let field = match set.as_slice() {
        [] => {
            return Err(rule(
                &format!("{path}.data"),
                "required oneof field 'data' must have one initialized field",
            ))
        }
        [one] => *one,
        [_, second, ..] => {
            return Err(invalid(format!(
                "Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '{}'",
                names::snake(second)
            )))
        }
    };
    let thought = match get(p, "thought") {
        Some(v) => names::boolean(&join(path, "thought"), v)?,
        None => false,
    };
    if let Some(v) = get(p, "thoughtSignature") {
        names::string(&join(path, "thoughtSignature"), v)?;
    }
    let data_path = join(path, field);
    let data = get(p, field).unwrap_or(&Value::Null);
    match field {
        "text" => Ok(Part::Text {
            text: names::string(&data_path, data)?.to_string(),
            thought,
        }),
        "inlineData" => {
            let d = names::object(&data_path, data)?;
            names::only(&data_path, d, &["mimeType", "data"])?;
            let mime = names::string(
                &join(&data_path, "mimeType"),
                required(&data_path, d, "mimeType")?,
            )?;
            let bytes = names::string(&join(&data_path, "data"), required(&data_path, d, "data")?)?;
            Ok(Part::Media(format!("data:{mime};base64,{bytes}")))
        }
        "fileData" => {
            let d = names::object(&data_path, data)?;
            names::only(&data_path, d, &["mimeType", "fileUri"])?;
            if let Some(m) = get(d, "mimeType") {
                names::string(&join(&data_path, "mimeType"), m)?;
            }
            let uri = names::string(
                &join(&data_path, "fileUri"),
                required(&data_path, d, "fileUri")?,
            )?;
            Ok(Part::Media(uri.to_string()))
        }
        "functionCall" => {
            let c = names::object(&data_path, data)?;
            names::only(&data_path, c, &["id", "name", "args"])?;
            if let Some(args) = get(c, "args") {
                names::object(&join(&data_path, "args"), args)?;
            }
            Ok(Part::Call {
                name: name(&data_path, c)?,
            })
        }
        "functionResponse" => {
            let r = names::object(&data_path, data)?;
            names::only(
                &data_path,
                r,
                &["id", "name", "response", "willContinue", "scheduling"],
            )?;
            let name = name(&data_path, r)?;
            let response_path = join(&data_path, "response");
            let response = required(&data_path, r, "response")?;
            let response = response.as_object().ok_or_else(|| {
                names::bad_value(
                    &response_path,
                    "type.googleapis.com/google.protobuf.Struct",
                    response,
                )
            })?;
            Ok(Part::Response {
                name,
                text: response_text(response),
            })
        }
        _ => {
            names::object(&data_path, data)?;
            Ok(Part::Other)
        }
    }
}

/// Checks one `Content` at `path`.
fn content(path: &str, value: &Value) -> Result<Content, Rejection> {
    let c = names::object(path, value)?;
    names::only(path, c, &["role", "parts"])?;
    let model = match get(c, "role") {
        None => false,
        Some(Value::String(r)) if r == "user" => false,
        Some(Value::String(r)) if r == "model" => true,
        Some(_) => return Err(invalid("Please use a valid role: user, model.".into())),
    };
    let parts_path = join(path, "parts");
    let parts = match get(c, "parts") {
        None => Vec::new(),
        Some(v) => names::list(&parts_path, v)?
            .iter()
            .enumerate()
            .map(|(j, p)| part(&format!("{parts_path}[{j}]"), p))
            .collect::<Result<Vec<_>, _>>()?,
    };
    if parts.is_empty() {
        return Err(rule(&parts_path, "contents.parts must not be empty."));
    }
    for (j, p) in parts.iter().enumerate() {
        let misplaced = match p {
            Part::Call { .. } if !model => Some("function_call"),
            Part::Response { .. } if model => Some("function_response"),
            _ => None,
        };
        if let Some(kind) = misplaced {
            return Err(rule(
                &format!("{parts_path}[{j}].{kind}"),
                "function calls belong in model turns and function responses in user turns.",
            )
            .on_tools());
        }
    }
    Ok(Content { model, parts })
}

/// Checks `contents` (the list) and the function-calling order.
pub(super) fn contents(value: Option<&Value>) -> Result<Vec<Content>, Rejection> {
    let list = match value {
        None => Vec::new(),
        Some(v) => names::list("contents", v)?
            .iter()
            .enumerate()
            .map(|(i, c)| content(&format!("contents[{i}]"), c))
            .collect::<Result<Vec<_>, _>>()?,
    };
    if list.is_empty() {
        return Err(rule("contents", "contents is not specified"));
    }
    for (i, c) in list.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| &list[j]);
        if !c.calls().is_empty() && prev.is_none_or(|p| p.model) {
            return Err(invalid(
                "Please ensure that function call turn comes immediately after a user turn or after a function response turn.".into(),
            ).on_tools());
        }
        let responses = c.responses();
        if responses.is_empty() {
            continue;
        }
        let calls = prev
            .filter(|p| p.model)
            .map(Content::calls)
            .unwrap_or_default();
        if calls.is_empty() {
            return Err(invalid(
                "Please ensure that function response turn comes immediately after a function call turn.".into(),
            ).on_tools());
        }
        if calls.len() != responses.len() {
            return Err(invalid(
                "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.".into(),
            ).on_tools());
        }
        if let Some(stray) = responses.iter().find(|r| !calls.contains(r)) {
            return Err(invalid(format!(
                "Please ensure that function response names match the function call turn: no function call is named '{stray}'."
            )).on_tools());
        }
    }
    Ok(list)
}

/// The texts of `systemInstruction` (a `Content` whose role is ignored).
pub(super) fn system(value: Option<&Value>) -> Result<Vec<String>, Rejection> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let c = content("system_instruction", value)?;
    Ok(c.parts
        .into_iter()
        .filter_map(|p| match p {
            Part::Text { text, .. } if !text.is_empty() => Some(text),
            _ => None,
        })
        .collect())
}

/// The conversation in OpenAI shape; see [`crate::Validated`].
pub(super) fn conversation(system: &[String], contents: &[Content]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = system
        .iter()
        .map(|s| ChatMessage::new("system", s))
        .collect();
    for c in contents {
        let mut group = Grouper::new(if c.model { "assistant" } else { "user" });
        for p in &c.parts {
            match p {
                Part::Text {
                    text,
                    thought: false,
                } => group.text(text, &mut out),
                Part::Media(url) => group.image(url),
                Part::Call { .. } => group.tool_call(),
                Part::Response { text, .. } => group.tool_result(text, &mut out),
                Part::Text { .. } | Part::Other => {}
            }
        }
        group.flush(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(value: Value) -> String {
        contents(Some(&value)).unwrap_err().message
    }

    fn call(name: &str) -> Value {
        json!({"functionCall": {"name": name, "args": {"q": 1}}})
    }

    fn response(name: &str) -> Value {
        json!({"functionResponse": {"name": name, "response": {"output": format!("{name} says hi")}}})
    }

    #[test]
    fn parts_need_exactly_one_data_field() {
        assert_eq!(
            refused(json!([{"role": "user", "parts": [{}]}])),
            "* GenerateContentRequest.contents[0].parts[0].data: required oneof field 'data' must have one initialized field\n"
        );
        assert!(refused(json!([{"role": "user", "parts": [{"text": "a", "inline_data": {"mime_type": "image/png", "data": "AA"}}]}]))
            .contains("Oneof field 'data' is already set"));
        assert_eq!(
            refused(json!([{"role": "user", "parts": []}])),
            "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n"
        );
        assert_eq!(
            refused(json!([])),
            "* GenerateContentRequest.contents: contents is not specified\n"
        );
        assert_eq!(
            refused(json!([{"role": "assistant", "parts": [{"text": "a"}]}])),
            "Please use a valid role: user, model."
        );
        assert!(
            refused(json!([{"role": "user", "parts": [{"text": 5}]}])).contains("(TYPE_STRING), 5")
        );
        assert!(
            refused(json!([{"role": "user", "parts": [{"text": "a", "bold": true}]}]))
                .contains("Unknown name \"bold\" at 'contents[0].parts[0]'")
        );
        assert!(
            refused(json!([{"parts": [{"functionCall": {"name": ""}}]}])).contains("function_call")
        );
    }

    #[test]
    fn function_responses_follow_their_calls() {
        let ok = json!([
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": [{"text": "checking"}, call("weather"), call("time")]},
            {"role": "user", "parts": [response("weather"), response("time")]},
            {"role": "user", "parts": [{"text": "thanks"}]}
        ]);
        let list = contents(Some(&ok)).unwrap();
        let messages = conversation(&["be brief".into()], &list);
        let got: Vec<(&str, String)> = messages
            .iter()
            .map(|m| (m.role.as_str(), m.text()))
            .collect();
        assert_eq!(
            got,
            [
                ("system", "be brief".to_string()),
                ("user", "weather?".into()),
                ("assistant", "checking".into()),
                ("tool", "weather says hi".into()),
                ("tool", "time says hi".into()),
                ("user", "thanks".into()),
            ]
        );
        assert_eq!(
            refused(json!([{"role": "user", "parts": [response("weather")]}])),
            "Please ensure that function response turn comes immediately after a function call turn."
        );
        assert!(refused(json!([
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [call("a"), call("b")]},
            {"role": "user", "parts": [response("a")]}
        ]))
        .contains("number of function response parts"));
        assert!(refused(json!([
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [call("a")]},
            {"role": "user", "parts": [response("z")]}
        ]))
        .contains("no function call is named 'z'"));
        assert!(refused(json!([
            {"role": "model", "parts": [call("a")]},
            {"role": "user", "parts": [response("a")]}
        ]))
        .contains("function call turn comes immediately after a user turn"));
        assert!(refused(json!([{"role": "user", "parts": [call("a")]}]))
            .contains("function calls belong in model turns"));
    }

    #[test]
    fn response_text_prefers_output() {
        let r = json!({"output": "sunny"});
        assert_eq!(response_text(r.as_object().unwrap()), "sunny");
        let r = json!({"temp": 21});
        assert_eq!(response_text(r.as_object().unwrap()), "{\"temp\":21}");
        assert_eq!(
            system(Some(&json!({"parts": [{"text": "a"}, {"text": "b"}]}))).unwrap(),
            ["a", "b"]
        );
        assert!(system(Some(&json!({"parts": []}))).is_err());
    }
}
