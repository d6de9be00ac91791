//! The positive control: a route known to filter the roleplay probe. Each
//! round its reply tells whether that probe still trips a filter, read by
//! every filtering signal: the refusal patterns, an empty reply, a
//! truncated one, and a `finish_reason` that says a filter stopped it
//! (`content_filter`, or its equivalents in other dialects). The control
//! passes only if none of them fired. When the
//! control passes, the probe has gone weak (a prompt grown too tame, a
//! checker that no longer sees a refusal): its passes prove nothing about any
//! route that round. When the control cannot be read (no reply, a transport
//! error, a reply from another route, only undetermined outcomes), the probe
//! is unverified and treated the same way, because a pass nobody could
//! check is no evidence of health.

use super::evidence::{ContractName, Outcome, ProbeKind, RouteEvidence};
use serde::{Deserialize, Serialize};

/// The probe the control checks.
pub const FILTER_PROBE: ProbeKind = ProbeKind::Roleplay;

/// The contracts through which filtering shows on the filter probe.
pub const FILTER_CONTRACTS: [ContractName; 3] = [
    ContractName::Refusal,
    ContractName::Empty,
    ContractName::Truncated,
];

/// `finish_reason` values that mean a filter stopped the reply: OpenAI's
/// and OpenRouter's `content_filter`, Gemini's `SAFETY`, `RECITATION` and
/// `PROHIBITED_CONTENT`, Anthropic's `refusal`, compared ignoring case.
pub const FILTER_FINISH_REASONS: [&str; 5] = [
    "content_filter",
    "safety",
    "recitation",
    "prohibited_content",
    "refusal",
];

/// Whether `finish_reason` says a filter stopped the reply.
pub fn is_filter_finish(finish_reason: &str) -> bool {
    FILTER_FINISH_REASONS
        .iter()
        .any(|f| f.eq_ignore_ascii_case(finish_reason.trim()))
}

/// What the control said this round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlVerdict {
    /// The control filtered, as it should: the probe works.
    Tripped,
    /// The control passed the filter probe: the probe is weak.
    Passed,
    /// The control could not be read this round: the probe is unverified.
    Inconclusive,
}

/// The control's verdict with the reason, for the round's decisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlCheck {
    /// The control route.
    pub route: String,
    /// The probe checked.
    pub probe: ProbeKind,
    /// What the control did.
    pub verdict: ControlVerdict,
    /// Why, in words.
    pub evidence: String,
}

impl ControlCheck {
    /// Whether the probe's passes count as evidence of health this round.
    pub fn probe_is_weak(&self) -> bool {
        self.verdict != ControlVerdict::Tripped
    }
}

/// Reads the control's evidence (`None` when the control was not probed).
pub fn check(route: &str, evidence: Option<&RouteEvidence>) -> ControlCheck {
    let (verdict, evidence) = judge(evidence);
    ControlCheck {
        route: route.to_string(),
        probe: FILTER_PROBE,
        verdict,
        evidence,
    }
}

fn judge(evidence: Option<&RouteEvidence>) -> (ControlVerdict, String) {
    let Some(evidence) = evidence else {
        return (
            ControlVerdict::Inconclusive,
            "the control route was not probed this round".into(),
        );
    };
    if let Some(reason) = evidence.freeze_reason() {
        return (ControlVerdict::Inconclusive, format!("control {reason}"));
    }
    if let (true, Some(e)) = (
        evidence.frozen_probes.contains(&FILTER_PROBE),
        &evidence.transport_error,
    ) {
        return (
            ControlVerdict::Inconclusive,
            format!(
                "the control's {FILTER_PROBE} probe got a transport error ({}): {}",
                e.kind, e.detail
            ),
        );
    }
    let filtered_finish = evidence
        .probes
        .iter()
        .filter(|p| p.probe == FILTER_PROBE)
        .find_map(|p| p.finish_reason.as_deref().filter(|f| is_filter_finish(f)));
    if let Some(finish) = filtered_finish {
        return (
            ControlVerdict::Tripped,
            format!("the control's reply ended with finish_reason {finish:?}, as expected"),
        );
    }
    let outcomes: Vec<(ContractName, &Outcome)> = evidence
        .probes
        .iter()
        .filter(|p| p.probe == FILTER_PROBE)
        .flat_map(|p| p.results.iter())
        .filter(|r| FILTER_CONTRACTS.contains(&r.contract))
        .map(|r| (r.contract, &r.outcome))
        .collect();
    if let Some((contract, Outcome::Fail { reason })) = outcomes
        .iter()
        .find(|(_, o)| matches!(o, Outcome::Fail { .. }))
    {
        return (
            ControlVerdict::Tripped,
            format!("the control failed {contract} as expected: {reason}"),
        );
    }
    let passed = outcomes.iter().any(|(_, o)| matches!(o, Outcome::Pass));
    let unsure = outcomes
        .iter()
        .any(|(_, o)| matches!(o, Outcome::Undetermined { .. }));
    if passed && !unsure {
        (
            ControlVerdict::Passed,
            format!(
                "the control, known to filter, passed the {FILTER_PROBE} probe: its passes are \
                 not evidence of health this round"
            ),
        )
    } else {
        (
            ControlVerdict::Inconclusive,
            format!(
                "the control's {FILTER_PROBE} probe was undetermined or not run: its passes are \
                 unverified this round"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{ProbeEvidence, TransportError, TransportKind};

    fn control(outcomes: &[(ContractName, Outcome)]) -> RouteEvidence {
        let mut e = RouteEvidence::new("ctl");
        e.probes = vec![ProbeEvidence::new(
            ProbeKind::Roleplay,
            outcomes.iter().cloned(),
        )];
        e
    }

    #[test]
    fn a_filtering_control_keeps_the_probe_trusted() {
        let e = control(&[
            (ContractName::Refusal, Outcome::fail("I can't help")),
            (ContractName::Empty, Outcome::Pass),
        ]);
        let c = check("ctl", Some(&e));
        assert_eq!(c.verdict, ControlVerdict::Tripped);
        assert!(!c.probe_is_weak());
    }

    #[test]
    fn a_passing_control_marks_the_probe_weak() {
        let e = control(&[
            (ContractName::Refusal, Outcome::Pass),
            (ContractName::Empty, Outcome::Pass),
            (ContractName::JunkPrefix, Outcome::fail("unrelated")),
        ]);
        let c = check("ctl", Some(&e));
        assert_eq!(c.verdict, ControlVerdict::Passed);
        assert!(c.probe_is_weak());
    }

    /// The design: the control is "judged by every filtering signal
    /// (refusal, empty, `content_filter` finish, truncation)".
    #[test]
    fn the_control_is_judged_by_every_filtering_signal() {
        // A filter that says so only in its finish reason, with wording the
        // refusal patterns do not know.
        let mut e = control(&[
            (ContractName::Refusal, Outcome::Pass),
            (ContractName::Empty, Outcome::Pass),
            (ContractName::Truncated, Outcome::Pass),
        ]);
        e.probes[0].finish_reason = Some("content_filter".into());
        let c = check("ctl", Some(&e));
        assert_eq!(c.verdict, ControlVerdict::Tripped, "{}", c.evidence);
        e.probes[0].finish_reason = Some("SAFETY".into());
        assert_eq!(check("ctl", Some(&e)).verdict, ControlVerdict::Tripped);
        // A filter that cuts the reply short.
        let e = control(&[
            (ContractName::Refusal, Outcome::Pass),
            (ContractName::Empty, Outcome::Pass),
            (
                ContractName::Truncated,
                Outcome::fail("finish_reason length"),
            ),
        ]);
        assert_eq!(check("ctl", Some(&e)).verdict, ControlVerdict::Tripped);
        // None fired, and the reply ended normally: passed.
        let mut e = control(&[
            (ContractName::Refusal, Outcome::Pass),
            (ContractName::Empty, Outcome::Pass),
            (ContractName::Truncated, Outcome::Pass),
        ]);
        e.probes[0].finish_reason = Some("stop".into());
        assert_eq!(check("ctl", Some(&e)).verdict, ControlVerdict::Passed);
    }

    #[test]
    fn an_unreadable_control_leaves_the_probe_unverified() {
        assert_eq!(check("ctl", None).verdict, ControlVerdict::Inconclusive);
        let mut e = control(&[(ContractName::Refusal, Outcome::Pass)]);
        e.transport_error = Some(TransportError {
            kind: TransportKind::RateLimited,
            detail: "429".into(),
        });
        e.probes.clear();
        assert_eq!(check("ctl", Some(&e)).verdict, ControlVerdict::Inconclusive);
        // Only the filter probe frozen, another probe answered: still unread.
        let mut e = control(&[]);
        e.probes[0].probe = ProbeKind::Schema;
        e.freeze_probe(
            ProbeKind::Roleplay,
            TransportError {
                kind: TransportKind::RateLimited,
                detail: "429".into(),
            },
        );
        assert_eq!(check("ctl", Some(&e)).verdict, ControlVerdict::Inconclusive);
        let e = control(&[(ContractName::Refusal, Outcome::undetermined("short"))]);
        assert_eq!(check("ctl", Some(&e)).verdict, ControlVerdict::Inconclusive);
        let e = control(&[(ContractName::Ttft, Outcome::Pass)]);
        assert!(check("ctl", Some(&e)).probe_is_weak());
    }
}
