//! A proportion with the counts behind it and its pooled Wilson interval:
//! the shape every rate of every suite is reported in.

use super::{wilson, Interval, CONFIDENCE};
use serde::{Deserialize, Serialize};

/// A proportion with its counts and its pooled Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Numerator.
    pub successes: u64,
    /// Denominator.
    pub trials: u64,
    /// successes / trials; `None` (n/a) when nothing was measured.
    pub rate: Option<f64>,
    /// Wilson score interval, pooled over all trials; `None` when nothing
    /// was measured.
    pub wilson: Option<Interval>,
}

/// `successes` of `trials` with its Wilson interval at [`CONFIDENCE`].
pub fn rate(successes: u64, trials: u64) -> Rate {
    Rate {
        successes,
        trials,
        rate: (trials > 0).then(|| successes as f64 / trials as f64),
        wilson: (trials > 0).then(|| wilson(successes, trials, CONFIDENCE)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_wilson_for_744_of_750() {
        let r = rate(744, 750);
        assert!((r.rate.unwrap() - 0.992).abs() < 1e-12);
        let w = r.wilson.unwrap();
        assert!((w.lo - 0.9827).abs() < 5e-5 && (w.hi - 0.9963).abs() < 5e-5);
    }

    #[test]
    fn nothing_measured_is_not_a_rate() {
        let r = rate(0, 0);
        assert_eq!((r.rate, r.wilson), (None, None));
    }
}
