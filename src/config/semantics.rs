//! The validated configuration of `semantics`.

use super::{ConfigError, SystemsConfig};
use crate::cli::SemanticsArgs;
use std::path::PathBuf;
use std::time::Duration;

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
        Ok(SemanticsConfig {
            seed: args.seed,
            attempt_timeout: args.attempt_timeout,
            request_timeout: args.request_timeout,
            systems: SystemsConfig::from_options(&args.systems)?,
            stream: args.stream,
            cooldown_wait: args.cooldown_wait,
            json: args.json.clone(),
        })
    }
}
