//! `report DIR`: re-render a report directory from its files: a run's
//! summary and plots from its CSV files, a grade's page and Markdown from
//! its summary.json.

use anyhow::Context as _;
use std::path::Path;
use std::process::ExitCode;

/// `report DIR`: reads config.json and the CSV files back, rebuilds the
/// summary (keeping the notes of the previous summary.json), rewrites
/// summary.json, summary.md and the plots, and prints the table.
pub fn report(dir: &Path, columns: crate::continuity::report::Columns) -> anyhow::Result<ExitCode> {
    if crate::grade::is_grade_dir(dir) {
        return grade_report(dir);
    }
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
    crate::secret::print!("{}", report::render_table(&data.summary, columns));
    crate::secret::println!("Rewrote {} file(s) in {}.", written.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `report DIR` on a grade: renders report.html and report.md again from
/// summary.json (the suites' own reports in its subdirectories are theirs:
/// `report DIR/paper` re-renders one).
fn grade_report(dir: &Path) -> anyhow::Result<ExitCode> {
    let summary = crate::grade::read_grade(dir)
        .with_context(|| format!("cannot re-render the grade in {}", dir.display()))?;
    let written = crate::grade::write_grade(dir, &summary)
        .with_context(|| format!("cannot re-render the grade in {}", dir.display()))?;
    crate::secret::println!(
        "Rewrote {} file(s) in {} from summary.json ({} system(s), {} case(s)).",
        written.len(),
        dir.display(),
        summary.systems.len(),
        summary.cases.len()
    );
    Ok(ExitCode::SUCCESS)
}
