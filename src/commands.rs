//! One function per subcommand: validate the arguments into a typed
//! configuration, call the library, print the outcome.

use crate::cli::{Command, RunArgs};
use crate::config::RunConfig;
use crate::harness;
use crate::cli::{ProxyArgs, ProxyModeArg};
use crate::proxy::{ProxyConfig, ProxyMode};
use anyhow::Context;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT), after its report
/// was written.
const EXIT_INTERRUPTED: u8 = 130;

/// Runs one subcommand.
///
/// # Errors
/// Whatever stops the subcommand.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run(&args).await,
        Command::Generate(_args) => todo!("generate"),
        Command::Upstreams(_args) => todo!("upstreams"),
        Command::Proxy(args) => proxy(args).await,
        Command::Report(_args) => todo!("report"),
    }
}

/// `run`: replay, score, report; exit 1 under `--fail-under-cpr`, 130 after
/// Ctrl-C.
async fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let config = RunConfig::from_args(args, time::OffsetDateTime::now_utc())?;
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ninterrupted: stopping the replay and writing the report of what finished");
            on_signal.cancel();
        }
    });
    let outcome = harness::execute(&config, cancel).await?;
    let summary = &outcome.data.summary;
    println!("{}", crate::report::render_table(summary));
    println!(
        "wall time {:.1} s · report in {}",
        outcome.wall.as_secs_f64(),
        outcome.report_dir.display()
    );
    if outcome.interrupted {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if let Some(threshold) = config.fail_under_cpr {
        let system = summary
            .systems
            .iter()
            .find(|s| s.name == config.fail_system)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--fail-system {:?} is not a system of this run (systems: {}); name one of them",
                    config.fail_system,
                    summary.systems.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
                )
            })?;
        let cpr = 100.0 * system.cpr.rate;
        if cpr < threshold {
            eprintln!(
                "{}: CPR {cpr:.2} % is below --fail-under-cpr {threshold} %",
                system.name
            );
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The reference-proxy configuration of `proxy` arguments.
pub fn proxy_config(args: ProxyArgs) -> ProxyConfig {
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
    config
}

/// `proxy`: serves a reference gateway until Ctrl-C.
async fn proxy(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let listen = args.listen;
    let config = proxy_config(args);
    let mode = config.mode.as_str();
    let (handle, _state) = crate::proxy::spawn(listen, config.clone())
        .await
        .with_context(|| format!("cannot start the {mode} proxy on --listen {listen}"))?;
    println!(
        "{mode} proxy listening on {url}/v1/chat/completions (metrics at {url}/metrics); \
         primary {primary}, fallback {fallback}; Ctrl-C stops it",
        url = handle.url(),
        primary = config.primary_url,
        fallback = config.fallback_url,
    );
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")?;
    handle.shutdown().await;
    Ok(ExitCode::SUCCESS)
}
