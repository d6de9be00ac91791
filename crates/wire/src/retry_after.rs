//! Reading `Retry-After`: whole or decimal seconds, or an HTTP date. The one
//! parser the reference proxies, the pass-through upstreams and the reports
//! share.

use http::{header, HeaderMap};
use std::time::{Duration, SystemTime};

/// The wait a `Retry-After` header asks for: whole or decimal seconds, or an
/// HTTP date (the time from `now` until it, zero when past). `None` when
/// absent or unreadable.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::RETRY_AFTER, HeaderValue::from_str(v).unwrap());
            retry_after(&h, now)
        };
        assert_eq!(with("3"), Some(Duration::from_secs(3)));
        assert_eq!(with(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(with("-1"), None);
        assert_eq!(with("soon"), None);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(with(&later), Some(Duration::from_secs(7)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(with(&earlier), Some(Duration::ZERO));
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }
}
