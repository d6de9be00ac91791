//! Strict validation of a Gemini `generateContent` request body: known
//! fields only, `generationConfig` typed, tools and their schemas in the
//! API's subset, then the contents (see [`super::contents`]). A valid
//! request comes back as [`Validated`], the conversation in OpenAI shape.

use super::contents::{self, Content};
use super::names::{self, get, join, rule};
use super::{invalid, schema, Call, Method};
use crate::{Rejection, Validated};
use serde_json::{Map, Value};

/// Top-level fields of a `GenerateContentRequest`.
const FIELDS: [&str; 8] = [
    "model",
    "contents",
    "systemInstruction",
    "generationConfig",
    "tools",
    "toolConfig",
    "safetySettings",
    "cachedContent",
];

/// How a `generationConfig` field is typed.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Float,
    Bool,
    Str,
    Strings,
    Schema,
    Object,
    Any,
}

/// The fields of `generationConfig` and their types.
const GENERATION: [(&str, Kind); 20] = [
    ("stopSequences", Kind::Strings),
    ("responseMimeType", Kind::Str),
    ("responseSchema", Kind::Schema),
    ("responseJsonSchema", Kind::Any),
    ("responseModalities", Kind::Strings),
    ("candidateCount", Kind::Int),
    ("maxOutputTokens", Kind::Int),
    ("temperature", Kind::Float),
    ("topP", Kind::Float),
    ("topK", Kind::Int),
    ("seed", Kind::Int),
    ("presencePenalty", Kind::Float),
    ("frequencyPenalty", Kind::Float),
    ("responseLogprobs", Kind::Bool),
    ("logprobs", Kind::Int),
    ("enableEnhancedCivicAnswers", Kind::Bool),
    ("speechConfig", Kind::Object),
    ("thinkingConfig", Kind::Object),
    ("mediaResolution", Kind::Str),
    ("imageConfig", Kind::Object),
];

/// Validates a request to `call` (read from its path with
/// [`super::parse_call`]); `body` is the raw body.
///
/// # Errors
/// The API's 400 for the first rule the request breaks.
pub fn validate(call: &Call, body: &[u8]) -> Result<Validated, Rejection> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| invalid(format!("Invalid JSON payload received. {e}")))?;
    let top = names::object("", &value)?;
    names::only("", top, &FIELDS)?;
    if let Some(m) = get(top, "model") {
        names::string("model", m)?;
    }
    if let Some(c) = get(top, "cachedContent") {
        names::string("cached_content", c)?;
    }
    let max_tokens = generation(get(top, "generationConfig"))?;
    tools(get(top, "tools"))?;
    tool_config(get(top, "toolConfig"))?;
    safety(get(top, "safetySettings"))?;
    let system = contents::system(get(top, "systemInstruction"))?;
    let list: Vec<Content> = contents::contents(get(top, "contents"))?;
    let prefill = list.last().is_some_and(|c| c.model);
    Ok(Validated {
        model: call.model.clone(),
        stream: matches!(call.method, Method::Stream { .. }),
        max_tokens,
        messages: contents::conversation(&system, &list),
        prefill,
    })
}

/// Checks `generationConfig`; returns its `maxOutputTokens`.
fn generation(value: Option<&Value>) -> Result<Option<u64>, Rejection> {
    let Some(value) = value else {
        return Ok(None);
    };
    let path = "generation_config";
    let g = names::object(path, value)?;
    let allowed: Vec<&str> = GENERATION.iter().map(|(k, _)| *k).collect();
    names::only(path, g, &allowed)?;
    for (key, kind) in GENERATION {
        let Some(v) = get(g, key) else {
            continue;
        };
        let p = join(path, key);
        match kind {
            Kind::Int => {
                names::int(&p, v)?;
            }
            Kind::Float => {
                names::float(&p, v)?;
            }
            Kind::Bool => {
                names::boolean(&p, v)?;
            }
            Kind::Str => {
                names::string(&p, v)?;
            }
            Kind::Strings => names::strings(&p, v)?,
            Kind::Schema => schema::check(&p, v)?,
            Kind::Object => {
                names::object(&p, v)?;
            }
            Kind::Any => {}
        }
    }
    if let Some(t) = get(g, "temperature") {
        let t = names::float("", t)?;
        if !(0.0..=2.0).contains(&t) {
            return Err(rule(
                "generation_config.temperature",
                "temperature must be between 0 and 2",
            ));
        }
    }
    match get(g, "maxOutputTokens") {
        None => Ok(None),
        Some(v) => {
            let n = names::int("", v)?;
            u64::try_from(n).map(Some).map_err(|_| {
                rule(
                    "generation_config.max_output_tokens",
                    "max_output_tokens must be positive",
                )
            })
        }
    }
}

/// Whether `name` is a valid function name: starts with a letter or `_`,
/// then letters, digits, `_`, `.`, `:` or `-`, at most 64 characters.
fn is_function_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

fn tools(value: Option<&Value>) -> Result<(), Rejection> {
    let Some(value) = value else {
        return Ok(());
    };
    for (i, tool) in names::list("tools", value)?.iter().enumerate() {
        let path = format!("tools[{i}]");
        let t = names::object(&path, tool)?;
        names::only(
            &path,
            t,
            &[
                "functionDeclarations",
                "googleSearch",
                "googleSearchRetrieval",
                "codeExecution",
                "urlContext",
            ],
        )?;
        let Some(decls) = get(t, "functionDeclarations") else {
            continue;
        };
        let decls_path = join(&path, "functionDeclarations");
        for (j, decl) in names::list(&decls_path, decls)?.iter().enumerate() {
            declaration(&format!("{decls_path}[{j}]"), decl)?;
        }
    }
    Ok(())
}

fn declaration(path: &str, value: &Value) -> Result<(), Rejection> {
    let d = names::object(path, value)?;
    names::only(
        path,
        d,
        &[
            "name",
            "description",
            "parameters",
            "parametersJsonSchema",
            "response",
            "responseJsonSchema",
            "behavior",
        ],
    )?;
    let name = get(d, "name").map(|n| names::string(&join(path, "name"), n));
    match name.transpose()? {
        Some(n) if is_function_name(n) => {}
        _ => {
            return Err(rule(
                &join(path, "name"),
                "Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.",
            )
            .on_tools())
        }
    }
    if let Some(v) = get(d, "description") {
        names::string(&join(path, "description"), v)?;
    }
    for key in ["parameters", "response"] {
        if let Some(s) = get(d, key) {
            schema::check(&join(path, key), s)?;
        }
    }
    Ok(())
}

fn tool_config(value: Option<&Value>) -> Result<(), Rejection> {
    let Some(value) = value else {
        return Ok(());
    };
    let path = "tool_config";
    let c = names::object(path, value)?;
    names::only(path, c, &["functionCallingConfig", "retrievalConfig"])?;
    let Some(f) = get(c, "functionCallingConfig") else {
        return Ok(());
    };
    let fp = join(path, "functionCallingConfig");
    let f: &Map<String, Value> = names::object(&fp, f)?;
    names::only(&fp, f, &["mode", "allowedFunctionNames"])?;
    if let Some(mode) = get(f, "mode") {
        let known = ["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"];
        if !mode.as_str().is_some_and(|m| known.contains(&m)) {
            return Err(names::bad_value(
                &join(&fp, "mode"),
                "type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode",
                mode,
            ));
        }
    }
    if let Some(names_list) = get(f, "allowedFunctionNames") {
        names::strings(&join(&fp, "allowedFunctionNames"), names_list)?;
    }
    Ok(())
}

fn safety(value: Option<&Value>) -> Result<(), Rejection> {
    let Some(value) = value else {
        return Ok(());
    };
    for (i, s) in names::list("safety_settings", value)?.iter().enumerate() {
        let path = format!("safety_settings[{i}]");
        let o = names::object(&path, s)?;
        names::only(&path, o, &["category", "threshold", "method"])?;
        for key in ["category", "threshold", "method"] {
            if let Some(v) = get(o, key) {
                names::string(&join(&path, key), v)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(stream: bool) -> Call {
        Call {
            model: "gemini-sim".into(),
            method: if stream {
                Method::Stream { sse: true }
            } else {
                Method::Generate
            },
        }
    }

    fn check(body: Value) -> Result<Validated, Rejection> {
        validate(&call(false), body.to_string().as_bytes())
    }

    fn refused(body: Value) -> String {
        let r = check(body).unwrap_err();
        assert_eq!(r.status, 400);
        assert_eq!(r.body["error"]["code"], 400);
        assert_eq!(r.body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(r.body["error"]["message"], r.message.as_str());
        r.message
    }

    fn base() -> Value {
        json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    }

    fn with(key: &str, value: Value) -> Value {
        let mut b = base();
        b[key] = value;
        b
    }

    #[test]
    fn a_valid_request_in_either_spelling() {
        let v = validate(
            &call(true),
            json!({
                "system_instruction": {"parts": [{"text": "rule one"}, {"text": "rule two"}]},
                "contents": [
                    {"role": "user", "parts": [{"text": "my sister is Oriane"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]},
                    {"role": "model", "parts": [{"text": "noted"}]},
                    {"parts": [{"text": "her name?"}]}
                ],
                "generationConfig": {"maxOutputTokens": 64, "temperature": 0.2, "top_p": 0.9, "stopSequences": ["END"], "responseMimeType": "text/plain", "thinkingConfig": {"thinkingBudget": 0}},
                "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}],
                "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        assert!(v.stream && !v.prefill);
        assert_eq!(v.model, "gemini-sim");
        assert_eq!(v.max_tokens, Some(64));
        let roles: Vec<&str> = v.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "system", "user", "assistant", "user"]);
        assert_eq!(v.messages[2].text(), "my sister is Oriane");
        assert_eq!(
            v.messages[2].content[1]["image_url"]["url"],
            "data:image/png;base64,AAAA"
        );
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_refused() {
        assert_eq!(
            refused(with("messages", json!([]))),
            "Invalid JSON payload received. Unknown name \"messages\": Cannot find field."
        );
        assert_eq!(
            refused(with("generationConfig", json!({"max_tokens": 5}))),
            "Invalid JSON payload received. Unknown name \"max_tokens\" at 'generation_config': Cannot find field."
        );
        assert_eq!(
            refused(with("generationConfig", json!({"temperature": "warm"}))),
            "Invalid value at 'generation_config.temperature' (TYPE_FLOAT), \"warm\""
        );
        assert!(
            refused(with("generationConfig", json!({"stopSequences": "END"})))
                .contains("stop_sequences")
        );
        assert!(refused(with("generationConfig", json!({"temperature": 3})))
            .contains("between 0 and 2"));
        assert!(refused(with(
            "tools",
            json!([{"functionDeclarations": [{"name": "f", "parameters": {"type": "object", "additionalProperties": false}}]}])
        ))
        .contains("Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters'"));
        assert!(refused(with(
            "tools",
            json!([{"functionDeclarations": [{"name": "9lives"}]}])
        ))
        .contains("Invalid function name"));
        assert!(refused(with(
            "toolConfig",
            json!({"functionCallingConfig": {"mode": "SOMETIMES"}})
        ))
        .contains("mode"));
        assert!(
            refused(with("systemInstruction", json!({"parts": [{"text": 1}]})))
                .contains("system_instruction.parts[0].text")
        );
        assert!(validate(&call(false), b"not json")
            .unwrap_err()
            .message
            .starts_with("Invalid JSON payload received."));
        assert!(refused(json!([1])).contains("Expected an object"));
    }

    #[test]
    fn a_final_model_turn_is_a_prefill() {
        let v = check(json!({"contents": [
            {"role": "user", "parts": [{"text": "a"}]},
            {"role": "model", "parts": [{"text": "The answer is"}]}
        ]}))
        .unwrap();
        assert!(v.prefill);
        assert_eq!(v.max_tokens, None);
    }

    #[test]
    fn function_names_follow_the_api_rule() {
        assert!(is_function_name("get_weather"));
        assert!(is_function_name("_ns.tool:v1-beta"));
        assert!(!is_function_name("9lives"));
        assert!(!is_function_name(""));
        assert!(!is_function_name(&"a".repeat(65)));
    }
}
