//! One function per subcommand: validate the arguments into a typed
//! configuration, call the library, print the outcome.

use crate::cli::{Command, JudgeArgs, JudgeCommand};
use std::process::ExitCode;

/// Runs one subcommand.
///
/// # Errors
/// Whatever stops the subcommand.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(_args) => todo!("run"),
        Command::Generate(_args) => todo!("generate"),
        Command::Upstreams(_args) => todo!("upstreams"),
        Command::Proxy(_args) => todo!("proxy"),
        Command::Report(_args) => todo!("report"),
        Command::Judge(args) => judge(args).await,
    }
}

/// `judge calibrate`: validate the judge options, run the calibration with
/// the real fast path, print the report; exit 1 if the fast path decided any
/// case wrongly.
async fn judge(args: JudgeArgs) -> anyhow::Result<ExitCode> {
    let JudgeCommand::Calibrate(args) = args.command;
    let config = crate::judge::calibrate::CalibrateConfig {
        judge: crate::judge::JudgeConfig::from_options(&args.judge, |v| std::env::var(v).ok())?,
        cases: args.cases,
        seed: args.seed,
        concurrency: args.concurrency,
    };
    let outcome = crate::judge::calibrate::run(&config, crate::scoring::score_fast).await?;
    print!("{}", outcome.report);
    Ok(if outcome.calibration.fast_wrong().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
