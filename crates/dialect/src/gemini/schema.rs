//! Gemini's `Schema`: the OpenAPI subset it takes for function parameters
//! and `responseSchema`. A JSON schema from an OpenAI client often uses
//! keywords outside it (`additionalProperties`, `$schema`, `const`, type
//! lists), which the API refuses with "Unknown name"; [`check`] refuses them
//! the same way, and [`from_json_schema`] rewrites a JSON schema into the
//! subset, noting each keyword it could not keep.

use super::names::{self, get, join};
use crate::{Note, Rejection};
use serde_json::{json, Map, Value};

/// The fields of a Gemini `Schema` (camelCase).
const FIELDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The values of `type`.
const TYPES: [&str; 8] = [
    "TYPE_UNSPECIFIED",
    "STRING",
    "NUMBER",
    "INTEGER",
    "BOOLEAN",
    "ARRAY",
    "OBJECT",
    "NULL",
];

/// Checks a `Schema` at `path`, recursively.
pub(super) fn check(path: &str, value: &Value) -> Result<(), Rejection> {
    let s = names::object(path, value)?;
    names::only(path, s, &FIELDS)?;
    if let Some(t) = get(s, "type") {
        let is_object = t.as_str().is_some_and(|t| t.eq_ignore_ascii_case("OBJECT"));
        let has_properties = get(s, "properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if is_object && !has_properties {
            return Err(names::rule(
                &join(path, "properties"),
                "should be non-empty for OBJECT type",
            ));
        }
        let ok = t
            .as_str()
            .is_some_and(|t| TYPES.iter().any(|k| k.eq_ignore_ascii_case(t)));
        if !ok {
            return Err(names::bad_value(
                &join(path, "type"),
                "type.googleapis.com/google.ai.generativelanguage.v1beta.Type",
                t,
            ));
        }
    }
    for key in ["format", "title", "description", "pattern"] {
        if let Some(v) = get(s, key) {
            names::string(&join(path, key), v)?;
        }
    }
    if let Some(v) = get(s, "nullable") {
        names::boolean(&join(path, "nullable"), v)?;
    }
    for key in ["enum", "required", "propertyOrdering"] {
        if let Some(v) = get(s, key) {
            names::strings(&join(path, key), v)?;
        }
    }
    for key in [
        "maxItems",
        "minItems",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
    ] {
        if let Some(v) = get(s, key) {
            names::int(&join(path, key), v)?;
        }
    }
    for key in ["minimum", "maximum"] {
        if let Some(v) = get(s, key) {
            names::float(&join(path, key), v)?;
        }
    }
    if let Some(props) = get(s, "properties") {
        let p = join(path, "properties");
        for (name, sub) in names::object(&p, props)? {
            check(&format!("{p}[{name:?}].value"), sub)?;
        }
    }
    if let Some(items) = get(s, "items") {
        check(&join(path, "items"), items)?;
    }
    if let Some(any) = get(s, "anyOf") {
        let p = join(path, "anyOf");
        for (i, sub) in names::list(&p, any)?.iter().enumerate() {
            check(&format!("{p}[{i}]"), sub)?;
        }
    }
    Ok(())
}

/// A JSON schema rewritten into Gemini's subset; `at` names it in notes.
pub(super) fn from_json_schema(value: &Value, at: &str, notes: &mut Vec<Note>) -> Value {
    let Some(s) = value.as_object() else {
        notes.push(Note::SchemaKeywordDropped {
            keyword: "(a schema that is not an object)".into(),
            at: at.to_string(),
        });
        return json!({});
    };
    let mut out = Map::new();
    for (key, v) in s {
        match key.as_str() {
            "type" => type_of(v, &mut out, at, notes),
            "properties" => {
                let props: Map<String, Value> = v
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| {
                        (
                            name.clone(),
                            from_json_schema(sub, &format!("{at}.properties.{name}"), notes),
                        )
                    })
                    .collect();
                out.insert("properties".into(), Value::Object(props));
            }
            "items" if v.is_object() => {
                out.insert(
                    "items".into(),
                    from_json_schema(v, &format!("{at}.items"), notes),
                );
            }
            "anyOf" | "oneOf" => {
                let subs: Vec<Value> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, sub)| from_json_schema(sub, &format!("{at}.{key}[{i}]"), notes))
                    .collect();
                out.insert("anyOf".into(), Value::Array(subs));
            }
            "const" => {
                out.insert("enum".into(), json!([enum_value(v)]));
            }
            "enum" => {
                let values: Vec<Value> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| json!(enum_value(e)))
                    .collect();
                out.insert("enum".into(), Value::Array(values));
            }
            "required" | "propertyOrdering" if v.is_array() => {
                out.insert(key.clone(), v.clone());
            }
            "format" | "title" | "description" | "pattern" if v.is_string() => {
                out.insert(key.clone(), v.clone());
            }
            "nullable" if v.is_boolean() => {
                out.insert(key.clone(), v.clone());
            }
            "maxItems" | "minItems" | "minProperties" | "maxProperties" | "minLength"
            | "maxLength" | "minimum" | "maximum"
                if v.is_number() =>
            {
                out.insert(key.clone(), v.clone());
            }
            "example" | "default" => {
                out.insert(key.clone(), v.clone());
            }
            other => notes.push(Note::SchemaKeywordDropped {
                keyword: other.to_string(),
                at: at.to_string(),
            }),
        }
    }
    let has_properties = out
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let empty_object = out.get("type") == Some(&json!("OBJECT")) && !has_properties;
    if empty_object {
        // Gemini has no free-form object; the value is left untyped.
        out.remove("type");
        out.remove("properties");
        notes.push(Note::SchemaKeywordDropped {
            keyword: "type object without properties".into(),
            at: at.to_string(),
        });
    }
    Value::Object(out)
}

/// `type` as Gemini writes it: one upper-case name; a JSON-schema list with
/// `null` becomes `nullable`, a list of several types an `anyOf`.
fn type_of(v: &Value, out: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let nullable = names.contains(&"null");
    let types: Vec<String> = names
        .iter()
        .filter(|t| **t != "null" || names.len() == 1)
        .map(|t| t.to_ascii_uppercase())
        .filter(|t| TYPES.contains(&t.as_str()))
        .collect();
    match types.as_slice() {
        [] => notes.push(Note::SchemaKeywordDropped {
            keyword: format!("type {v}"),
            at: at.to_string(),
        }),
        [one] => {
            out.insert("type".into(), json!(one));
        }
        many => {
            let any: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
            out.insert("anyOf".into(), Value::Array(any));
        }
    }
    if nullable && names.len() > 1 {
        out.insert("nullable".into(), json!(true));
    }
}

fn enum_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_keywords_outside_the_subset() {
        let ok = json!({"type": "object", "properties": {"city": {"type": "STRING", "enum": ["a"]}}, "required": ["city"]});
        assert!(check("tools[0].function_declarations[0].parameters", &ok).is_ok());
        let bad = json!({"type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": false});
        assert_eq!(
            check("tools[0].function_declarations[0].parameters", &bad).unwrap_err().message,
            "Invalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters': Cannot find field."
        );
        let nested =
            json!({"type": "object", "properties": {"x": {"type": "string", "const": "a"}}});
        assert!(check("p", &nested)
            .unwrap_err()
            .message
            .contains("\"const\""));
        assert!(check("p", &json!({"type": "objekt"}))
            .unwrap_err()
            .message
            .contains("Invalid value at 'p.type'"));
        assert!(check("p", &json!({"type": ["string", "null"]})).is_err());
        assert_eq!(
            check("p", &json!({"type": "OBJECT"})).unwrap_err().message,
            "* GenerateContentRequest.p.properties: should be non-empty for OBJECT type\n"
        );
        let mut notes = Vec::new();
        let free = from_json_schema(
            &json!({"type": "object", "description": "any"}),
            "x",
            &mut notes,
        );
        assert_eq!(free, json!({"description": "any"}));
        assert!(check("p", &free).is_ok());
    }

    #[test]
    fn a_json_schema_is_rewritten_into_the_subset() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "city": {"type": ["string", "null"], "description": "City"},
                "unit": {"const": "celsius"},
                "days": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                "either": {"oneOf": [{"type": "string"}, {"type": "number"}]}
            },
            "required": ["city"]
        });
        let mut notes = Vec::new();
        let out = from_json_schema(&schema, "tools[0].parameters", &mut notes);
        assert!(check("p", &out).is_ok(), "{out}");
        assert_eq!(out["type"], "OBJECT");
        assert_eq!(
            out["properties"]["city"],
            json!({"type": "STRING", "nullable": true, "description": "City"})
        );
        assert_eq!(out["properties"]["unit"], json!({"enum": ["celsius"]}));
        assert_eq!(
            out["properties"]["days"]["items"],
            json!({"type": "INTEGER", "minimum": 1})
        );
        assert_eq!(
            out["properties"]["either"]["anyOf"][1],
            json!({"type": "NUMBER"})
        );
        let dropped: Vec<&str> = notes
            .iter()
            .filter_map(|n| match n {
                Note::SchemaKeywordDropped { keyword, .. } => Some(keyword.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(dropped, ["$schema", "additionalProperties"]);
    }
}
