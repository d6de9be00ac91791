//! The order the measurements run in. A machine drifts (caches warm, a
//! neighbour starts a build), so no system may own a quiet minute: every
//! trial measures every subject in an order shuffled from the master seed,
//! and the no-gateway baseline goes first in the first trial of each
//! concurrency, so its floor is taken before anything else has run there.

use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What one measurement is sent to: the simulated upstream directly, or a
/// system under test in front of one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// A direct call to a simulated upstream: the no-gateway baseline.
    Baseline,
    /// A system under test, by its name.
    System(String),
}

impl Subject {
    /// The name shown in tables: `baseline` or the system's name.
    pub fn name(&self) -> &str {
        match self {
            Subject::Baseline => "baseline",
            Subject::System(name) => name,
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a request asks for its answer, and so what its latency measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `stream: false`: from sending the request to the last byte of the
    /// answer.
    Plain,
    /// `stream: true`: from sending the request to the first server-sent
    /// event carrying data (time to first byte of the answer).
    Stream,
}

impl Mode {
    /// Both modes, plain first.
    pub const ALL: [Mode; 2] = [Mode::Plain, Mode::Stream];

    /// The mode's name in tables and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Stream => "stream",
        }
    }

    /// What the latency of this mode measures, for a table's header.
    pub fn measures(self) -> &'static str {
        match self {
            Mode::Plain => "to the last byte",
            Mode::Stream => "to the first data event",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One measurement: `requests` sent to `subject` in `mode` by
/// `concurrency` clients at once, in trial `trial` (from 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// Clients sending at once (a closed loop: each sends its next request
    /// when its last one is answered).
    pub concurrency: usize,
    /// The trial, from 1.
    pub trial: u32,
    /// Where the requests go.
    pub subject: Subject,
    /// Plain or streamed.
    pub mode: Mode,
}

/// Every slot of a measurement, in the order they run: concurrency by
/// concurrency as given, trial by trial, each trial's (subject, mode)
/// pairs shuffled by `seed::rng(seed, "overhead-order", …)`; in each
/// concurrency's first trial the baseline's pairs are moved to the front,
/// keeping their shuffled order.
pub fn schedule(
    systems: &[String],
    concurrency: &[usize],
    modes: &[Mode],
    trials: u32,
    seed: u64,
) -> Vec<Slot> {
    let subjects: Vec<Subject> = std::iter::once(Subject::Baseline)
        .chain(systems.iter().cloned().map(Subject::System))
        .collect();
    let mut slots = Vec::new();
    for (ci, &c) in concurrency.iter().enumerate() {
        for trial in 1..=trials {
            let mut pairs: Vec<(Subject, Mode)> = subjects
                .iter()
                .flat_map(|s| modes.iter().map(move |&m| (s.clone(), m)))
                .collect();
            let index = ((ci as u64) << 32) | u64::from(trial);
            pairs.shuffle(&mut cb_base::seed::rng(seed, "overhead-order", index));
            if trial == 1 {
                // A stable partition: the baseline's pairs first.
                pairs.sort_by_key(|(s, _)| *s != Subject::Baseline);
            }
            slots.extend(pairs.into_iter().map(|(subject, mode)| Slot {
                concurrency: c,
                trial,
                subject,
                mode,
            }));
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["history", "litellm", "portkey"].map(String::from).to_vec()
    }

    #[test]
    fn every_subject_and_mode_is_measured_once_per_trial_and_concurrency() {
        let slots = schedule(&names(), &[1, 64], &Mode::ALL, 3, 42);
        assert_eq!(slots.len(), 2 * 3 * 4 * 2);
        for c in [1, 64] {
            for trial in 1..=3 {
                let mut here: Vec<(String, Mode)> = slots
                    .iter()
                    .filter(|s| s.concurrency == c && s.trial == trial)
                    .map(|s| (s.subject.name().to_string(), s.mode))
                    .collect();
                here.sort();
                here.dedup();
                assert_eq!(here.len(), 8, "C = {c}, trial {trial}");
            }
        }
    }

    #[test]
    fn the_baseline_goes_first_in_each_first_trial_and_the_order_is_shuffled() {
        let slots = schedule(&names(), &[1, 64], &Mode::ALL, 5, 42);
        for c in [1, 64] {
            let first: Vec<&Slot> = slots
                .iter()
                .filter(|s| s.concurrency == c && s.trial == 1)
                .collect();
            assert!(first[..2].iter().all(|s| s.subject == Subject::Baseline));
            assert!(first[2..].iter().all(|s| s.subject != Subject::Baseline));
        }
        // Later trials do not all share one order, and the baseline is
        // not always first: the order is drawn, not fixed.
        let orders: Vec<Vec<(String, Mode)>> = (2..=5)
            .map(|t| {
                slots
                    .iter()
                    .filter(|s| s.concurrency == 1 && s.trial == t)
                    .map(|s| (s.subject.name().to_string(), s.mode))
                    .collect()
            })
            .collect();
        assert!(orders.windows(2).any(|w| w[0] != w[1]), "{orders:?}");
        assert!(orders.iter().any(|o| o[0].0 != "baseline"), "{orders:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_order_and_another_seed_another() {
        let a = schedule(&names(), &[1, 64], &Mode::ALL, 5, 42);
        assert_eq!(a, schedule(&names(), &[1, 64], &Mode::ALL, 5, 42));
        assert_ne!(a, schedule(&names(), &[1, 64], &Mode::ALL, 5, 43));
    }
}
