//! Fault profiles: parsing and validating the TOML files in `fault_profiles/`.
//!
//! A profile says on which turns the primary fails ("final" or a list of
//! turn numbers), with which modes in which proportion, and the parameters
//! of each mode (how long a TIMEOUT holds, which 5xx an API_ERROR sends, the
//! `Retry-After` of a RATE_LIMIT). It may also put a deterministic rate
//! limiter in front of the fallback ([`RateLimiterSpec`], for "storm"
//! profiles).
//!
//! Every profile that parses means something a run can score: a fault only
//! the fallback would see, a hold too short to be a timeout and the keys of
//! the old wall-clock token bucket are refused here, and the checks that
//! need the dataset or the systems ([`FaultProfile::check_reach`],
//! [`FaultProfile::check_hold`]) live in [`crate::checks`].
//!
//! Parsing goes through serde with `deny_unknown_fields`; before that, a key
//! check walks the raw TOML so that a typo is reported with the table it is
//! in and the keys that are allowed there. Every error names the file, the
//! key and the fix.
//!
//! The raw schema and its key check are in `schema`, the `[degrade]` table
//! in [`degrade`]: parts of the one profile format, which is why they live
//! inside this module (each reads the others' types).

pub mod degrade;
mod schema;

use crate::{ErrorKind, ErrorSpec, FaultMode, Role};
use schema::{check_keys, RawProfile};
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
    #[error("{path}: the weights in [modes.*] add up to zero and there is no [degrade]: nothing would happen; give at least one of modes.timeout, modes.api_error, modes.rate_limit a positive weight, or add a [degrade] table")]
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
    /// `upstream = "fallback"`: a fault only the fallback sees, which a
    /// gateway whose primary answers never reaches.
    #[error("{path}: upstream = \"fallback\" cannot be exercised: a gateway calls its fallback only after the primary fails, and with this profile the primary always answers, so no fault would ever fire. For a misbehaving fallback keep upstream = \"primary\" and add a [rate_limiter] (it guards the fallback; see fault_profiles/storm.toml); both upstreams failing is a failover-semantics question for `continuity-bench semantics`, not a continuity profile")]
    FallbackUpstream {
        /// The file.
        path: String,
    },
    /// A key of the old token-bucket limiter.
    #[error("{path}: rate_limiter.{key} is no longer supported: the token bucket was replaced by a deterministic limiter, because a bucket refilling on wall-clock time gave different verdicts for the same seed on a loaded machine. Remove capacity and refill_per_second and use rejections = N (429s each turn gets at the fallback before it answers, default 1) with retry_after (a retry sooner than the Retry-After it was given also gets a 429)")]
    ReplacedKey {
        /// The file.
        path: String,
        /// The old key (`capacity` or `refill_per_second`).
        key: String,
    },
    /// The profile's faulted turns occur in no conversation of the dataset.
    #[error("{path}: turns = {turns} reaches no conversation: the dataset's conversations have {min_turns} to {max_turns} turns, so no fault would fire. List turn numbers from 1 to {max_turns} (a fault on turn k makes turn k the failover event of every conversation that long), or write turns = \"final\"")]
    Unreachable {
        /// The file.
        path: String,
        /// The `turns` value as written, e.g. `[99]`.
        turns: String,
        /// Fewest turns of a conversation in the dataset (0 when it is empty).
        min_turns: usize,
        /// Most turns of a conversation in the dataset (0 when it is empty).
        max_turns: usize,
    },
    /// A TIMEOUT hold the built-in proxies' attempt timeout does not outlast.
    #[error("{path}: modes.timeout.hold = {hold} is not longer than the built-in proxies' attempt timeout (--attempt-timeout {attempt_timeout}): the upstream would answer 504 before the proxy timed out, so TIMEOUT would test nothing. Raise modes.timeout.hold above --attempt-timeout (30s is the default), or lower --attempt-timeout")]
    HoldNotPastTimeout {
        /// The file.
        path: String,
        /// The hold, formatted (e.g. `2s`).
        hold: String,
        /// The attempt timeout, formatted.
        attempt_timeout: String,
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
///
/// The first faulted turn within a conversation's length is its *event
/// turn*: a fault on turn k makes turn k the failover event, and the probe
/// (the final turn) still decides whether the conversation kept its anchor.
/// Later listed turns are faulted too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnSelector {
    /// The final turn (the probe) of every conversation.
    Final,
    /// These turn numbers (from 1, sorted, without repeats); numbers past a
    /// conversation's end are ignored for that conversation.
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

    /// The faulted turns (from 1, ascending) of a conversation of `n_turns`
    /// turns; the first is its event turn. Empty when none is that short.
    pub fn turns_in(&self, n_turns: usize) -> Vec<usize> {
        match self {
            TurnSelector::Final if n_turns > 0 => vec![n_turns],
            TurnSelector::Final => Vec::new(),
            TurnSelector::List(turns) => turns.iter().copied().filter(|t| *t <= n_turns).collect(),
        }
    }
}

impl std::fmt::Display for TurnSelector {
    /// As written in a profile: `"final"` or `[3, 5]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TurnSelector::Final => f.write_str("\"final\""),
            TurnSelector::List(turns) => {
                let list: Vec<String> = turns.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", list.join(", "))
            }
        }
    }
}

/// Parameters of the TIMEOUT mode.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeoutMode {
    /// Relative weight among the modes.
    pub weight: f64,
    /// How long the upstream holds the connection without a byte; at least
    /// [`MIN_HOLD`], and it must exceed the gateway's timeout.
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

/// A deterministic rate limiter in front of the fallback (see
/// [`crate::limiter`]): for each turn, the first `rejections` attempts get a
/// 429 with `Retry-After`, and so does any later attempt that arrives
/// sooner than the `Retry-After` it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimiterSpec {
    /// The upstream the limiter guards (always the fallback: a limiter on
    /// the primary would fault every turn).
    pub upstream: Role,
    /// 429s each turn gets before the upstream answers (at least 1).
    pub rejections: u32,
    /// The `Retry-After` sent with each 429 (whole seconds on the wire,
    /// rounded up, at least 1).
    pub retry_after: Duration,
    /// The status sent (429).
    pub status: u16,
    /// The `error.message` of the body.
    pub message: String,
}

impl RateLimiterSpec {
    /// The error the limiter answers with.
    pub fn error(&self) -> ErrorSpec {
        ErrorSpec::new(self.status, ErrorKind::RateLimit, self.message.clone())
            .with_retry_after(self.retry_after)
    }
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
    /// The upstream that fails (always the primary: a fault only the
    /// fallback sees is refused at parse).
    pub upstream: Role,
    /// The turns on which it fails.
    pub turns: TurnSelector,
    /// TIMEOUT parameters, when the mode is in the profile.
    pub timeout: Option<TimeoutMode>,
    /// API_ERROR parameters, when the mode is in the profile.
    pub api_error: Option<ApiErrorMode>,
    /// RATE_LIMIT parameters, when the mode is in the profile.
    pub rate_limit: Option<RateLimitMode>,
    /// An optional deterministic rate limiter in front of the fallback.
    pub rate_limiter: Option<RateLimiterSpec>,
    /// Answers that degrade at HTTP 200, if any.
    pub degrade: Option<degrade::DegradeSpec>,
    /// `[fallback] context_tokens`: the fallback's context window, in
    /// approximate tokens (characters / 4); a larger request gets the
    /// dialect's 400 (`context_length_exceeded` in OpenAI's shape).
    pub fallback_context_tokens: Option<u32>,
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
/// Shortest TIMEOUT hold a profile may ask for: anything shorter is an
/// immediate 504, not a timeout.
pub const MIN_HOLD: Duration = Duration::from_millis(100);
/// Default number of 429s per turn from the rate limiter.
pub const DEFAULT_REJECTIONS: u32 = 1;
/// Most 429s per turn a rate limiter may send.
pub const MAX_REJECTIONS: u32 = 100;
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

    /// Loads and validates a profile from a file or its built-in copy.
    ///
    /// # Errors
    /// As [`FaultProfile::load`].
    pub fn from_source(source: &cb_base::source::Source) -> Result<FaultProfile, FaultError> {
        let origin = source.path().display().to_string();
        let text = source.text().map_err(|e| FaultError::Io {
            path: origin.clone(),
            source: e,
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
                    "; rate limiter on the {} ({} x {} per turn, Retry-After {})",
                    l.upstream.as_str(),
                    l.rejections,
                    l.status,
                    humantime::format_duration(l.retry_after)
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
        let path =
            Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(crate::DEFAULT_PROFILE);
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
            upstream = "primary"
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
            rejections = 3
            retry_after = "2s"
            status = 429
            message = "bucket empty"
            "#,
        )
        .unwrap();
        assert_eq!(p.upstream, Role::Primary);
        assert_eq!(p.turns, TurnSelector::List(vec![3, 5]));
        assert_eq!(p.timeout.unwrap().hold, Duration::from_secs(2));
        assert_eq!(p.api_error.unwrap().status, 500);
        assert_eq!(
            p.rate_limit.unwrap().retry_after,
            Duration::from_millis(1500)
        );
        let l = p.rate_limiter.unwrap();
        assert_eq!(
            (l.upstream, l.rejections, l.retry_after, l.status),
            (Role::Fallback, 3, Duration::from_secs(2), 429)
        );
        assert_eq!(l.message, "bucket empty");
        let e = l.error();
        assert_eq!(
            (e.status, e.kind, e.retry_after),
            (429, ErrorKind::RateLimit, Some(Duration::from_secs(2)))
        );
    }

    #[test]
    fn storm_profile_limits_the_fallback_once_per_turn() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("fault_profiles/storm.toml");
        let p = FaultProfile::load(&path).unwrap();
        assert_eq!(
            (p.upstream, &p.turns),
            (Role::Primary, &TurnSelector::Final)
        );
        let l = p.rate_limiter.unwrap();
        assert_eq!(
            (l.upstream, l.rejections, l.retry_after),
            (Role::Fallback, 1, Duration::from_secs(1))
        );
        // Defaults when the table only names itself.
        let d = parse("[modes.api_error]\n[rate_limiter]\n")
            .unwrap()
            .rate_limiter
            .unwrap();
        assert_eq!(
            (d.upstream, d.rejections, d.retry_after, d.status),
            (Role::Fallback, DEFAULT_REJECTIONS, DEFAULT_RETRY_AFTER, 429)
        );
    }

    #[test]
    fn a_fault_only_the_fallback_sees_is_refused_with_what_to_use() {
        let err = parse("upstream = \"fallback\"\n[modes.api_error]\n").unwrap_err();
        assert!(matches!(err, FaultError::FallbackUpstream { .. }), "{err}");
        let msg = err.to_string();
        for part in [
            "fault_profiles/bad.toml",
            "primary always answers",
            "[rate_limiter]",
            "semantics",
        ] {
            assert!(msg.contains(part), "{part:?} missing from: {msg}");
        }
        assert!(parse("upstream = \"primary\"\n[modes.api_error]\n").is_ok());
    }

    #[test]
    fn the_token_bucket_keys_say_what_replaced_them() {
        for key in ["capacity = 5", "refill_per_second = 10.0"] {
            let err = parse(&format!("[modes.api_error]\n[rate_limiter]\n{key}\n")).unwrap_err();
            assert!(matches!(err, FaultError::ReplacedKey { .. }), "{err}");
            let msg = err.to_string();
            let name = key.split(' ').next().unwrap();
            for part in [
                &format!("rate_limiter.{name}"),
                "rejections",
                "retry_after",
                "replaced",
            ] {
                assert!(msg.contains(part), "{part:?} missing from: {msg}");
            }
        }
    }

    #[test]
    fn limiter_values_are_checked() {
        for bad in ["rejections = 0", "rejections = -1", "rejections = 101"] {
            let err = parse(&format!("[modes.api_error]\n[rate_limiter]\n{bad}\n")).unwrap_err();
            assert!(err.to_string().contains("rate_limiter.rejections"), "{err}");
        }
        let err = parse("[modes.api_error]\n[rate_limiter]\nupstream = \"primary\"\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("rate_limiter.upstream"), "{msg}");
        assert!(msg.contains("[modes.rate_limit]"), "{msg}");
        let err = parse("[modes.api_error]\n[rate_limiter]\nstatus = 503\n").unwrap_err();
        assert!(err.to_string().contains("rate_limiter.status"), "{err}");
    }

    #[test]
    fn a_hold_too_short_to_be_a_timeout_is_refused() {
        for hold in ["0s", "50ms", "99ms"] {
            let err = parse(&format!("[modes.timeout]\nhold = \"{hold}\"\n")).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("modes.timeout.hold = \"{hold}\"")),
                "{msg}"
            );
            assert!(msg.contains("at least 100ms"), "{msg}");
        }
        assert!(parse("[modes.timeout]\nhold = \"100ms\"\n").is_ok());
    }

    #[test]
    fn turn_selectors_list_the_turns_within_reach() {
        assert_eq!(TurnSelector::Final.turns_in(7), vec![7]);
        assert!(TurnSelector::Final.turns_in(0).is_empty());
        let list = TurnSelector::List(vec![3, 5, 9]);
        assert_eq!(list.turns_in(7), vec![3, 5]);
        assert!(list.turns_in(2).is_empty());
        assert_eq!(list.to_string(), "[3, 5, 9]");
        assert_eq!(TurnSelector::Final.to_string(), "\"final\"");
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
    fn an_outage_is_turns_in_a_row() {
        let p = parse("turns = { from = 3, count = 3 }\n[modes.timeout]\n").unwrap();
        assert_eq!(p.turns, TurnSelector::List(vec![3, 4, 5]));
        assert_eq!(p.turns.turns_in(4), vec![3, 4]);
        for bad in [
            "{ from = 0, count = 3 }",
            "{ from = 3, count = 0 }",
            "{ from = 3 }",
            "{ from = 3, count = 3, until = 9 }",
        ] {
            assert!(
                parse(&format!("turns = {bad}\n[modes.timeout]\n")).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn bad_turns_and_upstream_rejected() {
        assert!(parse("turns = []\n[modes.timeout]\n").is_err());
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
