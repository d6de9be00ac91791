//! The failover decision tree, as one pure function: what a gateway should
//! do with the outcome of its primary attempt. The reference proxies follow
//! it, and `semantics` uses it as the oracle every gateway is checked
//! against, so there is exactly one statement of it.
//!
//! | Primary outcome                               | Decision      | Client gets                 |
//! |-----------------------------------------------|---------------|-----------------------------|
//! | 2xx                                           | deliver       | the primary's answer        |
//! | 500, 502, 503, 504 and every other 5xx        | fail over     | the fallback's answer       |
//! | 429 rate limited                              | fail over     | the fallback's answer       |
//! | 404 model not found                           | fail over     | the fallback's answer       |
//! | no headers within the attempt timeout         | fail over     | the fallback's answer       |
//! | connection refused / reset before headers     | fail over     | the fallback's answer       |
//! | 2xx body broken, stalled or not a completion (not streaming) | fail over | the fallback's answer |
//! | 400, 401, 402, 403 and every other 4xx        | pass through  | the primary's status + body |
//! | 1xx, 3xx (not expected from an API)           | pass through  | the primary's status + body |

/// What came back from one upstream attempt, as far as the decision needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Response headers arrived with this status.
    Status(u16),
    /// No response headers within the attempt timeout.
    Timeout,
    /// The connection failed before response headers (refused, reset, DNS).
    ConnectError,
    /// A 2xx or passed-through response whose body broke off before it was
    /// complete (non-streaming only; nothing had reached the client).
    BodyError,
}

/// Why a request switched to the fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailoverReason {
    /// The primary sent no headers within the attempt timeout.
    Timeout,
    /// The primary could not be reached.
    ConnectError,
    /// The primary's body broke off.
    BodyError,
    /// The primary answered this transient status (5xx, 429, 404).
    Status(u16),
    /// A stream's first token did not come within the time-to-first-token
    /// limit (nothing had reached the client).
    FirstTokenTimeout,
    /// Before its first token a stream made the proxy hold more than the
    /// request's memory budget (nothing had reached the client).
    RequestMemory,
}

impl FailoverReason {
    /// The label used in switch events and metrics: `timeout`,
    /// `connect_error`, `body_error`, `status_NNN`, `first_token_timeout` or
    /// `request_memory_exceeded`.
    pub fn label(self) -> String {
        match self {
            FailoverReason::Timeout => "timeout".to_string(),
            FailoverReason::ConnectError => "connect_error".to_string(),
            FailoverReason::BodyError => "body_error".to_string(),
            FailoverReason::Status(code) => format!("status_{code}"),
            FailoverReason::FirstTokenTimeout => "first_token_timeout".to_string(),
            FailoverReason::RequestMemory => "request_memory_exceeded".to_string(),
        }
    }
}

/// What to do with a primary outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Return the primary's answer.
    Deliver,
    /// Return the primary's status and body unchanged: a permanent error that
    /// another provider would not fix (bad request, auth, billing).
    PassThrough,
    /// Switch to the fallback.
    Failover(FailoverReason),
}

/// The decision tree of the module documentation, as one pure function.
pub fn classify(outcome: Outcome) -> Decision {
    match outcome {
        Outcome::Status(200..=299) => Decision::Deliver,
        Outcome::Status(code @ (404 | 429 | 500..=599)) => {
            Decision::Failover(FailoverReason::Status(code))
        }
        Outcome::Status(_) => Decision::PassThrough,
        Outcome::Timeout => Decision::Failover(FailoverReason::Timeout),
        Outcome::ConnectError => Decision::Failover(FailoverReason::ConnectError),
        Outcome::BodyError => Decision::Failover(FailoverReason::BodyError),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_table() {
        use Decision::{Deliver, Failover, PassThrough};
        use FailoverReason as R;
        let table = [
            (Outcome::Status(200), Deliver),
            (Outcome::Status(201), Deliver),
            (Outcome::Status(500), Failover(R::Status(500))),
            (Outcome::Status(502), Failover(R::Status(502))),
            (Outcome::Status(503), Failover(R::Status(503))),
            (Outcome::Status(504), Failover(R::Status(504))),
            (Outcome::Status(529), Failover(R::Status(529))),
            (Outcome::Status(429), Failover(R::Status(429))),
            (Outcome::Status(404), Failover(R::Status(404))),
            (Outcome::Status(400), PassThrough),
            (Outcome::Status(401), PassThrough),
            (Outcome::Status(402), PassThrough),
            (Outcome::Status(403), PassThrough),
            (Outcome::Status(409), PassThrough),
            (Outcome::Status(422), PassThrough),
            (Outcome::Status(302), PassThrough),
            (Outcome::Timeout, Failover(R::Timeout)),
            (Outcome::ConnectError, Failover(R::ConnectError)),
            (Outcome::BodyError, Failover(R::BodyError)),
        ];
        for (outcome, expected) in table {
            assert_eq!(classify(outcome), expected, "{outcome:?}");
        }
    }

    #[test]
    fn reason_labels() {
        assert_eq!(FailoverReason::Status(503).label(), "status_503");
        assert_eq!(FailoverReason::Timeout.label(), "timeout");
        assert_eq!(FailoverReason::ConnectError.label(), "connect_error");
    }
}
