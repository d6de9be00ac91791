//! The validated configuration of `semantics`.

use super::{ConfigError, SystemsConfig};
use crate::cli::SemanticsArgs;
use crate::report::dir::{claim_given, DirError};
use crate::semantics::timing::{GiveUpBounds, Timing};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why `semantics` arguments are refused.
#[derive(Debug, thiserror::Error)]
pub enum SemanticsConfigError {
    /// A shared option is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--cases` names a case that does not exist.
    #[error("--cases names {0:?}, which is no case; the cases are: {1}")]
    UnknownCase(String, String),
    /// `--max-attempts-per-upstream 0`.
    #[error("--max-attempts-per-upstream must be at least 1")]
    NoAttempts,
    /// The `--out` directory cannot be used.
    #[error(transparent)]
    Out(#[from] DirError),
}

/// Checks, before any work, that a file can be written at `path`: its
/// directory exists and takes a new file (a probe written and removed).
///
/// # Errors
/// [`ConfigError::Unwritable`] naming `flag`, the path and the cause.
pub fn check_writable_file(path: &Path, flag: &'static str) -> Result<(), ConfigError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let unwritable = |reason: String| ConfigError::Unwritable {
        flag,
        path: path.display().to_string(),
        reason,
    };
    if path.is_dir() {
        return Err(unwritable("it is a directory".into()));
    }
    let probe = dir.join(format!(".continuity-bench-probe-{}", std::process::id()));
    std::fs::write(&probe, b"probe").map_err(|e| unwritable(e.to_string()))?;
    std::fs::remove_file(&probe).map_err(|e| unwritable(e.to_string()))
}

/// A validated `semantics` configuration.
#[derive(Debug, Clone)]
pub struct SemanticsConfig {
    /// Master seed.
    pub seed: u64,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Deadline of every check request.
    pub request_timeout: Duration,
    /// The systems under test.
    pub systems: SystemsConfig,
    /// Whether every case is sent as a streamed request.
    pub stream: bool,
    /// How long to wait before re-sending a case that skipped the primary.
    pub cooldown_wait: Duration,
    /// Where to write the results as JSON, if anywhere.
    pub json: Option<PathBuf>,
    /// The answer contracts every answer is checked against.
    pub contracts: std::sync::Arc<crate::contracts::Contracts>,
    /// The times of the catalogue (`--fast` or the full profile).
    pub timing: Timing,
    /// What a total failure may cost (`both-fail`).
    pub give_up: GiveUpBounds,
    /// The ids of the cases to run (`--cases`); `None`: every case.
    pub cases: Option<Vec<String>>,
    /// The directory the JSON, the Markdown scorecard and the chart go to
    /// (`--out`), claimed: it exists and holds nothing else.
    pub out: Option<PathBuf>,
}

impl SemanticsConfig {
    /// Validates `semantics` arguments; claims the `--out` directory.
    ///
    /// # Errors
    /// A [`SemanticsConfigError`] naming the flag to fix.
    pub fn from_args(args: &SemanticsArgs) -> Result<Self, SemanticsConfigError> {
        for (flag, d) in [
            ("--attempt-timeout", args.attempt_timeout),
            ("--request-timeout", args.request_timeout),
            ("--max-give-up", args.max_give_up),
        ] {
            if d.is_zero() {
                return Err(ConfigError::ZeroDuration { flag }.into());
            }
        }
        if args.max_attempts_per_upstream == 0 {
            return Err(SemanticsConfigError::NoAttempts);
        }
        if let Some(path) = &args.json {
            check_writable_file(path, "--json")?;
        }
        let timing = if args.fast {
            Timing::fast()
        } else {
            Timing::full(args.request_timeout)
        };
        let give_up = GiveUpBounds {
            max_attempts_per_upstream: args.max_attempts_per_upstream,
            max_give_up: args.max_give_up,
        };
        let cases = match &args.cases {
            None => None,
            Some(list) => {
                let known: Vec<&str> =
                    crate::semantics::catalogue::catalogue(&timing, &give_up, args.stream)
                        .iter()
                        .map(|c| c.id)
                        .collect();
                let wanted: Vec<String> = list
                    .split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect();
                if let Some(unknown) = wanted.iter().find(|w| !known.contains(&w.as_str())) {
                    return Err(SemanticsConfigError::UnknownCase(
                        unknown.clone(),
                        known.join(", "),
                    ));
                }
                Some(wanted)
            }
        };
        // Claimed last: nothing is created for arguments refused above.
        let out = match &args.out {
            Some(dir) => Some(claim_given(dir, false)?),
            None => None,
        };
        Ok(SemanticsConfig {
            seed: args.seed,
            attempt_timeout: args.attempt_timeout,
            request_timeout: args.request_timeout,
            systems: super::systems_config(&args.systems)?,
            stream: args.stream,
            cooldown_wait: args.cooldown_wait,
            json: args.json.clone(),
            contracts: std::sync::Arc::new(super::contracts_config(&args.contracts)?),
            timing,
            give_up,
            cases,
            out,
        })
    }
}
