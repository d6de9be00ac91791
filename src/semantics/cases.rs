//! The failures `semantics` puts in front of a gateway, one per case, and
//! what the decision tree says a gateway should do with each.
//!
//! The expectation is not written here: it is
//! [`classify`](crate::policy::classify), the one decision tree the
//! reference proxies also follow, applied to the case's primary outcome.

use super::verdict::Expected;
use crate::faults::{ErrorKind, ErrorSpec, FaultAction};
use crate::policy::{classify, Decision, Outcome};
use std::time::Duration;

/// What the primary upstream does in one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Nothing: it answers (the control case).
    None,
    /// It answers this error status with an OpenAI-style body (429 with
    /// `Retry-After`).
    Status(u16),
    /// It holds the connection without a byte until the gateway gives up.
    Timeout,
    /// It answers 200 and breaks the body off partway (a stream after two
    /// content chunks, without `data: [DONE]`).
    Cut,
}

/// One check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// Short id used in tables and JSON (`401`, `timeout`, `ok`).
    pub id: &'static str,
    /// What the primary does, in words.
    pub label: &'static str,
    /// What the primary does.
    pub fault: Fault,
    /// Whether the request asks for structured output (a JSON schema), so
    /// the `schema` contract applies to the answer.
    pub structured: bool,
}

/// `Retry-After` of the 429 case.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Every case, in the order they are sent: the control first, then the
/// permanent errors, then the transient ones, so that a gateway that cools
/// a failing provider down has seen no failure before the cases that must
/// reach the primary.
pub const CASES: [Case; 14] = [
    case("ok", "answers normally", Fault::None),
    Case {
        id: "schema",
        label: "answers normally; the request asks for structured output",
        fault: Fault::None,
        structured: true,
    },
    case("400", "400 invalid request", Fault::Status(400)),
    case("401", "401 invalid API key", Fault::Status(401)),
    case("402", "402 payment required", Fault::Status(402)),
    case("403", "403 permission denied", Fault::Status(403)),
    case("404", "404 model not found", Fault::Status(404)),
    case("429", "429 rate limited, Retry-After 1", Fault::Status(429)),
    case("500", "500 internal error", Fault::Status(500)),
    case("502", "502 bad gateway", Fault::Status(502)),
    case("503", "503 unavailable", Fault::Status(503)),
    case("504", "504 gateway timeout", Fault::Status(504)),
    case("timeout", "holds the connection, no byte", Fault::Timeout),
    case("cut", "answers 200, then breaks the body off", Fault::Cut),
];

const fn case(id: &'static str, label: &'static str, fault: Fault) -> Case {
    Case {
        id,
        label,
        fault,
        structured: false,
    }
}

/// The `response_format` of a structured case: a small fixed schema.
pub fn response_format() -> serde_json::Value {
    serde_json::json!({
        "type": "json_schema",
        "json_schema": {
            "name": "semantics_case",
            "strict": true,
            "schema": {
                "type": "object",
                "properties": {
                    "answer": {"type": "string"},
                    "confidence": {"type": "number"}
                },
                "required": ["answer", "confidence"],
                "additionalProperties": false
            }
        }
    })
}

impl Case {
    /// What a gateway should do. For a plain request that is the decision
    /// tree's call; a stream that breaks off after its first bytes went to
    /// the client cannot be replaced, so it must reach the client visibly
    /// broken, unless the gateway failed over before sending anything.
    pub fn expected(&self, stream: bool) -> Expected {
        Expected::Tree(match self.fault {
            Fault::None => Decision::Deliver,
            Fault::Status(code) => classify(Outcome::Status(code)),
            Fault::Timeout => classify(Outcome::Timeout),
            Fault::Cut if stream => return Expected::VisibleCut,
            Fault::Cut => classify(Outcome::BodyError),
        })
    }

    /// The user message of the case's request. It names the case, so the
    /// simulated upstreams recognise it from the content alone.
    pub fn message(&self) -> String {
        format!(
            "continuity-bench semantics check, case {}: the primary {}. Please reply with one short sentence.",
            self.id, self.label
        )
    }

    /// The id the case's request is logged under by the upstreams.
    pub fn conversation_id(&self) -> String {
        format!("semantics-{}", self.id)
    }

    /// The fault the primary upstream executes; a timeout holds for `hold`
    /// or until the gateway goes away.
    pub fn action(&self, hold: Duration) -> Option<FaultAction> {
        match self.fault {
            Fault::None => None,
            Fault::Timeout => Some(FaultAction::Timeout { hold }),
            Fault::Cut => Some(FaultAction::BodyCut { chunks: 2 }),
            Fault::Status(429) => Some(FaultAction::Error(
                ErrorSpec::new(
                    429,
                    ErrorKind::RateLimit,
                    "Rate limit reached for requests (simulated by semantics).",
                )
                .with_retry_after(RETRY_AFTER),
            )),
            Fault::Status(status) => Some(FaultAction::Error(status_error(status))),
        }
    }
}

/// The error a provider sends with `status`.
fn status_error(status: u16) -> ErrorSpec {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_follow_the_decision_tree() {
        let expected =
            |id: &str, stream| CASES.iter().find(|c| c.id == id).unwrap().expected(stream);
        for stream in [false, true] {
            assert_eq!(expected("ok", stream), Expected::Tree(Decision::Deliver));
            for id in ["400", "401", "402", "403"] {
                assert_eq!(
                    expected(id, stream),
                    Expected::Tree(Decision::PassThrough),
                    "{id}"
                );
            }
            for id in ["404", "429", "500", "502", "503", "504", "timeout"] {
                assert!(
                    matches!(expected(id, stream), Expected::Tree(Decision::Failover(_))),
                    "{id}"
                );
            }
        }
        assert!(matches!(
            expected("cut", false),
            Expected::Tree(Decision::Failover(_))
        ));
        assert_eq!(expected("cut", true), Expected::VisibleCut);
    }

    #[test]
    fn ids_and_messages_are_unique() {
        let mut ids: Vec<&str> = CASES.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CASES.len());
        let mut messages: Vec<String> = CASES.iter().map(Case::message).collect();
        messages.sort();
        messages.dedup();
        assert_eq!(messages.len(), CASES.len());
    }

    #[test]
    fn error_bodies_are_openai_style() {
        for case in CASES {
            if let Some(FaultAction::Error(spec)) = case.action(Duration::ZERO) {
                let body = crate::upstream::render::error_json(&spec);
                let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                assert!(v["error"]["message"].is_string(), "{}", spec.status);
                assert!(v["error"]["type"].is_string(), "{}", spec.status);
            }
        }
        let Some(FaultAction::Error(spec)) = CASES
            .iter()
            .find(|c| c.id == "429")
            .unwrap()
            .action(Duration::ZERO)
        else {
            panic!("case 429 is a rate limit")
        };
        assert_eq!(spec.retry_after, Some(RETRY_AFTER));
    }
}
