//! Cluster bootstrap.

use super::Interval;

/// Percentile interval of the pooled proportion under resampling of clusters
/// `(successes, trials)` with replacement.
pub fn cluster_bootstrap(
    _clusters: &[(u64, u64)],
    _resamples: u32,
    _confidence: f64,
    _seed: u64,
) -> Interval {
    todo!()
}
