//! The raw TOML schema of fault profiles and its validation into
//! [`FaultProfile`]: serde structs with `deny_unknown_fields`, a key check
//! that names the table of a typo, and one check per value that says what is
//! allowed instead.

use super::{
    ApiErrorMode, FaultError, FaultProfile, RateLimitMode, RateLimiterSpec, TimeoutMode,
    TurnSelector, DEFAULT_API_ERROR_MESSAGE, DEFAULT_API_ERROR_STATUS, DEFAULT_HOLD,
    DEFAULT_RATE_LIMIT_MESSAGE, DEFAULT_REJECTIONS, DEFAULT_RETRY_AFTER, MAX_REJECTIONS, MIN_HOLD,
};
use crate::{FaultMode, Role};
use serde::Deserialize;
use std::time::Duration;

/// Keys allowed in each table, for the typo check. Keep in step with the
/// `Raw*` structs below (a test parses a profile using every key).
const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "upstream",
    "turns",
    "modes",
    "rate_limiter",
    "degrade",
    "fallback",
];
const FALLBACK_KEYS: &[&str] = &["context_tokens"];
const MODES_KEYS: &[&str] = &["timeout", "api_error", "rate_limit"];
const TIMEOUT_KEYS: &[&str] = &["weight", "hold"];
const API_ERROR_KEYS: &[&str] = &["weight", "status", "message"];
const RATE_LIMIT_KEYS: &[&str] = &["weight", "status", "retry_after", "message"];
const LIMITER_KEYS: &[&str] = &["upstream", "rejections", "retry_after", "status", "message"];
/// Keys of the old token-bucket limiter, refused with what replaced them.
const REPLACED_LIMITER_KEYS: &[&str] = &["capacity", "refill_per_second"];

fn check_table(
    table: &toml::Table,
    allowed: &[&str],
    name: &str,
    origin: &str,
) -> Result<(), FaultError> {
    match table.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(FaultError::UnknownKey {
            path: origin.to_string(),
            key: key.clone(),
            table: name.to_string(),
            expected: allowed.join(", "),
        }),
        None => Ok(()),
    }
}

pub(super) fn check_keys(top: &toml::Table, origin: &str) -> Result<(), FaultError> {
    check_table(top, TOP_KEYS, "the top level", origin)?;
    if let Some(toml::Value::Table(modes)) = top.get("modes") {
        check_table(modes, MODES_KEYS, "[modes]", origin)?;
        for (mode, keys) in [
            ("timeout", TIMEOUT_KEYS),
            ("api_error", API_ERROR_KEYS),
            ("rate_limit", RATE_LIMIT_KEYS),
        ] {
            if let Some(toml::Value::Table(t)) = modes.get(mode) {
                check_table(t, keys, &format!("[modes.{mode}]"), origin)?;
            }
        }
    }
    if let Some(toml::Value::Table(degrade)) = top.get("degrade") {
        check_table(degrade, super::degrade::DEGRADE_KEYS, "[degrade]", origin)?;
        for (kind, value) in degrade {
            if let toml::Value::Table(t) = value {
                check_table(
                    t,
                    super::degrade::kind_keys(kind),
                    &format!("[degrade.{kind}]"),
                    origin,
                )?;
            }
        }
    }
    if let Some(toml::Value::Table(fallback)) = top.get("fallback") {
        check_table(fallback, FALLBACK_KEYS, "[fallback]", origin)?;
    }
    if let Some(toml::Value::Table(limiter)) = top.get("rate_limiter") {
        if let Some(key) = REPLACED_LIMITER_KEYS
            .iter()
            .find(|k| limiter.contains_key(**k))
        {
            return Err(FaultError::ReplacedKey {
                path: origin.to_string(),
                key: (*key).to_string(),
            });
        }
        check_table(limiter, LIMITER_KEYS, "[rate_limiter]", origin)?;
    }
    Ok(())
}

/// A duration as written: a string with a unit, or (rejected) a bare number.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawDuration {
    Text(String),
    Integer(i64),
    Float(f64),
}

/// Most turns an outage (`turns = { from, count }`) can last.
const MAX_OUTAGE_TURNS: usize = 1000;

/// `turns = "final"`, `turns = [3, 5]` or `turns = { from = 3, count = 3 }`
/// (an outage: the primary down on `count` turns in a row from `from`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawTurnsPub {
    Word(String),
    List(Vec<i64>),
    Outage(RawOutage),
}

/// `turns = { from = 3, count = 3 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutage {
    from: i64,
    count: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    upstream: Option<String>,
    #[serde(default)]
    turns: Option<RawTurnsPub>,
    #[serde(default)]
    modes: RawModes,
    #[serde(default)]
    rate_limiter: Option<RawLimiter>,
    #[serde(default)]
    degrade: Option<super::degrade::RawDegrade>,
    #[serde(default)]
    fallback: Option<RawFallback>,
}

/// `[fallback]`: what the fallback upstream is like.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFallback {
    #[serde(default)]
    context_tokens: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModes {
    timeout: Option<RawTimeout>,
    api_error: Option<RawApiError>,
    rate_limit: Option<RawRateLimit>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeout {
    weight: Option<f64>,
    hold: Option<RawDuration>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApiError {
    weight: Option<f64>,
    status: Option<i64>,
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRateLimit {
    weight: Option<f64>,
    status: Option<i64>,
    retry_after: Option<RawDuration>,
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimiter {
    upstream: Option<String>,
    rejections: Option<i64>,
    retry_after: Option<RawDuration>,
    status: Option<i64>,
    message: Option<String>,
}

/// Validation helpers bound to one file.
struct Check<'a> {
    origin: &'a str,
}

impl Check<'_> {
    fn invalid(&self, key: &str, value: impl std::fmt::Display, fix: &str) -> FaultError {
        FaultError::Invalid {
            path: self.origin.to_string(),
            key: key.to_string(),
            value: value.to_string(),
            fix: fix.to_string(),
        }
    }

    fn duration(
        &self,
        key: &str,
        raw: Option<RawDuration>,
        default: Duration,
    ) -> Result<Duration, FaultError> {
        let negative = |value: String| FaultError::NegativeDuration {
            path: self.origin.to_string(),
            key: key.to_string(),
            value,
        };
        match raw {
            None => Ok(default),
            Some(RawDuration::Text(s)) => {
                if s.trim_start().starts_with('-') {
                    return Err(negative(format!("{s:?}")));
                }
                humantime::parse_duration(s.trim()).map_err(|e| {
                    self.invalid(
                        key,
                        format!("{s:?}"),
                        &format!("{e}; write a duration like \"30s\", \"1s\" or \"500ms\""),
                    )
                })
            }
            Some(RawDuration::Integer(n)) if n < 0 => Err(negative(n.to_string())),
            Some(RawDuration::Float(x)) if x < 0.0 => Err(negative(x.to_string())),
            Some(RawDuration::Integer(n)) => Err(self.invalid(
                key,
                n,
                &format!("write durations as strings with a unit, e.g. \"{n}s\""),
            )),
            Some(RawDuration::Float(x)) => Err(self.invalid(
                key,
                x,
                "write durations as strings with a unit, e.g. \"1500ms\"",
            )),
        }
    }

    fn weight(&self, key: &str, raw: Option<f64>) -> Result<f64, FaultError> {
        let w = raw.unwrap_or(1.0);
        if !w.is_finite() || w < 0.0 {
            return Err(self.invalid(key, w, "weights are finite numbers of zero or more"));
        }
        Ok(w)
    }

    /// The faulted upstream: only the primary (see
    /// [`FaultError::FallbackUpstream`] for why not the fallback).
    fn faulted_upstream(&self, raw: Option<String>) -> Result<Role, FaultError> {
        match raw.as_deref() {
            None | Some("primary") => Ok(Role::Primary),
            Some("fallback") => Err(FaultError::FallbackUpstream {
                path: self.origin.to_string(),
            }),
            Some(other) => Err(self.invalid(
                "upstream",
                format!("{other:?}"),
                "the primary is the upstream that fails: write \"primary\" or leave the key out",
            )),
        }
    }

    /// The limited upstream: only the fallback.
    fn limited_upstream(&self, raw: Option<String>) -> Result<Role, FaultError> {
        match raw.as_deref() {
            None | Some("fallback") => Ok(Role::Fallback),
            Some("primary") => Err(self.invalid(
                "rate_limiter.upstream",
                "\"primary\"",
                "a limiter on the primary would answer 429 to the first attempt of every turn, faulting turns no event scores; the limiter guards the fallback (write \"fallback\" or leave the key out), and a rate-limited primary is [modes.rate_limit] on the profile's turns",
            )),
            Some(other) => Err(self.invalid(
                "rate_limiter.upstream",
                format!("{other:?}"),
                "the limiter guards the fallback: write \"fallback\" or leave the key out",
            )),
        }
    }

    fn status(
        &self,
        key: &str,
        raw: Option<i64>,
        default: u16,
        ok: impl Fn(i64) -> bool,
        fix: &str,
    ) -> Result<u16, FaultError> {
        let s = raw.unwrap_or(i64::from(default));
        if !ok(s) {
            return Err(self.invalid(key, s, fix));
        }
        u16::try_from(s).map_err(|_| self.invalid(key, s, fix))
    }
}

fn is_rate_limit_status(s: i64) -> bool {
    s == 429
}

impl RawProfile {
    pub(super) fn validate(self, origin: &str) -> Result<FaultProfile, FaultError> {
        let c = Check { origin };
        let upstream = c.faulted_upstream(self.upstream)?;
        let turns = match self.turns {
            None => TurnSelector::Final,
            Some(RawTurnsPub::Word(w)) if w == "final" => TurnSelector::Final,
            Some(RawTurnsPub::Word(w)) => {
                return Err(c.invalid(
                    "turns",
                    format!("{w:?}"),
                    "write \"final\", a list of turn numbers from 1, e.g. [3, 5], or an outage, e.g. { from = 3, count = 3 }",
                ))
            }
            Some(RawTurnsPub::Outage(RawOutage { from, count })) => {
                let from = usize::try_from(from).ok().filter(|f| *f >= 1).ok_or_else(|| {
                    c.invalid("turns.from", from, "turn numbers count from 1 (turn 1 is the anchor)")
                })?;
                let count = usize::try_from(count)
                    .ok()
                    .filter(|n| (1..=MAX_OUTAGE_TURNS).contains(n))
                    .ok_or_else(|| {
                        c.invalid(
                            "turns.count",
                            count,
                            &format!("an outage lasts 1 to {MAX_OUTAGE_TURNS} turns"),
                        )
                    })?;
                TurnSelector::List((from..from + count).collect())
            }
            Some(RawTurnsPub::List(list)) => {
                if list.is_empty() {
                    return Err(c.invalid(
                        "turns",
                        "[]",
                        "list at least one turn number from 1, or write \"final\"",
                    ));
                }
                let mut turns = Vec::with_capacity(list.len());
                for t in list {
                    match usize::try_from(t) {
                        Ok(t) if t >= 1 => turns.push(t),
                        _ => {
                            return Err(c.invalid(
                                "turns",
                                t,
                                "turn numbers count from 1 (turn 1 is the anchor)",
                            ))
                        }
                    }
                }
                turns.sort_unstable();
                turns.dedup();
                TurnSelector::List(turns)
            }
        };
        let timeout = match self.modes.timeout {
            None => None,
            Some(t) => {
                let hold = c.duration("modes.timeout.hold", t.hold, DEFAULT_HOLD)?;
                if hold < MIN_HOLD {
                    return Err(c.invalid(
                        "modes.timeout.hold",
                        format!("\"{}\"", humantime::format_duration(hold)),
                        &format!(
                            "a TIMEOUT holds the connection without a byte for at least {} (anything shorter is an immediate 504, not a timeout), and it must outlast the gateway's own upstream timeout to test anything; write e.g. \"30s\"",
                            humantime::format_duration(MIN_HOLD)
                        ),
                    ));
                }
                Some(TimeoutMode {
                    weight: c.weight("modes.timeout.weight", t.weight)?,
                    hold,
                })
            }
        };
        let api_error = match self.modes.api_error {
            None => None,
            Some(a) => Some(ApiErrorMode {
                weight: c.weight("modes.api_error.weight", a.weight)?,
                status: c.status(
                    "modes.api_error.status",
                    a.status,
                    DEFAULT_API_ERROR_STATUS,
                    |s| (500..=599).contains(&s),
                    "API_ERROR sends a server error: use a status from 500 to 599 (default 503)",
                )?,
                message: a
                    .message
                    .unwrap_or_else(|| DEFAULT_API_ERROR_MESSAGE.to_string()),
            }),
        };
        let rate_limit = match self.modes.rate_limit {
            None => None,
            Some(r) => Some(RateLimitMode {
                weight: c.weight("modes.rate_limit.weight", r.weight)?,
                status: c.status(
                    "modes.rate_limit.status",
                    r.status,
                    429,
                    is_rate_limit_status,
                    "RATE_LIMIT sends 429 Too Many Requests; use [modes.api_error] for a 5xx",
                )?,
                retry_after: c.duration(
                    "modes.rate_limit.retry_after",
                    r.retry_after,
                    DEFAULT_RETRY_AFTER,
                )?,
                message: r
                    .message
                    .unwrap_or_else(|| DEFAULT_RATE_LIMIT_MESSAGE.to_string()),
            }),
        };
        let rate_limiter = match self.rate_limiter {
            None => None,
            Some(l) => {
                let rejections = l.rejections.unwrap_or(i64::from(DEFAULT_REJECTIONS));
                let rejections = u32::try_from(rejections)
                    .ok()
                    .filter(|r| (1..=MAX_REJECTIONS).contains(r))
                    .ok_or_else(|| {
                        c.invalid(
                            "rate_limiter.rejections",
                            rejections,
                            &format!("the 429s each turn gets at the fallback before it answers: a whole number from 1 to {MAX_REJECTIONS} (default {DEFAULT_REJECTIONS})"),
                        )
                    })?;
                Some(RateLimiterSpec {
                    upstream: c.limited_upstream(l.upstream)?,
                    rejections,
                    retry_after: c.duration(
                        "rate_limiter.retry_after",
                        l.retry_after,
                        DEFAULT_RETRY_AFTER,
                    )?,
                    status: c.status(
                        "rate_limiter.status",
                        l.status,
                        429,
                        is_rate_limit_status,
                        "a rate limiter answers 429 Too Many Requests",
                    )?,
                    message: l
                        .message
                        .unwrap_or_else(|| DEFAULT_RATE_LIMIT_MESSAGE.to_string()),
                })
            }
        };
        let fallback_context_tokens = match self.fallback.and_then(|f| f.context_tokens) {
            None => None,
            Some(n) => Some(u32::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
                c.invalid(
                    "fallback.context_tokens",
                    n,
                    "the fallback's context window in approximate tokens (characters / 4): a whole number of at least 1",
                )
            })?),
        };
        let profile = FaultProfile {
            fallback_context_tokens,
            name: self.name,
            description: self.description,
            origin: origin.to_string(),
            upstream,
            turns,
            timeout,
            api_error,
            rate_limit,
            rate_limiter,
            degrade: self.degrade.map(|d| d.validate(origin)).transpose()?,
        };
        let total: f64 = FaultMode::ALL.iter().map(|m| profile.weight(*m)).sum();
        if total <= 0.0 && profile.degrade.is_none() {
            return Err(FaultError::ZeroWeight {
                path: origin.to_string(),
            });
        }
        Ok(profile)
    }
}
