//! Statistics as pure functions: no I/O, no clocks, seeds passed in.
//!
//! Reports and plots sit on top of these; each function is checked against
//! published values in its tests.

pub mod bootstrap;
pub mod location;
pub mod percentile;
pub mod rate;
pub mod wilson;

pub use bootstrap::cluster_bootstrap;
pub use location::{mean_interval, quantile_interval};
pub use percentile::{describe, percentile_type7, PERCENTILE_METHOD};
pub use rate::{rate, Rate};
pub use wilson::wilson;

/// Confidence level of every interval the harness reports.
pub const CONFIDENCE: f64 = 0.95;

use serde::{Deserialize, Serialize};

/// A two-sided confidence interval on a proportion, both ends in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// Summary of a sample of values (latencies, gaps, differences).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// Number of values.
    pub n: u64,
    /// Arithmetic mean (0 when empty).
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Median (type-7 percentile 0.5).
    pub median: f64,
    /// 95th percentile (type 7).
    pub p95: f64,
    /// 99th percentile (type 7).
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}
