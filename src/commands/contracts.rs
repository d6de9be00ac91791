//! `contracts calibrate`: measure every answer contract against the
//! labelled calibration set and print the figures.

use crate::cli::{ContractsArgs, ContractsCommand};
use crate::contracts::calibrate::{calibrate, load_cases};
use crate::contracts::Contracts;
use std::process::ExitCode;

/// `contracts calibrate`: exit 0 when every contract meets its goals, 1
/// otherwise.
pub fn contracts(args: &ContractsArgs) -> anyhow::Result<ExitCode> {
    let ContractsCommand::Calibrate(args) = &args.command;
    let (source, cases) = load_cases(args.cases.as_deref())?;
    let report = calibrate(&source, &cases, &Contracts::default());
    print!("{}", report.render());
    Ok(if report.meets_goals() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
