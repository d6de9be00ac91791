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
    /// The share of degraded replies it fails (an undetermined outcome is
    /// a miss: the machine does not count it).
    pub recall: f64,
    /// The share of clean replies it fails.
    pub fpr: f64,
}

impl Detector {
    /// A checker that catches every degraded reply and never flags a
    /// clean one.
    pub const PERFECT: Detector = Detector {
        recall: 1.0,
        fpr: 0.0,
    };
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
        let interval = self.interval.as_secs().max(1);
        span.as_secs() / interval
    }

    /// Rounds per day.
    pub fn rounds_per_day(&self) -> f64 {
        86_400.0 / self.interval.as_secs_f64().max(1.0)
    }
}
