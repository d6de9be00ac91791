//! `canary power`: what the canary can and cannot catch. For each contract
//! and per-reply (or per-session) incidence of its defect, the chance that
//! the quarantine rule fires within 6 h, 24 h and 7 days, the median and
//! 90th-percentile time to quarantine, the chance that a healthy route is
//! quarantined by the checkers' false positives, and the probes it costs;
//! then the budget (copies of each probe per round) that buys a target.
//!
//! Two computations, one checking the other: the simulation ([`sim`]) runs
//! the canary's own machine on the paused clock; the closed form
//! ([`chain`]) is exact for one degraded contract and is printed beside it.
//! The checkers' rates come from the calibration set ([`rates`]).

pub mod chain;
pub mod model;
pub mod rates;
mod render;
pub mod sim;

pub use model::{Detector, Incidence, Scenario};
pub use render::{markdown, render};

use crate::clock::DAY;
use crate::probe::{contracts_of, Repeats, MAX_REPEATS, PROBES};
use cb_contracts::ContractName;
use cb_stats::Interval;
use chain::RoundOdds;
use serde::Serialize;
use sim::RouteHealth;
use std::collections::BTreeMap;
use std::time::Duration;

/// The horizons every figure is given at.
pub const HORIZONS: [Duration; 3] = [
    Duration::from_secs(6 * 3600),
    DAY,
    Duration::from_secs(7 * 86_400),
];

/// The span over which a healthy route's false quarantines are counted.
pub const FALSE_SPAN: Duration = Duration::from_secs(30 * 86_400);

/// Consecutive failing rounds that quarantine a route: the canary's own
/// rule ([`crate::Policy`]'s default), which the simulation runs too.
pub fn failing_rounds() -> u32 {
    crate::Policy::default().failing_rounds()
}

/// The default incidences: the design's examples (1 % and 5 % of replies,
/// the 16 % of a misrouting bug, half).
pub const DEFAULT_INCIDENCES: [f64; 4] = [0.01, 0.05, 0.16, 0.5];

/// The contracts the canary checks, in [`ContractName::ALL`] order.
pub fn canary_contracts() -> Vec<ContractName> {
    ContractName::ALL
        .into_iter()
        .filter(|c| PROBES.iter().any(|k| contracts_of(*k).contains(c)))
        .collect()
}

/// What `canary power` is asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// The incidences to figure (shares of replies, or of sessions).
    pub incidences: Vec<f64>,
    /// The contracts to figure.
    pub contracts: Vec<ContractName>,
    /// The incidences are shares of sessions (a sticky fault).
    pub sticky: bool,
    /// Share of probe requests lost to transport errors.
    pub transient: f64,
    /// Copies of each probe per round.
    pub repeats: Repeats,
    /// Time between rounds.
    pub interval: Duration,
    /// Simulated trials per figure.
    pub trials: u64,
    /// Master seed of the trials.
    pub seed: u64,
    /// The budget question: catch within this span ...
    pub within: Duration,
    /// ... with at least this probability ...
    pub confidence: f64,
    /// ... while a healthy route is quarantined within [`FALSE_SPAN`] with
    /// at most this probability.
    pub max_false: f64,
}

/// One horizon of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Horizon {
    /// The span.
    pub span: Duration,
    /// Trials quarantined within it.
    pub quarantined: u64,
    /// Its 95 % Wilson interval.
    pub interval: Interval,
    /// The closed form.
    pub closed_form: f64,
}

/// The figures of one contract at one incidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The contract degraded.
    pub contract: ContractName,
    /// How often.
    pub incidence: Incidence,
    /// Trials run.
    pub trials: u64,
    /// Per horizon of [`HORIZONS`].
    pub horizons: Vec<Horizon>,
    /// Median time to quarantine (`None`: beyond the last horizon).
    pub median: Option<Duration>,
    /// 90th-percentile time to quarantine.
    pub p90: Option<Duration>,
    /// Probe requests per route per day, confirmations included.
    pub probes_per_day: f64,
}

/// A healthy route's chance of a false quarantine within [`FALSE_SPAN`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FalseQuarantine {
    /// The contract whose false positives are counted (`None`: all of
    /// them together).
    pub contract: Option<ContractName>,
    /// The checker's measured counts.
    pub measured: Option<rates::Measured>,
    /// At the measured false-positive rate.
    pub at_measured: f64,
    /// At the upper end of its 95 % interval.
    pub at_upper: f64,
}

/// The budget that buys the target for one contract and incidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Budget {
    /// The contract.
    pub contract: ContractName,
    /// The incidence.
    pub incidence: Incidence,
    /// Copies per round of each probe that checks the contract; `None`
    /// when even [`MAX_REPEATS`] falls short.
    pub copies: Option<u32>,
    /// The repeats to pass to `canary --repeats`.
    pub repeats: Option<Repeats>,
    /// The closed-form chance of a quarantine within the target span.
    pub within: f64,
    /// Probe requests per route per day at that budget.
    pub probes_per_day: f64,
}

/// The confidence of the interval the closed-form check must fall in: high,
/// so that a correct simulation does not fail it one seed in twenty.
pub const CHECK_CONFIDENCE: f64 = 0.999;

/// The simulation checked against the closed form in the simplest case:
/// one probe per round that checks the contract, 5 % of replies, no
/// transport errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClosedFormCheck {
    /// The contract used (one checked reply per round).
    pub contract: ContractName,
    /// The incidence.
    pub share: f64,
    /// The horizon.
    pub span: Duration,
    /// Trials, and those quarantined within the horizon.
    pub trials: u64,
    /// Quarantined within the horizon.
    pub quarantined: u64,
    /// The simulation's interval at [`CHECK_CONFIDENCE`].
    pub interval: Interval,
    /// The closed form.
    pub closed_form: f64,
}

impl ClosedFormCheck {
    /// Whether the closed form lies inside the simulation's interval.
    pub fn agrees(&self) -> bool {
        self.interval.lo <= self.closed_form && self.closed_form <= self.interval.hi
    }
}

/// Everything `canary power` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerReport {
    /// What was asked.
    pub settings: Settings,
    /// Per contract, the checker's measured counts.
    pub measured: BTreeMap<ContractName, rates::Measured>,
    /// Per contract and incidence.
    pub cells: Vec<Cell>,
    /// Per contract, then all together (last).
    pub false_quarantines: Vec<FalseQuarantine>,
    /// All contracts together, simulated on a healthy route over
    /// [`FALSE_SPAN`]: trials, and those quarantined.
    pub healthy_simulated: (u64, u64),
    /// Per contract and incidence, the budget for the target.
    pub budgets: Vec<Budget>,
    /// The check of the simulation against the closed form.
    pub check: ClosedFormCheck,
}

/// The scenario of `contract` at `share` under `settings`.
fn scenario(
    settings: &Settings,
    detectors: &BTreeMap<ContractName, Detector>,
    contract: ContractName,
    incidence: Incidence,
    repeats: Repeats,
) -> Scenario {
    Scenario {
        contract,
        incidence,
        transient: settings.transient,
        repeats,
        detectors: detectors.clone(),
        interval: settings.interval,
    }
}

/// The closed-form round odds of a degraded route: the degraded contract
/// at the incidence, every other contract at its false-positive rate.
pub fn degraded_odds(s: &Scenario) -> RoundOdds {
    let odds: Vec<RoundOdds> = canary_contracts()
        .into_iter()
        .map(|c| {
            let incidence = if c == s.contract {
                s.incidence
            } else {
                Incidence {
                    share: 0.0,
                    sticky: false,
                }
            };
            contract_odds(s, c, incidence, s.detector(c))
        })
        .collect();
    // The run a degraded contract starts is ended by that contract's pass
    // (a contract the probes do not check has odds of its own only).
    let target = canary_contracts()
        .iter()
        .position(|c| *c == s.contract)
        .map_or_else(
            || contract_odds(s, s.contract, s.incidence, s.detector(s.contract)),
            |i| odds[i],
        );
    let any = RoundOdds::any(&odds);
    RoundOdds {
        fail: any.fail,
        pass: target.pass * (1.0 - any.fail) / (1.0 - target.fail).max(f64::MIN_POSITIVE),
    }
}

/// The closed-form round odds of a healthy route whose checkers read clean
/// replies as `detector(contract)` says: a run ends only when every
/// contract passes (the slowest end, so the figure errs toward more false
/// quarantines).
pub fn healthy_odds(s: &Scenario, detector: impl Fn(ContractName) -> Detector) -> RoundOdds {
    let odds: Vec<RoundOdds> = canary_contracts()
        .into_iter()
        .map(|c| {
            let none = Incidence {
                share: 0.0,
                sticky: false,
            };
            contract_odds(s, c, none, detector(c))
        })
        .collect();
    RoundOdds::any(&odds)
}

fn contract_odds(
    s: &Scenario,
    contract: ContractName,
    incidence: Incidence,
    detector: Detector,
) -> RoundOdds {
    let copy = chain::copy_odds(
        incidence,
        detector,
        s.transient,
        contract == ContractName::Language,
    );
    chain::round_odds(copy, s.transient, s.repeats.checks_of(contract))
}

/// Probe requests per route per day: every copy, plus two confirmations
/// for each language copy whose first sample failed.
pub fn probes_per_day(s: &Scenario) -> f64 {
    let language = s.detector(ContractName::Language);
    let share = if s.contract == ContractName::Language {
        s.incidence.share
    } else {
        0.0
    };
    let first_fails = share * language.recall + (1.0 - share) * language.fpr;
    let confirmations = 2.0 * f64::from(s.repeats.language) * (1.0 - s.transient) * first_fails;
    (f64::from(s.repeats.per_round()) + confirmations) * s.rounds_per_day()
}

/// `detectors` as the power figures read them ([`Detector::for_power`]).
pub fn for_power(detectors: &BTreeMap<ContractName, Detector>) -> BTreeMap<ContractName, Detector> {
    detectors.iter().map(|(c, d)| (*c, d.for_power())).collect()
}

/// The smallest copies per round, of the probes that check `contract`,
/// that catch `incidence` within `settings.within` with probability
/// `settings.confidence` while a healthy route stays under
/// `settings.max_false` over [`FALSE_SPAN`] (at the measured rates
/// `detectors`, each read on the side that errs toward less power and
/// more false quarantines).
pub fn budget(
    settings: &Settings,
    detectors: &BTreeMap<ContractName, Detector>,
    contract: ContractName,
    incidence: Incidence,
) -> Budget {
    let power = for_power(detectors);
    let at = |n: u32| {
        let repeats = settings.repeats.for_contract(contract, n);
        scenario(settings, &power, contract, incidence, repeats)
    };
    let rounds = |s: &Scenario, span| s.rounds_in(span);
    let caught = |s: &Scenario| {
        chain::within(
            degraded_odds(s),
            failing_rounds(),
            rounds(s, settings.within),
        )
    };
    let false_quarantine = |s: &Scenario| {
        let healthy = healthy_odds(s, |c| {
            detectors.get(&c).copied().unwrap_or(Detector::PERFECT)
        });
        chain::within(healthy, failing_rounds(), rounds(s, FALSE_SPAN))
    };
    let out_of_reach = |s: Scenario| Budget {
        contract,
        incidence,
        copies: None,
        repeats: None,
        within: caught(&s),
        probes_per_day: probes_per_day(&s),
    };
    // More copies catch sooner (monotone): bisect for the fewest that
    // catch in time. More copies also flag healthy routes more often, so
    // if the fewest break the false-quarantine limit, any more would too.
    let (mut lo, mut hi) = (1u32, MAX_REPEATS);
    if caught(&at(hi)) < settings.confidence {
        return out_of_reach(at(hi));
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if caught(&at(mid)) >= settings.confidence {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let s = at(lo);
    if false_quarantine(&s) > settings.max_false {
        return out_of_reach(s);
    }
    Budget {
        contract,
        incidence,
        copies: Some(lo),
        repeats: Some(s.repeats),
        within: caught(&s),
        probes_per_day: probes_per_day(&s),
    }
}

/// The smallest incidence (share of replies, or of sessions when
/// `sticky`) of `contract`'s defect that the canary catches within `span`
/// with probability `confidence` at `repeats`; `None` when even every
/// reply degraded is not caught so (undetermined outcomes read as
/// [`Detector::for_power`] does).
#[allow(clippy::too_many_arguments)]
pub fn minimum_incidence(
    contract: ContractName,
    sticky: bool,
    repeats: Repeats,
    detectors: &BTreeMap<ContractName, Detector>,
    interval: Duration,
    span: Duration,
    confidence: f64,
) -> Option<f64> {
    let power = for_power(detectors);
    let at = |share: f64| {
        let s = Scenario {
            contract,
            incidence: Incidence { share, sticky },
            transient: 0.0,
            repeats,
            detectors: power.clone(),
            interval,
        };
        chain::within(degraded_odds(&s), failing_rounds(), s.rounds_in(span))
    };
    if at(1.0) < confidence {
        return None;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if at(mid) >= confidence {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The span and the chance a canary's own floor is given at.
pub const FLOOR_SPAN: Duration = DAY;
/// See [`FLOOR_SPAN`].
pub const FLOOR_CONFIDENCE: f64 = 0.9;

/// The rarest defect of one contract a canary catches within
/// [`FLOOR_SPAN`] with chance [`FLOOR_CONFIDENCE`] at its budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Floor {
    /// The contract.
    pub contract: ContractName,
    /// The share of replies (`None`: not even every reply).
    pub replies: Option<f64>,
    /// The share of sessions, for a defect stuck to sessions.
    pub sessions: Option<f64>,
}

/// Per contract the canary checks, its [`Floor`] at `repeats`, one round
/// every `interval`, with the checkers as `measured`.
pub fn floors(
    repeats: Repeats,
    interval: Duration,
    measured: &BTreeMap<ContractName, rates::Measured>,
) -> Vec<Floor> {
    let detectors: BTreeMap<ContractName, Detector> =
        measured.iter().map(|(c, m)| (*c, m.detector())).collect();
    canary_contracts()
        .into_iter()
        .map(|contract| {
            let at = |sticky| {
                minimum_incidence(
                    contract,
                    sticky,
                    repeats,
                    &detectors,
                    interval,
                    FLOOR_SPAN,
                    FLOOR_CONFIDENCE,
                )
            };
            Floor {
                contract,
                replies: at(false),
                sessions: at(true),
            }
        })
        .collect()
}

/// The floors in one line, for the canary's output: per contract the
/// share of replies, and of sessions where that differs.
pub fn floors_line(floors: &[Floor]) -> String {
    let share =
        |p: Option<f64>| p.map_or_else(|| "none".to_string(), |p| format!("{:.1} %", p * 100.0));
    floors
        .iter()
        .map(|f| {
            let replies = share(f.replies);
            let sessions = share(f.sessions);
            if replies == sessions {
                format!("{} {replies}", f.contract.as_str())
            } else {
                format!("{} {replies} ({sessions} of sessions)", f.contract.as_str())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs `canary power` as `settings` say, with the checkers measured as
/// `measured`.
pub fn analyse(
    settings: &Settings,
    measured: &BTreeMap<ContractName, rates::Measured>,
) -> PowerReport {
    let detectors: BTreeMap<ContractName, Detector> =
        measured.iter().map(|(c, m)| (*c, m.detector())).collect();
    let power = for_power(&detectors);
    let last = HORIZONS[HORIZONS.len() - 1];
    let mut cells = Vec::new();
    let mut budgets = Vec::new();
    for &contract in &settings.contracts {
        for &share in &settings.incidences {
            let incidence = Incidence {
                share,
                sticky: settings.sticky,
            };
            let s = scenario(settings, &power, contract, incidence, settings.repeats);
            cells.push(cell(&s, settings, last));
            budgets.push(budget(settings, &detectors, contract, incidence));
        }
    }
    let mut false_quarantines = Vec::new();
    let base = scenario(
        settings,
        &detectors,
        ContractName::Language,
        Incidence {
            share: 0.0,
            sticky: false,
        },
        settings.repeats,
    );
    let false_rounds = base.rounds_in(FALSE_SPAN);
    for &contract in &settings.contracts {
        let m = measured.get(&contract).copied();
        // This contract's false positives alone; the others never fail.
        let one = |upper: bool| {
            let odds = healthy_odds(&base, |c| {
                if c != contract {
                    return Detector::PERFECT;
                }
                m.map_or_else(
                    || Detector::deciding(1.0, if upper { 1.0 } else { 0.0 }),
                    |m| m.detector_at(upper),
                )
            });
            chain::within(odds, failing_rounds(), false_rounds)
        };
        false_quarantines.push(FalseQuarantine {
            contract: Some(contract),
            measured: m,
            at_measured: one(false),
            at_upper: one(true),
        });
    }
    let all = |upper: bool| {
        let odds = healthy_odds(&base, |c| {
            measured
                .get(&c)
                .map_or(Detector::PERFECT, |m| m.detector_at(upper))
        });
        chain::within(odds, failing_rounds(), false_rounds)
    };
    false_quarantines.push(FalseQuarantine {
        contract: None,
        measured: None,
        at_measured: all(false),
        at_upper: all(true),
    });
    let healthy = sim::trials(
        &base,
        RouteHealth::Healthy,
        settings.trials,
        false_rounds,
        settings.seed,
    );
    let healthy_simulated = (
        settings.trials,
        healthy.iter().filter(|r| r.is_some()).count() as u64,
    );
    PowerReport {
        settings: settings.clone(),
        measured: measured.clone(),
        cells,
        false_quarantines,
        healthy_simulated,
        budgets,
        check: closed_form_check(settings, &detectors),
    }
}

fn cell(s: &Scenario, settings: &Settings, last: Duration) -> Cell {
    let rounds = s.rounds_in(last);
    let results = sim::trials(
        s,
        RouteHealth::Degraded,
        settings.trials,
        rounds,
        settings.seed,
    );
    let odds = degraded_odds(s);
    let horizons = HORIZONS
        .iter()
        .map(|&span| {
            let within = s.rounds_in(span);
            let quarantined = results
                .iter()
                .filter(|r| r.is_some_and(|r| r <= within))
                .count() as u64;
            Horizon {
                span,
                quarantined,
                interval: cb_stats::wilson(quarantined, settings.trials, 0.95),
                closed_form: chain::within(odds, failing_rounds(), within),
            }
        })
        .collect();
    let mut times: Vec<u64> = results.iter().map(|r| r.unwrap_or(u64::MAX)).collect();
    times.sort_unstable();
    let quantile = |q: f64| {
        let index = ((times.len() as f64 * q).ceil() as usize).saturating_sub(1);
        times.get(index).filter(|&&r| r != u64::MAX).map(|&r| {
            s.interval
                .saturating_mul(u32::try_from(r).unwrap_or(u32::MAX))
        })
    };
    Cell {
        contract: s.contract,
        incidence: s.incidence,
        trials: settings.trials,
        horizons,
        median: quantile(0.5),
        p90: quantile(0.9),
        probes_per_day: probes_per_day(s),
    }
}

/// The simplest case, where the closed form is exact: the schema contract
/// (checked on one reply per round), 5 % of replies, one copy, no
/// transport errors, within 24 h.
pub(crate) fn closed_form_check(
    settings: &Settings,
    detectors: &BTreeMap<ContractName, Detector>,
) -> ClosedFormCheck {
    let simple = Settings {
        transient: 0.0,
        ..settings.clone()
    };
    let contract = ContractName::Schema;
    let incidence = Incidence {
        share: 0.05,
        sticky: false,
    };
    // Only the schema checker's measured recall: with no false positive
    // anywhere the closed form is exact, so any gap is the simulation's.
    let recall = detectors.get(&contract).map_or(1.0, |d| d.recall);
    let only = BTreeMap::from([(contract, Detector::deciding(recall, 0.0))]);
    let s = scenario(&simple, &only, contract, incidence, Repeats::uniform(1));
    let span = DAY;
    let rounds = s.rounds_in(span);
    let results = sim::trials(
        &s,
        RouteHealth::Degraded,
        settings.trials,
        rounds,
        settings.seed ^ 0x5,
    );
    let quarantined = results.iter().filter(|r| r.is_some()).count() as u64;
    ClosedFormCheck {
        contract,
        share: 0.05,
        span,
        trials: settings.trials,
        quarantined,
        interval: cb_stats::wilson(quarantined, settings.trials, CHECK_CONFIDENCE),
        closed_form: chain::within(degraded_odds(&s), failing_rounds(), rounds),
    }
}

#[cfg(test)]
mod tests;
