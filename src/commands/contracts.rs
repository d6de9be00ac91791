//! `contracts calibrate`: measure every answer contract against both parts
//! of the labelled calibration set (development, then held-out) and print
//! the figures.

use crate::cli::{ContractsArgs, ContractsCommand};
use crate::contracts::calibrate::{calibrate, load_part, Part};
use crate::contracts::Contracts;
use std::process::ExitCode;

/// `contracts calibrate`: exit 0 when every contract meets its goals on
/// both parts, 1 otherwise.
pub fn contracts(args: &ContractsArgs) -> anyhow::Result<ExitCode> {
    let ContractsCommand::Calibrate(args) = &args.command;
    let contracts = Contracts::default();
    let parts = match &args.set {
        Some(set) => vec![(Part::Supplied, Some(set.as_path()))],
        None => vec![
            (Part::Development, args.cases.as_deref()),
            (Part::HeldOut, args.held_out.as_deref()),
        ],
    };
    let mut met = true;
    for (i, (part, path)) in parts.into_iter().enumerate() {
        let (source, cases) = load_part(part, path)?;
        let report = calibrate(part, &source, &cases, &contracts);
        if i > 0 {
            println!();
        }
        print!("{}", report.render());
        met &= report.meets_goals();
    }
    Ok(if met {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
