//! `canary`: validate the flags, run the probe rounds (printing each round's
//! summary), print where the report went, and exit 130 after Ctrl-C;
//! `canary release ROUTE`: lift a quarantine by hand.

use crate::canary::runner;
use crate::cli::{CanaryAction, CanaryArgs};
use std::process::ExitCode;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// `canary` and `canary release`.
pub async fn canary(args: &CanaryArgs) -> anyhow::Result<ExitCode> {
    if let Some(CanaryAction::Power(power)) = &args.action {
        let settings = crate::config::canary_power_settings(power)?;
        let measured = crate::canary::power::rates::measured()?;
        let report = crate::canary::power::analyse(&settings, &measured);
        let text = if power.markdown {
            crate::canary::power::markdown(&report)
        } else {
            crate::canary::power::render(&report)
        };
        crate::secret::print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(CanaryAction::Release(release)) = &args.action {
        let config = crate::config::canary_release_config(release)?;
        let released = crate::canary::operator::release(&config, runner::wall_now())?;
        for line in released.lines {
            crate::secret::println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let config = crate::config::canary_config(
        &args.run,
        &|var| std::env::var(var).ok(),
        time::OffsetDateTime::now_utc(),
    )?;
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let stopped = super::run::stop_on_ctrl_c(
        cancel.clone(),
        "abandoning the round in progress and writing the state and report of what finished",
    );
    let mut print = |text: &str| crate::secret::println!("{text}");
    let outcome = runner::execute(&config, cancel, &mut print).await?;
    crate::secret::println!(
        "{} round(s) in {:.1} s · report in {} · state {} · log {} · ignore list {}",
        outcome.report.rounds.completed,
        started.elapsed().as_secs_f64(),
        outcome.files.dir.display(),
        outcome.files.state.display(),
        outcome.files.log.display(),
        outcome.files.ignore.display()
    );
    if outcome.interrupted {
        return Ok(ExitCode::from(
            stopped.exit_code_or(super::run::EXIT_INTERRUPTED),
        ));
    }
    if outcome.rounds_scored == 0 {
        crate::secret::eprintln!(
            "error: no round scored any route (see the alerts above): the canary checked nothing"
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
