//! Intervals on where a sample sits: its mean (Student's t) and a quantile
//! (distribution-free, from order statistics and the binomial), for figures
//! such as attempts per request under load, whose distribution is skewed
//! and often tied.

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

/// The two-sided Student's t interval on the mean of `values` at
/// `confidence`: mean ± t(1 − α/2, n − 1) · s / √n. `None` with fewer than
/// two values (no spread to estimate).
pub fn mean_interval(values: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    let half = t * (variance / n as f64).sqrt();
    Some((mean - half, mean + half))
}

/// The distribution-free interval on the `p` quantile of ascending
/// `sorted` at `confidence`: the order statistics `x(l)` and `x(u)`, ranks
/// counted from one, with l the largest rank whose binomial tail
/// `P(B ≤ l − 1)` is at most α/2 and u the smallest with `P(B ≤ u − 1)` at
/// least 1 − α/2, where B is Binomial(n, p) (Conover, *Practical
/// Nonparametric Statistics*, 3rd ed., §3.2). Either end is `None` when the
/// sample is too small to bound it at that confidence (the 99th percentile
/// of 100 values has no upper bound at 95 %: all 100 fall below it with
/// probability 0.366).
pub fn quantile_interval(sorted: &[f64], p: f64, confidence: f64) -> (Option<f64>, Option<f64>) {
    let n = sorted.len();
    let Ok(binomial) = Binomial::new(p.clamp(0.0, 1.0), n as u64) else {
        return (None, None);
    };
    if n == 0 {
        return (None, None);
    }
    let tail = (1.0 - confidence) / 2.0;
    // P(B <= k - 1) for rank k from 1.
    let below = |k: usize| {
        if k == 0 {
            0.0
        } else {
            binomial.cdf(k as u64 - 1)
        }
    };
    let lower = (1..=n).take_while(|&k| below(k) <= tail).last();
    let upper = (1..=n).find(|&k| below(k) >= 1.0 - tail);
    (lower.map(|k| sorted[k - 1]), upper.map(|k| sorted[k - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Student's t: t(0.975, 9) = 2.2622 (every t table); for 1..=10 the
    /// mean 5.5, s = 3.0277, so 5.5 ± 2.2622 · 0.95743.
    #[test]
    fn the_t_interval_matches_the_table() {
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        let (lo, hi) = mean_interval(&values, 0.95).unwrap();
        assert!((lo - 3.3341).abs() < 1e-3, "{lo}");
        assert!((hi - 7.6659).abs() < 1e-3, "{hi}");
        assert_eq!(mean_interval(&[3.0], 0.95), None);
        let same = mean_interval(&[2.0; 50], 0.95).unwrap();
        assert_eq!(same, (2.0, 2.0), "no spread, no width");
    }

    /// The median at 95 %: of 20 values, ranks 6 and 15 (coverage
    /// 0.9586); of 10, ranks 2 and 9 (coverage 0.9785), as Conover's table
    /// A3 gives them. The 99th percentile of 100 values has a lower bound
    /// and no upper one.
    #[test]
    fn the_quantile_interval_matches_the_order_statistic_table() {
        let sorted: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(
            quantile_interval(&sorted, 0.5, 0.95),
            (Some(6.0), Some(15.0))
        );
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        let (lo, hi) = quantile_interval(&hundred, 0.99, 0.95);
        assert_eq!(hi, None);
        assert!(lo.is_some_and(|l| l >= 95.0), "{lo:?}");
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile_interval(&ten, 0.5, 0.95), (Some(2.0), Some(9.0)));
        assert_eq!(quantile_interval(&[], 0.5, 0.95), (None, None));
    }
}
