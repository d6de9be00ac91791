//! What `canary power` is asked about: a degradation (which contract, at
//! what incidence, per reply or stuck to sessions), the detectors' measured
//! rates, the transport errors around them and the probe budget.

use crate::probe::Repeats;
use cb_contracts::ContractName;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// How often a route's replies carry the degradation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Incidence {
    /// The share (0 to 1) of replies, or of sessions when `sticky`.
    pub share: f64,
    /// Stuck to sessions: a degraded session degrades every reply in it,
    /// the others none. The probes vary their session every copy and
    /// round, so each copy draws a session afresh; a language
    /// confirmation re-sends the same request and stays in its session.
    pub sticky: bool,
}

/// How a contract's checker reads replies, as measured on the labelled
/// calibration set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Detector {
    /// The share of degraded replies it fails.
    pub recall: f64,
    /// The share of degraded replies it leaves undetermined (the machine
    /// counts that as silence: it neither fails nor passes the round).
    pub undetermined_degraded: f64,
    /// The share of clean replies it fails.
    pub fpr: f64,
    /// The share of clean replies it leaves undetermined.
    pub undetermined_clean: f64,
}

impl Detector {
    /// A checker that catches every degraded reply and never flags a
    /// clean one.
    pub const PERFECT: Detector = Detector {
        recall: 1.0,
        undetermined_degraded: 0.0,
        fpr: 0.0,
        undetermined_clean: 0.0,
    };

    /// This checker as the power figures read it: an undetermined outcome
    /// counted as a pass. Live, the machine reads it as silence, which
    /// keeps a failing run going and so can only help catch a route, by
    /// an amount that depends on how often the checker is unsure of that
    /// route's traffic; the figures do not count on it. (False-quarantine
    /// figures take the other side: silence, which keeps a false run.)
    pub fn for_power(self) -> Detector {
        Detector {
            undetermined_degraded: 0.0,
            undetermined_clean: 0.0,
            ..self
        }
    }

    /// A checker that decides every reply: it fails a degraded one with
    /// `recall`, a clean one with `fpr`.
    pub fn deciding(recall: f64, fpr: f64) -> Detector {
        Detector {
            recall,
            fpr,
            ..Detector::PERFECT
        }
    }
}

/// Everything one power figure depends on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The contract the degradation breaks.
    pub contract: ContractName,
    /// How often.
    pub incidence: Incidence,
    /// Share of probe requests lost to a transport error (429, 5xx,
    /// timeout), on every route.
    pub transient: f64,
    /// Copies of each probe per round.
    pub repeats: Repeats,
    /// Per contract the canary checks, its checker's rates.
    pub detectors: BTreeMap<ContractName, Detector>,
    /// Time between two rounds.
    pub interval: Duration,
}

impl Scenario {
    /// The detector of `contract` (perfect when none was measured).
    pub fn detector(&self, contract: ContractName) -> Detector {
        self.detectors
            .get(&contract)
            .copied()
            .unwrap_or(Detector::PERFECT)
    }

    /// Rounds in `span` (whole rounds).
    pub fn rounds_in(&self, span: Duration) -> u64 {
        rounds_in(span, self.interval)
    }

    /// Rounds per day.
    pub fn rounds_per_day(&self) -> f64 {
        86_400.0 / self.interval.as_secs_f64().max(1.0)
    }
}

/// Whole rounds of `interval` in `span`.
pub fn rounds_in(span: Duration, interval: Duration) -> u64 {
    let interval = interval.as_secs_f64().max(1.0);
    (span.as_secs_f64() / interval).floor() as u64
}
