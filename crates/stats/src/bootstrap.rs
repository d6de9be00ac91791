//! Cluster bootstrap: the honest interval on CPR.
//!
//! The same conversations are replayed in every run, so 5 runs of 150
//! conversations are not 750 independent trials. Resampling whole
//! conversations (clusters) with replacement keeps the correlation between
//! runs of one conversation inside each resample.

use super::{percentile_type7, Interval};
use rand::Rng;

/// Percentile interval of the pooled proportion under resampling of clusters
/// `(successes, trials)` with replacement.
///
/// Each of `resamples` resamples draws `clusters.len()` clusters with
/// replacement and computes sum(successes) / sum(trials); the interval is the
/// type-7 percentiles `(1 - confidence) / 2` and `1 - (1 - confidence) / 2`
/// of those proportions. Randomness comes from
/// `cb_base::seed::rng(seed, "bootstrap", 0)`, so equal inputs give equal
/// intervals. Resamples whose clusters hold no trials are skipped. With no
/// clusters, no trials, no resamples or a `confidence` outside (0, 1) nothing
/// is known and the interval is [0, 1].
pub fn cluster_bootstrap(
    clusters: &[(u64, u64)],
    resamples: u32,
    confidence: f64,
    seed: u64,
) -> Interval {
    let everything = Interval { lo: 0.0, hi: 1.0 };
    let total_trials: u64 = clusters.iter().map(|c| c.1).sum();
    if total_trials == 0 || resamples == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return everything;
    }
    let mut rng = cb_base::seed::rng(seed, "bootstrap", 0);
    let k = clusters.len();
    let mut proportions = Vec::with_capacity(resamples as usize);
    for _ in 0..resamples {
        let (mut s, mut t) = (0u64, 0u64);
        for _ in 0..k {
            let (cs, ct) = clusters[rng.random_range(0..k)];
            s += cs.min(ct);
            t += ct;
        }
        if t > 0 {
            proportions.push(s as f64 / t as f64);
        }
    }
    if proportions.is_empty() {
        return everything;
    }
    proportions.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Interval {
        lo: percentile_type7(&proportions, tail),
        hi: percentile_type7(&proportions, 1.0 - tail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wilson;

    #[test]
    fn same_seed_same_interval_other_seed_differs() {
        let clusters: Vec<(u64, u64)> = (0..150).map(|i| (i % 7 % 2, 1 + i % 3)).collect();
        let a = cluster_bootstrap(&clusters, 2000, 0.95, 42);
        let b = cluster_bootstrap(&clusters, 2000, 0.95, 42);
        let c = cluster_bootstrap(&clusters, 2000, 0.95, 43);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn all_successes_give_one_one() {
        let clusters = vec![(5, 5); 150];
        assert_eq!(
            cluster_bootstrap(&clusters, 1000, 0.95, 1),
            Interval { lo: 1.0, hi: 1.0 }
        );
    }

    #[test]
    fn nothing_to_resample_is_everything() {
        let everything = Interval { lo: 0.0, hi: 1.0 };
        assert_eq!(cluster_bootstrap(&[], 1000, 0.95, 1), everything);
        assert_eq!(cluster_bootstrap(&[(0, 0)], 1000, 0.95, 1), everything);
        assert_eq!(cluster_bootstrap(&[(1, 2)], 0, 0.95, 1), everything);
    }

    #[test]
    fn correlated_runs_are_wider_than_pooled_wilson() {
        // 5 identical runs of 150 conversations: 120 always preserved, 30
        // never. Pooled that is 600/750, but there are only 150 independent
        // observations.
        let clusters: Vec<(u64, u64)> = (0..150)
            .map(|i| if i < 120 { (5, 5) } else { (0, 5) })
            .collect();
        let clustered = cluster_bootstrap(&clusters, 4000, 0.95, 42);
        let pooled = wilson(600, 750, 0.95);
        let one_run = wilson(120, 150, 0.95);
        let cw = clustered.hi - clustered.lo;
        let pw = pooled.hi - pooled.lo;
        assert!(
            cw > 1.8 * pw,
            "clustered {clustered:?} vs pooled {pooled:?}"
        );
        // ...and about as wide as one run's interval, the true sample size.
        let ow = one_run.hi - one_run.lo;
        assert!(
            (cw - ow).abs() < 0.2 * ow,
            "clustered {clustered:?} vs one run {one_run:?}"
        );
        assert!(clustered.lo < 0.8 && clustered.hi > 0.8);
    }

    #[test]
    fn independent_trials_match_wilson() {
        // 750 singleton clusters at 50 %: the bootstrap agrees with Wilson.
        let clusters: Vec<(u64, u64)> = (0..750).map(|i| ((i % 2) as u64, 1)).collect();
        let boot = cluster_bootstrap(&clusters, 4000, 0.95, 42);
        let w = wilson(375, 750, 0.95);
        assert!((boot.lo - w.lo).abs() < 0.01, "{boot:?} vs {w:?}");
        assert!((boot.hi - w.hi).abs() < 0.01, "{boot:?} vs {w:?}");
    }
}
