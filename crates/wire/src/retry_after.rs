//! Reading `Retry-After`: whole or decimal seconds, or an HTTP date. The one
//! parser the reference proxies, the pass-through upstreams and the reports
//! share; and [`stated_wait`], the wait a response states anywhere else
//! (`retry-after-ms`, `x-ratelimit-reset-*`, the error body), since
//! providers and gateways do not all use the header.
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
        return seconds(secs);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(RetryAfter::bounded(
        date.duration_since(now).unwrap_or(Duration::ZERO),
    ))
}

/// `secs` seconds as a bounded wait; `None` when negative or not finite.
fn seconds(secs: f64) -> Option<RetryAfter> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    let max = RETRY_AFTER_MAX.as_secs_f64();
    Some(if secs > max {
        RetryAfter {
            wait: RETRY_AFTER_MAX,
            clamped: true,
        }
    } else {
        RetryAfter::bounded(Duration::from_secs_f64(secs))
    })
}

/// The wait a rate-limited (or overloaded) response states, wherever it
/// states it, first found first: `Retry-After`; `retry-after-ms`;
/// the longer of `x-ratelimit-reset-requests` and
/// `x-ratelimit-reset-tokens` (OpenAI's durations: `2s`, `6m0s`, `20ms`);
/// then `body`, when given (at
/// most its first 64 KiB): `error.retry_after` in seconds, or a message
/// ("Please retry after 2s.", "Please try again in 20ms."). Bounded as
/// [`parse_retry_after`] bounds; `None` when nothing states one.
pub fn stated_wait(
    headers: &HeaderMap,
    body: Option<&[u8]>,
    now: SystemTime,
) -> Option<RetryAfter> {
    if let Some(wait) = parse_retry_after(headers, now) {
        return Some(wait);
    }
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if let Some(wait) = seconds(ms / 1000.0) {
            return Some(wait);
        }
    }
    // Both limits come on every response; which one ran out is not
    // always said, so the longer wait (a token window outlasts a request
    // window that resets in milliseconds).
    let reset = ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .into_iter()
        .filter_map(|name| text(name).and_then(duration_text))
        .fold(None, |most: Option<f64>, s| {
            Some(most.map_or(s, |m| m.max(s)))
        });
    if let Some(wait) = reset.and_then(seconds) {
        return Some(wait);
    }
    let body = body?;
    let body = &body[..body.len().min(64 * 1024)];
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error").unwrap_or(&value);
    let stated = match error.get("retry_after") {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    if let Some(wait) = stated.and_then(seconds) {
        return Some(wait);
    }
    let message = error.get("message").and_then(serde_json::Value::as_str)?;
    in_words(message).and_then(seconds)
}

/// Seconds of an OpenAI rate-limit duration: numbers each followed by
/// `h`, `m`, `s` or `ms` (`1m2.5s`, `20ms`); `None` when anything else
/// is in it.
fn duration_text(text: &str) -> Option<f64> {
    let mut rest = text.trim();
    let mut total = 0.0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (scale, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += number * scale;
        rest = &rest[len..];
    }
    Some(total)
}

/// Seconds a message asks to wait: "retry after N" or "try again in N",
/// N an OpenAI duration (`1m30s`, `20ms`) or a number followed by `ms`,
/// `s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`, `h`/`hour(s)` or nothing
/// (seconds); `None` for any other unit.
fn in_words(message: &str) -> Option<f64> {
    let lower = message.to_ascii_lowercase();
    // Every place a phrase occurs, in order: the first that states a
    // duration ("retry after the time in Retry-After" states none).
    let mut starts: Vec<usize> = ["retry after ", "try again in "]
        .iter()
        .flat_map(|p| lower.match_indices(p).map(move |(i, _)| i + p.len()))
        .collect();
    starts.sort_unstable();
    starts.into_iter().find_map(|at| wait_at(&lower[at..]))
}

/// The duration `rest` starts with, in seconds (see [`in_words`]).
fn wait_at(rest: &str) -> Option<f64> {
    let token = rest
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ')')
        .next()
        .unwrap_or_default()
        .trim_end_matches('.');
    if let Some(secs) = duration_text(token) {
        return Some(secs);
    }
    let digits = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let number: f64 = rest[..digits].trim_end_matches('.').parse().ok()?;
    let unit = rest[digits..].trim_start();
    let word = unit
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or_default();
    let scale = match word {
        "ms" | "millisecond" | "milliseconds" => 0.001,
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hour" | "hours" => 3600.0,
        _ => return None,
    };
    Some(number * scale)
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
    fn a_wait_stated_in_other_headers_or_the_body_is_read() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (name, value) in pairs {
                h.insert(*name, value.parse().unwrap());
            }
            h
        };
        let wait = |h: &HeaderMap, body: Option<&str>| {
            stated_wait(h, body.map(str::as_bytes), now()).map(|w| w.wait)
        };
        let none = headers(&[]);
        assert_eq!(
            wait(&headers(&[("retry-after", "3")]), None),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            wait(&headers(&[("retry-after-ms", "1500")]), None),
            Some(Duration::from_millis(1500))
        );
        for (v, secs) in [
            ("2s", 2.0),
            ("6m0s", 360.0),
            ("20ms", 0.02),
            ("1m2.5s", 62.5),
        ] {
            assert_eq!(
                wait(&headers(&[("x-ratelimit-reset-requests", v)]), None),
                Some(Duration::from_secs_f64(secs)),
                "{v}"
            );
        }
        assert_eq!(
            wait(&headers(&[("x-ratelimit-reset-tokens", "7s")]), None),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            wait(&headers(&[("x-ratelimit-reset-requests", "soon")]), None),
            None
        );
        // Retry-After first, whatever else says.
        assert_eq!(
            wait(
                &headers(&[("retry-after", "1"), ("x-ratelimit-reset-requests", "9s")]),
                None
            ),
            Some(Duration::from_secs(1))
        );
        for (body, secs) in [
            (
                r#"{"error": {"message": "Rate limited.", "retry_after": 4}}"#,
                4.0,
            ),
            (
                r#"{"error": {"message": "Rate limited.", "retry_after": "2.5"}}"#,
                2.5,
            ),
            (
                r#"{"error": {"message": "Rate limit reached. Please retry after 2s."}}"#,
                2.0,
            ),
            (
                r#"{"error": {"message": "Please try again in 20ms."}}"#,
                0.02,
            ),
            (
                r#"{"error": {"message": "Please try again in 1.5 seconds"}}"#,
                1.5,
            ),
            (r#"{"error": {"message": "Retry after 2 minutes"}}"#, 120.0),
            (
                r#"{"error": {"message": "Rate limit reached; retry after the time in Retry-After. Fallback also failed: Try again in 5 seconds."}}"#,
                5.0,
            ),
            (r#"{"message": "retry after 3"}"#, 3.0),
            (
                r#"{"error": {"message": "Please try again in 1m30s."}}"#,
                90.0,
            ),
            (
                r#"{"error": {"message": "Please try again in 1h12m"}}"#,
                3600.0,
            ),
            (r#"{"error": {"message": "retry after 2 hours"}}"#, 3600.0),
        ] {
            assert_eq!(
                wait(&none, Some(body)),
                Some(Duration::from_secs_f64(secs)),
                "{body}"
            );
        }
        for body in [
            r#"{"error": {"message": "Rate limited."}}"#,
            r#"{"error": {"message": "retry after a while"}}"#,
            r#"{"error": {"message": "retry after 3 fortnights"}}"#,
            r#"{"error": {"retry_after": -1, "message": "x"}}"#,
            "not json, retry after 2s",
        ] {
            assert_eq!(wait(&none, Some(body)), None, "{body}");
        }
        // Absurd stated waits are clamped as Retry-After's are.
        let far = stated_wait(&none, Some(br#"{"error": {"retry_after": 1e300}}"#), now()).unwrap();
        assert_eq!((far.wait, far.clamped), (RETRY_AFTER_MAX, true));
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
