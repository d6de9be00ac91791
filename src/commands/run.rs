//! `run`: validate the arguments, replay, score, write the report, print the
//! table, and map the outcome to an exit code.

use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::continuity;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT), after its report
/// was written.
const EXIT_INTERRUPTED: u8 = 130;

/// `run`: replay, score, report; exit 1 under `--fail-under-cpr`, 130 after
/// Ctrl-C.
pub async fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let config = RunConfig::from_args(args, time::OffsetDateTime::now_utc())?;
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ninterrupted: stopping the replay and writing the report of what finished");
            on_signal.cancel();
        }
    });
    let outcome = continuity::execute(&config, cancel).await?;
    let summary = &outcome.data.summary;
    println!("{}", continuity::report::render_table(summary));
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
        let Some(rate) = system.cpr.rate else {
            eprintln!(
                "{}: CPR is n/a (no failover event was measured), so --fail-under-cpr {threshold} % is not met",
                system.name
            );
            return Ok(ExitCode::from(1));
        };
        let cpr = 100.0 * rate;
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
