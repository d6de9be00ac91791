//! The power figures by simulation: the canary's own quarantine machine
//! ([`Machine`]) and its own language confirmation rule
//! ([`language::confirm`]) run on the paused clock, round after round,
//! against one simulated route whose replies are drawn from the scenario.
//! Nothing here re-states the rules: a change to them changes these
//! figures.
//!
//! Each trial draws, per round and per copy of each probe: a transport
//! error (the copy is frozen), else for each contract of the probe a
//! verdict from the contract's measured checker on a reply degraded at the
//! incidence (for the degraded contract only; per reply, or per session
//! when sticky). A trial ends at the route's first quarantine or at the
//! horizon. Trials are seeded one by one from the master seed, so the
//! figures do not depend on how many threads ran them.

use super::model::Scenario;
use crate::clock::Timestamp;
use crate::evidence::{ProbeEvidence, RouteEvidence, TransportError, TransportKind};
use crate::language::{self, Language};
use crate::machine::Machine;
use crate::policy::Policy;
use crate::probe::{contracts_of, PROBES};
use crate::record::RecordKind;
use cb_contracts::{ContractName, Outcome};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The route every trial probes.
const ROUTE: &str = "simulated";

/// The rules the trials run: the default policy, enforcing, with no
/// capacity floor (a floor decides whether a quarantine is applied, not
/// whether the canary saw the degradation).
fn policy() -> Policy {
    Policy {
        enforce: true,
        min_healthy: 0,
        ..Policy::default()
    }
}

/// Whether the route the trial probes is degraded, or healthy (its
/// checkers' false positives only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteHealth {
    /// Degraded as the scenario says.
    Degraded,
    /// Not degraded.
    Healthy,
}

/// Runs `trials` trials of at most `rounds` rounds each, from `seed`; per
/// trial, the round (1-based) of the first quarantine, or `None`.
pub fn trials(
    scenario: &Scenario,
    health: RouteHealth,
    trials: u64,
    rounds: u64,
    seed: u64,
) -> Vec<Option<u64>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8) as u64;
    let label = format!(
        "canary-power/{}/{}/{}/{:?}",
        scenario.contract.as_str(),
        scenario.incidence.share,
        scenario.incidence.sticky,
        health
    );
    let mut out = vec![None; usize::try_from(trials).unwrap_or(0)];
    std::thread::scope(|scope| {
        let chunks: Vec<_> = out
            .chunks_mut(
                usize::try_from(trials.div_ceil(threads))
                    .unwrap_or(1)
                    .max(1),
            )
            .enumerate()
            .map(|(chunk, slots)| {
                let label = &label;
                let first = chunk as u64 * trials.div_ceil(threads);
                scope.spawn(move || {
                    for (i, slot) in slots.iter_mut().enumerate() {
                        let mut rng = cb_base::seed::rng(seed, label, first + i as u64);
                        *slot = trial(scenario, health, rounds, &mut rng);
                    }
                })
            })
            .collect();
        for handle in chunks {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    out
}

/// One trial: the round of the first quarantine, if any within `rounds`.
fn trial(
    scenario: &Scenario,
    health: RouteHealth,
    rounds: u64,
    rng: &mut ChaCha8Rng,
) -> Option<u64> {
    let policy = policy();
    let mut machine = Machine::new();
    let start = Timestamp::from_unix(1_735_689_600).ok()?;
    for round in 1..=rounds {
        let evidence = draw_round(scenario, health, rng);
        let steps = u32::try_from(round - 1).unwrap_or(u32::MAX);
        let now = start.plus(scenario.interval.saturating_mul(steps));
        let decisions = machine.round(now, &[evidence], &policy);
        if decisions.of_kind(RecordKind::Quarantine).next().is_some() {
            return Some(round);
        }
    }
    None
}

/// What one round of probes observed on the route.
fn draw_round(scenario: &Scenario, health: RouteHealth, rng: &mut ChaCha8Rng) -> RouteEvidence {
    let mut evidence = RouteEvidence::new(ROUTE);
    let share = scenario.incidence.share.clamp(0.0, 1.0);
    let degraded = health == RouteHealth::Degraded;
    for kind in PROBES {
        for _ in 0..scenario.repeats.of(kind) {
            if rng.random_bool(scenario.transient.clamp(0.0, 1.0)) {
                evidence.freeze_probe(
                    kind,
                    TransportError {
                        kind: TransportKind::ServerError,
                        detail: "simulated transport error".into(),
                    },
                );
                continue;
            }
            // The copy's session, drawn once: a sticky fault holds for
            // every reply in it, the confirmations included.
            let session = degraded && rng.random_bool(share);
            let reply_degraded = |rng: &mut ChaCha8Rng| {
                degraded
                    && if scenario.incidence.sticky {
                        session
                    } else {
                        rng.random_bool(share)
                    }
            };
            let mut results = Vec::new();
            for &contract in contracts_of(kind) {
                let target = contract == scenario.contract;
                let first = target && reply_degraded(rng);
                let mut outcome = judge(scenario, contract, first, rng);
                if contract == ContractName::Language && language::needs_confirmation(&outcome) {
                    let again = |rng: &mut ChaCha8Rng| {
                        if rng.random_bool(scenario.transient.clamp(0.0, 1.0)) {
                            return None;
                        }
                        let d = target && reply_degraded(rng);
                        Some(judge(scenario, contract, d, rng))
                    };
                    let second = again(rng);
                    let third = again(rng);
                    outcome = language::confirm(&outcome, second.as_ref(), third.as_ref());
                }
                results.push((contract, outcome));
            }
            if kind == crate::evidence::ProbeKind::Language {
                evidence.language = Some(Language::Fr);
            }
            evidence.probes.push(ProbeEvidence::new(kind, results));
        }
    }
    evidence
}

/// The checker's verdict on one reply, degraded or clean: fail,
/// undetermined or pass at its measured rates.
fn judge(
    scenario: &Scenario,
    contract: ContractName,
    degraded: bool,
    rng: &mut ChaCha8Rng,
) -> Outcome {
    let d = scenario.detector(contract);
    let (fail, undetermined) = if degraded {
        (d.recall, d.undetermined_degraded)
    } else {
        (d.fpr, d.undetermined_clean)
    };
    let u: f64 = rng.random();
    if u < fail {
        Outcome::fail("simulated")
    } else if u < fail + undetermined {
        Outcome::undetermined("simulated")
    } else {
        Outcome::Pass
    }
}
