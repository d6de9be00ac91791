//! `report DIR`: re-render the summary and plots of a report directory from
//! its CSV files.

use anyhow::Context as _;
use std::path::Path;
use std::process::ExitCode;

/// `report DIR`: reads config.json and the CSV files back, rebuilds the
/// summary (keeping the notes of the previous summary.json), rewrites
/// summary.json, summary.md and the plots, and prints the table.
pub fn report(dir: &Path) -> anyhow::Result<ExitCode> {
    use crate::continuity::{self, report};
    let (config, turns, events, attempts) = report::read_report(dir)
        .with_context(|| format!("cannot re-render the report in {}", dir.display()))?;
    let ctx = report::summary_context(&config, continuity::run_notes(&config));
    let mut summary = continuity::summary::summarize(&ctx, &events, &turns, &attempts);
    report::restore_delivery(dir, &mut summary.systems)
        .with_context(|| format!("cannot re-render the report in {}", dir.display()))?;
    let data = report::ReportData {
        config,
        turns,
        events,
        attempts,
        summary,
    };
    let written = report::write_summary_files(dir, &data)
        .with_context(|| format!("cannot re-render the report in {}", dir.display()))?;
    crate::secret::print!("{}", report::render_table(&data.summary));
    crate::secret::println!("Rewrote {} file(s) in {}.", written.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}
