//! The numbers of the quarantine rules, in one typed value the caller builds
//! from its configuration, and the mode (observe or enforce) every decision
//! and log record carries.

use super::clock::{secs, DAY};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Whether decisions are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Decisions are computed, tracked and logged as "would ...", and nothing
    /// is enforced: active quarantines stay out of the ignore list.
    #[default]
    Observe,
    /// Decisions are applied: active quarantines enter the ignore list.
    Enforce,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Observe => "observe",
            Mode::Enforce => "enforce",
        })
    }
}

/// How long a quarantine lasts, by how many came before it since the last
/// history reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuarantineDurations {
    /// The first quarantine (default 1 day).
    #[serde(with = "secs")]
    pub first: Duration,
    /// The second (default 3 days).
    #[serde(with = "secs")]
    pub second: Duration,
    /// The third and every later one (default 7 days).
    #[serde(with = "secs")]
    pub later: Duration,
}

impl QuarantineDurations {
    /// The length of a quarantine that has `previous` quarantines before it.
    pub fn for_previous(&self, previous: u32) -> Duration {
        match previous {
            0 => self.first,
            1 => self.second,
            _ => self.later,
        }
    }
}

impl Default for QuarantineDurations {
    fn default() -> Self {
        QuarantineDurations {
            first: DAY,
            second: DAY * 3,
            later: DAY * 7,
        }
    }
}

/// The quarantine rules' numbers. `Policy::default()` is the documented
/// behaviour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Apply decisions (`--enforce`); default observe only.
    pub enforce: bool,
    /// Consecutive scored rounds in which a route failed any contract that
    /// quarantine it (default 2; 0 is read as 1).
    pub failing_rounds: u32,
    /// Consecutive fully passing rounds that lift a quarantine early
    /// (default 2; 0 is read as 1).
    pub clean_rounds: u32,
    /// Quarantine lengths by escalation step (1 d, 3 d, 7 d).
    pub durations: QuarantineDurations,
    /// Time since the last quarantine began after which the escalation
    /// history resets to the first step (default 14 days).
    #[serde(with = "secs")]
    pub history_reset: Duration,
    /// A quarantine that would leave fewer routes in production than this
    /// is not applied; an alert is raised instead (default 2).
    pub min_healthy: usize,
    /// The positive-control route (`--control ROUTE`): known to filter, never
    /// scored, used to check that the filtering probe still trips.
    pub control: Option<String>,
}

impl Policy {
    /// The mode this policy runs in.
    pub fn mode(&self) -> Mode {
        if self.enforce {
            Mode::Enforce
        } else {
            Mode::Observe
        }
    }

    pub(crate) fn failing_rounds(&self) -> u32 {
        self.failing_rounds.max(1)
    }

    pub(crate) fn clean_rounds(&self) -> u32 {
        self.clean_rounds.max(1)
    }

    pub(crate) fn is_control(&self, route: &str) -> bool {
        self.control.as_deref() == Some(route)
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            enforce: false,
            failing_rounds: 2,
            clean_rounds: 2,
            durations: QuarantineDurations::default(),
            history_reset: DAY * 14,
            min_healthy: 2,
            control: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_numbers() {
        let p = Policy::default();
        assert_eq!(p.mode(), Mode::Observe);
        assert_eq!((p.failing_rounds, p.clean_rounds, p.min_healthy), (2, 2, 2));
        assert_eq!(p.durations.for_previous(0), DAY);
        assert_eq!(p.durations.for_previous(1), DAY * 3);
        assert_eq!(p.durations.for_previous(2), DAY * 7);
        assert_eq!(p.durations.for_previous(9), DAY * 7);
        assert_eq!(p.history_reset, DAY * 14);
    }

    #[test]
    fn zero_thresholds_read_as_one() {
        let p = Policy {
            failing_rounds: 0,
            clean_rounds: 0,
            ..Policy::default()
        };
        assert_eq!((p.failing_rounds(), p.clean_rounds()), (1, 1));
    }

    #[test]
    fn serialises_spans_as_seconds() {
        let json = serde_json::to_value(Policy::default()).unwrap();
        assert_eq!(json["history_reset"], 1_209_600);
        assert_eq!(json["durations"]["first"], 86_400);
        let back: Policy = serde_json::from_value(json).unwrap();
        assert_eq!(back, Policy::default());
    }
}
