//! Whether what a gateway did with one failure is what the decision tree
//! says: one pure function from what was seen on the wire to a verdict.

use crate::policy::Decision;
use serde::Serialize;

/// What one case did to one system, as seen by the client and the
/// simulated upstreams.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// The status the client got, if a response came.
    pub client_status: Option<u16>,
    /// Why the client got no usable answer, if it did not (no response in
    /// time, a transport error, a non-2xx, a malformed body).
    pub client_error: Option<String>,
    /// The answer contracts the answer the client got broke, as
    /// `name: reason` (see [`crate::contracts`]); empty when none.
    pub contract_violations: Vec<String>,
    /// Requests the primary upstream saw for the case.
    pub primary_attempts: u32,
    /// Requests the fallback upstream saw for the case.
    pub fallback_attempts: u32,
    /// The model id the fallback received (the last attempt's), if called.
    pub fallback_model: Option<String>,
    /// Parameters the client sent that the primary's last attempt lacked
    /// (`None`: no attempt recorded).
    pub primary_params_missing: Option<Vec<String>>,
    /// Parameters the client sent that the fallback's last attempt lacked
    /// (`None`: the fallback was not called).
    pub fallback_params_missing: Option<Vec<String>>,
    /// Client latency, request sent to last byte.
    pub latency_ms: f64,
}

impl Observation {
    fn switched(&self) -> bool {
        self.fallback_attempts > 0
    }

    fn answered(&self) -> bool {
        self.client_status.is_some_and(|s| (200..300).contains(&s)) && self.client_error.is_none()
    }

    /// What the client got, in words.
    fn got(&self) -> String {
        match (self.client_status, &self.client_error) {
            (Some(s), None) => format!("HTTP {s}"),
            (Some(s), Some(_)) if !(200..300).contains(&s) => format!("HTTP {s}"),
            (_, Some(e)) => e.clone(),
            (None, None) => "nothing".to_string(),
        }
    }
}

/// What a system should do in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// What the decision tree says.
    Tree(Decision),
    /// A stream broke off after its first bytes: fail over before sending
    /// anything, or let the client see the break; never hand the client
    /// the cut stream as a complete answer.
    VisibleCut,
}

impl Expected {
    /// In words, for tables: `deliver`, `pass through`, `fail over`, or
    /// `fail over or show the cut`.
    pub fn label(self) -> &'static str {
        match self {
            Expected::Tree(Decision::Deliver) => "deliver",
            Expected::Tree(Decision::PassThrough) => "pass through",
            Expected::Tree(Decision::Failover(_)) => "fail over",
            Expected::VisibleCut => "fail over or show the cut",
        }
    }
}

/// How a case went for one system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    /// The system did what the decision tree says.
    Expected,
    /// It did something else; `finding` says what.
    Deviates,
    /// The primary never saw the request, so the case shows nothing about
    /// the decision (the gateway may have cooled the primary down after an
    /// earlier case, or routes elsewhere).
    Inconclusive,
}

/// The verdict of one case for one system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseVerdict {
    /// Expected, deviates or inconclusive.
    pub status: CaseStatus,
    /// What deviated, or why the case is inconclusive; empty when expected.
    pub finding: String,
    /// Facts worth knowing that the decision tree does not rule on: retries
    /// stacked on one upstream, parameters an upstream did not receive.
    pub notes: Vec<String>,
}

/// Judges `seen` against `expected` for a primary that failed with
/// `injected` (its status; `None` for a timeout, a cut or no fault),
/// described as `what` in findings ("a 401", "a timeout").
pub fn assess(
    expected: Expected,
    injected: Option<u16>,
    what: &str,
    seen: &Observation,
) -> CaseVerdict {
    let mut notes = Vec::new();
    if seen.primary_attempts > 1 {
        notes.push(format!(
            "the primary was tried {} times",
            seen.primary_attempts
        ));
    }
    if seen.fallback_attempts > 1 {
        notes.push(format!(
            "the fallback was tried {} times",
            seen.fallback_attempts
        ));
    }
    for (upstream, missing) in [
        ("primary", &seen.primary_params_missing),
        ("fallback", &seen.fallback_params_missing),
    ] {
        if let Some(missing) = missing.as_ref().filter(|m| !m.is_empty()) {
            notes.push(format!(
                "the {upstream} did not receive the client's {}",
                missing.join(", ")
            ));
        }
    }
    let verdict = |status, finding: String| CaseVerdict {
        status,
        finding,
        notes: notes.clone(),
    };
    if seen.primary_attempts == 0 {
        return verdict(
            CaseStatus::Inconclusive,
            format!(
                "the primary never saw the request (a cooldown after an earlier failure?); the client got {}",
                seen.got()
            ),
        );
    }
    // The upstreams answer cleanly: an answer that reaches the client
    // broken (junk, a language drift, a broken schema, ...) was broken on
    // the way.
    if seen.answered() && !seen.contract_violations.is_empty() {
        return verdict(
            CaseStatus::Deviates,
            format!(
                "the answer the client got broke its contract: {}",
                seen.contract_violations.join("; ")
            ),
        );
    }
    let expected = match expected {
        Expected::Tree(decision) => decision,
        Expected::VisibleCut if seen.answered() && !seen.switched() => {
            return verdict(
                CaseStatus::Deviates,
                "the primary's stream broke off, and the client got it as a complete answer"
                    .to_string(),
            )
        }
        Expected::VisibleCut => return verdict(CaseStatus::Expected, String::new()),
    };
    match expected {
        Decision::Deliver if seen.switched() => verdict(
            CaseStatus::Deviates,
            "failed over although the primary answered".to_string(),
        ),
        Decision::Deliver if !seen.answered() => verdict(
            CaseStatus::Deviates,
            format!("the primary answered but the client got {}", seen.got()),
        ),
        Decision::PassThrough if seen.switched() => verdict(
            CaseStatus::Deviates,
            format!(
                "failed over on {what}, a permanent error another provider does not fix; the client got {}",
                seen.got()
            ),
        ),
        Decision::PassThrough if seen.client_status != injected => verdict(
            CaseStatus::Deviates,
            format!("did not pass {what} through; the client got {}", seen.got()),
        ),
        Decision::Failover(_) if !seen.switched() => verdict(
            CaseStatus::Deviates,
            format!("did not fail over on {what}; the client got {}", seen.got()),
        ),
        Decision::Failover(_) if !seen.answered() => verdict(
            CaseStatus::Deviates,
            format!(
                "failed over on {what} but the client got {}",
                seen.got()
            ),
        ),
        Decision::Deliver | Decision::PassThrough | Decision::Failover(_) => {
            verdict(CaseStatus::Expected, String::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::FailoverReason;

    fn seen(status: Option<u16>, primary: u32, fallback: u32) -> Observation {
        Observation {
            client_status: status,
            client_error: status
                .filter(|s| !(200..300).contains(s))
                .map(|s| format!("HTTP {s}: ...")),
            contract_violations: Vec::new(),
            primary_attempts: primary,
            fallback_attempts: fallback,
            fallback_model: None,
            primary_params_missing: None,
            fallback_params_missing: None,
            latency_ms: 1.0,
        }
    }

    const SWITCH: Decision = Decision::Failover(FailoverReason::Status(503));

    #[test]
    fn the_decision_tree_followed_is_expected() {
        let ok = |d, injected: Option<u16>, s: &Observation| {
            assess(Expected::Tree(d), injected, "a fault", s).status
        };
        assert_eq!(
            ok(Decision::Deliver, None, &seen(Some(200), 1, 0)),
            CaseStatus::Expected
        );
        assert_eq!(
            ok(Decision::PassThrough, Some(401), &seen(Some(401), 1, 0)),
            CaseStatus::Expected
        );
        assert_eq!(
            ok(SWITCH, Some(503), &seen(Some(200), 1, 1)),
            CaseStatus::Expected
        );
    }

    #[test]
    fn falling_back_on_a_401_deviates() {
        let v = assess(
            Expected::Tree(Decision::PassThrough),
            Some(401),
            "a 401",
            &seen(Some(200), 1, 1),
        );
        assert_eq!(v.status, CaseStatus::Deviates);
        assert!(v.finding.contains("failed over on a 401"), "{}", v.finding);
    }

    #[test]
    fn rewriting_a_permanent_status_deviates() {
        let v = assess(
            Expected::Tree(Decision::PassThrough),
            Some(403),
            "a 403",
            &seen(Some(500), 1, 0),
        );
        assert_eq!(v.status, CaseStatus::Deviates);
        assert!(
            v.finding.contains("did not pass a 403 through"),
            "{}",
            v.finding
        );
        assert!(v.finding.contains("HTTP 500"), "{}", v.finding);
    }

    #[test]
    fn not_failing_over_on_a_transient_error_deviates() {
        let v = assess(
            Expected::Tree(SWITCH),
            Some(503),
            "a 503",
            &seen(Some(503), 1, 0),
        );
        assert_eq!(v.status, CaseStatus::Deviates);
        assert!(
            v.finding.contains("did not fail over on a 503"),
            "{}",
            v.finding
        );
        let mut hung = seen(None, 1, 0);
        hung.client_error = Some("no complete response within 30000 ms".into());
        let v = assess(
            Expected::Tree(Decision::Failover(FailoverReason::Timeout)),
            None,
            "a timeout",
            &hung,
        );
        assert!(
            v.finding.contains("did not fail over on a timeout"),
            "{}",
            v.finding
        );
        assert!(v.finding.contains("no complete response"), "{}", v.finding);
    }

    #[test]
    fn a_failover_that_still_fails_deviates() {
        let v = assess(
            Expected::Tree(SWITCH),
            Some(502),
            "a 502",
            &seen(Some(502), 1, 1),
        );
        assert_eq!(v.status, CaseStatus::Deviates);
        assert!(
            v.finding.contains("failed over on a 502 but"),
            "{}",
            v.finding
        );
    }

    #[test]
    fn a_healthy_primary_must_be_delivered() {
        let v = assess(
            Expected::Tree(Decision::Deliver),
            None,
            "no fault",
            &seen(Some(200), 1, 1),
        );
        assert_eq!(v.status, CaseStatus::Deviates);
        let v = assess(
            Expected::Tree(Decision::Deliver),
            None,
            "no fault",
            &seen(Some(500), 1, 0),
        );
        assert_eq!(v.status, CaseStatus::Deviates);
    }

    #[test]
    fn an_untouched_primary_is_inconclusive_and_retries_are_noted() {
        let v = assess(
            Expected::Tree(SWITCH),
            Some(503),
            "a 503",
            &seen(Some(200), 0, 1),
        );
        assert_eq!(v.status, CaseStatus::Inconclusive);
        let v = assess(
            Expected::Tree(SWITCH),
            Some(503),
            "a 503",
            &seen(Some(200), 3, 2),
        );
        assert_eq!(v.status, CaseStatus::Expected);
        assert_eq!(
            v.notes,
            [
                "the primary was tried 3 times",
                "the fallback was tried 2 times"
            ]
        );
    }
}
