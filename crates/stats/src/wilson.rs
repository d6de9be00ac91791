//! Wilson score interval: the confidence interval on a proportion that stays
//! inside [0, 1] and behaves near 0 % and 100 %, where CPR figures live.

use super::Interval;
use statrs::distribution::{ContinuousCDF, Normal};

/// The two-sided normal quantile `z` for `confidence` (1.959964 for 0.95).
///
/// Returns `None` when `confidence` is not strictly between 0 and 1.
pub fn z_for(confidence: f64) -> Option<f64> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    Some(Normal::standard().inverse_cdf(1.0 - tail))
}

/// Wilson score interval for `successes` of `trials` at `confidence`
/// (for example 0.95), with `z` the two-sided normal quantile.
///
/// With no trials nothing is known and the interval is [0, 1]; the same
/// holds for a `confidence` outside (0, 1). `successes` above `trials` is a
/// caller bug and is clamped to `trials`.
///
/// ```
/// // The paper's history-forwarding figure: 744 of 750 preserved.
/// let ci = cb_stats::wilson(744, 750, 0.95);
/// assert!((ci.lo - 0.9827).abs() < 5e-5 && (ci.hi - 0.9963).abs() < 5e-5);
/// ```
pub fn wilson(successes: u64, trials: u64, confidence: f64) -> Interval {
    let everything = Interval { lo: 0.0, hi: 1.0 };
    let Some(z) = z_for(confidence) else {
        return everything;
    };
    if trials == 0 {
        return everything;
    }
    debug_assert!(successes <= trials, "{successes} successes of {trials}");
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Interval {
        lo: (centre - half).clamp(0.0, 1.0),
        hi: (centre + half).clamp(0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn z_of_95_percent() {
        assert!(close(z_for(0.95).unwrap(), 1.959_964, 1e-6));
        assert!(close(z_for(0.99).unwrap(), 2.575_829, 1e-6));
        assert_eq!(z_for(1.0), None);
        assert_eq!(z_for(0.0), None);
    }

    #[test]
    fn paper_figure_744_of_750() {
        // The reference figure of DESIGN.md: 99.20 %, Wilson 95 % [98.27 %, 99.63 %].
        let i = wilson(744, 750, 0.95);
        assert!(close(i.lo, 0.9827, 5e-5), "{i:?}");
        assert!(close(i.hi, 0.9963, 5e-5), "{i:?}");
    }

    #[test]
    fn none_of_750() {
        // Upper bound z²/(n+z²) = 3.8415/753.8415.
        let i = wilson(0, 750, 0.95);
        assert_eq!(i.lo, 0.0);
        assert!(close(i.hi, 0.005_096, 1e-5), "{i:?}");
    }

    #[test]
    fn all_of_750() {
        let i = wilson(750, 750, 0.95);
        assert!(close(i.lo, 1.0 - 0.005_096, 1e-5), "{i:?}");
        assert_eq!(i.hi, 1.0);
    }

    #[test]
    fn wikipedia_81_of_263() {
        // The 81/263 example cited for the Wilson interval (Wikipedia,
        // "Binomial proportion confidence interval"): [0.2553, 0.3662];
        // re-derived from the closed form in Python to 1e-9.
        let i = wilson(81, 263, 0.95);
        assert!(close(i.lo, 0.2553, 5e-5), "{i:?}");
        assert!(close(i.hi, 0.3662, 5e-5), "{i:?}");
    }

    #[test]
    fn no_trials_or_bad_confidence_is_everything() {
        assert_eq!(wilson(0, 0, 0.95), Interval { lo: 0.0, hi: 1.0 });
        assert_eq!(wilson(3, 10, 1.5), Interval { lo: 0.0, hi: 1.0 });
    }

    #[test]
    fn wider_at_higher_confidence() {
        let a = wilson(40, 100, 0.90);
        let b = wilson(40, 100, 0.99);
        assert!(b.lo < a.lo && b.hi > a.hi);
        assert!(a.lo < 0.4 && a.hi > 0.4);
    }
}
