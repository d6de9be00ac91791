//! `run`'s flags validated into the continuity suite's configuration.

use super::{ConfigError, Replay};
use crate::cli::{LatencyArg, RunArgs};
use crate::continuity::config::{RunConfig, DEFAULT_JUDGE_CACHE_NAME, PROVIDER_ATTEMPT_TIMEOUT};
use crate::proxy::ProxyMode;
use crate::report::dir::{default_report_dir, OutDir};
use std::time::Duration;

/// Validates `run` arguments into the continuity suite's configuration. `now_utc` names the default report
/// directory (`reports/<UTC timestamp>`).
///
/// # Errors
/// A [`ConfigError`] naming the flag to fix.
pub fn run_config(args: &RunArgs, now_utc: time::OffsetDateTime) -> Result<RunConfig, ConfigError> {
    if args.runs == 0 {
        return Err(ConfigError::Runs(args.runs));
    }
    if args.concurrency == 0 {
        return Err(ConfigError::Concurrency(args.concurrency));
    }
    super::ranges::run_args(args)?;
    if let Some(x) = args.fail_under_cpr {
        if !(0.0..=100.0).contains(&x) {
            return Err(ConfigError::FailUnder(x));
        }
    }
    let providers = super::provider_config(&args.providers, |v| std::env::var(v).ok())?;
    let attempt_timeout = args.attempt_timeout.unwrap_or(match args.latency {
        // A real model takes seconds to answer.
        _ if providers.is_some() => PROVIDER_ATTEMPT_TIMEOUT,
        LatencyArg::Realistic => Duration::from_secs(5),
        LatencyArg::Instant | LatencyArg::Fast => Duration::from_secs(1),
    });
    if attempt_timeout.is_zero() {
        return Err(ConfigError::ZeroDuration {
            flag: "--attempt-timeout",
        });
    }
    if args.request_timeout.is_zero() {
        return Err(ConfigError::ZeroDuration {
            flag: "--request-timeout",
        });
    }
    let systems = super::systems_config(&args.systems)?;
    if systems.api == crate::client::Api::Responses {
        if args.stream {
            return Err(ConfigError::ResponsesWith("--stream"));
        }
        if args.fast_forward {
            return Err(ConfigError::ResponsesWith("--fast-forward"));
        }
    }
    let fail_system = match &args.fail_system {
        Some(name) => Some(name.clone()),
        None => args
            .fail_under_cpr
            .map(|_| ProxyMode::History.as_str().to_string()),
    };
    if let Some(name) = &fail_system {
        let names = systems.names();
        if !names.contains(name) {
            return Err(ConfigError::FailSystem {
                name: name.clone(),
                systems: names.join(", "),
            });
        }
    }
    let out = match &args.out {
        Some(path) => OutDir::Given {
            path: path.clone(),
            force: args.force,
        },
        None => OutDir::Default(default_report_dir(now_utc)),
    };
    let mut judge = super::judge_config(&args.judge, |v| std::env::var(v).ok())?;
    if let Some(judge) = judge.as_mut() {
        // A real judge's verdicts are worth keeping across runs, next to
        // the reports; the simulated judge needs no cache unless asked.
        if judge.endpoint != crate::judge::JudgeEndpoint::Sim {
            judge
                .cache
                .get_or_insert_with(|| out.parent().join(DEFAULT_JUDGE_CACHE_NAME));
        }
    }
    let dataset = super::dataset_source(args.dataset.as_deref())?;
    let faults = super::profile_source(args.faults.as_deref())?;
    // Held to the ranges now, before a report directory is claimed (the
    // run loads it again, with its dataset, to plan).
    super::ranges::fault_profile(&crate::faults::FaultProfile::from_source(&faults)?)?;
    Ok(RunConfig {
        stopped: crate::stop::Stopped::default(),
        seed: args.seed,
        runs: args.runs,
        concurrency: args.concurrency,
        max_in_flight: args
            .max_in_flight
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        dataset,
        faults,
        latency: super::latency_profile(args.latency),
        stream: args.stream,
        client: args.client,
        replay: if args.fast_forward {
            Replay::FastForward
        } else {
            Replay::Live
        },
        attempt_timeout,
        request_timeout: args.request_timeout,
        out,
        quiet: args.quiet,
        fail_under_cpr: args.fail_under_cpr,
        fail_system,
        systems,
        judge,
        contracts: std::sync::Arc::new(super::contracts_config(&args.contracts)?),
        providers,
        cost_limit_tokens: args.cost_limit_tokens,
        yes: args.yes,
        shard: args.shard.unwrap_or_default(),
    })
}
