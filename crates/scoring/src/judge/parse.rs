//! Reading a judge's reply. Models asked for "JSON only" still wrap it in
//! prose or Markdown code fences, so the parser looks for the first JSON
//! object in the text that carries a `preserved` field and ignores the rest.

use serde_json::Value;

/// What a judge said about one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeReply {
    /// Whether the answer correctly uses the anchor.
    pub preserved: bool,
    /// The judge's short reason.
    pub reason: String,
}

/// Why a reply could not be read as a verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// No JSON object anywhere in the text.
    #[error("the judge reply holds no JSON object")]
    NoObject,
    /// JSON objects were found, but none had a usable `preserved` field.
    #[error("the judge reply has no boolean `preserved` field")]
    NoVerdict,
    /// `reason` was present but not a string.
    #[error("the judge reply's `reason` is not a string")]
    BadReason,
}

/// Extracts the verdict from a judge reply: the first JSON object in `text`
/// (plain, inside a ```json fence, or inside prose) that has a `preserved`
/// field. `preserved` may be a boolean or the string "true"/"false" (any
/// case); `reason` must be a string when present (missing gives an empty
/// reason).
///
/// # Errors
/// [`ParseError`] when no such object exists.
pub fn parse_reply(text: &str) -> Result<JudgeReply, ParseError> {
    let mut saw_object = false;
    for (start, _) in text.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        let Some(Ok(Value::Object(map))) = stream.next() else {
            continue;
        };
        saw_object = true;
        let preserved = match map.get("preserved") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => true,
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => false,
            _ => continue,
        };
        let reason = match map.get("reason") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.trim().to_string(),
            Some(_) => return Err(ParseError::BadReason),
        };
        return Ok(JudgeReply { preserved, reason });
    }
    Err(if saw_object {
        ParseError::NoVerdict
    } else {
        ParseError::NoObject
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(preserved: bool, reason: &str) -> Result<JudgeReply, ParseError> {
        Ok(JudgeReply {
            preserved,
            reason: reason.into(),
        })
    }

    #[test]
    fn plain_object() {
        assert_eq!(
            parse_reply(r#"{"preserved": true, "reason": "names Oriane"}"#),
            ok(true, "names Oriane")
        );
    }

    #[test]
    fn fenced_object() {
        let text = "```json\n{\n  \"preserved\": false,\n  \"reason\": \"denies it\"\n}\n```";
        assert_eq!(parse_reply(text), ok(false, "denies it"));
    }

    #[test]
    fn object_inside_prose_with_braces_before_it() {
        let text = "Sure {not json} here you go: {\"reason\": \"hedged {a lot}\", \"preserved\": \"False\"} Hope that helps.";
        assert_eq!(parse_reply(text), ok(false, "hedged {a lot}"));
    }

    #[test]
    fn nested_object_is_skipped_for_the_one_with_a_verdict() {
        let text = r#"{"meta": {"x": 1}} then {"preserved": true}"#;
        assert_eq!(parse_reply(text), ok(true, ""));
    }

    #[test]
    fn garbage_is_an_error() {
        assert_eq!(
            parse_reply("I think the user meant Oriane."),
            Err(ParseError::NoObject)
        );
        assert_eq!(parse_reply(""), Err(ParseError::NoObject));
        assert_eq!(
            parse_reply("{\"preserved\": \"yes\"}"),
            Err(ParseError::NoVerdict)
        );
        assert_eq!(
            parse_reply("{\"verdict\": true}"),
            Err(ParseError::NoVerdict)
        );
        assert_eq!(
            parse_reply("{\"preserved\": true, \"reason\": 3}"),
            Err(ParseError::BadReason)
        );
        assert_eq!(
            parse_reply("{\"preserved\": tru"),
            Err(ParseError::NoObject)
        );
    }
}
