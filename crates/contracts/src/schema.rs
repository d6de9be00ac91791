//! `schema`: when the request asked for structured output, the reply is
//! pure JSON and validates against the requested schema.
//!
//! Applies when `response_format` is `{"type": "json_schema", "json_schema":
//! {"schema": ...}}` (validated with the `jsonschema` crate, draft detected
//! from the schema, 2020-12 by default) or `{"type": "json_object"}` (must
//! parse as an object). A `json_schema` format without a schema is judged
//! as `json_object`.
//!
//! Fails when the reply is wrapped in a code fence, has prose before or
//! after the JSON, ends early (truncated JSON), is not JSON at all, or does
//! not validate (the first three errors are named with their paths).
//! Undetermined when the request's own schema does not compile. Empty
//! replies are left to `empty`; a transport failure never reaches here.
//!
//! Blind spots: remote `$ref`s are not fetched (no network), so a schema
//! that needs one is undetermined; `format` keywords are not asserted
//! (draft 2020-12 treats them as annotations); whether the values are
//! *right* is not judged, only their shape.

use super::text::is_blank;
use super::{Contract, ContractInput, ContractName, Outcome};
use cb_wire::openai::ChatRequest;
use serde_json::Value;

/// Validation errors named in a failure reason, at most.
const MAX_ERRORS_NAMED: usize = 3;

/// The structured output a request asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestedFormat {
    /// `{"type": "json_object"}`: any JSON object.
    JsonObject,
    /// `{"type": "json_schema", ...}`: JSON valid against this schema.
    JsonSchema(Value),
}

/// The structured output `request` asks for, from
/// `extra["response_format"]`; `None` for plain text.
pub fn requested_format(request: &ChatRequest) -> Option<RequestedFormat> {
    let format = request.extra.get("response_format")?;
    match format.get("type").and_then(Value::as_str)? {
        "json_object" => Some(RequestedFormat::JsonObject),
        "json_schema" => Some(
            format
                .get("json_schema")
                .and_then(|j| j.get("schema"))
                .cloned()
                .map_or(RequestedFormat::JsonObject, RequestedFormat::JsonSchema),
        ),
        _ => None,
    }
}

/// The `schema` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schema;

impl Contract for Schema {
    fn name(&self) -> ContractName {
        ContractName::Schema
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        let format = requested_format(input.request)?;
        if is_blank(input.text) {
            return None;
        }
        let value = match parse_pure_json(input.text) {
            Ok(value) => value,
            Err(reason) => return Some(Outcome::fail(reason)),
        };
        Some(match format {
            RequestedFormat::JsonObject if value.is_object() => Outcome::Pass,
            RequestedFormat::JsonObject => Outcome::fail(format!(
                "a JSON object was asked for, the reply is {}",
                kind_of(&value)
            )),
            RequestedFormat::JsonSchema(schema) => validate(&schema, &value),
        })
    }
}

/// Parses `text` as one bare JSON value, or says what is wrong with it.
fn parse_pure_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.starts_with("```") {
        return Err(
            "the JSON is wrapped in a Markdown code fence; structured output must be bare JSON"
                .into(),
        );
    }
    let mut stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => {
            let rest = trimmed[stream.byte_offset()..].trim();
            if rest.is_empty() {
                Ok(value)
            } else {
                Err(format!(
                    "prose after the JSON ({} characters: {:?})",
                    rest.chars().count(),
                    preview(rest)
                ))
            }
        }
        Some(Err(e)) if e.is_eof() => Err(format!("the JSON ends early (truncated): {e}")),
        _ => Err(match embedded_json(trimmed) {
            Some(at) => format!(
                "prose before the JSON ({} characters: {:?})",
                trimmed[..at].chars().count(),
                preview(&trimmed[..at])
            ),
            None => format!("the reply is not JSON: {:?}", preview(trimmed)),
        }),
    }
}

/// The byte offset of a JSON object or array that starts after some prose.
fn embedded_json(text: &str) -> Option<usize> {
    text.match_indices(['{', '['])
        .map(|(i, _)| i)
        .filter(|&i| i > 0)
        .find(|&i| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<Value>()
                .next()
                .is_some_and(|r| r.is_ok())
        })
}

fn validate(schema: &Value, value: &Value) -> Outcome {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return Outcome::undetermined(format!("the requested schema does not compile: {e}"))
        }
    };
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path.to_string();
            let at = if path.is_empty() {
                "/".to_string()
            } else {
                path
            };
            format!("at {at}: {e}")
        })
        .collect();
    if errors.is_empty() {
        return Outcome::Pass;
    }
    let named: Vec<&str> = errors
        .iter()
        .take(MAX_ERRORS_NAMED)
        .map(String::as_str)
        .collect();
    let more = errors.len().saturating_sub(MAX_ERRORS_NAMED);
    let tail = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    Outcome::fail(format!(
        "the JSON does not match the requested schema: {}{tail}",
        named.join("; ")
    ))
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first 40 characters of `s`, for reasons.
fn preview(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{input_for, request};
    use serde_json::json;

    fn structured(format: Value) -> ChatRequest {
        let mut r = request(&[("user", "Weather in Lisbon as JSON.")]);
        r.extra.insert("response_format".into(), format);
        r
    }

    fn weather() -> ChatRequest {
        structured(
            json!({"type": "json_schema", "json_schema": {"name": "w", "schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
                "required": ["city", "temp"], "additionalProperties": false
            }}}),
        )
    }

    fn check(r: &ChatRequest, text: &str) -> Option<Outcome> {
        Schema.check(&input_for(text, r))
    }

    #[test]
    fn valid_json_passes() {
        let r = weather();
        assert_eq!(
            check(&r, r#"{"city": "Lisbon", "temp": 21.5}"#),
            Some(Outcome::Pass)
        );
        assert_eq!(
            check(&r, "\n{\n \"city\": \"Lisbon\",\n \"temp\": 19\n}\n"),
            Some(Outcome::Pass)
        );
        let obj = structured(json!({"type": "json_object"}));
        assert_eq!(check(&obj, r#"{"a": 1}"#), Some(Outcome::Pass));
    }

    #[test]
    fn every_break_fails_with_its_reason() {
        let r = weather();
        for (text, says) in [
            (r#"{"city": "Lisbon"}"#, "required"),
            (r#"{"city": "Lisbon", "temp": "21"}"#, "/temp"),
            (r#"{"city": "Lisbon", "temp": 1, "x": 2}"#, "schema"),
            (
                "Here you go:\n{\"city\": \"Lisbon\", \"temp\": 1}",
                "prose before",
            ),
            (
                "{\"city\": \"Lisbon\", \"temp\": 1}\nAnything else?",
                "prose after",
            ),
            (
                "```json\n{\"city\": \"Lisbon\", \"temp\": 1}\n```",
                "code fence",
            ),
            (r#"{"city": "Lisbon", "temp": 2"#, "truncated"),
            ("{'city': 'Lisbon'}", "not JSON"),
        ] {
            let out = check(&r, text).unwrap();
            assert!(out.is_fail(), "{text}: {out}");
            assert!(out.reason().unwrap().contains(says), "{text}: {out}");
        }
        let obj = structured(json!({"type": "json_object"}));
        assert!(check(&obj, "[1, 2]")
            .unwrap()
            .reason()
            .unwrap()
            .contains("an array"));
    }

    #[test]
    fn applies_only_to_structured_requests() {
        let plain = request(&[("user", "Hi")]);
        assert_eq!(check(&plain, "not json"), None);
        let text = structured(json!({"type": "text"}));
        assert_eq!(check(&text, "not json"), None);
        assert_eq!(check(&weather(), "  "), None, "empty is judged by `empty`");
        // Any invisible character is blank, by the one predicate `empty` uses.
        let obj = structured(json!({"type": "json_object"}));
        for blank in ["\u{200E}", "\u{00AD}\n", "\u{3164}"] {
            assert_eq!(check(&obj, blank), None, "{blank:?} is judged by `empty`");
            assert!(crate::Empty
                .check(&input_for(blank, &obj))
                .unwrap()
                .is_fail());
        }
        let no_schema = structured(json!({"type": "json_schema", "json_schema": {"name": "x"}}));
        assert_eq!(
            requested_format(&no_schema),
            Some(RequestedFormat::JsonObject)
        );
        let bad =
            structured(json!({"type": "json_schema", "json_schema": {"schema": {"type": 5}}}));
        assert!(matches!(
            check(&bad, "{}"),
            Some(Outcome::Undetermined { .. })
        ));
    }
}
