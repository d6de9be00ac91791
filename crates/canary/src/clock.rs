//! The canary's injected clock value: a point in time in whole unix seconds.
//!
//! The state machine never reads the system clock; the caller passes `now`
//! into every call, so two weeks of rounds replay in a unit test and a
//! restart continues on the same arithmetic. On the wire (log records, the
//! state file) a timestamp is an RFC 3339 string in UTC.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Seconds in a day.
pub const DAY: Duration = Duration::from_secs(86_400);

/// A point in time, whole seconds since the unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// A timestamp that cannot be written as RFC 3339 (outside years 0..=9999).
#[derive(Debug, thiserror::Error)]
#[error("timestamp {0} (unix seconds) is outside years 0 to 9999; pass a real clock value")]
pub struct TimestampRangeError(i64);

impl Timestamp {
    /// The timestamp `secs` seconds after the unix epoch.
    ///
    /// # Errors
    /// When the time is outside years 0 to 9999 (RFC 3339 cannot write it).
    pub fn from_unix(secs: i64) -> Result<Self, TimestampRangeError> {
        let date =
            OffsetDateTime::from_unix_timestamp(secs).map_err(|_| TimestampRangeError(secs))?;
        if (0..=9999).contains(&date.year()) {
            Ok(Timestamp(secs))
        } else {
            Err(TimestampRangeError(secs))
        }
    }

    /// Seconds since the unix epoch.
    pub fn unix(self) -> i64 {
        self.0
    }

    /// This time plus `span` (whole seconds), saturating at the RFC 3339 range.
    pub fn plus(self, span: Duration) -> Timestamp {
        let secs = i64::try_from(span.as_secs()).unwrap_or(i64::MAX);
        Timestamp(self.0.saturating_add(secs).min(MAX_UNIX))
    }

    /// How long after `earlier` this is; zero when it is not later.
    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration::from_secs(u64::try_from(self.0.saturating_sub(earlier.0)).unwrap_or(0))
    }

    /// RFC 3339 in UTC, for example `2025-01-01T00:30:00Z`.
    pub fn rfc3339(self) -> String {
        OffsetDateTime::from_unix_timestamp(self.0)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| format!("@{}", self.0))
    }

    /// Parses an RFC 3339 timestamp (fractions of a second are dropped).
    ///
    /// # Errors
    /// When `text` is not RFC 3339 or is outside years 0 to 9999.
    pub fn parse_rfc3339(text: &str) -> Result<Self, String> {
        let t = OffsetDateTime::parse(text, &Rfc3339)
            .map_err(|e| format!("`{text}` is not an RFC 3339 timestamp ({e})"))?;
        Timestamp::from_unix(t.unix_timestamp()).map_err(|e| e.to_string())
    }
}

/// 9999-12-31T23:59:59Z.
const MAX_UNIX: i64 = 253_402_300_799;

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse_rfc3339(&text).map_err(serde::de::Error::custom)
    }
}

/// A span written as whole seconds (the state file and the policy).
pub(crate) mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(span: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(span.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_secs)
    }
}

/// A span for people: `1d 2h`, `45m`, `0s`.
pub fn human_span(span: Duration) -> String {
    let total = span.as_secs();
    let (days, hours, minutes) = (total / 86_400, total % 86_400 / 3600, total % 3600 / 60);
    let mut parts = Vec::new();
    if days > 0 {
        parts.push(format!("{days}d"));
    }
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 && days == 0 {
        parts.push(format!("{minutes}m"));
    }
    if parts.is_empty() {
        format!("{}s", total % 60)
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips() {
        let t = Timestamp::from_unix(1_735_689_600).unwrap();
        assert_eq!(t.rfc3339(), "2025-01-01T00:00:00Z");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"2025-01-01T00:00:00Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
        assert_eq!(
            Timestamp::parse_rfc3339("2025-01-01T01:00:00+01:00").unwrap(),
            t
        );
    }

    #[test]
    fn out_of_range_and_garbage_are_errors() {
        assert!(Timestamp::from_unix(i64::MAX).is_err());
        assert!(Timestamp::from_unix(-62_167_219_201).is_err());
        assert!(Timestamp::parse_rfc3339("yesterday").is_err());
    }

    #[test]
    fn arithmetic_saturates() {
        let t = Timestamp::from_unix(100).unwrap();
        assert_eq!(t.plus(DAY).unix(), 86_500);
        assert_eq!(t.since(t.plus(DAY)), Duration::ZERO);
        assert_eq!(t.plus(DAY).since(t), DAY);
        assert_eq!(t.plus(Duration::MAX).unix(), MAX_UNIX);
    }

    #[test]
    fn spans_read_like_people_write_them() {
        assert_eq!(human_span(DAY * 3), "3d");
        assert_eq!(human_span(DAY + Duration::from_secs(7200)), "1d 2h");
        assert_eq!(human_span(Duration::from_secs(2700)), "45m");
        assert_eq!(human_span(Duration::from_secs(5)), "5s");
    }
}
