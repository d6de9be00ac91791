//! What a message's `content` field holds, read one way for every caller:
//! a string is the text, an array keeps the `text` of its text parts
//! (joined by newlines), `null` is no text, and anything else (`42`,
//! `true`, an object, an array with no text part) is not text.
//!
//! Two callers want two answers from that one reading. A client reading a
//! reply ([`content_text`]) wants to know when there is no answer, with a
//! reason that says what was there instead of a bare "empty assistant
//! message". A server reading a request ([`plain_text`]) wants the text to
//! work with and takes what is not text as none.

use serde_json::Value;
use std::borrow::Cow;

/// Longest excerpt of an unexpected value kept in a reason.
const VALUE_EXCERPT: usize = 80;

/// A `content` value that is not text: what it is, and an excerpt of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotText {
    /// What was there, as a reason says it (`a number`).
    kind: &'static str,
    /// The value, redacted and cut to [`VALUE_EXCERPT`] characters.
    excerpt: String,
}

impl NotText {
    fn of(kind: &'static str, value: &Value) -> Self {
        NotText {
            kind,
            excerpt: excerpt(value),
        }
    }

    /// The reason, naming the field that held the value (e.g.
    /// `choices[0].message.content`).
    pub fn reason(&self, field: &str) -> String {
        let NotText { kind, excerpt } = self;
        if *kind == NO_TEXT_PART {
            format!("{field} is {kind}: {excerpt}")
        } else {
            format!("{field} is {kind} ({excerpt}), not a string or an array of text parts")
        }
    }
}

const NO_TEXT_PART: &str = "an array with no text part";

/// The text `content` carries, borrowed when it is a plain string:
/// `Ok(None)` for `null` (no text, which is not malformed: a role-only or
/// tool-call chunk), or what it is instead.
///
/// # Errors
/// [`NotText`] for a number, a boolean, an object, or a non-empty array
/// without a text part.
pub fn read(content: &Value) -> Result<Option<Cow<'_, str>>, NotText> {
    match content {
        Value::String(s) => Ok(Some(Cow::Borrowed(s))),
        Value::Null => Ok(None),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            if texts.is_empty() && !parts.is_empty() {
                return Err(NotText::of(NO_TEXT_PART, content));
            }
            Ok(Some(Cow::Owned(texts.join("\n"))))
        }
        Value::Number(_) => Err(NotText::of("a number", content)),
        Value::Bool(_) => Err(NotText::of("a boolean", content)),
        Value::Object(_) => Err(NotText::of("an object", content)),
    }
}

/// The text of a reply's `content`, as a client reads it: `Ok(None)` for
/// `null`, or why it is not text. `field` names the field in the reason,
/// e.g. `choices[0].message.content`.
///
/// # Errors
/// A reason naming the field and the JSON type found, with an excerpt.
pub fn content_text(content: &Value, field: &str) -> Result<Option<String>, String> {
    read(content)
        .map(|text| text.map(Cow::into_owned))
        .map_err(|not| not.reason(field))
}

/// The text of a request message's `content`, as a server works with it:
/// the text [`read`] finds, and none (empty) for `null` and for what is
/// not text. Borrowed when the content is a plain string (the common
/// case), so reading every message of a long history does not copy it.
pub fn plain_text(content: &Value) -> Cow<'_, str> {
    read(content).ok().flatten().unwrap_or_default()
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

    /// The server's reading is the client's, with what is not text as
    /// none: one reading, two answers.
    #[test]
    fn a_request_message_s_text_is_what_a_client_reads_or_none() {
        let parts = json!([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]);
        assert_eq!(plain_text(&parts), "a\nb");
        assert!(matches!(plain_text(&json!("hi")), Cow::Borrowed("hi")));
        for not_text in [
            json!(null),
            json!(42),
            json!({"text": "hi"}),
            json!([{"type": "image_url"}]),
            json!([]),
        ] {
            assert_eq!(plain_text(&not_text), "", "{not_text}");
        }
    }
}
