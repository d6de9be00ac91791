//! What a reply's `content` field holds, read as a client does: a string is
//! the text, an array keeps the `text` of its text parts, and anything else
//! (`42`, `true`, an object) is not an answer, with a reason that says what
//! was there instead of a bare "empty assistant message".

use serde_json::Value;

/// Longest excerpt of an unexpected value kept in a reason.
const VALUE_EXCERPT: usize = 80;

/// The text `content` carries: `Ok(None)` for `null` (no text, which is
/// not malformed: a role-only or tool-call chunk), or why it is not text.
/// `field` names the field in the reason, e.g. `choices[0].message.content`.
///
/// # Errors
/// A reason naming the field and the JSON type found, with an excerpt.
pub fn content_text(content: &Value, field: &str) -> Result<Option<String>, String> {
    match content {
        Value::String(s) => Ok(Some(s.clone())),
        Value::Null => Ok(None),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            if texts.is_empty() && !parts.is_empty() {
                return Err(format!(
                    "{field} is an array with no text part: {}",
                    excerpt(content)
                ));
            }
            Ok(Some(texts.join("\n")))
        }
        Value::Number(_) => Err(not_text(field, "a number", content)),
        Value::Bool(_) => Err(not_text(field, "a boolean", content)),
        Value::Object(_) => Err(not_text(field, "an object", content)),
    }
}

fn not_text(field: &str, kind: &str, value: &Value) -> String {
    format!(
        "{field} is {kind} ({}), not a string or an array of text parts",
        excerpt(value)
    )
}

fn excerpt(value: &Value) -> String {
    let text = cb_base::secret::redact_owned(value.to_string());
    let mut cut: String = text.chars().take(VALUE_EXCERPT).collect();
    if text.chars().count() > VALUE_EXCERPT {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FIELD: &str = "choices[0].message.content";

    #[test]
    fn strings_and_text_parts_are_text() {
        assert_eq!(
            content_text(&json!("Oriane."), FIELD).unwrap().as_deref(),
            Some("Oriane.")
        );
        let parts = json!([{"type": "text", "text": "Your sister"}, {"type": "text", "text": "is Oriane."}]);
        assert_eq!(
            content_text(&parts, FIELD).unwrap().as_deref(),
            Some("Your sister\nis Oriane.")
        );
        assert_eq!(content_text(&json!(null), FIELD).unwrap(), None);
    }

    #[test]
    fn other_shapes_say_what_was_there() {
        let err = content_text(&json!(42), FIELD).unwrap_err();
        assert_eq!(
            err,
            "choices[0].message.content is a number (42), not a string or an array of text parts"
        );
        let err = content_text(&json!({"text": "hi"}), FIELD).unwrap_err();
        assert!(err.contains("is an object ({\"text\":\"hi\"})"), "{err}");
        let err = content_text(&json!(true), FIELD).unwrap_err();
        assert!(err.contains("is a boolean (true)"), "{err}");
        let err = content_text(&json!([{"type": "image_url"}]), FIELD).unwrap_err();
        assert!(err.contains("an array with no text part"), "{err}");
        let long = json!({"k": "x".repeat(500)});
        assert!(content_text(&long, FIELD).unwrap_err().len() < 250);
    }
}
