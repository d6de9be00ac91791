//! `bench overhead` (and `grade --overhead`), validated before anything
//! starts: the systems, the concurrencies, and every `--pid` naming an
//! external gateway of the run.

use crate::cli::{OverheadOptions, SystemOptions};
use crate::overhead::OverheadConfig;
use anyhow::{bail, Context};

/// The measurement `options` describe over `systems`, with `seed`.
///
/// # Errors
/// A systems error, the Responses API (the measurement speaks chat
/// completions), a repeated concurrency, or a `--pid` that names no
/// external gateway.
pub fn overhead_config(
    systems: &SystemOptions,
    options: &OverheadOptions,
    seed: u64,
) -> anyhow::Result<OverheadConfig> {
    let systems = super::systems_config(systems)?;
    if systems.api == crate::client::Api::Responses {
        bail!("bench overhead sends chat completions; drop --api responses (or api = \"responses\" in the systems file)");
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
        bail!(
            "--concurrency lists a value twice: {:?}",
            options.concurrency
        );
    }
    let mut modes: Vec<crate::overhead::schedule::Mode> =
        options.modes.iter().map(|&m| m.into()).collect();
    modes.sort_unstable();
    modes.dedup();
    for (name, pid) in &options.pids {
        if !systems.gateways.iter().any(|g| &g.name == name) {
            let known: Vec<&str> = systems.gateways.iter().map(|g| g.name.as_str()).collect();
            bail!(
                "--pid {}={pid}: no external gateway is named {0:?} (the gateways: {}); the \
                 reference proxies' processes are read without it",
                crate::report::escape::terminal(name),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
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
        exe: std::env::current_exe()
            .context("cannot tell where this program is, to start the reference proxies")?,
    })
}
