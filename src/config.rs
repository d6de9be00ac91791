//! The validated, typed configuration of a run. clap types stop at the
//! command-line boundary; everything past it works on these. The resolved
//! configuration is written as `config.json` in every report and read back by
//! `report DIR`.

use crate::cli::{LatencyArg, RunArgs};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Bootstrap resamples of the clustered CPR interval.
pub const BOOTSTRAP_RESAMPLES: u32 = 2000;

/// Confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// The model id the driver asks for.
pub const DRIVER_MODEL: &str = "continuity-sim";

/// The model id the built-in proxies map the fallback to.
pub const FALLBACK_MODEL: &str = "continuity-sim-fallback";

/// A run setting that cannot be used, with the flag to fix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// `--runs 0`.
    #[error("--runs must be at least 1 (got {0})")]
    Runs(u32),
    /// `--concurrency 0`.
    #[error("--concurrency must be at least 1 (got {0})")]
    Concurrency(usize),
    /// `--fail-under-cpr` outside 0..=100.
    #[error("--fail-under-cpr is a percentage between 0 and 100 (got {0})")]
    FailUnder(f64),
    /// A zero duration.
    #[error("{flag} must be longer than zero")]
    ZeroDuration {
        /// The flag.
        flag: &'static str,
    },
}

/// How conversations are replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// Turn by turn, each request carrying the replies actually received.
    Live,
    /// Only the final turn, with the dataset's scripted history.
    FastForward,
}

impl Replay {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Replay::Live => "live",
            Replay::FastForward => "fast_forward",
        }
    }
}

/// A validated `run` configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Master seed.
    pub seed: u64,
    /// Number of runs, at least 1.
    pub runs: u32,
    /// Conversations in flight at once, at least 1.
    pub concurrency: usize,
    /// Dataset file.
    pub dataset: PathBuf,
    /// Fault profile file.
    pub faults: PathBuf,
    /// Latency profile name of the simulated upstreams.
    pub latency: &'static str,
    /// Replay mode.
    pub replay: Replay,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Deadline of every driver request.
    pub request_timeout: Duration,
    /// Report directory.
    pub out: PathBuf,
    /// No progress bar.
    pub quiet: bool,
    /// Minimum CPR (percent) of `fail_system`.
    pub fail_under_cpr: Option<f64>,
    /// The system checked by `fail_under_cpr`.
    pub fail_system: String,
}

impl RunConfig {
    /// Validates `run` arguments. `now_utc` names the default report
    /// directory (`reports/<UTC timestamp>`).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the flag to fix.
    pub fn from_args(args: &RunArgs, now_utc: time::OffsetDateTime) -> Result<Self, ConfigError> {
        if args.runs == 0 {
            return Err(ConfigError::Runs(args.runs));
        }
        if args.concurrency == 0 {
            return Err(ConfigError::Concurrency(args.concurrency));
        }
        if let Some(x) = args.fail_under_cpr {
            if !(0.0..=100.0).contains(&x) {
                return Err(ConfigError::FailUnder(x));
            }
        }
        if args.attempt_timeout.is_zero() {
            return Err(ConfigError::ZeroDuration {
                flag: "--attempt-timeout",
            });
        }
        if args.request_timeout.is_zero() {
            return Err(ConfigError::ZeroDuration {
                flag: "--request-timeout",
            });
        }
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| default_report_dir(now_utc));
        Ok(RunConfig {
            seed: args.seed,
            runs: args.runs,
            concurrency: args.concurrency,
            dataset: args.dataset.clone(),
            faults: args.faults.clone(),
            latency: latency_name(args.latency),
            replay: if args.fast_forward {
                Replay::FastForward
            } else {
                Replay::Live
            },
            attempt_timeout: args.attempt_timeout,
            request_timeout: args.request_timeout,
            out,
            quiet: args.quiet,
            fail_under_cpr: args.fail_under_cpr,
            fail_system: args.fail_system.clone(),
        })
    }

    /// The configuration as written to `config.json`.
    pub fn resolved(&self, conversations: u32, systems: Vec<String>) -> ResolvedConfig {
        ResolvedConfig {
            tool: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: self.seed,
            runs: self.runs,
            concurrency: self.concurrency,
            dataset: self.dataset.display().to_string(),
            conversations,
            fault_profile: self.faults.display().to_string(),
            latency: self.latency.to_string(),
            replay: self.replay.as_str().to_string(),
            attempt_timeout_ms: self.attempt_timeout.as_millis() as u64,
            request_timeout_ms: self.request_timeout.as_millis() as u64,
            systems,
            confidence: CONFIDENCE,
            percentile_method: crate::stats::PERCENTILE_METHOD.to_string(),
            bootstrap_resamples: BOOTSTRAP_RESAMPLES,
        }
    }
}

/// The latency profile name of a command-line choice.
pub fn latency_name(arg: LatencyArg) -> &'static str {
    match arg {
        LatencyArg::Instant => "instant",
        LatencyArg::Fast => "fast",
        LatencyArg::Realistic => "realistic",
    }
}

/// `reports/<UTC timestamp>`, e.g. `reports/2026-11-29T18-34-50Z`.
pub fn default_report_dir(now_utc: time::OffsetDateTime) -> PathBuf {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]-[minute]-[second]Z");
    let stamp = now_utc
        .format(&format)
        .unwrap_or_else(|_| "run".to_string());
    PathBuf::from("reports").join(stamp)
}

/// The resolved configuration of a run, as written to `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedConfig {
    /// Tool name.
    pub tool: String,
    /// Tool version.
    pub version: String,
    /// Master seed.
    pub seed: u64,
    /// Number of runs.
    pub runs: u32,
    /// Conversations in flight at once.
    pub concurrency: usize,
    /// Dataset file.
    pub dataset: String,
    /// Conversations in the dataset.
    pub conversations: u32,
    /// Fault profile file.
    pub fault_profile: String,
    /// Latency model of the simulated upstreams.
    pub latency: String,
    /// `live` or `fast_forward`.
    pub replay: String,
    /// Per-attempt timeout of the built-in proxies, milliseconds.
    pub attempt_timeout_ms: u64,
    /// Deadline of every driver request, milliseconds.
    pub request_timeout_ms: u64,
    /// Systems under test, in order.
    pub systems: Vec<String>,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// Percentile method.
    pub percentile_method: String,
    /// Bootstrap resamples of the clustered interval.
    pub bootstrap_resamples: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(extra: &[&str]) -> RunArgs {
        let mut argv = vec!["continuity-bench", "run"];
        argv.extend_from_slice(extra);
        match Cli::parse_from(argv).command {
            Command::Run(a) => a,
            _ => unreachable!("parsed a run command"),
        }
    }

    #[test]
    fn defaults_resolve() {
        let now = time::macros::datetime!(2026-11-29 18:34:50 UTC);
        let cfg = RunConfig::from_args(&args(&[]), now).unwrap();
        assert_eq!(cfg.runs, 1);
        assert_eq!(cfg.concurrency, 100);
        assert_eq!(cfg.seed, 42);
        assert_eq!(cfg.replay, Replay::Live);
        assert_eq!(cfg.out, PathBuf::from("reports/2026-11-29T18-34-50Z"));
    }

    #[test]
    fn bad_values_name_the_flag() {
        let now = time::OffsetDateTime::UNIX_EPOCH;
        let err = RunConfig::from_args(&args(&["--runs", "0"]), now).unwrap_err();
        assert!(err.to_string().contains("--runs"));
        let err = RunConfig::from_args(&args(&["--fail-under-cpr", "150"]), now).unwrap_err();
        assert!(err.to_string().contains("--fail-under-cpr"));
        let err = RunConfig::from_args(&args(&["--attempt-timeout", "0s"]), now).unwrap_err();
        assert!(err.to_string().contains("--attempt-timeout"));
    }
}
