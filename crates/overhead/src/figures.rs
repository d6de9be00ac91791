//! From latencies to the figures of a measurement: each subject's p50 and
//! p99 at each (concurrency, mode) with distribution-free intervals, what
//! each system adds over the baseline, and which points the rig itself
//! could not serve.
//!
//! - A quantile's interval is the order-statistic one
//!   ([`cb_stats::quantile_interval`], Conover §3.2) over the trials'
//!   measured requests pooled.
//! - The added latency is the system's quantile minus the baseline's, and
//!   its interval joins the two quantiles' intervals each at 97.5 %:
//!   `[low(system) − high(baseline), high(system) − low(baseline)]`. By
//!   Bonferroni both hold at once with at least 95 %, whatever ties the
//!   two samples.
//! - A point is *rig-limited* when the baseline's own p99 there is more
//!   than twice its floor (its p99 at the lowest concurrency measured, in
//!   the same mode): the harness, its upstream or the machine saturated,
//!   so what a system shows there is not charged to it.

use crate::schedule::{Mode, Subject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Confidence of every interval shown.
pub const CONFIDENCE: f64 = 0.95;

/// How far the baseline's p99 may rise over its floor before a point is
/// rig-limited.
pub const RIG_LIMIT_FACTOR: f64 = 2.0;

/// A quantile and its interval (an end is `None` when the sample is too
/// small to bound it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The value, in milliseconds.
    pub ms: f64,
    /// Lower end of the interval.
    pub low: Option<f64>,
    /// Upper end of the interval.
    pub high: Option<f64>,
}

/// The figures of one subject at one (concurrency, mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The baseline or a system.
    pub subject: Subject,
    /// Clients at once.
    pub concurrency: usize,
    /// Plain or streamed.
    pub mode: Mode,
    /// Measured requests that succeeded (the latencies' count).
    pub measured: usize,
    /// Measured requests that failed (not in the latencies).
    pub failed: usize,
    /// The first failure's reason.
    pub first_failure: Option<String>,
    /// Median latency; `None` without a success.
    pub p50: Option<Estimate>,
    /// 99th percentile latency; `None` without a success.
    pub p99: Option<Estimate>,
    /// p50 over the baseline's (systems only; `None` when either side has
    /// no success).
    pub added_p50: Option<Estimate>,
    /// p99 over the baseline's.
    pub added_p99: Option<Estimate>,
    /// The baseline saturated here: added figures are not charged.
    pub rig_limited: bool,
}

/// Latencies and failures of one subject at one (concurrency, mode),
/// pooled over its trials.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pooled {
    /// Latencies of the successes, in milliseconds.
    pub latencies_ms: Vec<f64>,
    /// Failures.
    pub failed: usize,
    /// The first failure's reason.
    pub first_failure: Option<String>,
}

/// Key of a pooled sample.
pub type Key = (usize, Mode, Subject);

/// The points of a measurement, baseline first at each (concurrency,
/// mode), then the systems in the order of `systems`.
pub fn points(pooled: &BTreeMap<Key, Pooled>, systems: &[String]) -> Vec<Point> {
    let mut sorted: BTreeMap<&Key, Vec<f64>> = BTreeMap::new();
    for (key, p) in pooled {
        let mut v = p.latencies_ms.clone();
        v.sort_by(f64::total_cmp);
        sorted.insert(key, v);
    }
    let floor_c = pooled.keys().map(|(c, _, _)| *c).min();
    let baseline_p99 = |c: usize, mode: Mode| {
        sorted
            .get(&(c, mode, Subject::Baseline))
            .filter(|v| !v.is_empty())
            .map(|v| cb_stats::percentile_type7(v, 0.99))
    };
    let mut out = Vec::new();
    let mut points_at: Vec<(usize, Mode)> = pooled.keys().map(|(c, m, _)| (*c, *m)).collect();
    points_at.dedup();
    for (c, mode) in points_at {
        let rig_limited = match (
            floor_c.and_then(|f| baseline_p99(f, mode)),
            baseline_p99(c, mode),
        ) {
            (Some(floor), Some(here)) => here > RIG_LIMIT_FACTOR * floor,
            _ => false,
        };
        let subjects =
            std::iter::once(Subject::Baseline).chain(systems.iter().cloned().map(Subject::System));
        let base = sorted.get(&(c, mode, Subject::Baseline));
        for subject in subjects {
            let key = (c, mode, subject.clone());
            let Some(p) = pooled.get(&key) else { continue };
            let v = &sorted[&key];
            let system = subject != Subject::Baseline;
            out.push(Point {
                concurrency: c,
                mode,
                measured: v.len(),
                failed: p.failed,
                first_failure: p.first_failure.clone(),
                p50: estimate(v, 0.5),
                p99: estimate(v, 0.99),
                added_p50: base.filter(|_| system).and_then(|b| added(v, b, 0.5)),
                added_p99: base.filter(|_| system).and_then(|b| added(v, b, 0.99)),
                rig_limited,
                subject,
            });
        }
    }
    out
}

/// The `p` quantile of ascending `sorted` with its interval at
/// [`CONFIDENCE`].
fn estimate(sorted: &[f64], p: f64) -> Option<Estimate> {
    if sorted.is_empty() {
        return None;
    }
    let (low, high) = cb_stats::quantile_interval(sorted, p, CONFIDENCE);
    Some(Estimate {
        ms: cb_stats::percentile_type7(sorted, p),
        low,
        high,
    })
}

/// The system's `p` quantile minus the baseline's, with the joined
/// interval described in the module's documentation.
fn added(system: &[f64], baseline: &[f64], p: f64) -> Option<Estimate> {
    if system.is_empty() || baseline.is_empty() {
        return None;
    }
    let each = 1.0 - (1.0 - CONFIDENCE) / 2.0;
    let (s_low, s_high) = cb_stats::quantile_interval(system, p, each);
    let (b_low, b_high) = cb_stats::quantile_interval(baseline, p, each);
    Some(Estimate {
        ms: cb_stats::percentile_type7(system, p) - cb_stats::percentile_type7(baseline, p),
        low: s_low.zip(b_high).map(|(s, b)| s - b),
        high: s_high.zip(b_low).map(|(s, b)| s - b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(base: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| base + spread * (i as f64) / (n as f64))
            .collect()
    }

    fn pooled(entries: Vec<(usize, Mode, Subject, Vec<f64>)>) -> BTreeMap<Key, Pooled> {
        entries
            .into_iter()
            .map(|(c, m, s, v)| {
                (
                    (c, m, s),
                    Pooled {
                        latencies_ms: v,
                        ..Pooled::default()
                    },
                )
            })
            .collect()
    }

    fn sys(name: &str) -> Subject {
        Subject::System(name.to_string())
    }

    /// A system 5 ms slower than the baseline at every quantile shows
    /// about +5 ms with an interval that holds 5; the baseline itself as a
    /// "system" shows about 0 with an interval that holds 0.
    #[test]
    fn a_shift_shows_as_added_latency_and_no_shift_as_none() {
        let base = sample(10.0, 2.0, 1000);
        let slow: Vec<f64> = base.iter().map(|v| v + 5.0).collect();
        let p = pooled(vec![
            (1, Mode::Plain, Subject::Baseline, base.clone()),
            (1, Mode::Plain, sys("slow"), slow),
            (1, Mode::Plain, sys("same"), base),
        ]);
        let points = points(&p, &["slow".into(), "same".into()]);
        assert_eq!(points[0].subject, Subject::Baseline);
        assert_eq!(
            points[0].added_p50, None,
            "the baseline adds nothing to itself"
        );
        let slow = &points[1];
        for a in [slow.added_p50.unwrap(), slow.added_p99.unwrap()] {
            assert!((a.ms - 5.0).abs() < 1e-9, "{a:?}");
            assert!(a.low.unwrap() <= 5.0 && 5.0 <= a.high.unwrap(), "{a:?}");
            assert!(
                a.low.unwrap() > 0.0,
                "a 5 ms shift is told apart from none: {a:?}"
            );
        }
        let same = points[2].added_p50.unwrap();
        assert!(same.ms.abs() < 1e-9);
        assert!(
            same.low.unwrap() <= 0.0 && 0.0 <= same.high.unwrap(),
            "{same:?}"
        );
        assert!(!points.iter().any(|p| p.rig_limited));
    }

    /// The baseline's p99 at C = 64 more than twice its p99 at C = 1 marks
    /// every subject at C = 64 rig-limited, and only there; 1.9 times does
    /// not.
    #[test]
    fn a_saturated_baseline_marks_the_point_rig_limited() {
        for (factor, limited) in [(2.5, true), (1.9, false)] {
            let p = pooled(vec![
                (1, Mode::Plain, Subject::Baseline, sample(10.0, 0.0, 200)),
                (
                    64,
                    Mode::Plain,
                    Subject::Baseline,
                    sample(10.0 * factor, 0.0, 200),
                ),
                (1, Mode::Plain, sys("g"), sample(11.0, 0.0, 200)),
                (64, Mode::Plain, sys("g"), sample(40.0, 0.0, 200)),
            ]);
            let points = points(&p, &["g".into()]);
            for point in &points {
                assert_eq!(
                    point.rig_limited,
                    limited && point.concurrency == 64,
                    "{point:?}"
                );
            }
        }
    }

    /// The added interval's ends are order statistics of both samples at
    /// 97.5 % each. For the median of 100 values, Binomial(100, 0.5) has
    /// P(B <= 38) = 0.0105 <= 0.0125 < P(B <= 39) = 0.0176 (any binomial
    /// table), so the ranks are 39 and 62 (by symmetry), and with 1..=100
    /// in both samples the interval is [39 - 62, 62 - 39].
    #[test]
    fn the_added_interval_joins_order_statistics_at_97_5_percent() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(
            cb_stats::quantile_interval(&v, 0.5, 0.975),
            (Some(39.0), Some(62.0))
        );
        let a = added(&v, &v, 0.5).unwrap();
        assert_eq!(a.ms, 0.0);
        assert_eq!((a.low, a.high), (Some(-23.0), Some(23.0)));
    }

    #[test]
    fn no_success_is_no_figure_and_failures_are_kept_beside() {
        let mut p = pooled(vec![(
            1,
            Mode::Stream,
            Subject::Baseline,
            sample(1.0, 1.0, 50),
        )]);
        p.insert(
            (1, Mode::Stream, sys("down")),
            Pooled {
                latencies_ms: Vec::new(),
                failed: 50,
                first_failure: Some("HTTP 502".into()),
            },
        );
        let points = points(&p, &["down".into()]);
        let down = &points[1];
        assert_eq!((down.measured, down.failed), (0, 50));
        assert_eq!(down.p50, None);
        assert_eq!(down.added_p99, None);
        assert_eq!(down.first_failure.as_deref(), Some("HTTP 502"));
    }
}
