//! The validated configurations of the smaller commands: `proxy` (one
//! reference gateway), `upstreams` (a simulated pair for any gateway) and
//! `generate`, and the latency profile a `--latency` choice names.

use super::ConfigError;
use crate::cli::{GenerateArgs, LatencyArg, ProxyArgs, ProxyModeArg, UpstreamsArgs};
use crate::dataset::{GenerateError, GenerateOptions};
use crate::proxy::{ProxyConfig, ProxyMode};
use crate::upstream::standalone::UpstreamsConfig;
use crate::upstream::LatencyProfile;

/// The latency profile of a command-line choice.
pub fn latency_profile(arg: LatencyArg) -> LatencyProfile {
    match arg {
        LatencyArg::Instant => LatencyProfile::INSTANT,
        LatencyArg::Fast => LatencyProfile::FAST,
        LatencyArg::Realistic => LatencyProfile::REALISTIC,
    }
}

/// The reference-proxy configuration of `proxy` arguments.
///
/// # Errors
/// [`ConfigError::ZeroDuration`] for a zero `--attempt-timeout` or
/// `--deadline`.
pub fn proxy_config(args: ProxyArgs) -> Result<ProxyConfig, ConfigError> {
    for (flag, d) in [
        ("--attempt-timeout", args.attempt_timeout),
        ("--deadline", args.deadline),
    ] {
        if d.is_zero() {
            return Err(ConfigError::ZeroDuration { flag });
        }
    }
    let mode = match args.mode {
        ProxyModeArg::Stateless => ProxyMode::Stateless,
        ProxyModeArg::History => ProxyMode::History,
    };
    let mut config = ProxyConfig::new(mode, args.primary, args.fallback);
    config.primary_model = args.primary_model;
    config.fallback_model = args.fallback_model;
    config.attempt_timeout = args.attempt_timeout;
    config.deadline = args.deadline;
    config.fallback_429_retries = args.fallback_retries;
    config.seed = args.seed;
    config.events_path = args.events;
    Ok(config)
}

/// The configuration of `upstreams`, with its fault profile and dataset
/// loaded and checked.
///
/// # Errors
/// [`ConfigError::Run`] for `--run 0`, or the profile's or dataset's own
/// error naming the file.
pub fn upstreams_config(args: UpstreamsArgs) -> anyhow::Result<UpstreamsConfig> {
    if args.run == 0 {
        return Err(ConfigError::RunIndex.into());
    }
    Ok(UpstreamsConfig {
        primary: args.primary,
        fallback: args.fallback,
        profile: crate::faults::FaultProfile::load(&args.faults)?,
        dataset: crate::dataset::Dataset::load(&args.dataset)?,
        seed: args.seed,
        run: args.run,
        latency: latency_profile(args.latency),
        attempts: args.attempts,
    })
}

/// The options of `generate`, checked.
///
/// # Errors
/// [`GenerateError`] naming the flag to fix.
pub fn generate_options(args: &GenerateArgs) -> Result<GenerateOptions, GenerateError> {
    let options = GenerateOptions {
        seed: args.seed,
        conversations: args.conversations,
        min_turns: args.min_turns,
        max_turns: args.max_turns,
    };
    options.validate()?;
    Ok(options)
}
