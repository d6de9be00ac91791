//! Percentiles and sample descriptions (latencies, gaps, CLO differences).
//!
//! One method everywhere, named in every report: type 7 of Hyndman & Fan,
//! linear interpolation between closest ranks, numpy's and R's default.

use super::Distribution;

/// The name of the percentile method, for reports.
pub const PERCENTILE_METHOD: &str =
    "type 7 (linear interpolation between closest ranks, numpy default)";

/// Type-7 percentile of ascending `sorted` values, `p` in [0, 1] (clamped).
///
/// With `n` values, `h = (n - 1) p` and the result interpolates linearly
/// between the values at ranks `floor(h)` and `ceil(h)`. An empty slice has
/// no percentile and gives NaN; a NaN `p` gives NaN.
pub fn percentile_type7(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() || p.is_nan() {
        return f64::NAN;
    }
    debug_assert!(
        sorted.windows(2).all(|w| w[0] <= w[1]),
        "percentile_type7 needs sorted input"
    );
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor();
    let below = sorted[lo as usize];
    let above = sorted[h.ceil() as usize];
    below + (h - lo) * (above - below)
}

/// Describes a sample: count, mean, min, type-7 median, P95, P99, max.
///
/// NaN values are left out (and not counted). An empty sample gives the
/// all-zero [`Distribution`] with `n = 0`, so reports can test `n` rather
/// than meet NaN in JSON.
pub fn describe(values: &[f64]) -> Distribution {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return Distribution::default();
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Distribution {
        n: n as u64,
        mean: sorted.iter().sum::<f64>() / n as f64,
        min: sorted[0],
        median: percentile_type7(&sorted, 0.5),
        p95: percentile_type7(&sorted, 0.95),
        p99: percentile_type7(&sorted, 0.99),
        max: sorted[n - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + b.abs())
    }

    const PS: [f64; 8] = [0.0, 0.25, 0.40, 0.50, 0.90, 0.95, 0.99, 1.0];

    #[test]
    fn matches_numpy_odd_length() {
        // numpy 2.4: [np.percentile([15,20,35,40,50], q) for q in (0,25,40,50,90,95,99,100)]
        let expected = [15.0, 20.0, 29.0, 35.0, 46.0, 48.0, 49.6, 50.0];
        let v = [15.0, 20.0, 35.0, 40.0, 50.0];
        for (p, e) in PS.iter().zip(expected) {
            assert!(close(percentile_type7(&v, *p), e), "p={p}");
        }
    }

    #[test]
    fn matches_numpy_even_length_with_negatives() {
        // numpy 2.4: np.percentile([3.5,-1.0,7.25,0.0,12.0,2.0,9.5,4.0], q), same q.
        let expected = [-1.0, 1.5, 3.2, 3.75, 10.25, 11.125, 11.825, 12.0];
        let mut v = vec![3.5, -1.0, 7.25, 0.0, 12.0, 2.0, 9.5, 4.0];
        v.sort_by(f64::total_cmp);
        for (p, e) in PS.iter().zip(expected) {
            assert!(close(percentile_type7(&v, *p), e), "p={p}");
        }
    }

    #[test]
    fn single_value_and_empty() {
        assert_eq!(percentile_type7(&[42.0], 0.95), 42.0);
        assert!(percentile_type7(&[], 0.5).is_nan());
        assert_eq!(percentile_type7(&[1.0, 2.0], 7.0), 2.0);
    }

    #[test]
    fn describe_matches_numpy() {
        // numpy 2.4 on x = [-450,59,13614,120,-30,800,2200,5,-1000,300]:
        // mean 1561.8, median 89.5, percentile(x,95) 8477.7, percentile(x,99) 12586.74
        let x = [
            -450.0, 59.0, 13614.0, 120.0, -30.0, 800.0, 2200.0, 5.0, -1000.0, 300.0,
        ];
        let d = describe(&x);
        assert_eq!(d.n, 10);
        assert!(close(d.mean, 1561.8));
        assert!(close(d.median, 89.5));
        assert!(close(d.p95, 8477.7));
        assert!(close(d.p99, 12586.74));
        assert_eq!(d.min, -1000.0);
        assert_eq!(d.max, 13614.0);
    }

    #[test]
    fn describe_empty_is_zero_and_skips_nan() {
        assert_eq!(describe(&[]), Distribution::default());
        let d = describe(&[f64::NAN, 2.0, 4.0]);
        assert_eq!(d.n, 2);
        assert!(close(d.mean, 3.0));
    }
}
