//! Wilson score interval.

use super::Interval;

/// Wilson interval for `successes` of `trials` at `confidence`.
pub fn wilson(_successes: u64, _trials: u64, _confidence: f64) -> Interval {
    todo!()
}
