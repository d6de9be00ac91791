//! Number formats shared by summary.md and the stdout table, so the same
//! figure reads the same everywhere: percentages with two decimals
//! ("99.20 %"), counts as "744/750", milliseconds with thousands separators.

use cb_base::number::thousands;
use cb_stats::Interval;
use cb_stats::Rate;

/// A proportion in [0, 1] as a percentage with two decimals: "99.20 %".
pub fn percent(proportion: f64) -> String {
    format!("{:.2} %", proportion * 100.0)
}

/// What a rate with nothing measured prints as.
pub const NOT_MEASURED: &str = "n/a";

/// A rate as a percentage with two decimals, or "n/a" when nothing was
/// measured.
pub fn rate_percent(rate: &Rate) -> String {
    rate.rate.map_or_else(|| NOT_MEASURED.to_string(), percent)
}

/// The counts behind a rate: "744/750".
pub fn counts(rate: &Rate) -> String {
    format!("{}/{}", rate.successes, rate.trials)
}

/// A rate with its counts: "99.20 % (744/750)"; "n/a (0/0)" when nothing
/// was measured.
pub fn rate_with_counts(rate: &Rate) -> String {
    format!("{} ({})", rate_percent(rate), counts(rate))
}

/// An interval on a proportion: "[98.27 %, 99.63 %]", or "n/a".
pub fn interval(interval: &Option<Interval>) -> String {
    match interval {
        Some(i) => format!("[{}, {}]", percent(i.lo), percent(i.hi)),
        None => NOT_MEASURED.to_string(),
    }
}

/// A confidence level as a label: "95 %" (one decimal when not whole).
pub fn confidence(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// Milliseconds: whole with thousands separators from 100 ms up ("13,614
/// ms"), one decimal below ("3.6 ms").
pub fn ms(value: f64) -> String {
    format!("{} ms", ms_number(value, false))
}

/// Milliseconds with an explicit sign, for differences: "+13,614 ms",
/// "-450 ms".
pub fn signed_ms(value: f64) -> String {
    format!("{} ms", ms_number(value, true))
}

/// The number part of [`ms`] and [`signed_ms`].
pub fn ms_number(value: f64, signed: bool) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let digits = if value.abs() >= 100.0 {
        format!("{:.0}", value.abs())
    } else {
        format!("{:.1}", value.abs())
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w.to_string(), format!(".{f}")),
        None => (digits.clone(), String::new()),
    };
    let negative = value < 0.0 && !digits.trim_matches(['0', '.']).is_empty();
    let sign = if negative {
        "-"
    } else if signed {
        "+"
    } else {
        ""
    };
    format!("{sign}{}{fraction}", thousands(whole))
}

/// A mean count with three decimals, so a few extra attempts in 750
/// events still show: "1.004".
pub fn mean(value: f64) -> String {
    format!("{value:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_stats::rate;

    #[test]
    fn percentages_have_two_decimals() {
        assert_eq!(percent(0.992), "99.20 %");
        assert_eq!(percent(0.0), "0.00 %");
        assert_eq!(percent(1.0), "100.00 %");
    }

    #[test]
    fn rate_shows_counts_and_published_wilson() {
        let r = rate(744, 750);
        assert_eq!(rate_with_counts(&r), "99.20 % (744/750)");
        assert_eq!(interval(&r.wilson), "[98.27 %, 99.63 %]");
        let none = rate(0, 0);
        assert_eq!(rate_with_counts(&none), "n/a (0/0)");
        assert_eq!(interval(&none.wilson), "n/a");
    }

    #[test]
    fn milliseconds_group_thousands_and_keep_sign() {
        assert_eq!(ms(13_614.0), "13,614 ms");
        assert_eq!(ms(1_234_567.4), "1,234,567 ms");
        assert_eq!(ms(3.64), "3.6 ms");
        assert_eq!(ms(100.0), "100 ms");
        assert_eq!(signed_ms(13_614.0), "+13,614 ms");
        assert_eq!(signed_ms(-450.0), "-450 ms");
        assert_eq!(signed_ms(59.2), "+59.2 ms");
        assert_eq!(signed_ms(-0.01), "+0.0 ms");
    }

    #[test]
    fn confidence_labels() {
        assert_eq!(confidence(0.95), "95 %");
        assert_eq!(confidence(0.995), "99.5 %");
    }
}
