//! Field names and type checks as Gemini's protobuf-JSON front end applies
//! them: a field may be spelled `systemInstruction` or `system_instruction`,
//! an unknown one is refused ("Unknown name ... Cannot find field."), a
//! value of the wrong type is refused with its protobuf type, and a rule
//! the request breaks is reported as `* GenerateContentRequest.<path>: ...`.

use super::invalid;
use crate::Rejection;
use serde_json::{Map, Value};

/// `systemInstruction` -> `system_instruction`.
pub(super) fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The field `camel` of `object`, under either spelling.
pub(super) fn get<'a>(object: &'a Map<String, Value>, camel: &str) -> Option<&'a Value> {
    object.get(camel).or_else(|| object.get(&snake(camel)))
}

/// Refuses any field of `object` that is not one of `allowed` (camelCase
/// names; their snake_case spelling is accepted too).
pub(super) fn only(
    path: &str,
    object: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), Rejection> {
    let known = |key: &str| allowed.iter().any(|a| *a == key || snake(a) == key);
    match object.keys().find(|k| !known(k)) {
        None => Ok(()),
        Some(key) if path.is_empty() => Err(invalid(format!(
            "Invalid JSON payload received. Unknown name \"{key}\": Cannot find field."
        ))),
        Some(key) => Err(invalid(format!(
            "Invalid JSON payload received. Unknown name \"{key}\" at '{path}': Cannot find field."
        ))),
    }
}

/// `Invalid value at 'path' (TYPE), value`.
pub(super) fn bad_value(path: &str, kind: &str, value: &Value) -> Rejection {
    invalid(format!("Invalid value at '{path}' ({kind}), {value}"))
}

/// `* GenerateContentRequest.path: message`.
pub(super) fn rule(path: &str, message: &str) -> Rejection {
    invalid(format!("* GenerateContentRequest.{path}: {message}\n"))
}

/// `parent.field` in snake_case (or `field` at the top).
pub(super) fn join(parent: &str, camel: &str) -> String {
    if parent.is_empty() {
        snake(camel)
    } else {
        format!("{parent}.{}", snake(camel))
    }
}

/// A JSON object, or the protobuf message type error.
pub(super) fn object<'a>(
    path: &str,
    value: &'a Value,
) -> Result<&'a Map<String, Value>, Rejection> {
    value.as_object().ok_or_else(|| {
        invalid(format!(
            "Invalid JSON payload received. Expected an object at '{path}', got {value}."
        ))
    })
}

/// An integer (protobuf JSON also takes one written as a string).
pub(super) fn int(path: &str, value: &Value) -> Result<i64, Rejection> {
    value
        .as_i64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0)
                .map(|f| f as i64)
        })
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
        .ok_or_else(|| bad_value(path, "TYPE_INT32", value))
}

/// A number (or a numeric string).
pub(super) fn float(path: &str, value: &Value) -> Result<f64, Rejection> {
    value
        .as_f64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
        .ok_or_else(|| bad_value(path, "TYPE_FLOAT", value))
}

/// A boolean.
pub(super) fn boolean(path: &str, value: &Value) -> Result<bool, Rejection> {
    value
        .as_bool()
        .ok_or_else(|| bad_value(path, "TYPE_BOOL", value))
}

/// A string.
pub(super) fn string<'a>(path: &str, value: &'a Value) -> Result<&'a str, Rejection> {
    value
        .as_str()
        .ok_or_else(|| bad_value(path, "TYPE_STRING", value))
}

/// A list of strings.
pub(super) fn strings(path: &str, value: &Value) -> Result<(), Rejection> {
    let list = value.as_array().ok_or_else(|| {
        invalid(format!(
            "Invalid JSON payload received. Expected a list at '{path}', got {value}."
        ))
    })?;
    for (i, v) in list.iter().enumerate() {
        string(&format!("{path}[{i}]"), v)?;
    }
    Ok(())
}

/// A list, or the protobuf repeated-field error.
pub(super) fn list<'a>(path: &str, value: &'a Value) -> Result<&'a Vec<Value>, Rejection> {
    value.as_array().ok_or_else(|| {
        invalid(format!(
            "Invalid JSON payload received. Expected a list at '{path}', got {value}."
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_spellings_are_fields() {
        assert_eq!(snake("systemInstruction"), "system_instruction");
        assert_eq!(snake("topP"), "top_p");
        let o = json!({"system_instruction": 1, "topK": 2});
        let o = o.as_object().unwrap();
        assert_eq!(get(o, "systemInstruction"), Some(&json!(1)));
        assert_eq!(get(o, "topK"), Some(&json!(2)));
        assert!(only("", o, &["systemInstruction", "topK"]).is_ok());
        let err = only("generation_config", o, &["topK"]).unwrap_err();
        assert_eq!(
            err.message,
            "Invalid JSON payload received. Unknown name \"system_instruction\" at 'generation_config': Cannot find field."
        );
    }

    #[test]
    fn types_are_read_as_protobuf_json_reads_them() {
        assert_eq!(int("p", &json!("12")).unwrap(), 12);
        assert_eq!(int("p", &json!(3.0)).unwrap(), 3);
        assert_eq!(
            int("generation_config.max_output_tokens", &json!(1.5))
                .unwrap_err()
                .message,
            "Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), 1.5"
        );
        assert_eq!(
            float("generation_config.temperature", &json!("hot"))
                .unwrap_err()
                .message,
            "Invalid value at 'generation_config.temperature' (TYPE_FLOAT), \"hot\""
        );
        assert!(boolean("p", &json!(1)).is_err());
        assert!(strings("p", &json!(["a", 2])).is_err());
        assert_eq!(
            rule("contents", "contents is not specified").message,
            "* GenerateContentRequest.contents: contents is not specified\n"
        );
    }
}
