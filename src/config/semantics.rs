//! The validated configuration of `semantics`.

use super::{ConfigError, SystemsConfig};
use crate::cli::SemanticsArgs;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
}

impl SemanticsConfig {
    /// Validates `semantics` arguments.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the flag to fix.
    pub fn from_args(args: &SemanticsArgs) -> Result<Self, ConfigError> {
        for (flag, d) in [
            ("--attempt-timeout", args.attempt_timeout),
            ("--request-timeout", args.request_timeout),
        ] {
            if d.is_zero() {
                return Err(ConfigError::ZeroDuration { flag });
            }
        }
        if let Some(path) = &args.json {
            check_writable_file(path, "--json")?;
        }
        Ok(SemanticsConfig {
            seed: args.seed,
            attempt_timeout: args.attempt_timeout,
            request_timeout: args.request_timeout,
            systems: SystemsConfig::from_options(&args.systems)?,
            stream: args.stream,
            cooldown_wait: args.cooldown_wait,
            json: args.json.clone(),
            contracts: std::sync::Arc::new(super::contracts_config(&args.contracts)?),
        })
    }
}
