//! The Gemini dialect (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`): strict validation ([`validate`]),
//! answers whole and streamed ([`generate_body`], [`StreamEncoder`]),
//! translation from OpenAI ([`translate_request`]) and back ([`to_openai`],
//! [`StreamToOpenAi`]), and the API's error bodies.
//!
//! The API reads protobuf JSON, so every field is accepted in camelCase and
//! in snake_case; error messages name fields in snake_case, as it does.

mod contents;
mod names;
mod reply;
mod request;
mod response;
mod schema;
mod validate;

pub use reply::{to_openai, StreamToOpenAi};
pub use request::translate_request;
pub use response::{generate_body, json_array, sse_frame, StreamEncoder};
pub use validate::validate;

use super::{FinishReason, Rejection};
use serde_json::{json, Value};

/// The path prefix of model calls.
pub const MODELS_PATH: &str = "/v1beta/models/";

/// The header that carries the API key.
pub const API_KEY_HEADER: &str = "x-goog-api-key";

/// Which method a request calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `:generateContent`, one JSON answer.
    Generate,
    /// `:streamGenerateContent`; `sse` when the query has `alt=sse`
    /// (server-sent events), else the API answers a JSON array of chunks.
    Stream {
        /// Server-sent events rather than a JSON array.
        sse: bool,
    },
}

/// A model call read from the request's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The model id (`gemini-sim`).
    pub model: String,
    /// The method.
    pub method: Method,
}

/// Reads `/v1beta/models/{model}:{method}` and the query string; `None`
/// for any other path or method (the API answers 404).
pub fn parse_call(path: &str, query: Option<&str>) -> Option<Call> {
    let rest = path.strip_prefix(MODELS_PATH)?;
    let (model, method) = rest.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    let sse = query
        .unwrap_or_default()
        .split('&')
        .any(|pair| pair == "alt=sse");
    let method = match method {
        "generateContent" => Method::Generate,
        "streamGenerateContent" => Method::Stream { sse },
        _ => return None,
    };
    Some(Call {
        model: model.to_string(),
        method,
    })
}

/// The path (and query) the proxy calls for `model`.
pub fn request_path(model: &str, stream: bool) -> String {
    if stream {
        format!("{MODELS_PATH}{model}:streamGenerateContent?alt=sse")
    } else {
        format!("{MODELS_PATH}{model}:generateContent")
    }
}

/// The canonical status name of an HTTP code, as the API writes it.
pub fn status_name(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "NOT_IMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ if (400..500).contains(&code) => "FAILED_PRECONDITION",
        _ => "INTERNAL",
    }
}

/// A Gemini error body: `{"error":{"code","message","status"}}`.
pub fn error_body(code: u16, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status_name(code)}})
}

/// A 400 `INVALID_ARGUMENT` with `message`.
pub(crate) fn invalid(message: String) -> Rejection {
    Rejection {
        status: 400,
        body: error_body(400, &message),
        message,
        about_tools: false,
    }
}

/// The 400 a Gemini upstream answers when the prompt is longer than its
/// context window.
pub fn context_too_long(tokens: u64, maximum: u64) -> Rejection {
    invalid(format!(
        "The input token count ({tokens}) exceeds the maximum number of tokens allowed ({maximum})."
    ))
}

/// Gemini's `finishReason` for a finish reason (a tool call ends with
/// `STOP`, as the API ends it).
pub fn finish_reason(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop | FinishReason::ToolCalls => "STOP",
        FinishReason::Length => "MAX_TOKENS",
        FinishReason::ContentFilter => "SAFETY",
    }
}

/// The finish reason of a Gemini `finishReason`; `tool_calls` when the
/// answer called functions and ended normally.
pub fn finish_of(reason: &str, called: bool) -> FinishReason {
    match reason {
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        _ if called => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}

/// A Gemini error body as an OpenAI error body.
pub fn error_to_openai(body: &Value) -> Value {
    let error = body.get("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the Gemini upstream answered with an error");
    let status = error
        .and_then(|e| e.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("INTERNAL");
    cb_wire::openai::error_body(message, &status.to_ascii_lowercase(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_read_and_written() {
        assert_eq!(
            parse_call("/v1beta/models/gemini-sim:generateContent", None),
            Some(Call {
                model: "gemini-sim".into(),
                method: Method::Generate
            })
        );
        assert_eq!(
            parse_call(
                "/v1beta/models/gemini-sim:streamGenerateContent",
                Some("key=x&alt=sse")
            )
            .map(|c| c.method),
            Some(Method::Stream { sse: true })
        );
        assert_eq!(
            parse_call("/v1beta/models/m:streamGenerateContent", None).map(|c| c.method),
            Some(Method::Stream { sse: false })
        );
        assert_eq!(parse_call("/v1beta/models/m:countTokens", None), None);
        assert_eq!(parse_call("/v1/chat/completions", None), None);
        let stream = request_path("gemini-sim", true);
        let (path, query) = stream.split_once('?').unwrap();
        assert_eq!(
            parse_call(path, Some(query)).unwrap().method,
            Method::Stream { sse: true }
        );
        assert_eq!(
            parse_call(&request_path("g", false), None).unwrap().method,
            Method::Generate
        );
    }

    #[test]
    fn error_bodies_and_finish_reasons() {
        assert_eq!(
            error_body(429, "Resource exhausted"),
            json!({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}})
        );
        assert_eq!(status_name(500), "INTERNAL");
        assert_eq!(status_name(503), "UNAVAILABLE");
        let r = context_too_long(40_000, 32_768);
        assert_eq!(r.body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            error_to_openai(&r.body)["error"]["type"],
            "invalid_argument"
        );
        for f in [
            FinishReason::Stop,
            FinishReason::Length,
            FinishReason::ContentFilter,
        ] {
            assert_eq!(finish_of(finish_reason(f), false), f);
        }
        assert_eq!(finish_of("STOP", true), FinishReason::ToolCalls);
        assert_eq!(finish_of("RECITATION", true), FinishReason::ContentFilter);
    }
}
