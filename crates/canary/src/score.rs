//! Scoring one route's evidence for one round into its state, for the
//! quarantine machine ([`crate::machine`]): the per-contract runs (kept for
//! the log), the route's failing run (any contract, the run the quarantine
//! rule counts), the clean run, the language re-check, and the quarantine
//! the round calls for. Pure: no clock, no I/O.

use super::evidence::{ContractName, ContractVerdict, FreezeReason, ProbeKind, RouteEvidence};
use super::policy::Policy;
use super::state::{RouteState, RouteStreak};
use serde::Serialize;
use std::collections::BTreeMap;

/// One route's scoring in one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteRound {
    /// The route.
    pub route: String,
    /// Whether this is the positive control (never scored).
    pub control: bool,
    /// Why nothing was scored, if nothing was.
    pub frozen: Option<FreezeReason>,
    /// One verdict per contract checked (empty when frozen).
    pub verdicts: BTreeMap<ContractName, ContractVerdict>,
    /// Whether every contract checked passed on a trusted probe.
    pub clean: bool,
}

/// A quarantine the rules call for this round.
pub(crate) struct Candidate {
    pub(crate) route: String,
    /// The first contract failed this round.
    pub(crate) contract: ContractName,
    /// Every contract failed during the run.
    pub(crate) contracts: Vec<ContractName>,
    /// The run's length.
    pub(crate) rounds: u32,
    pub(crate) evidence: String,
}

impl Candidate {
    pub(crate) fn contracts_text(&self) -> String {
        self.contracts
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Scores one route's evidence into its state (nothing when frozen).
pub(crate) fn score(
    state: &mut RouteState,
    evidence: &RouteEvidence,
    weak: &[ProbeKind],
    policy: &Policy,
) -> RouteRound {
    let mut out = RouteRound {
        route: evidence.route.clone(),
        control: false,
        frozen: evidence.freeze_reason(),
        verdicts: BTreeMap::new(),
        clean: false,
    };
    if out.frozen.is_some() {
        return out;
    }
    let frozen: Vec<ContractName> = evidence
        .frozen_probes
        .iter()
        .flat_map(|p| super::probe::contracts_of(*p).iter().copied())
        .collect();
    out.verdicts = evidence.verdicts_frozen(weak, &frozen);
    let keep = policy.failing_rounds() as usize;
    for (contract, verdict) in &out.verdicts {
        match verdict {
            ContractVerdict::Fail { evidence } => {
                let streak = state.failing.entry(*contract).or_default();
                streak.rounds += 1;
                streak.evidence.push(evidence.clone());
                let excess = streak.evidence.len().saturating_sub(keep);
                streak.evidence.drain(..excess);
            }
            ContractVerdict::Pass => {
                state.failing.remove(contract);
            }
            ContractVerdict::WeakPass | ContractVerdict::Undetermined => {}
        }
    }
    score_route_streak(state, &out.verdicts, keep);
    if let Some(language) = evidence.language {
        match out.verdicts.get(&ContractName::Language) {
            Some(ContractVerdict::Fail { .. }) => state.language.recheck = Some(language),
            Some(ContractVerdict::Pass) => state.language.recheck = None,
            _ => {}
        }
    }
    // Nothing checked at all says nothing: the clean run is left as it was;
    // nor does a round in which a frozen probe hid some contracts, unless
    // what was checked failed.
    let failed = out
        .verdicts
        .values()
        .any(|v| matches!(v, ContractVerdict::Fail { .. }));
    out.clean = !out.verdicts.is_empty()
        && !evidence.partly_frozen()
        && out.verdicts.values().all(|v| *v == ContractVerdict::Pass);
    if out.clean {
        state.clean_rounds += 1;
    } else if failed || (!out.verdicts.is_empty() && !evidence.partly_frozen()) {
        state.clean_rounds = 0;
    }
    out
}

/// The route's failing run: a round that failed any contract extends it; a
/// round that failed nothing ends it when a contract of the run passed on a
/// trusted probe, and leaves it otherwise (undetermined, weak, frozen).
fn score_route_streak(
    state: &mut RouteState,
    verdicts: &BTreeMap<ContractName, ContractVerdict>,
    keep: usize,
) {
    let failed: Vec<(ContractName, &str)> = verdicts
        .iter()
        .filter_map(|(c, v)| match v {
            ContractVerdict::Fail { evidence } => Some((*c, evidence.as_str())),
            _ => None,
        })
        .collect();
    let streak = &mut state.streak;
    if failed.is_empty() {
        let cleared = streak
            .contracts
            .iter()
            .any(|c| verdicts.get(c) == Some(&ContractVerdict::Pass));
        if cleared {
            *streak = RouteStreak::default();
        }
        return;
    }
    streak.rounds += 1;
    for (c, _) in &failed {
        if !streak.contracts.contains(c) {
            streak.contracts.push(*c);
        }
    }
    streak.contracts.sort();
    streak.evidence.push(
        failed
            .iter()
            .map(|(_, e)| *e)
            .collect::<Vec<_>>()
            .join(", "),
    );
    let excess = streak.evidence.len().saturating_sub(keep);
    streak.evidence.drain(..excess);
}

/// The quarantine this round's scoring calls for on a healthy route, if
/// any: the route failed some contract this round and its failing run (any
/// contract, per route) reached the threshold.
pub(crate) fn candidate(
    name: &str,
    state: &RouteState,
    scored: &RouteRound,
    policy: &Policy,
) -> Option<Candidate> {
    let contract = scored
        .verdicts
        .iter()
        .find(|(_, v)| matches!(v, ContractVerdict::Fail { .. }))
        .map(|(c, _)| *c)?;
    let streak = &state.streak;
    if streak.rounds < policy.failing_rounds() {
        return None;
    }
    Some(Candidate {
        route: name.to_string(),
        contract,
        contracts: streak.contracts.clone(),
        rounds: streak.rounds,
        evidence: streak.evidence.join("; "),
    })
}
