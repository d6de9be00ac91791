//! One type for every secret the harness handles (gateway header values,
//! the judge's API key), so that a secret cannot reach a report, a log line
//! or an error message by accident.
//!
//! Its `Debug` and `Display` print `[redacted]`; the value is reachable only
//! through [`Secret::expose`], which the code that puts it on the socket
//! calls, and [`Secret::header_value`], which marks the header as sensitive
//! for the HTTP stack.

use std::fmt;

/// What every redacted value prints as.
pub const REDACTED: &str = "[redacted]";

/// A secret value. Cloning keeps it a secret; there is no `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself: only for the code that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The value as an HTTP header value marked sensitive (never logged by
    /// the HTTP stack), or `None` when it is not a valid header value (a
    /// control character, a line break).
    pub fn header_value(&self) -> Option<axum::http::HeaderValue> {
        let mut value = axum::http::HeaderValue::from_str(&self.0).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// Whether the value is empty (after trimming).
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_redact() {
        let s = Secret::new("Bearer sk-planted-value");
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{:?}", Some(s.clone())), "Some([redacted])");
        assert_eq!(s.expose(), "Bearer sk-planted-value");
    }

    #[test]
    fn header_values_are_sensitive_and_checked() {
        let value = Secret::new("Bearer x").header_value().unwrap();
        assert!(value.is_sensitive());
        assert!(Secret::new("a\r\nInjected: 1").header_value().is_none());
    }
}
