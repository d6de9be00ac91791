//! The JSON Schema check of the files the suites write (summary.json,
//! semantics.json and canary.json against `schema/*.schema.json`): one
//! validator, so that every test compiles its schema and reports what does
//! not match the same way.

use serde_json::Value;

/// A JSON Schema (draft 2020-12), checked and compiled.
pub struct Schema {
    json: Value,
    validator: jsonschema::Validator,
}

impl Schema {
    /// Parses and compiles `text`, a draft 2020-12 schema.
    ///
    /// # Panics
    /// When `text` is not JSON or not a valid draft 2020-12 schema: the
    /// test fails there, with the cause.
    pub fn new(text: &str) -> Self {
        let json: Value = serde_json::from_str(text).expect("the schema is JSON");
        assert!(
            jsonschema::draft202012::meta::is_valid(&json),
            "the schema is not valid draft 2020-12"
        );
        let validator = jsonschema::draft202012::new(&json).expect("the schema compiles");
        Schema { json, validator }
    }

    /// Every way `instance` breaks the schema, as "message at /pointer";
    /// empty when it matches.
    pub fn errors(&self, instance: &Value) -> Vec<String> {
        self.validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect()
    }

    /// The schema itself (to read its enums).
    pub fn json(&self) -> &Value {
        &self.json
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SCHEMA: &str = r#"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"runs": {"type": "integer", "minimum": 1}},
        "required": ["runs"],
        "additionalProperties": false
    }"#;

    #[test]
    fn errors_name_the_place() {
        let schema = Schema::new(SCHEMA);
        assert_eq!(schema.errors(&json!({"runs": 3})), Vec::<String>::new());
        let errors = schema.errors(&json!({"runs": 0}));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].ends_with("at /runs"), "{errors:?}");
        assert_eq!(schema.errors(&json!({"runs": 1, "extra": true})).len(), 1);
        assert_eq!(schema.json()["required"][0], "runs");
    }

    #[test]
    #[should_panic(expected = "not valid draft 2020-12")]
    fn an_invalid_schema_fails_the_test() {
        Schema::new(r#"{"type": 12}"#);
    }
}
