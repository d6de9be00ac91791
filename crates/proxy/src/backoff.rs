//! The wait between fallback retries after a 429, as pure functions:
//! exponential backoff with full jitter, never shorter than the
//! `Retry-After` the fallback asked for. Kept apart from the core so the
//! arithmetic is tested without a network.

use rand::Rng;
use std::time::Duration;

/// The wait before fallback retry `retry` (0 for the first retry) after a
/// 429: a uniform draw in `[0, min(cap, base * 2^retry)]` (full jitter),
/// raised to `retry_after` when the fallback asked for longer.
pub fn backoff_delay<R: Rng>(
    retry: u32,
    base: Duration,
    cap: Duration,
    retry_after: Option<Duration>,
    rng: &mut R,
) -> Duration {
    let growth = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
    let ceiling = base.checked_mul(growth).unwrap_or(cap).min(cap);
    let ceiling_ns = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    let jitter = Duration::from_nanos(rng.random_range(0..=ceiling_ns));
    jitter.max(retry_after.unwrap_or(Duration::ZERO))
}

/// The wait before retrying a primary that stated `stated` (its
/// `Retry-After`, a reset header or its body): the stated wait plus a
/// uniform draw in `[0, stated]`, so that clients told the same wait do
/// not all come back at the instant it ends (full jitter over one more
/// stated wait; never sooner than asked).
pub fn after_stated<R: Rng>(stated: Duration, rng: &mut R) -> Duration {
    let ns = u64::try_from(stated.as_nanos()).unwrap_or(u64::MAX);
    stated + Duration::from_nanos(rng.random_range(0..=ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_millis(100);
    const CAP: Duration = Duration::from_secs(2);

    #[test]
    fn backoff_stays_under_growing_bound_and_cap() {
        for seed in 0..200u64 {
            let mut rng = cb_base::seed::rng(seed, "backoff", 0);
            for retry in 0..12u32 {
                let bound = (BASE * 2u32.pow(retry)).min(CAP);
                let d = backoff_delay(retry, BASE, CAP, None, &mut rng);
                assert!(d <= bound, "seed {seed} retry {retry}: {d:?} > {bound:?}");
            }
        }
        // Huge retry counts saturate at the cap instead of overflowing.
        let mut rng = cb_base::seed::rng(1, "backoff", 0);
        assert!(backoff_delay(u32::MAX, BASE, CAP, None, &mut rng) <= CAP);
    }

    #[test]
    fn backoff_jitter_spreads_across_seeds_and_grows() {
        let draws = |retry: u32| -> Vec<f64> {
            (0..400u64)
                .map(|seed| {
                    let mut rng = cb_base::seed::rng(seed, "backoff", 7);
                    backoff_delay(retry, BASE, CAP, None, &mut rng).as_secs_f64()
                })
                .collect()
        };
        let first = draws(0);
        let third = draws(2);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        // Full jitter: uniform on [0, bound], mean bound/2, spread over the range.
        assert!((mean(&first) - 0.05).abs() < 0.01, "{}", mean(&first));
        assert!((mean(&third) - 0.20).abs() < 0.03, "{}", mean(&third));
        let low = first.iter().filter(|d| **d < 0.025).count();
        let high = first.iter().filter(|d| **d > 0.075).count();
        assert!(low > 60 && high > 60, "low {low} high {high}");
        // Same seed, same delay.
        let mut a = cb_base::seed::rng(3, "backoff", 7);
        let mut b = cb_base::seed::rng(3, "backoff", 7);
        assert_eq!(
            backoff_delay(1, BASE, CAP, None, &mut a),
            backoff_delay(1, BASE, CAP, None, &mut b)
        );
    }

    #[test]
    fn backoff_never_below_retry_after() {
        let asked = Duration::from_millis(750);
        for seed in 0..100u64 {
            let mut rng = cb_base::seed::rng(seed, "backoff", 0);
            assert!(backoff_delay(0, BASE, CAP, Some(asked), &mut rng) >= asked);
        }
        // Retry-After above the cap still wins: the server asked for it.
        let mut rng = cb_base::seed::rng(0, "backoff", 0);
        let long = Duration::from_secs(5);
        assert_eq!(backoff_delay(0, BASE, CAP, Some(long), &mut rng), long);
    }

    /// Never sooner than the stated wait, never later than twice it, and
    /// spread across that span (not bunched at its start).
    #[test]
    fn a_stated_wait_is_kept_and_spread_over_one_more() {
        let stated = Duration::from_secs(1);
        let draws: Vec<Duration> = (0..400u64)
            .map(|seed| after_stated(stated, &mut cb_base::seed::rng(seed, "spread", 0)))
            .collect();
        assert!(draws.iter().all(|d| *d >= stated && *d <= stated * 2));
        let late = draws.iter().filter(|d| **d > stated * 3 / 2).count();
        assert!(
            (120..280).contains(&late),
            "{late} of 400 in the second half"
        );
        assert_eq!(
            after_stated(Duration::ZERO, &mut cb_base::seed::rng(1, "spread", 0)),
            Duration::ZERO
        );
    }
}
