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
