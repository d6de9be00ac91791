//! One function per subcommand: validate the arguments into a typed
//! configuration, call the library, print the outcome.

use crate::cli::Command;
use anyhow::Context as _;
use std::path::Path;
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
        Command::Report(args) => report(&args.dir),
    }
}

/// `report DIR`: reads config.json and the CSV files back, rebuilds the
/// summary (keeping the notes of the previous summary.json), rewrites
/// summary.json, summary.md and the plots, and prints the table.
fn report(dir: &Path) -> anyhow::Result<ExitCode> {
    use crate::report;
    let (config, turns, events, attempts) = report::read_report(dir)
        .with_context(|| format!("cannot re-render the report in {}", dir.display()))?;
    let ctx = report::summary_context(&config, report::previous_notes(dir));
    let summary = crate::summary::summarize(&ctx, &events, &attempts);
    let data = report::ReportData {
        config,
        turns,
        events,
        attempts,
        summary,
    };
    let written = report::write_summary_files(dir, &data)
        .with_context(|| format!("cannot re-render the report in {}", dir.display()))?;
    print!("{}", report::render_table(&data.summary));
    println!("Rewrote {} file(s) in {}.", written.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}
