//! `bench overhead` (and `grade --overhead`), validated before anything
//! starts: the systems, the concurrencies, and every `--pid` naming an
//! external gateway of the run.

use super::ConfigError;
use crate::cli::{OverheadOptions, SystemOptions};
use crate::overhead::schedule::Mode;
use crate::overhead::OverheadConfig;

/// Why a measurement's options were refused.
#[derive(Debug, thiserror::Error)]
pub enum OverheadConfigError {
    /// A systems option is wrong.
    #[error(transparent)]
    Systems(#[from] ConfigError),
    /// The measurement speaks chat completions only.
    #[error(
        "bench overhead sends chat completions; drop --api responses (or api = \"responses\" in the systems file)"
    )]
    ResponsesApi,
    /// `--concurrency` names a value twice.
    #[error("--concurrency lists a value twice ({0}); list each once")]
    RepeatedConcurrency(String),
    /// `--pid` names no external gateway.
    #[error(
        "--pid {name}={pid}: no external gateway is named so (the gateways: {known}); the \
         reference proxies' processes are read without it"
    )]
    UnknownPid {
        /// The name given (terminal-safe).
        name: String,
        /// The PID given.
        pid: u32,
        /// The gateways there are.
        known: String,
    },
    /// A gateway is named as the baseline is.
    #[error("a gateway is named \"baseline\", the name of the no-gateway baseline in every table; rename it")]
    BaselineName,
    /// The bounds of one request do not fit together.
    #[error("--upstream-delay {delay_ms} ms must be below --deadline {deadline_ms} ms and below the preflight's 10 s; --deadline at least 100 ms")]
    Bounds {
        /// `--upstream-delay`, ms.
        delay_ms: u128,
        /// `--deadline`, ms.
        deadline_ms: u128,
    },
    /// This program's path is unknown (to start the reference proxies).
    #[error("cannot tell where this program is, to start the reference proxies: {0}")]
    NoExe(std::io::Error),
}

/// The measurement `options` describe over `systems`, with `seed`.
///
/// # Errors
/// A systems error, the Responses API, a repeated concurrency, or a
/// `--pid` that names no external gateway.
pub fn overhead_config(
    systems: &SystemOptions,
    options: &OverheadOptions,
    seed: u64,
) -> Result<OverheadConfig, OverheadConfigError> {
    let systems = super::systems_config(systems)?;
    if systems.api == crate::client::Api::Responses {
        return Err(OverheadConfigError::ResponsesApi);
    }
    if systems.gateways.iter().any(|g| g.name == "baseline") {
        return Err(OverheadConfigError::BaselineName);
    }
    let (delay, deadline) = (options.upstream_delay, options.deadline);
    if deadline < std::time::Duration::from_millis(100)
        || delay >= deadline
        || delay >= std::time::Duration::from_secs(10)
    {
        return Err(OverheadConfigError::Bounds {
            delay_ms: delay.as_millis(),
            deadline_ms: deadline.as_millis(),
        });
    }
    let concurrency: Vec<usize> = options
        .concurrency
        .iter()
        .map(|&c| usize::from(c))
        .collect();
    let mut seen = concurrency.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != concurrency.len() {
        let listed: Vec<String> = concurrency.iter().map(ToString::to_string).collect();
        return Err(OverheadConfigError::RepeatedConcurrency(listed.join(",")));
    }
    let mut modes: Vec<Mode> = options.modes.iter().map(|&m| m.into()).collect();
    modes.sort_unstable();
    modes.dedup();
    for (name, pid) in &options.pids {
        if !systems.gateways.iter().any(|g| &g.name == name) {
            let known: Vec<&str> = systems.gateways.iter().map(|g| g.name.as_str()).collect();
            return Err(OverheadConfigError::UnknownPid {
                name: crate::report::escape::terminal(name),
                pid: *pid,
                known: if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                },
            });
        }
    }
    Ok(OverheadConfig {
        systems,
        concurrency,
        modes,
        trials: options.trials,
        requests: options.requests as usize,
        warmup: options.warmup as usize,
        upstream_delay: options.upstream_delay,
        deadline: options.deadline,
        seed,
        pids: options.pids.clone(),
        exe: std::env::current_exe().map_err(OverheadConfigError::NoExe)?,
    })
}
