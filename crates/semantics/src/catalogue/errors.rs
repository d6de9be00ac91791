//! The errors the simulated providers send in the cases, with
//! OpenAI-style bodies: a rate limit, a context too long, a content filter,
//! and the error of each status.

use cb_faults::{ErrorKind, ErrorSpec};
use std::time::Duration;

/// A 429, with `Retry-After` when given.
pub(super) fn rate_limited(retry_after: Option<Duration>) -> ErrorSpec {
    let spec = ErrorSpec::new(
        429,
        ErrorKind::RateLimit,
        "Rate limit reached for requests (simulated by semantics).",
    );
    match retry_after {
        Some(d) => spec.with_retry_after(d),
        None => spec,
    }
}

/// `context_length_exceeded`.
pub(super) fn context_too_long() -> ErrorSpec {
    ErrorSpec::new(
        400,
        ErrorKind::ContextLength,
        "This model's maximum context length is 8192 tokens; your messages resulted in 9000 tokens (simulated 400).",
    )
}

/// `content_policy_violation`.
pub(super) fn content_filter() -> ErrorSpec {
    ErrorSpec::new(
        400,
        ErrorKind::ContentPolicy,
        "Your request was rejected as a result of our safety system (simulated 400).",
    )
}

/// The error a provider sends with `status`.
pub fn status_error(status: u16) -> ErrorSpec {
    let (message, kind) = match status {
        400 => (
            "Invalid request: 'messages' could not be processed (simulated 400).",
            ErrorKind::InvalidRequest,
        ),
        401 => (
            "Incorrect API key provided (simulated 401).",
            ErrorKind::Auth,
        ),
        402 => (
            "Insufficient credits on this account (simulated 402).",
            ErrorKind::Payment,
        ),
        403 => (
            "You are not allowed to use this model (simulated 403).",
            ErrorKind::Permission,
        ),
        404 => (
            "The model does not exist or you do not have access to it (simulated 404).",
            ErrorKind::ModelNotFound,
        ),
        _ => (
            "The server had an error while processing your request (simulated 5xx).",
            ErrorKind::Server,
        ),
    };
    ErrorSpec::new(status, kind, message)
}
