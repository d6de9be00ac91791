//! A deterministic minimal instance of a JSON schema, so that the simulated
//! model can answer a structured-output request with JSON that validates.
//!
//! Supported: `type` (one or a list: the first that is not `null`),
//! `const`, `enum` (the first value), objects (`required` keys in order,
//! each from `properties`, more properties up to `minProperties`), strings
//! (`minLength`/`maxLength`, common `format`s), integers and numbers
//! (`minimum`, `maximum`, their exclusive forms, `multipleOf`), booleans,
//! null, arrays (`minItems` copies of `items`, `prefixItems`, distinct items
//! under `uniqueItems`), `anyOf`/`oneOf` (the first branch), `allOf` (the
//! objects merged) and local `$ref`s (`#/$defs/...`). Not supported:
//! `pattern`, `not`, `if`/`then`, `dependentRequired`, remote `$ref`s; an
//! instance of such a schema may not validate.

use serde_json::{Map, Value};

/// Deepest nesting followed, so that a recursive schema ends.
const MAX_DEPTH: usize = 16;

/// The minimal instance of `schema`.
pub fn instance_for_schema(schema: &serde_json::Value) -> serde_json::Value {
    build(schema, schema, 0, 0)
}

/// The instance of `schema` under `root`, at `depth`; `variant` makes
/// sibling items of a `uniqueItems` array differ.
fn build(schema: &Value, root: &Value, depth: usize, variant: usize) -> Value {
    let Some(s) = schema.as_object() else {
        return Value::Null; // `true`, `false` or not a schema
    };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        return build(target, root, depth + 1, variant);
    }
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(options) = s
        .get("enum")
        .and_then(Value::as_array)
        .filter(|o| !o.is_empty())
    {
        return options[variant % options.len()].clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|b| b.first()) {
            return build(first, root, depth + 1, variant);
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        let parts: Vec<Value> = all
            .iter()
            .map(|p| build(p, root, depth + 1, variant))
            .collect();
        if parts.iter().all(Value::is_object) && !parts.is_empty() {
            let mut merged = Map::new();
            for p in parts {
                if let Value::Object(m) = p {
                    merged.extend(m);
                }
            }
            if s.get("properties").is_none() {
                return Value::Object(merged);
            }
        } else if let Some(first) = parts.into_iter().next() {
            return first;
        }
    }
    match type_of(s).as_str() {
        "object" => object(s, root, depth, variant),
        "array" => array(s, root, depth),
        "string" => string(s, variant),
        "integer" => number(s, true, variant),
        "number" => number(s, false, variant),
        "boolean" => Value::Bool(variant % 2 == 0),
        _ => Value::Null,
    }
}

/// The schema's type: the first non-null one declared, else inferred from
/// the keywords present.
fn type_of(s: &Map<String, Value>) -> String {
    match s.get("type") {
        Some(Value::String(t)) => return t.clone(),
        Some(Value::Array(ts)) => {
            let named: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            return named
                .iter()
                .find(|t| **t != "null")
                .or(named.first())
                .map_or("null", |t| t)
                .to_string();
        }
        _ => {}
    }
    let has = |k: &str| s.contains_key(k);
    if has("properties") || has("required") || has("allOf") {
        "object"
    } else if has("items") || has("prefixItems") || has("minItems") {
        "array"
    } else if has("minLength") || has("maxLength") || has("format") {
        "string"
    } else if has("minimum") || has("maximum") || has("multipleOf") {
        "number"
    } else {
        "null"
    }
    .to_string()
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

fn object(s: &Map<String, Value>, root: &Value, depth: usize, variant: usize) -> Value {
    let properties = s.get("properties").and_then(Value::as_object);
    let empty = Value::Object(Map::new());
    let mut out = Map::new();
    let add = |key: &str, out: &mut Map<String, Value>| {
        let sub = properties.and_then(|p| p.get(key)).unwrap_or(&empty);
        out.insert(key.to_string(), build(sub, root, depth + 1, variant));
    };
    for key in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(key) = key.as_str() {
            add(key, &mut out);
        }
    }
    let min = s.get("minProperties").and_then(Value::as_u64).unwrap_or(0) as usize;
    if let Some(p) = properties {
        for key in p.keys() {
            if out.len() >= min {
                break;
            }
            if !out.contains_key(key) {
                add(key, &mut out);
            }
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for part in all {
            if let Value::Object(m) = build(part, root, depth + 1, variant) {
                for (k, v) in m {
                    out.entry(k).or_insert(v);
                }
            }
        }
    }
    Value::Object(out)
}

fn array(s: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
    let unique = s
        .get("uniqueItems")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let prefix: Vec<&Value> = match (s.get("prefixItems"), s.get("items")) {
        (Some(Value::Array(p)), _) | (None, Some(Value::Array(p))) => p.iter().collect(),
        _ => Vec::new(),
    };
    let rest = match s.get("items") {
        Some(items @ Value::Object(_)) => Some(items),
        _ => None,
    };
    let mut out = Vec::new();
    for i in 0..min {
        let sub = prefix.get(i).copied().or(rest);
        let variant = if unique { i } else { 0 };
        out.push(sub.map_or(Value::Null, |sub| build(sub, root, depth + 1, variant)));
    }
    Value::Array(out)
}

fn string(s: &Map<String, Value>, variant: usize) -> Value {
    let formatted = match s.get("format").and_then(Value::as_str) {
        Some("date") => Some("2024-01-01"),
        Some("date-time") => Some("2024-01-01T00:00:00Z"),
        Some("time") => Some("00:00:00Z"),
        Some("email") => Some("user@example.com"),
        Some("uri" | "url" | "iri") => Some("https://example.com/"),
        Some("uuid") => Some("00000000-0000-4000-8000-000000000000"),
        Some("ipv4") => Some("127.0.0.1"),
        Some("ipv6") => Some("::1"),
        Some("hostname") => Some("example.com"),
        _ => None,
    };
    if let Some(f) = formatted {
        return Value::String(f.to_string());
    }
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = s
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let mut text = if variant == 0 {
        "example".to_string()
    } else {
        format!("example {variant}")
    };
    while text.chars().count() < min {
        text.push('x');
    }
    if let Some(max) = max {
        text = text.chars().take(max).collect();
    }
    Value::String(text)
}

fn number(s: &Map<String, Value>, integer: bool, variant: usize) -> Value {
    let get = |k: &str| s.get(k).and_then(Value::as_f64);
    let step = if integer { 1.0 } else { 0.5 };
    let mut lo = get("minimum");
    if let Some(x) = get("exclusiveMinimum") {
        lo = Some(lo.map_or(x + step, |l: f64| l.max(x + step)));
    }
    let mut hi = get("maximum");
    if let Some(x) = get("exclusiveMaximum") {
        hi = Some(hi.map_or(x - step, |h: f64| h.min(x - step)));
    }
    let mut v = 0.0 + variant as f64;
    if let Some(lo) = lo {
        v = v.max(lo);
    }
    if let Some(hi) = hi {
        v = v.min(hi);
    }
    if let Some(m) = get("multipleOf").filter(|m| *m > 0.0) {
        v = (v / m).ceil() * m;
    }
    if integer {
        v = v.ceil();
    }
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn assert_valid(schema: Value) {
        let instance = instance_for_schema(&schema);
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{schema}\n-> {instance}\n{errors:?}");
    }

    #[test]
    fn instances_validate() {
        assert_valid(
            json!({"type": "object", "properties": {"city": {"type": "string"}, "t": {"type": "number"}, "sunny": {"type": "boolean"}}, "required": ["city", "t", "sunny"], "additionalProperties": false}),
        );
        assert_valid(
            json!({"type": "object", "properties": {"tasks": {"type": "array", "minItems": 2, "uniqueItems": true, "items": {"type": "object", "properties": {"title": {"type": "string", "minLength": 3}, "priority": {"enum": ["low", "high"]}}, "required": ["title", "priority"]}}}, "required": ["tasks"]}),
        );
        assert_valid(
            json!({"type": "object", "properties": {"age": {"type": "integer", "minimum": 18, "maximum": 99}, "score": {"type": "number", "exclusiveMinimum": 0.5, "multipleOf": 0.25}}, "required": ["age", "score"]}),
        );
        assert_valid(
            json!({"type": "array", "minItems": 3, "uniqueItems": true, "items": {"type": "string"}}),
        );
        assert_valid(
            json!({"type": "array", "minItems": 2, "uniqueItems": true, "items": {"type": "integer"}}),
        );
        assert_valid(json!({"type": ["null", "string"], "maxLength": 3}));
        assert_valid(json!({"type": "string", "format": "email"}));
        assert_valid(json!({"const": "fixed"}));
        assert_valid(json!({"anyOf": [{"type": "integer", "minimum": 5}, {"type": "string"}]}));
        assert_valid(
            json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}]}),
        );
        assert_valid(
            json!({"$defs": {"p": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}, "type": "object", "properties": {"owner": {"$ref": "#/$defs/p"}}, "required": ["owner"]}),
        );
        assert_valid(
            json!({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"}),
        );
        assert_valid(
            json!({"type": "object", "minProperties": 1, "properties": {"x": {"type": "boolean"}}}),
        );
        assert_valid(
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2}),
        );
        assert_valid(json!(true));
        assert_valid(json!({}));
    }

    #[test]
    fn instances_are_deterministic_and_minimal() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["b"]});
        assert_eq!(instance_for_schema(&schema), json!({"b": 0}));
        assert_eq!(instance_for_schema(&schema), instance_for_schema(&schema));
    }
}
