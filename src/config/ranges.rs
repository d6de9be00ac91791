//! Range checks of configuration values that would otherwise be accepted
//! and then wrap or hold a process for years: durations beyond a
//! documented maximum, weights outside their range. One check per kind,
//! called by the validators of the flags and of the fault profile, each
//! error naming the key and the allowed range (exit 2).

use crate::faults::FaultProfile;
use std::time::Duration;

/// Longest duration any timeout, hold or delay may be set to: 24 hours.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Longest `retry_after` a fault profile may send: one hour, what a
/// reader of `Retry-After` clamps to ([`cb_wire::RETRY_AFTER_MAX`]).
pub const MAX_RETRY_AFTER: Duration = cb_wire::RETRY_AFTER_MAX;

/// Largest mode weight: one million (weights are relative).
pub const MAX_WEIGHT: f64 = 1e6;

/// A value outside its allowed range.
#[derive(Debug, thiserror::Error)]
#[error("{key} = {value} is out of range: allowed {allowed}")]
pub struct OutOfRange {
    /// The flag or profile key.
    pub key: String,
    /// The value given, as shown.
    pub value: String,
    /// The allowed range, in words.
    pub allowed: String,
}

/// `d` for `key`, at most `max`.
///
/// # Errors
/// [`OutOfRange`] naming `key` and the range.
pub fn duration(key: &str, d: Duration, max: Duration) -> Result<(), OutOfRange> {
    if d <= max {
        return Ok(());
    }
    Err(OutOfRange {
        key: key.to_string(),
        value: format!("{d:?}"),
        allowed: format!("0 to {}", humantime::format_duration(max)),
    })
}

/// A mode weight: finite, 0 to [`MAX_WEIGHT`].
///
/// # Errors
/// [`OutOfRange`] naming `key` and the range.
pub fn weight(key: &str, w: f64) -> Result<(), OutOfRange> {
    if w.is_finite() && (0.0..=MAX_WEIGHT).contains(&w) {
        return Ok(());
    }
    Err(OutOfRange {
        key: key.to_string(),
        value: w.to_string(),
        allowed: format!("0 to {MAX_WEIGHT}"),
    })
}

/// Every duration and weight of a fault profile (`origin` names its file).
///
/// # Errors
/// The first [`OutOfRange`], its key prefixed with the profile's origin.
pub fn fault_profile(profile: &FaultProfile) -> Result<(), OutOfRange> {
    let key = |k: &str| format!("{}: {k}", profile.origin);
    if let Some(t) = &profile.timeout {
        weight(&key("[modes.timeout] weight"), t.weight)?;
        duration(&key("[modes.timeout] hold"), t.hold, MAX_DURATION)?;
    }
    if let Some(a) = &profile.api_error {
        weight(&key("[modes.api_error] weight"), a.weight)?;
    }
    if let Some(r) = &profile.rate_limit {
        weight(&key("[modes.rate_limit] weight"), r.weight)?;
        duration(
            &key("[modes.rate_limit] retry_after"),
            r.retry_after,
            MAX_RETRY_AFTER,
        )?;
    }
    if let Some(l) = &profile.rate_limiter {
        duration(
            &key("[rate_limiter] retry_after"),
            l.retry_after,
            MAX_RETRY_AFTER,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_values_are_refused_naming_the_key_and_range() {
        let huge = humantime::parse_duration("500000000000y").unwrap();
        let err = duration("--deadline", huge, MAX_DURATION)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--deadline") && err.contains("0 to 1day"),
            "{err}"
        );
        assert!(duration("--deadline", Duration::from_secs(60), MAX_DURATION).is_ok());
        for w in [1e12, -1.0, f64::NAN, f64::INFINITY] {
            assert!(weight("w", w).is_err(), "{w}");
        }
        assert!(weight("w", 0.5).is_ok());
        let profile = FaultProfile::parse(
            "[modes.rate_limit]\nretry_after = \"500000000000y\"\n",
            "p.toml",
        );
        // Either the parser or the range check refuses it.
        if let Ok(profile) = profile {
            let err = fault_profile(&profile).unwrap_err().to_string();
            assert!(
                err.contains("retry_after") && err.contains("p.toml"),
                "{err}"
            );
        }
        let weighty = FaultProfile::parse("[modes.api_error]\nweight = 1e12\n", "w.toml");
        if let Ok(profile) = weighty {
            let err = fault_profile(&profile).unwrap_err().to_string();
            assert!(err.contains("weight"), "{err}");
        }
    }
}
