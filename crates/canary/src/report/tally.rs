//! The run's counts, folded round by round from what the prober sent and
//! what the machine decided, then turned into the report's per-route rows
//! with the state each route ended in.

use super::{ContractTally, RouteReport};
use crate::clock::Timestamp;
use crate::discover::Route;
use crate::evidence::{ContractVerdict, FreezeReason};
use crate::machine::{Machine, RoundDecisions};
use crate::policy::Mode;
use crate::prober::RouteProbe;
use crate::record::{LogRecord, RecordKind};
use crate::summary::RouteStatus;
use std::collections::BTreeMap;

/// The run's counts so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    routes: BTreeMap<String, RouteReport>,
    /// Requests sent.
    pub requests: u64,
    /// Rounds with a weak or unverified filtering probe.
    pub weak_probe_rounds: u64,
    /// Decisions and state changes, transport freezes left out.
    pub decisions: Vec<LogRecord>,
    /// The first round's number and time.
    pub first: Option<(u64, Timestamp)>,
    /// The last round's number and time.
    pub last: Option<(u64, Timestamp)>,
    /// Rounds folded in.
    pub completed: u64,
}

fn empty_row(route: &str, provider_name: Option<String>, control: bool) -> RouteReport {
    RouteReport {
        route: route.to_string(),
        provider_name,
        control,
        status: if control {
            RouteStatus::Control
        } else {
            RouteStatus::Healthy
        },
        contract: None,
        time_left_secs: None,
        rounds_probed: 0,
        rounds_scored: 0,
        rounds_clean: 0,
        rounds_frozen: 0,
        rounds_pinning_not_honoured: 0,
        requests: 0,
        quarantines: 0,
        alerts: 0,
        contracts: BTreeMap::new(),
    }
}

impl Tally {
    /// An empty tally over `routes`; `control` is the control route.
    pub fn new(routes: &[Route], control: Option<&str>) -> Self {
        let routes = routes
            .iter()
            .map(|r| {
                let row = empty_row(&r.id, r.provider_name.clone(), control == Some(&r.id));
                (r.id.clone(), row)
            })
            .collect();
        Tally {
            routes,
            ..Tally::default()
        }
    }

    /// Folds in one round.
    pub fn add(&mut self, probes: &[RouteProbe], decisions: &RoundDecisions) {
        self.completed += 1;
        self.first.get_or_insert((decisions.round, decisions.time));
        self.last = Some((decisions.round, decisions.time));
        if !decisions.weak_probes.is_empty() {
            self.weak_probe_rounds += 1;
        }
        for probe in probes {
            self.requests += u64::from(probe.requests);
            self.row(&probe.evidence.route).requests += u64::from(probe.requests);
        }
        for scored in &decisions.routes {
            let row = self.row(&scored.route);
            row.rounds_probed += 1;
            match &scored.frozen {
                Some(FreezeReason::Transport(_)) => row.rounds_frozen += 1,
                Some(FreezeReason::PinningNotHonoured { .. }) => {
                    row.rounds_pinning_not_honoured += 1
                }
                None => {
                    row.rounds_scored += 1;
                    row.rounds_clean += u64::from(scored.clean);
                    for (contract, verdict) in &scored.verdicts {
                        let t: &mut ContractTally = row.contracts.entry(*contract).or_default();
                        match verdict {
                            ContractVerdict::Pass => t.pass += 1,
                            ContractVerdict::WeakPass => t.weak_pass += 1,
                            ContractVerdict::Fail { .. } => t.fail += 1,
                            ContractVerdict::Undetermined => t.undetermined += 1,
                        }
                    }
                }
            }
        }
        for record in &decisions.records {
            match record.kind {
                RecordKind::Quarantine => self.row(&record.route).quarantines += 1,
                RecordKind::CapacityAlert => self.row(&record.route).alerts += 1,
                _ => {}
            }
            if record.kind != RecordKind::Frozen {
                self.decisions.push(record.clone());
            }
        }
    }

    fn row(&mut self, route: &str) -> &mut RouteReport {
        self.routes
            .entry(route.to_string())
            .or_insert_with(|| empty_row(route, None, false))
    }

    /// The rows, by route, with the state each is in on `machine` at the
    /// last round (under `mode`).
    pub fn rows(&self, machine: &Machine, mode: Mode) -> Vec<RouteReport> {
        let at = self.last.map(|(_, t)| t);
        self.routes
            .values()
            .map(|row| {
                let mut row = row.clone();
                if row.control {
                    return row;
                }
                let quarantine = machine
                    .route(&row.route)
                    .and_then(|r| r.quarantine.as_ref());
                if let Some(q) = quarantine {
                    row.status = match mode {
                        Mode::Enforce => RouteStatus::Quarantined,
                        Mode::Observe => RouteStatus::WouldBeQuarantined,
                    };
                    row.contract = Some(q.contract);
                    row.time_left_secs = at.map(|t| q.until.since(t).as_secs());
                }
                row
            })
            .collect()
    }
}
