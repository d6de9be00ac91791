//! Scenario tests of the quarantine rules: rounds of evidence replayed
//! through the machine on an injected clock, as the "Must show"
//! lists them. This file holds the evidence builders and the simulated
//! clock; `rules` checks each rule, `long_runs` the seeded runs, the restart
//! and the replay speed.

mod design;
mod long_runs;
mod rules;

use super::clock::{Timestamp, DAY};
use super::evidence::{
    ContractName, ContractVerdict, Outcome, ProbeEvidence, ProbeKind, RouteEvidence,
    TransportError, TransportKind,
};
use super::ignore::IgnoreList;
use super::language::{Language, ROTATION};
use super::machine::{Machine, ReleaseError, RoundDecisions};
use super::policy::{Mode, Policy};
use super::record::{LogRecord, RecordKind};
use super::state;
use rand::Rng;
use std::time::Duration;

const HALF_HOUR: Duration = Duration::from_secs(1800);

fn t0() -> Timestamp {
    Timestamp::from_unix(1_735_689_600).unwrap()
}

fn enforce() -> Policy {
    Policy {
        enforce: true,
        ..Policy::default()
    }
}

fn probe_of(contract: ContractName) -> ProbeKind {
    match contract {
        ContractName::Schema => ProbeKind::Schema,
        ContractName::Language => ProbeKind::Language,
        _ => ProbeKind::Roleplay,
    }
}

/// Evidence where every contract has `outcome` unless `overrides` says
/// otherwise.
fn evidence(route: &str, overrides: &[(ContractName, Outcome)]) -> RouteEvidence {
    let mut e = RouteEvidence::new(route);
    for kind in [ProbeKind::Roleplay, ProbeKind::Schema, ProbeKind::Language] {
        let results = ContractName::ALL
            .into_iter()
            .filter(|c| probe_of(*c) == kind)
            .map(|c| {
                let outcome = overrides
                    .iter()
                    .find(|(o, _)| *o == c)
                    .map(|(_, o)| o.clone())
                    .unwrap_or(Outcome::Pass);
                (c, outcome)
            });
        e.probes.push(ProbeEvidence::new(kind, results));
    }
    e.language = Some(Language::En);
    e
}

fn pass(route: &str) -> RouteEvidence {
    evidence(route, &[])
}

fn fail(route: &str, contract: ContractName) -> RouteEvidence {
    evidence(
        route,
        &[(contract, Outcome::fail(format!("{contract} broke")))],
    )
}

fn undetermined(route: &str, contract: ContractName) -> RouteEvidence {
    evidence(route, &[(contract, Outcome::undetermined("too short"))])
}

/// No probe got a reply: the whole route is frozen.
fn transport(route: &str) -> RouteEvidence {
    let mut e = fail(route, ContractName::JunkPrefix);
    e.probes.clear();
    e.transport_error = Some(TransportError {
        kind: TransportKind::RateLimited,
        detail: "HTTP 429 Retry-After: 5".into(),
    });
    e
}

/// The control route filtering as it should (refusal fails).
fn control_trips(route: &str) -> RouteEvidence {
    fail(route, ContractName::Refusal)
}

/// A machine, a clock and the whole log, advanced 30 minutes per round.
struct Sim {
    machine: Machine,
    now: Timestamp,
    policy: Policy,
    log: Vec<LogRecord>,
}

impl Sim {
    fn new(policy: Policy) -> Self {
        Sim {
            machine: Machine::new(),
            now: t0(),
            policy,
            log: Vec::new(),
        }
    }

    fn round(&mut self, evidence: &[RouteEvidence]) -> RoundDecisions {
        let d = self.machine.round(self.now, evidence, &self.policy);
        self.log.extend(d.records.iter().cloned());
        self.now = self.now.plus(HALF_HOUR);
        d
    }

    fn advance(&mut self, span: Duration) {
        self.now = self.now.plus(span);
    }

    fn quarantined(&self, route: &str) -> bool {
        self.machine
            .route(route)
            .is_some_and(|r| r.quarantine.is_some())
    }

    fn kinds(&self, kind: RecordKind) -> Vec<&LogRecord> {
        self.log.iter().filter(|r| r.kind == kind).collect()
    }
}

fn kinds(d: &RoundDecisions) -> Vec<(String, RecordKind)> {
    d.records
        .iter()
        .map(|r| (r.route.clone(), r.kind))
        .collect()
}
