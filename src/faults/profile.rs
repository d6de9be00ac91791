//! Fault profiles: parsing and validating the TOML files in `fault_profiles/`.
//!
//! A profile says which upstream fails (primary or fallback), on which turns
//! ("final" or a list of turn numbers), with which modes in which proportion,
//! and the parameters of each mode (how long a TIMEOUT holds, which 5xx an
//! API_ERROR sends, the `Retry-After` of a RATE_LIMIT). It may also put a
//! token-bucket rate limiter in front of one upstream (for "storm" profiles).
//!
//! Parsing goes through serde with `deny_unknown_fields`; before that, a key
//! check walks the raw TOML so that a typo is reported with the table it is
//! in and the keys that are allowed there. Every error names the file, the
//! key and the fix.

use super::schema::{check_keys, RawProfile};
use super::{FaultMode, Role};
use std::path::Path;
use std::time::Duration;

/// Why a profile was rejected. Every message names the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    /// The file could not be read.
    #[error("cannot read fault profile {path}: {source}; pass an existing TOML file with --faults (the default is fault_profiles/paper.toml)")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a value has the wrong type.
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// What the TOML parser said, with the line.
        message: String,
    },
    /// A key the schema does not know (usually a typo).
    #[error("{path}: unknown key \"{key}\" in {table}; expected one of: {expected}")]
    UnknownKey {
        /// The file.
        path: String,
        /// The unknown key.
        key: String,
        /// Where it is, e.g. `[modes.timeout]`.
        table: String,
        /// The keys allowed there, comma-separated.
        expected: String,
    },
    /// The weights of all modes add up to zero.
    #[error("{path}: the weights in [modes.*] add up to zero; give at least one of modes.timeout, modes.api_error, modes.rate_limit a positive weight")]
    ZeroWeight {
        /// The file.
        path: String,
    },
    /// A duration below zero.
    #[error("{path}: {key} = {value} is negative; durations are zero or more, written like \"30s\" or \"500ms\"")]
    NegativeDuration {
        /// The file.
        path: String,
        /// The dotted key, e.g. `modes.timeout.hold`.
        key: String,
        /// The value as written.
        value: String,
    },
    /// Any other invalid value.
    #[error("{path}: {key} = {value} is invalid: {fix}")]
    Invalid {
        /// The file.
        path: String,
        /// The dotted key, e.g. `modes.api_error.status`.
        key: String,
        /// The value as written.
        value: String,
        /// What is allowed instead.
        fix: String,
    },
}

/// Which turns of a conversation a profile faults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnSelector {
    /// The final turn (the probe) of every conversation.
    Final,
    /// These turn numbers (from 1); numbers past a conversation's end are
    /// ignored for that conversation.
    List(Vec<usize>),
}

impl TurnSelector {
    /// Whether turn `turn` (from 1) of a conversation of `n_turns` turns is faulted.
    pub fn includes(&self, turn: usize, n_turns: usize) -> bool {
        match self {
            TurnSelector::Final => turn == n_turns && n_turns > 0,
            TurnSelector::List(turns) => turn <= n_turns && turns.contains(&turn),
        }
    }
}

/// Parameters of the TIMEOUT mode.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeoutMode {
    /// Relative weight among the modes.
    pub weight: f64,
    /// How long the upstream holds the connection without a byte; it must
    /// exceed the gateway's timeout.
    pub hold: Duration,
}

/// Parameters of the API_ERROR mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiErrorMode {
    /// Relative weight among the modes.
    pub weight: f64,
    /// The 5xx status sent.
    pub status: u16,
    /// The `error.message` of the body.
    pub message: String,
}

/// Parameters of the RATE_LIMIT mode.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimitMode {
    /// Relative weight among the modes.
    pub weight: f64,
    /// The status sent (429).
    pub status: u16,
    /// The `Retry-After` sent (whole seconds on the wire, rounded up, at least 1).
    pub retry_after: Duration,
    /// The `error.message` of the body.
    pub message: String,
}

/// A token bucket in front of one upstream: every request takes a token, an
/// empty bucket answers 429 with `Retry-After`.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimiterSpec {
    /// The upstream the limiter guards.
    pub upstream: Role,
    /// Tokens the bucket holds when full (and starts with).
    pub capacity: u32,
    /// Tokens added per second.
    pub refill_per_second: f64,
    /// The `Retry-After` sent when the bucket is empty.
    pub retry_after: Duration,
    /// The status sent when the bucket is empty (429).
    pub status: u16,
    /// The `error.message` of the body.
    pub message: String,
}

/// A validated fault profile.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultProfile {
    /// The profile's name (the `name` key, or the file stem).
    pub name: String,
    /// One sentence saying what the profile does.
    pub description: String,
    /// Where it was read from (a path, or a label for text parsed in tests).
    pub origin: String,
    /// The upstream that fails.
    pub upstream: Role,
    /// The turns on which it fails.
    pub turns: TurnSelector,
    /// TIMEOUT parameters, when the mode is in the profile.
    pub timeout: Option<TimeoutMode>,
    /// API_ERROR parameters, when the mode is in the profile.
    pub api_error: Option<ApiErrorMode>,
    /// RATE_LIMIT parameters, when the mode is in the profile.
    pub rate_limit: Option<RateLimitMode>,
    /// An optional token-bucket rate limiter in front of one upstream.
    pub rate_limiter: Option<RateLimiterSpec>,
}

/// Default API_ERROR status.
pub const DEFAULT_API_ERROR_STATUS: u16 = 503;
/// Default API_ERROR message.
pub const DEFAULT_API_ERROR_MESSAGE: &str =
    "The server is temporarily unable to handle the request (simulated API_ERROR).";
/// Default RATE_LIMIT message.
pub const DEFAULT_RATE_LIMIT_MESSAGE: &str =
    "Rate limit reached for requests; retry after the time in Retry-After (simulated RATE_LIMIT).";
/// Default TIMEOUT hold.
pub const DEFAULT_HOLD: Duration = Duration::from_secs(30);
/// Default `Retry-After`.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

impl FaultProfile {
    /// Loads and validates a profile file.
    ///
    /// # Errors
    /// [`FaultError`] when the file cannot be read or is not a valid profile.
    pub fn load(path: &Path) -> Result<FaultProfile, FaultError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| FaultError::Io {
            path: origin.clone(),
            source,
        })?;
        FaultProfile::parse(&text, &origin)
    }

    /// Parses and validates profile text; `origin` names it in errors, and
    /// its file stem is the name when the profile has no `name` key.
    ///
    /// # Errors
    /// [`FaultError`] when the text is not a valid profile.
    pub fn parse(text: &str, origin: &str) -> Result<FaultProfile, FaultError> {
        let syntax = |e: toml::de::Error| FaultError::Syntax {
            path: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        };
        let table: toml::Table = toml::from_str(text).map_err(syntax)?;
        check_keys(&table, origin)?;
        let raw: RawProfile = toml::from_str(text).map_err(syntax)?;
        let mut profile = raw.validate(origin)?;
        if profile.name.is_empty() {
            profile.name = Path::new(origin)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        Ok(profile)
    }

    /// The weight of `mode` (zero when the mode is not in the profile).
    pub fn weight(&self, mode: FaultMode) -> f64 {
        match mode {
            FaultMode::Timeout => self.timeout.as_ref().map_or(0.0, |m| m.weight),
            FaultMode::ApiError => self.api_error.as_ref().map_or(0.0, |m| m.weight),
            FaultMode::RateLimit => self.rate_limit.as_ref().map_or(0.0, |m| m.weight),
        }
    }

    /// A one-line description for logs: name, target and modes with weights.
    pub fn summary(&self) -> String {
        let turns = match &self.turns {
            TurnSelector::Final => "final turn".to_string(),
            TurnSelector::List(t) => format!(
                "turns {}",
                t.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        let modes = FaultMode::ALL
            .iter()
            .filter(|m| self.weight(**m) > 0.0)
            .map(|m| format!("{}={}", m.as_str(), self.weight(*m)))
            .collect::<Vec<_>>()
            .join(" ");
        let limiter = self
            .rate_limiter
            .as_ref()
            .map(|l| {
                format!(
                    "; rate limiter on {} ({} tokens, {}/s)",
                    l.upstream.as_str(),
                    l.capacity,
                    l.refill_per_second
                )
            })
            .unwrap_or_default();
        format!(
            "{} ({}): {} fails on the {turns} with {modes}{limiter}",
            self.name,
            self.origin,
            self.upstream.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FaultProfile, FaultError> {
        FaultProfile::parse(text, "fault_profiles/bad.toml")
    }

    #[test]
    fn paper_profile_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::faults::DEFAULT_PROFILE);
        let p = FaultProfile::load(&path).unwrap();
        assert_eq!(p.name, "paper");
        assert_eq!(p.upstream, Role::Primary);
        assert_eq!(p.turns, TurnSelector::Final);
        for m in FaultMode::ALL {
            assert_eq!(p.weight(m), 1.0, "{m:?}");
        }
        let t = p.timeout.unwrap();
        assert!(t.hold >= Duration::from_secs(30));
        assert_eq!(p.api_error.unwrap().status, 503);
        let r = p.rate_limit.unwrap();
        assert_eq!((r.status, r.retry_after), (429, Duration::from_secs(1)));
        assert!(p.rate_limiter.is_none());
    }

    #[test]
    fn every_key_parses() {
        let p = parse(
            r#"
            name = "storm"
            description = "everything"
            upstream = "fallback"
            turns = [5, 3, 3]
            [modes.timeout]
            weight = 0.5
            hold = "2s"
            [modes.api_error]
            weight = 2
            status = 500
            message = "boom"
            [modes.rate_limit]
            weight = 0
            status = 429
            retry_after = "1500ms"
            message = "slow down"
            [rate_limiter]
            upstream = "fallback"
            capacity = 3
            refill_per_second = 0.5
            retry_after = "2s"
            status = 429
            message = "bucket empty"
            "#,
        )
        .unwrap();
        assert_eq!(p.upstream, Role::Fallback);
        assert_eq!(p.turns, TurnSelector::List(vec![3, 5]));
        assert_eq!(p.timeout.unwrap().hold, Duration::from_secs(2));
        assert_eq!(p.api_error.unwrap().status, 500);
        assert_eq!(
            p.rate_limit.unwrap().retry_after,
            Duration::from_millis(1500)
        );
        let l = p.rate_limiter.unwrap();
        assert_eq!((l.capacity, l.refill_per_second), (3, 0.5));
    }

    #[test]
    fn typo_names_file_table_and_key() {
        let err = parse("[modes.timeout]\nhodl = \"30s\"\n").unwrap_err();
        assert!(matches!(err, FaultError::UnknownKey { .. }));
        assert_eq!(
            err.to_string(),
            "fault_profiles/bad.toml: unknown key \"hodl\" in [modes.timeout]; expected one of: weight, hold"
        );
        let top = parse("nmae = \"x\"\n[modes.timeout]\n").unwrap_err();
        assert!(
            top.to_string().contains("\"nmae\" in the top level"),
            "{top}"
        );
    }

    #[test]
    fn zero_total_weight_rejected() {
        let err =
            parse("[modes.timeout]\nweight = 0\n[modes.api_error]\nweight = 0\n").unwrap_err();
        assert!(matches!(err, FaultError::ZeroWeight { .. }), "{err}");
        assert!(err.to_string().starts_with("fault_profiles/bad.toml:"));
        // No mode at all is zero weight too.
        assert!(matches!(
            parse("name = \"x\"\n"),
            Err(FaultError::ZeroWeight { .. })
        ));
    }

    #[test]
    fn negative_durations_rejected() {
        for hold in ["\"-5s\"", "-5", "-0.5"] {
            let err = parse(&format!("[modes.timeout]\nhold = {hold}\n")).unwrap_err();
            assert!(matches!(err, FaultError::NegativeDuration { .. }), "{err}");
            assert!(err.to_string().contains("modes.timeout.hold"), "{err}");
        }
        // A bare positive number asks for a unit instead.
        let err = parse("[modes.timeout]\nhold = 30\n").unwrap_err();
        assert!(err.to_string().contains("\"30s\""), "{err}");
        // A positive string parses.
        assert!(parse("[modes.timeout]\nhold = \"250ms\"\n").is_ok());
    }

    #[test]
    fn statuses_out_of_range_rejected() {
        let err = parse("[modes.api_error]\nstatus = 404\n").unwrap_err();
        assert!(
            err.to_string().contains("modes.api_error.status = 404"),
            "{err}"
        );
        assert!(parse("[modes.api_error]\nstatus = 502\n").is_ok());
        let err = parse("[modes.rate_limit]\nstatus = 503\n").unwrap_err();
        assert!(err.to_string().contains("modes.rate_limit.status"), "{err}");
        assert!(parse("[modes.rate_limit]\nstatus = 429\n").is_ok());
    }

    #[test]
    fn bad_turns_and_upstream_rejected() {
        assert!(parse("turns = \"last\"\n[modes.timeout]\n").is_err());
        assert!(parse("turns = [0]\n[modes.timeout]\n").is_err());
        assert!(parse("upstream = \"secondary\"\n[modes.timeout]\n").is_err());
    }

    #[test]
    fn wrong_types_name_file_and_line() {
        let err = parse("[modes.api_error]\nstatus = \"503\"\n").unwrap_err();
        assert!(matches!(err, FaultError::Syntax { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("fault_profiles/bad.toml: "), "{msg}");
        assert!(msg.contains("line 2"), "{msg}");
        assert!(parse("turns = [\n").is_err());
    }

    #[test]
    fn name_defaults_to_file_stem() {
        assert_eq!(parse("[modes.timeout]\n").unwrap().name, "bad");
    }

    #[test]
    fn missing_file_names_path() {
        let err = FaultProfile::load(Path::new("fault_profiles/nope.toml")).unwrap_err();
        assert!(err.to_string().contains("fault_profiles/nope.toml"));
    }
}
