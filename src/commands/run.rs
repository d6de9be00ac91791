//! `run`: validate the arguments, replay, score, write the report, print the
//! table, and map the outcome to an exit code.

use crate::cli::RunArgs;
use crate::continuity;
use std::process::ExitCode;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Cancels `cancel` on the first SIGINT or SIGTERM
/// ([`super::signal::stop_on_signal`]); a second ends the process at once.
pub fn stop_on_ctrl_c(cancel: CancellationToken, what: &'static str) -> super::signal::Stopped {
    super::signal::stop_on_signal(cancel, what)
}

/// `run`: replay, score, report; exit 1 under `--fail-under-cpr`, 130 after
/// Ctrl-C, 143 after SIGTERM (the report of what finished written first).
pub async fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let stopped = stop_on_ctrl_c(
        cancel.clone(),
        "stopping and writing the report of what finished",
    );
    let mut config = crate::config::run_config(args, time::OffsetDateTime::now_utc())?;
    config.stopped = stopped.clone();
    let outcome = continuity::execute(&config, cancel, started).await?;
    let (Some(data), Some(dir)) = (&outcome.data, &outcome.report_dir) else {
        crate::secret::eprintln!(
            "interrupted ({}) before any conversation finished; no report written ({:.1} s)",
            crate::stop::Stop::name_of(stopped.signal()),
            outcome.wall.as_secs_f64()
        );
        return Ok(ExitCode::from(stopped.exit_code_or(EXIT_INTERRUPTED)));
    };
    let summary = &data.summary;
    crate::secret::println!(
        "{}",
        continuity::report::render_table(summary, crate::cli::table_columns(args.wide))
    );
    crate::secret::println!(
        "wall time {:.1} s · report in {}",
        outcome.wall.as_secs_f64(),
        dir.display()
    );
    if outcome.interrupted {
        return Ok(ExitCode::from(stopped.exit_code_or(EXIT_INTERRUPTED)));
    }
    let (Some(threshold), Some(name)) = (config.fail_under_cpr, &config.fail_system) else {
        return Ok(ExitCode::SUCCESS);
    };
    // The configuration checked the name against the systems.
    let Some(system) = summary.systems.iter().find(|s| &s.name == name) else {
        return Ok(ExitCode::SUCCESS);
    };
    let Some(rate) = system.cpr.rate else {
        crate::secret::eprintln!(
            "{}: CPR is n/a (no failover event was measured), so --fail-under-cpr {threshold} % is not met",
            system.name
        );
        return Ok(ExitCode::from(1));
    };
    let cpr = 100.0 * rate;
    if cpr < threshold {
        crate::secret::eprintln!(
            "{}: CPR {cpr:.2} % is below --fail-under-cpr {threshold} %",
            system.name
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
