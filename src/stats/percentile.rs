//! Percentiles.

use super::Distribution;

/// The name of the percentile method, for reports.
pub const PERCENTILE_METHOD: &str =
    "type 7 (linear interpolation between closest ranks, numpy default)";

/// Type-7 percentile of sorted values, `p` in [0, 1].
pub fn percentile_type7(_sorted: &[f64], _p: f64) -> f64 {
    todo!()
}

/// Describes a sample.
pub fn describe(_values: &[f64]) -> Distribution {
    todo!()
}
