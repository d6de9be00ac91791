//! The two cases that leave the most state behind, and so are sent last: a
//! primary that flaps (a sequence of requests across an outage and its
//! recovery) and a fallback whose key has expired (reported, not scored).

use super::build::{case, primary};
use super::errors::status_error;
use super::secs;
use crate::case::{Case, Check, CheckId as Id, Ideal, Rule, Shape};
use crate::timing::Timing;
use cb_faults::{Act, Script, When};

/// `flap`: the primary is down for a while, then healthy.
pub(super) fn flap(t: &Timing) -> Case {
    Case {
        shape: Shape::Sequence {
            count: t.flap_requests,
            interval: t.flap_interval,
        },
        ..case(
            "flap",
            format!(
                "503 for the first {} after the case starts, then healthy; {} requests, one every {}",
                secs(t.flap_outage),
                t.flap_requests,
                secs(t.flap_interval)
            ),
            "served by the fallback during the outage, back on the primary within the bound after it",
            primary(Script::when(
                When::WithinClock(t.flap_outage),
                Act::Error(status_error(503)),
                Act::answer(),
            )),
            Ideal::Answer,
            outage_checks(t, Vec::new()),
            t.flap_request_bound,
        )
    }
}

/// The checks of a primary down for the flap's span: every request during
/// it answered, back on the primary within the bound after it, `more`,
/// and the primary attempts during it recorded.
pub(super) fn outage_checks(t: &Timing, mut more: Vec<Check>) -> Vec<Check> {
    let mut checks = vec![
        Check::required(
            Id::ServedDuringOutage,
            Rule::ServedDuringOutage(t.flap_outage),
        ),
        Check::required(
            Id::Recovered,
            Rule::RecoveredWithin {
                outage: t.flap_outage,
                within: t.flap_recovery_bound,
            },
        ),
    ];
    checks.append(&mut more);
    checks.push(Check::informational(
        Id::ProbeDiscipline,
        Rule::ProbeDiscipline(t.flap_outage),
    ));
    checks
}

/// `fallback-health`: the fallback's key has expired.
pub(super) fn fallback_health(t: &Timing) -> Case {
    Case {
        shape: Shape::Health,
        scored: false,
        ..case(
            "fallback-health",
            "the fallback's key has expired: it answers 401 to everything; the primary then answers 503".into(),
            "the system says so before the fallback is needed (a health endpoint or a start-up check); reported, not scored",
            primary(Script::always(Act::Error(status_error(503)))),
            Ideal::CleanError,
            vec![Check::advisory(Id::HealthExposed, Rule::HealthExposed)],
            t.default_bound,
        )
    }
}
