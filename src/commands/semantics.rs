//! `semantics`: run the failover catalogue through every system, print the
//! table, the findings and a scorecard line per system, optionally write
//! the JSON (`--json`) and the scorecard files (`--out`), and exit 1 when a
//! scored case fails.

use crate::cli::SemanticsArgs;
use anyhow::Context as _;
use std::process::ExitCode;

/// `semantics`: exit 0 when no scored case of any system fails (partial,
/// safe and inconclusive cases do not fail the command), 1 when one does.
pub async fn semantics(args: &SemanticsArgs) -> anyhow::Result<ExitCode> {
    let config = crate::config::semantics_config(args)?;
    let mut signals = super::signal::Signals::install()?;
    // The catalogue has no partial result worth writing: a stop signal
    // ends the command with its status, saying nothing was written.
    let report = tokio::select! {
        report = crate::semantics::execute(&config) => report?,
        stop = signals.next() => {
            crate::secret::eprintln!(
                "{}: the catalogue was stopped before it finished; no results written",
                stop.name()
            );
            return Ok(ExitCode::from(stop.exit_code()));
        }
    };
    crate::secret::print!("{}", report.render());
    if let Some(path) = &config.json {
        use crate::report::Exporter as _;
        let bytes = crate::semantics::SemanticsJson.render(&report)?;
        crate::report::exporter::write_atomic(path, &bytes)
            .with_context(|| format!("cannot write --json {}", path.display()))?;
        crate::secret::println!("results written to {}", path.display());
    }
    if let Some(dir) = &config.out {
        let exporters = crate::semantics::scorecard::exporters();
        crate::report::write_files(dir, &report, &exporters)
            .with_context(|| format!("cannot write the scorecard into --out {}", dir.display()))?;
        crate::secret::println!(
            "scorecard written to {} (semantics.json, scorecard.md, scorecard.svg, scorecard.png)",
            dir.display()
        );
    }
    Ok(if report.failures() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
