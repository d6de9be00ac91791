//! Reading `Retry-After`: whole or decimal seconds, or an HTTP date. The one
//! parser the reference proxies, the pass-through upstreams and the reports
//! share.
//!
//! A peer may send anything (`1e20`, `-1`, `18446744073709551616`, a date
//! in the year 9999), so the wait is bounded here, once: anything above
//! [`RETRY_AFTER_MAX`] (one hour) is clamped to it and says so
//! ([`RetryAfter::clamped`]), and a caller adding it to an `Instant` can
//! never overflow.

use http::{header, HeaderMap};
use std::time::{Duration, SystemTime};

/// The longest wait a `Retry-After` is read as: one hour. A longer one is
/// clamped to it (and the clamp is reported), so no peer-supplied value
/// can overflow an `Instant` or hold a request for days.
pub const RETRY_AFTER_MAX: Duration = Duration::from_secs(3600);

/// A `Retry-After` as read: the wait (at most [`RETRY_AFTER_MAX`]) and
/// whether the peer asked for more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter {
    /// The wait, at most [`RETRY_AFTER_MAX`].
    pub wait: Duration,
    /// Whether the header asked for longer and was clamped.
    pub clamped: bool,
}

impl RetryAfter {
    fn bounded(wait: Duration) -> Self {
        RetryAfter {
            wait: wait.min(RETRY_AFTER_MAX),
            clamped: wait > RETRY_AFTER_MAX,
        }
    }
}

/// Reads the `Retry-After` header: whole or decimal seconds, or an HTTP
/// date (the time from `now` until it, zero when past), bounded by
/// [`RETRY_AFTER_MAX`]. `None` when absent, negative, not finite or
/// unreadable.
pub fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<RetryAfter> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        let max = RETRY_AFTER_MAX.as_secs_f64();
        return Some(if secs > max {
            RetryAfter {
                wait: RETRY_AFTER_MAX,
                clamped: true,
            }
        } else {
            RetryAfter::bounded(Duration::from_secs_f64(secs))
        });
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(RetryAfter::bounded(
        date.duration_since(now).unwrap_or(Duration::ZERO),
    ))
}

/// The wait a `Retry-After` header asks for, bounded by
/// [`RETRY_AFTER_MAX`] ([`parse_retry_after`] without the clamp flag).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    parse_retry_after(headers, now).map(|r| r.wait)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)
    }

    fn with(v: &str) -> Option<RetryAfter> {
        let mut h = HeaderMap::new();
        h.insert(header::RETRY_AFTER, HeaderValue::from_str(v).unwrap());
        parse_retry_after(&h, now())
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let wait = |v: &str| with(v).map(|r| r.wait);
        assert_eq!(wait("3"), Some(Duration::from_secs(3)));
        assert_eq!(wait(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(wait("-1"), None);
        assert_eq!(wait("soon"), None);
        let later = httpdate::fmt_http_date(now() + Duration::from_secs(7));
        assert_eq!(wait(&later), Some(Duration::from_secs(7)));
        let earlier = httpdate::fmt_http_date(now() - Duration::from_secs(7));
        assert_eq!(wait(&earlier), Some(Duration::ZERO));
        assert_eq!(retry_after(&HeaderMap::new(), now()), None);
        assert_eq!(with("3").map(|r| r.clamped), Some(false));
    }

    #[test]
    fn absurd_values_are_clamped_or_refused_never_a_panic() {
        let clamped = Some(RetryAfter {
            wait: RETRY_AFTER_MAX,
            clamped: true,
        });
        for v in [
            "1e20",
            "1e19",
            "18446744073709551616",
            "99999999999999999999999999",
            "3601",
            "1.7976931348623157e308",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ] {
            assert_eq!(with(v), clamped, "{v}");
        }
        for v in ["-1e20", "NaN", "inf", "-inf", "", "1s", "0x10"] {
            assert_eq!(with(v), None, "{v}");
        }
        assert_eq!(
            with("3600"),
            Some(RetryAfter {
                wait: RETRY_AFTER_MAX,
                clamped: false
            })
        );
    }
}
