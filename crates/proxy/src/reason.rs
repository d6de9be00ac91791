//! The one list of reasons a switch event can give: why a request switched
//! to the fallback, or why it ended as it did. A typed value, so every
//! reason the proxy emits is named here and documented once; serde writes
//! each as the string events and `/metrics` have always carried
//! (`status_503`, `none`, ...).

use crate::policy::FailoverReason;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Why a request switched, or why it ended as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SwitchReason {
    /// `none`: the primary answered (or passed a permanent error through);
    /// no switch.
    None,
    /// `invalid_request`: the client's body was not a chat request; no
    /// upstream was called.
    InvalidRequest,
    /// `timeout`: the primary sent no headers within the attempt timeout,
    /// or its leg reached its share of the deadline.
    Timeout,
    /// `connect_error`: the primary could not be reached.
    ConnectError,
    /// `body_error`: the primary's body broke off, stalled, or was not a
    /// completion, before anything reached the client.
    BodyError,
    /// `status_NNN`: the primary answered this transient status (5xx, 429,
    /// 404).
    Status(u16),
    /// `first_token_timeout`: a stream's first token did not come within
    /// `--first-token-timeout` (nothing had reached the client).
    FirstTokenTimeout,
    /// `context_length_exceeded`: the primary's context was too small and
    /// the request went to the larger-context route.
    ContextLengthExceeded,
    /// `stream_broken`: a stream broke after its first token and was
    /// handed to the fallback to continue.
    StreamBroken,
    /// `request_memory_exceeded`: the request needed more than
    /// `--request-memory` (comments or token-less chunks before the first
    /// token, one line, or a translator holding bytes without output). A
    /// failover when nothing had reached the client; otherwise the stream
    /// ended with an error event and was not continued.
    RequestMemoryExceeded,
    /// `keepalive_stall`: after its first token a stream sent only
    /// comments or empty chunks for `--stall-timeout` and was handed to
    /// the fallback to continue.
    KeepaliveStall,
    /// `deadline_cut`: `--deadline` passed while the stream was still
    /// being relayed: the client got part of the answer and no `[DONE]`.
    DeadlineCut,
}

impl SwitchReason {
    /// Whether the reason is one to switch routes on (not `none`,
    /// `invalid_request` or `deadline_cut`).
    pub fn is_failover(self) -> bool {
        !matches!(
            self,
            SwitchReason::None | SwitchReason::InvalidRequest | SwitchReason::DeadlineCut
        )
    }
}

impl From<FailoverReason> for SwitchReason {
    fn from(reason: FailoverReason) -> Self {
        match reason {
            FailoverReason::Timeout => SwitchReason::Timeout,
            FailoverReason::ConnectError => SwitchReason::ConnectError,
            FailoverReason::BodyError => SwitchReason::BodyError,
            FailoverReason::Status(code) => SwitchReason::Status(code),
            FailoverReason::FirstTokenTimeout => SwitchReason::FirstTokenTimeout,
            FailoverReason::RequestMemory => SwitchReason::RequestMemoryExceeded,
        }
    }
}

impl fmt::Display for SwitchReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            SwitchReason::None => "none",
            SwitchReason::InvalidRequest => "invalid_request",
            SwitchReason::Timeout => "timeout",
            SwitchReason::ConnectError => "connect_error",
            SwitchReason::BodyError => "body_error",
            SwitchReason::Status(code) => return write!(f, "status_{code}"),
            SwitchReason::FirstTokenTimeout => "first_token_timeout",
            SwitchReason::ContextLengthExceeded => "context_length_exceeded",
            SwitchReason::StreamBroken => "stream_broken",
            SwitchReason::RequestMemoryExceeded => "request_memory_exceeded",
            SwitchReason::KeepaliveStall => "keepalive_stall",
            SwitchReason::DeadlineCut => "deadline_cut",
        };
        f.write_str(name)
    }
}

/// A string that names no [`SwitchReason`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a switch reason; see SwitchReason in crates/proxy/src/reason.rs for the list"
)]
pub struct UnknownReason(String);

impl FromStr for SwitchReason {
    type Err = UnknownReason;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const NAMED: [SwitchReason; 11] = [
            SwitchReason::None,
            SwitchReason::InvalidRequest,
            SwitchReason::Timeout,
            SwitchReason::ConnectError,
            SwitchReason::BodyError,
            SwitchReason::FirstTokenTimeout,
            SwitchReason::ContextLengthExceeded,
            SwitchReason::StreamBroken,
            SwitchReason::RequestMemoryExceeded,
            SwitchReason::KeepaliveStall,
            SwitchReason::DeadlineCut,
        ];
        if let Some(code) = s.strip_prefix("status_") {
            if code.len() == 3 {
                if let Ok(code) = code.parse::<u16>() {
                    return Ok(SwitchReason::Status(code));
                }
            }
        }
        NAMED
            .into_iter()
            .find(|r| r.to_string() == s)
            .ok_or_else(|| UnknownReason(s.to_string()))
    }
}

impl From<SwitchReason> for String {
    fn from(reason: SwitchReason) -> Self {
        reason.to_string()
    }
}

impl TryFrom<String> for SwitchReason {
    type Error = UnknownReason;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_writes_the_string_events_always_carried_and_reads_back() {
        let cases = [
            (SwitchReason::None, "none"),
            (SwitchReason::InvalidRequest, "invalid_request"),
            (SwitchReason::Timeout, "timeout"),
            (SwitchReason::ConnectError, "connect_error"),
            (SwitchReason::BodyError, "body_error"),
            (SwitchReason::Status(503), "status_503"),
            (SwitchReason::FirstTokenTimeout, "first_token_timeout"),
            (
                SwitchReason::ContextLengthExceeded,
                "context_length_exceeded",
            ),
            (SwitchReason::StreamBroken, "stream_broken"),
            (
                SwitchReason::RequestMemoryExceeded,
                "request_memory_exceeded",
            ),
            (SwitchReason::KeepaliveStall, "keepalive_stall"),
            (SwitchReason::DeadlineCut, "deadline_cut"),
        ];
        for (reason, text) in cases {
            assert_eq!(
                serde_json::to_string(&reason).unwrap(),
                format!("\"{text}\"")
            );
            assert_eq!(text.parse::<SwitchReason>().unwrap(), reason);
        }
        for bad in ["", "status_", "status_5031", "Timeout", "none "] {
            assert!(bad.parse::<SwitchReason>().is_err(), "{bad:?}");
        }
    }
}
