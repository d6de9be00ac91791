//! How a case is built: [`case`] adds the universal checks every case
//! carries (no hang, no truncated answer presented as complete, the answer
//! contracts kept), [`tree`] turns the decision tree's call on a primary
//! outcome into the case's required checks, and [`primary`] scripts the
//! primary while the fallback answers.

use crate::case::{Case, Check, CheckId as Id, Ideal, Rule, Shape, Streaming};
use crate::timing::Timing;
use cb_faults::{Act, CaseScript, Script};
use cb_proxy::policy::{classify, Decision, Outcome};
use std::time::Duration;

/// A case whose checks are the decision tree's call on the primary's
/// outcome (`act`; `None`: it answers). A stream that breaks off after its
/// first bytes went to the client cannot be failed over cleanly: there the
/// tree has no call, and the universal checks (never a truncated answer
/// presented as complete) decide.
pub(super) fn tree(
    id: &'static str,
    upstream: String,
    act: Option<Act>,
    stream: bool,
    t: &Timing,
) -> Case {
    let outcome = match &act {
        None => Some(Outcome::Status(200)),
        Some(Act::Error(spec)) => Some(Outcome::Status(spec.status)),
        Some(Act::Hold { .. }) => Some(Outcome::Timeout),
        Some(Act::Reset) => Some(Outcome::ConnectError),
        Some(Act::LateError { error, .. }) => Some(Outcome::Status(error.status)),
        Some(Act::Answer(_)) if stream => None,
        Some(Act::Answer(_)) => Some(Outcome::BodyError),
    };
    let (ideal, checks, passes) = match outcome.map(classify) {
        Some(Decision::Deliver) => (
            Ideal::Answer,
            vec![Check::required(Id::Delivered, Rule::Delivered)],
            "deliver: the primary's answer, no failover",
        ),
        Some(Decision::PassThrough) => {
            let status = match &act {
                Some(Act::Error(spec)) => spec.status,
                _ => 0,
            };
            (
                Ideal::CleanError,
                vec![
                    Check::required(Id::NoFailover, Rule::NoFailover),
                    Check::required(Id::PassedThrough, Rule::PassedThrough(status)),
                ],
                "pass through: the primary's status, no failover",
            )
        }
        Some(Decision::Failover(_)) => (
            Ideal::Answer,
            vec![Check::required(Id::FailedOver, Rule::FailedOver)],
            "fail over: the fallback's answer",
        ),
        None => (
            Ideal::Answer,
            Vec::new(),
            "fail over before sending anything, continue the answer, or show the cut; never the cut stream as complete",
        ),
    };
    let script = match act {
        None => Script::answer(),
        Some(act) => Script::always(act),
    };
    case(
        id,
        upstream,
        passes,
        primary(script),
        ideal,
        checks,
        t.default_bound,
    )
}

/// A single-request case with the universal checks added.
pub(super) fn case(
    id: &'static str,
    upstream: String,
    passes: &'static str,
    script: CaseScript,
    ideal: Ideal,
    mut checks: Vec<Check>,
    bound: Duration,
) -> Case {
    let mut all = vec![
        Check::required(Id::NoHang, Rule::NoHang),
        Check::required(Id::NoTruncatedSuccess, Rule::NoTruncatedSuccess),
        Check::required(Id::ContractsKept, Rule::ContractsKept),
    ];
    all.append(&mut checks);
    Case {
        id,
        upstream,
        passes,
        script: CaseScript {
            clock: id.to_string(),
            ..script
        },
        shape: Shape::Single,
        streaming: Streaming::AsConfigured,
        ideal,
        checks: all,
        bound,
        alive_after: false,
        structured: false,
        without_max_tokens: false,
        scored: true,
        contracts_judged_elsewhere: &[],
    }
}

/// A script for the primary; the fallback answers.
pub(super) fn primary(script: Script) -> CaseScript {
    CaseScript {
        primary: script,
        fallback: Script::answer(),
        clock: String::new(),
    }
}
