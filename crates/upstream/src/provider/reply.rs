//! Reading what a real provider sent back, as pure functions: a complete
//! `chat.completion` JSON body or a server-sent-events stream becomes a
//! [`ProviderReply`] (the text, the finish reason, the token counts when
//! given, the model the provider says answered), and an error body becomes
//! a short, redacted excerpt. Everything is redacted before it is kept, so
//! a provider that echoes the key back in an error body cannot put it in a
//! reason, a log row or the client's answer.

use cb_base::secret::redact_owned;
use cb_faults::ErrorKind;
use cb_wire::openai::Usage;
use cb_wire::sse::{assemble_finished, StreamTrace};
use serde_json::Value;

/// Longest excerpt of a provider's error body kept in a reason.
pub const ERROR_EXCERPT: usize = 200;

/// One answer a provider gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderReply {
    /// The assistant text (empty when the provider sent none).
    pub text: String,
    /// Why the answer ended, as the provider said (`stop` when it did not).
    pub finish_reason: String,
    /// The token counts the provider reported, if it did.
    pub usage: Option<Usage>,
    /// The model the provider says answered, if it said.
    pub model: Option<String>,
}

/// A `chat.completion` body read into a reply.
///
/// # Errors
/// A reason when the body is not JSON or has no `choices[0].message`.
pub fn completion(body: &[u8]) -> Result<ProviderReply, String> {
    let text = redact_owned(String::from_utf8_lossy(body).into_owned());
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the reply is not JSON ({e}): {}", excerpt(&text)))?;
    let message = value
        .pointer("/choices/0/message")
        .ok_or_else(|| format!("the reply has no choices[0].message: {}", excerpt(&text)))?;
    // What is not text is no text (the provider's answer is still read).
    let content = message
        .get("content")
        .map(cb_wire::content::plain_text)
        .unwrap_or_default()
        .into_owned();
    Ok(ProviderReply {
        text: content,
        finish_reason: value
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
            .unwrap_or("stop")
            .to_string(),
        usage: value
            .get("usage")
            .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok()),
        model: cb_wire::openai::response_model(&value),
    })
}

/// A stream, read to its end (the trace is already redacted), into a reply.
///
/// # Errors
/// A reason when the stream is malformed, carries an error object, or
/// ended without `data: [DONE]` or a finish reason.
pub fn stream(trace: &StreamTrace) -> Result<ProviderReply, String> {
    let assembled = assemble_finished(trace)?;
    Ok(ProviderReply {
        text: assembled.text,
        finish_reason: assembled.finish_reason.unwrap_or_else(|| "stop".into()),
        usage: None,
        model: assembled.model,
    })
}

/// A redacted, bounded excerpt of an error body: its `error.message` when
/// it is an OpenAI-style error, else the text itself.
pub fn error_excerpt(body: &[u8]) -> String {
    let text = redact_owned(String::from_utf8_lossy(body).into_owned());
    let message = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_string))
    });
    excerpt(message.as_deref().unwrap_or(&text))
}

/// The error kind a provider's status stands for, so the upstream renders
/// it as a provider would.
pub fn error_kind(status: u16) -> ErrorKind {
    match status {
        401 => ErrorKind::Auth,
        402 => ErrorKind::Payment,
        403 => ErrorKind::Permission,
        404 => ErrorKind::ModelNotFound,
        429 => ErrorKind::RateLimit,
        400..=499 => ErrorKind::InvalidRequest,
        504 => ErrorKind::Timeout,
        _ => ErrorKind::Server,
    }
}

fn excerpt(text: &str) -> String {
    let trimmed = text.trim();
    let mut out: String = trimmed.chars().take(ERROR_EXCERPT).collect();
    if trimmed.chars().count() > ERROR_EXCERPT {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_base::secret::{Secret, REDACTED};
    use cb_wire::sse::read_all;

    #[test]
    fn a_completion_gives_text_model_and_usage() {
        let body = serde_json::json!({
            "model": "llama3.2:1b",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Oriane."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 3, "total_tokens": 33}
        });
        let r = completion(body.to_string().as_bytes()).unwrap();
        assert_eq!(r.text, "Oriane.");
        assert_eq!(r.model.as_deref(), Some("llama3.2:1b"));
        assert_eq!(r.usage, Some(Usage::new(30, 3)));
        assert_eq!(r.finish_reason, "stop");
    }

    #[test]
    fn malformed_replies_are_reasons() {
        assert!(completion(b"<html>oops</html>")
            .unwrap_err()
            .contains("not JSON"));
        assert!(completion(b"{\"choices\": []}")
            .unwrap_err()
            .contains("choices[0].message"));
        let cut = read_all(b"data: {\"choices\":[{\"delta\":{\"content\":\"Ori\"}}]}\n\n");
        assert!(stream(&cut).unwrap_err().contains("[DONE]"));
    }

    #[test]
    fn a_stream_gives_its_text_and_model() {
        let frame = |delta: &str, finish: Option<&str>| {
            format!(
                "data: {}\n\n",
                serde_json::json!({"model": "m-7", "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": finish}]})
            )
        };
        let body = format!(
            "{}{}{}data: [DONE]\n\n",
            frame("Your sister ", None),
            frame("is Oriane.", None),
            frame("", Some("stop"))
        );
        let r = stream(&read_all(body.as_bytes())).unwrap();
        assert_eq!(r.text, "Your sister is Oriane.");
        assert_eq!(r.model.as_deref(), Some("m-7"));
    }

    #[test]
    fn an_echoed_key_never_leaves_an_error_excerpt() {
        let _key = Secret::new("sk-reply-echo-DO-NOT-KEEP");
        let body = br#"{"error": {"message": "Incorrect API key provided: sk-reply-echo-DO-NOT-KEEP", "type": "invalid_request_error"}}"#;
        let e = error_excerpt(body);
        assert_eq!(e, format!("Incorrect API key provided: {REDACTED}"));
        assert_eq!(error_excerpt(b"plain failure"), "plain failure");
        assert_eq!(
            error_excerpt("x".repeat(500).as_bytes()).chars().count(),
            ERROR_EXCERPT + 1
        );
        assert_eq!(error_kind(401), ErrorKind::Auth);
        assert_eq!(error_kind(503), ErrorKind::Server);
        assert_eq!(error_kind(429), ErrorKind::RateLimit);
    }
}
