//! The validated configurations of the smaller commands: `proxy` (one
//! reference gateway), `upstreams` (a simulated pair for any gateway) and
//! `generate`, and the latency profile a `--latency` choice names.

use super::ConfigError;
use crate::cli::{
    ContinuationArg, GenerateArgs, LatencyArg, ProxyArgs, ProxyModeArg, UpstreamsArgs,
};
use crate::dataset::{GenerateError, GenerateOptions};
use crate::proxy::{Continuation, ProxyBehaviour, ProxyConfig, ProxyMode};
use crate::source::{Source, SourceError};
use crate::upstream::standalone::UpstreamsConfig;
use crate::upstream::LatencyProfile;
use std::path::Path;

/// The dataset `--dataset` names (a file, or a built-in name; default the
/// built-in continuity-150).
///
/// # Errors
/// [`SourceError`] when it is neither.
pub fn dataset_source(arg: Option<&Path>) -> Result<Source, SourceError> {
    Source::resolve(
        arg,
        "--dataset",
        "dataset",
        &crate::dataset::BUILTIN_DATASETS,
        &crate::dataset::BUILTIN_DATASETS[0],
    )
}

/// The fault profile `--faults` names (a file, or a built-in name; default
/// the built-in paper profile).
///
/// # Errors
/// [`SourceError`] when it is neither.
pub fn profile_source(arg: Option<&Path>) -> Result<Source, SourceError> {
    Source::resolve(
        arg,
        "--faults",
        "fault profile",
        &crate::faults::BUILTIN_PROFILES,
        &crate::faults::BUILTIN_PROFILES[0],
    )
}

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
    super::ranges::proxy_args(&args)?;
    for (flag, d) in [
        ("--attempt-timeout", args.attempt_timeout),
        ("--deadline", args.deadline),
    ] {
        if d.is_zero() {
            return Err(ConfigError::ZeroDuration { flag });
        }
        super::ranges::duration(flag, d, super::ranges::MAX_DURATION)?;
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
    if args.write_timeout.is_zero() {
        return Err(ConfigError::ZeroDuration {
            flag: "--write-timeout",
        });
    }
    config.write_timeout = args.write_timeout;
    if let Some(&code) = args.retry_status.iter().find(|&&code| {
        !matches!(
            crate::policy::classify(crate::policy::Outcome::Status(code)),
            crate::policy::Decision::Failover(_)
        )
    }) {
        return Err(ConfigError::RetryStatus(code));
    }
    let limit = |d: std::time::Duration| (!d.is_zero()).then_some(d);
    config.behaviour = ProxyBehaviour {
        same_route_retries: args.same_route_retries,
        retry_statuses: args.retry_status,
        retry_after_cap: args.retry_after_cap,
        retry_delay: args.retry_delay,
        first_token_timeout: limit(args.first_token_timeout),
        stall_timeout: limit(args.stall_timeout),
        continuation: match args.continuation {
            ContinuationArg::Prefill => Continuation::Prefill,
            ContinuationArg::Restart => Continuation::Restart,
            ContinuationArg::Off => Continuation::Off,
        },
        context_fallback: args.context_fallback,
        context_model: args.context_model,
        fallback_max_tokens: args.fallback_max_tokens,
        fallback_params: args.fallback_param.into_iter().collect(),
        fallback_dialect: args.fallback_dialect,
        request_memory: usize::try_from(args.request_memory).unwrap_or(usize::MAX),
        stall_clock: crate::proxy::StallClock::Content,
    };
    Ok(config)
}

/// The configuration of `upstreams`, with its fault profile and dataset
/// loaded and checked.
///
/// # Errors
/// [`ConfigError::RunIndex`] for `--run 0`, unusable provider options, or the profile's or dataset's own
/// error naming the file.
pub fn upstreams_config(args: UpstreamsArgs) -> anyhow::Result<UpstreamsConfig> {
    if args.run == 0 {
        return Err(ConfigError::RunIndex.into());
    }
    super::ranges::upstreams_args(&args).map_err(ConfigError::from)?;
    // Checked now, not when the attempts served are written at the stop.
    if let Some(path) = &args.attempts {
        super::semantics::check_writable_file(path, "--attempts")?;
    }
    let providers = super::provider_config(&args.providers, |v| std::env::var(v).ok())
        .map_err(ConfigError::from)?;
    if args.provider_timeout.is_zero() {
        return Err(ConfigError::ZeroDuration {
            flag: "--provider-timeout",
        }
        .into());
    }
    let profile =
        crate::faults::FaultProfile::from_source(&profile_source(args.faults.as_deref())?)?;
    super::ranges::fault_profile(&profile)?;
    let dataset = crate::dataset::Dataset::from_source(&dataset_source(args.dataset.as_deref())?)?;
    let turns: Vec<usize> = dataset.conversations.iter().map(|c| c.n_turns()).collect();
    let reach = profile.check_reach(&turns)?;
    if reach.is_partial() {
        eprintln!("note: {reach}");
    }
    if let Some(warning) = profile.hold_warning() {
        eprintln!("{warning}");
    }
    Ok(UpstreamsConfig {
        primary: args.primary,
        fallback: args.fallback,
        profile,
        dataset,
        seed: args.seed,
        run: args.run,
        latency: latency_profile(args.latency),
        attempts: args.attempts,
        providers,
        provider_timeout: args.provider_timeout,
        max_body_bytes: super::ranges::body_bytes("--max-body-bytes", args.max_body_bytes)?,
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
    if args.later_probes && args.min_turns < crate::dataset::later::MIN_TURNS {
        return Err(GenerateError::TooShortForLaterProbes {
            got: args.min_turns,
            min: crate::dataset::later::MIN_TURNS,
        });
    }
    Ok(options)
}

/// The answer contracts the options ask for.
///
/// # Errors
/// [`ConfigError::ZeroDuration`] for `--ttft-limit 0s`.
pub fn contracts_config(
    options: &crate::cli::ContractOptions,
) -> Result<crate::contracts::Contracts, ConfigError> {
    let settings = crate::contracts::ContractSettings {
        ttft_limit: options.ttft_limit,
        ..crate::contracts::ContractSettings::default()
    };
    crate::contracts::Contracts::new(settings).map_err(|_| ConfigError::ZeroDuration {
        flag: "--ttft-limit",
    })
}
