//! `semantics`: run the failover-semantics cases through every system, print
//! the table and the findings, optionally write them as JSON, and exit 1
//! when a system deviates from the decision tree.

use crate::cli::SemanticsArgs;
use crate::config::SemanticsConfig;
use anyhow::Context as _;
use std::process::ExitCode;

/// `semantics`: exit 0 when every case of every system is what the decision
/// tree says (or inconclusive), 1 when one deviates.
pub async fn semantics(args: &SemanticsArgs) -> anyhow::Result<ExitCode> {
    let config = SemanticsConfig::from_args(args)?;
    let report = crate::semantics::execute(&config).await?;
    crate::secret::print!("{}", report.render());
    if let Some(path) = &config.json {
        use crate::report::Exporter as _;
        let bytes = crate::semantics::SemanticsJson.render(&report)?;
        crate::report::exporter::write_atomic(path, &bytes)
            .with_context(|| format!("cannot write --json {}", path.display()))?;
        crate::secret::println!("results written to {}", path.display());
    }
    Ok(if report.deviations() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
