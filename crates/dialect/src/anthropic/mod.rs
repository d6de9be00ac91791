//! The Anthropic Messages dialect (`POST /v1/messages`): strict validation
//! ([`validate`]), answers whole and streamed ([`message_body`],
//! [`StreamEncoder`]), translation from OpenAI ([`translate_request`]) and
//! back ([`to_openai`], [`StreamToOpenAi`]), and the API's error bodies.
//!
//! Shapes follow Anthropic's public API reference; the validation messages
//! are the API's where they are publicly known, in its style elsewhere.

mod blocks;
mod params;
mod reply;
mod request;
mod response;
mod stream;
mod validate;

pub use reply::to_openai;
pub use request::{translate_request, DEFAULT_MAX_TOKENS};
pub use response::{message_body, stream_error_frame, StreamEncoder};
pub use stream::StreamToOpenAi;
pub use validate::validate;

use super::{FinishReason, Rejection};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The route of the Messages API.
pub const PATH: &str = "/v1/messages";

/// The header that names the API version; requests without it are refused.
pub const VERSION_HEADER: &str = "anthropic-version";

/// The API version the translation sends.
pub const VERSION: &str = "2023-06-01";

/// How strict a simulated Anthropic upstream is beyond the API's fixed
/// rules. The default is the strictest that real deployments show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// Refuse a request whose last message is from the assistant (a
    /// prefill), as newer models do ("This model does not support assistant
    /// message prefill").
    pub reject_prefill: bool,
    /// Refuse two messages of one role in a row, as the API did before it
    /// started merging them (and as several Anthropic-compatible servers
    /// still do).
    pub require_alternation: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            reject_prefill: false,
            require_alternation: true,
        }
    }
}

/// The `type` of an Anthropic error object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// 400: the request is malformed.
    InvalidRequestError,
    /// 401.
    AuthenticationError,
    /// 403.
    PermissionError,
    /// 404.
    NotFoundError,
    /// 413.
    RequestTooLarge,
    /// 429.
    RateLimitError,
    /// 500 and other server errors.
    ApiError,
    /// 529: the API is overloaded.
    OverloadedError,
}

impl ErrorKind {
    /// The kind Anthropic uses for an HTTP status.
    pub fn for_status(status: u16) -> Self {
        match status {
            401 => ErrorKind::AuthenticationError,
            403 => ErrorKind::PermissionError,
            404 => ErrorKind::NotFoundError,
            413 => ErrorKind::RequestTooLarge,
            429 => ErrorKind::RateLimitError,
            529 => ErrorKind::OverloadedError,
            // 400 and the other client errors.
            400..=499 => ErrorKind::InvalidRequestError,
            _ => ErrorKind::ApiError,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequestError => "invalid_request_error",
            ErrorKind::AuthenticationError => "authentication_error",
            ErrorKind::PermissionError => "permission_error",
            ErrorKind::NotFoundError => "not_found_error",
            ErrorKind::RequestTooLarge => "request_too_large",
            ErrorKind::RateLimitError => "rate_limit_error",
            ErrorKind::ApiError => "api_error",
            ErrorKind::OverloadedError => "overloaded_error",
        }
    }
}

/// An Anthropic error body:
/// `{"type":"error","error":{"type":...,"message":...}}`.
pub fn error_body(kind: ErrorKind, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind.as_str(), "message": message}})
}

/// The 400 an Anthropic upstream answers when the prompt is longer than its
/// context window.
pub fn context_too_long(tokens: u64, maximum: u64) -> Rejection {
    invalid(format!(
        "prompt is too long: {tokens} tokens > {maximum} maximum"
    ))
}

/// A 400 `invalid_request_error` with `message`.
pub(crate) fn invalid(message: String) -> Rejection {
    Rejection {
        status: 400,
        body: error_body(ErrorKind::InvalidRequestError, &message),
        message,
        about_tools: false,
    }
}

/// Anthropic's `stop_reason` for a finish reason.
pub fn stop_reason(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop => "end_turn",
        FinishReason::Length => "max_tokens",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::ContentFilter => "refusal",
    }
}

/// The finish reason of an Anthropic `stop_reason` (`end_turn`,
/// `stop_sequence`, `pause_turn` and unknown ones are a normal stop).
pub fn finish_of(stop_reason: &str) -> FinishReason {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// An Anthropic error body as an OpenAI error body, for a proxy that passes
/// the fallback's error on to an OpenAI client.
pub fn error_to_openai(body: &Value) -> Value {
    let error = body.get("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the Anthropic upstream answered with an error");
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("api_error");
    cb_wire::openai::error_body(message, kind, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_have_the_api_shape() {
        assert_eq!(
            error_body(ErrorKind::for_status(529), "Overloaded"),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        );
        assert_eq!(ErrorKind::for_status(503), ErrorKind::ApiError);
        assert_eq!(ErrorKind::for_status(422), ErrorKind::InvalidRequestError);
        let r = context_too_long(210_000, 200_000);
        assert_eq!(r.status, 400);
        assert_eq!(
            r.body["error"]["message"],
            "prompt is too long: 210000 tokens > 200000 maximum"
        );
        let openai = error_to_openai(&r.body);
        assert_eq!(openai["error"]["type"], "invalid_request_error");
    }

    #[test]
    fn stop_reasons_map_both_ways() {
        for f in [
            FinishReason::Stop,
            FinishReason::Length,
            FinishReason::ToolCalls,
            FinishReason::ContentFilter,
        ] {
            assert_eq!(finish_of(stop_reason(f)), f);
        }
        assert_eq!(finish_of("stop_sequence"), FinishReason::Stop);
        assert_eq!(finish_of("pause_turn"), FinishReason::Stop);
    }
}
