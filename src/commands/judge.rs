//! `judge calibrate`: measure how far the fast path and the judge agree with
//! the labelled calibration set.

use crate::cli::{JudgeArgs, JudgeCommand};
use std::process::ExitCode;

/// `judge calibrate`: validate the judge options, run the calibration with
/// the real fast path, print the report; exit 1 if the fast path decided any
/// case wrongly.
pub async fn judge(args: JudgeArgs) -> anyhow::Result<ExitCode> {
    let JudgeCommand::Calibrate(args) = args.command;
    let config = crate::config::calibrate_config(&args, |v| std::env::var(v).ok())?;
    let outcome = crate::judge::calibrate::run(&config, crate::scoring::score_fast).await?;
    crate::secret::print!("{}", outcome.report);
    Ok(if outcome.calibration.fast_wrong().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
