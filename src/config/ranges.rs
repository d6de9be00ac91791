//! Range checks of configuration values that would otherwise be accepted
//! and then wrap or hold a process for years: durations beyond a
//! documented maximum, weights, rates and probabilities outside their
//! range, counters that would wrap or exhaust the machine. One table of
//! maxima (the constants below, in the README's "Limits" table), one check
//! per kind, and one function per command that checks all of its flags,
//! called by that command's validator before anything starts; each error
//! names the key and the allowed range (exit 2).

use crate::faults::FaultProfile;
use std::time::Duration;

/// Longest duration any timeout, hold, delay or wait may be set to: 24 hours.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Longest `retry_after` a fault profile may send, and the proxy's longest
/// `--retry-after-cap`: one hour, what a reader of `Retry-After` clamps to
/// ([`cb_wire::RETRY_AFTER_MAX`]).
pub const MAX_RETRY_AFTER: Duration = cb_wire::RETRY_AFTER_MAX;

/// Longest canary `--interval`: 7 days.
pub const MAX_INTERVAL: Duration = Duration::from_secs(7 * 24 * 3600);

/// Largest mode weight: one million (weights are relative).
pub const MAX_WEIGHT: f64 = 1e6;

/// Most `--runs`: 1,000.
pub const MAX_RUNS: u64 = 1_000;

/// Most conversations in flight (`--concurrency` of `run` and `grade`):
/// 100,000 (the largest dataset `generate` writes is 250,000; 8,000 at once
/// is the largest measured).
pub const MAX_CONCURRENCY: u64 = 100_000;

/// Most requests in flight (`--max-in-flight`): one million.
pub const MAX_IN_FLIGHT: u64 = 1_000_000;

/// Most retries or attempts a counter may ask for (`--fallback-retries`,
/// `--same-route-retries`, `--max-attempts-per-upstream`): 100.
pub const MAX_RETRIES: u64 = 100;

/// Most canary `--rounds`: one million.
pub const MAX_ROUNDS: u64 = 1_000_000;

/// Smallest and largest body cap (`--max-response-bytes`,
/// `--max-body-bytes`): 1 KiB to 1 GiB.
pub const BODY_BYTES: (u64, u64) = (1024, 1024 * 1024 * 1024);

/// Smallest and largest `--request-memory` of the proxy: 64 KiB to 1 GiB.
pub const REQUEST_MEMORY: (u64, u64) = (64 * 1024, 1024 * 1024 * 1024);

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
        value: humantime::format_duration(d).to_string(),
        allowed: format!("0 to {}", humantime::format_duration(max)),
    })
}

/// A mode weight: finite, 0 to [`MAX_WEIGHT`].
///
/// # Errors
/// [`OutOfRange`] naming `key` and the range.
pub fn weight(key: &str, w: f64) -> Result<(), OutOfRange> {
    fraction(key, w, MAX_WEIGHT)
}

/// A probability or rate: finite, 0 to 1.
///
/// # Errors
/// [`OutOfRange`] naming `key` and the range.
pub fn probability(key: &str, p: f64) -> Result<(), OutOfRange> {
    fraction(key, p, 1.0)
}

fn fraction(key: &str, x: f64, max: f64) -> Result<(), OutOfRange> {
    if x.is_finite() && (0.0..=max).contains(&x) {
        return Ok(());
    }
    Err(OutOfRange {
        key: key.to_string(),
        value: x.to_string(),
        allowed: format!("0 to {max}"),
    })
}

/// A counter `n` for `key`, `min` to `max`.
///
/// # Errors
/// [`OutOfRange`] naming `key` and the range.
pub fn count(key: &str, n: u64, min: u64, max: u64) -> Result<(), OutOfRange> {
    if (min..=max).contains(&n) {
        return Ok(());
    }
    Err(OutOfRange {
        key: key.to_string(),
        value: n.to_string(),
        allowed: format!("{min} to {max}"),
    })
}

/// A body cap in bytes ([`BODY_BYTES`]), as a `usize`.
///
/// # Errors
/// [`OutOfRange`] naming `key` and the range.
pub fn body_bytes(key: &str, n: u64) -> Result<usize, OutOfRange> {
    count(key, n, BODY_BYTES.0, BODY_BYTES.1)?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Every duration in `flags`, each at most [`MAX_DURATION`].
fn durations(flags: &[(&str, Duration)]) -> Result<(), OutOfRange> {
    flags
        .iter()
        .try_for_each(|(flag, d)| duration(flag, *d, MAX_DURATION))
}

/// The flags of `proxy`.
///
/// # Errors
/// The first [`OutOfRange`].
pub fn proxy_args(a: &crate::cli::ProxyArgs) -> Result<(), OutOfRange> {
    durations(&[
        ("--attempt-timeout", a.attempt_timeout),
        ("--deadline", a.deadline),
        ("--retry-delay", a.retry_delay),
        ("--first-token-timeout", a.first_token_timeout),
        ("--stall-timeout", a.stall_timeout),
        ("--write-timeout", a.write_timeout),
    ])?;
    count(
        "--request-memory",
        a.request_memory,
        REQUEST_MEMORY.0,
        REQUEST_MEMORY.1,
    )?;
    duration("--retry-after-cap", a.retry_after_cap, MAX_RETRY_AFTER)?;
    count(
        "--fallback-retries",
        a.fallback_retries.into(),
        0,
        MAX_RETRIES,
    )?;
    count(
        "--same-route-retries",
        a.same_route_retries.into(),
        0,
        MAX_RETRIES,
    )
}

/// The flags of `upstreams` (its fault profile is checked once loaded).
///
/// # Errors
/// The first [`OutOfRange`].
pub fn upstreams_args(a: &crate::cli::UpstreamsArgs) -> Result<(), OutOfRange> {
    durations(&[("--provider-timeout", a.provider_timeout)])?;
    body_bytes("--max-body-bytes", a.max_body_bytes).map(drop)
}

/// The flags every command that drives systems shares (also read from a
/// systems file).
///
/// # Errors
/// The first [`OutOfRange`].
pub fn system_options(a: &crate::cli::SystemOptions) -> Result<(), OutOfRange> {
    durations(&[("--gateway-wait", a.gateway_wait)])?;
    body_bytes("--max-response-bytes", a.max_response_bytes).map(drop)
}

/// The flags of `run` (its fault profile is checked once loaded).
///
/// # Errors
/// The first [`OutOfRange`].
pub fn run_args(a: &crate::cli::RunArgs) -> Result<(), OutOfRange> {
    count("--runs", a.runs.into(), 1, MAX_RUNS)?;
    count(
        "--concurrency",
        u64::try_from(a.concurrency).unwrap_or(u64::MAX),
        1,
        MAX_CONCURRENCY,
    )?;
    if let Some(n) = a.max_in_flight {
        count("--max-in-flight", n, 1, MAX_IN_FLIGHT)?;
    }
    durations(&[
        ("--request-timeout", a.request_timeout),
        ("--judge-timeout", a.judge.judge_timeout),
        ("--ttft-limit", a.contracts.ttft_limit),
    ])?;
    if let Some(d) = a.attempt_timeout {
        duration("--attempt-timeout", d, MAX_DURATION)?;
    }
    Ok(())
}

/// The flags of `semantics`.
///
/// # Errors
/// The first [`OutOfRange`].
pub fn semantics_args(a: &crate::cli::SemanticsArgs) -> Result<(), OutOfRange> {
    durations(&[
        ("--attempt-timeout", a.attempt_timeout),
        ("--request-timeout", a.request_timeout),
        ("--max-give-up", a.max_give_up),
        ("--cooldown-wait", a.cooldown_wait),
        ("--ttft-limit", a.contracts.ttft_limit),
    ])?;
    count(
        "--max-attempts-per-upstream",
        a.max_attempts_per_upstream.into(),
        1,
        MAX_RETRIES,
    )
}

/// The flags of `canary`.
///
/// # Errors
/// The first [`OutOfRange`].
pub fn canary_args(a: &crate::cli::CanaryRunArgs) -> Result<(), OutOfRange> {
    duration("--interval", a.interval, MAX_INTERVAL)?;
    if let Some(n) = a.rounds {
        count("--rounds", n, 1, MAX_ROUNDS)?;
    }
    for (flag, d) in [
        ("--ttft-limit", a.ttft_limit),
        ("--probe-timeout", a.probe_timeout),
    ] {
        if let Some(d) = d {
            duration(flag, d, MAX_DURATION)?;
        }
    }
    if let Some(rate) = a.transient_rate {
        probability("--transient-rate", rate)?;
    }
    body_bytes("--max-response-bytes", a.max_response_bytes).map(drop)
}

/// Every duration, weight and probability of a fault profile (`origin`
/// names its file): the built-in profiles pass it (a test), a file is
/// held to it when loaded.
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
        count(
            &key("[rate_limiter] rejections"),
            l.rejections.into(),
            1,
            u64::from(crate::faults::profile::MAX_REJECTIONS),
        )?;
    }
    if let Some(d) = &profile.degrade {
        for (kind, p) in &d.kinds {
            probability(&key(&format!("[degrade.{}] rate", kind.name())), *p)?;
            if let crate::faults::degrade::Degradation::SlowFirstToken { delay } = kind {
                duration(
                    &key("[degrade.slow_first_token] delay"),
                    *delay,
                    MAX_DURATION,
                )?;
            }
        }
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
        // Either the parser or the range check refuses it, naming the key.
        let err = match profile {
            Ok(profile) => fault_profile(&profile).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("retry_after"), "{err}");
        let weighty = FaultProfile::parse("[modes.api_error]\nweight = 1e12\n", "w.toml");
        let err = match weighty {
            Ok(profile) => fault_profile(&profile).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("weight"), "{err}");
    }

    #[test]
    fn every_builtin_fault_profile_is_within_the_ranges() {
        for b in &crate::faults::BUILTIN_PROFILES {
            let profile = FaultProfile::parse(b.text, b.path).unwrap();
            fault_profile(&profile).unwrap_or_else(|e| panic!("{}: {e}", b.path));
        }
    }

    #[test]
    fn counters_rates_and_body_caps_are_held_to_their_ranges() {
        assert!(count("--runs", 0, 1, MAX_RUNS).is_err());
        let err = count("--runs", u64::from(u32::MAX), 1, MAX_RUNS)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--runs") && err.contains("1 to 1000"), "{err}");
        for p in [1.5, -0.1, f64::NAN, 1e300] {
            assert!(probability("--transient-rate", p).is_err(), "{p}");
        }
        assert!(probability("--transient-rate", 1.0).is_ok());
        assert!(body_bytes("--max-body-bytes", 10).is_err());
        assert!(body_bytes("--max-body-bytes", u64::MAX).is_err());
        assert_eq!(body_bytes("--max-body-bytes", 2048).unwrap(), 2048);
    }
}
