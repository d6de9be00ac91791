//! `bench overhead`: measure what each system adds over a direct call to
//! the same simulated upstream, print the tables and write them
//! (overhead.md, overhead.json) into the report directory; Ctrl-C or
//! SIGTERM writes what finished.

use super::run::{stop_on_ctrl_c, EXIT_INTERRUPTED};
use crate::cli::OverheadArgs;
use crate::overhead::{render, OverheadConfig, OverheadReport};
use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

/// The Markdown file of a measurement.
pub const MARKDOWN_FILE: &str = "overhead.md";
/// The JSON file of a measurement.
pub const JSON_FILE: &str = "overhead.json";

/// `bench overhead`.
pub async fn overhead(args: &OverheadArgs) -> anyhow::Result<ExitCode> {
    let config = crate::config::overhead_config(&args.systems, &args.measure, args.seed)?;
    let out = match &args.out {
        Some(dir) => crate::report::dir::claim_given(dir, args.force)?,
        None => {
            let base = crate::config::default_report_dir(time::OffsetDateTime::now_utc());
            let name = format!(
                "overhead-{}",
                base.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            );
            crate::report::dir::claim_unique(&base.with_file_name(name))?
        }
    };
    let cancel = CancellationToken::new();
    let stopped = stop_on_ctrl_c(cancel.clone(), "stopping and writing what finished");
    let report = match measure(&config, cancel.clone(), args.quiet).await {
        Ok(report) => report,
        Err(e) if cancel.is_cancelled() => {
            crate::secret::eprintln!("{e:#}");
            // Nothing finished: leave no empty directory behind.
            let _ = std::fs::remove_dir(&out);
            return Ok(ExitCode::from(stopped.exit_code_or(EXIT_INTERRUPTED)));
        }
        Err(e) => {
            let _ = std::fs::remove_dir(&out);
            return Err(e);
        }
    };
    crate::secret::println!("{}", render::render(&report, render::Target::Terminal));
    write(&out, &report)?;
    crate::secret::println!("report in {}", out.display());
    if report.interrupted {
        return Ok(ExitCode::from(stopped.exit_code_or(EXIT_INTERRUPTED)));
    }
    if !report.left_out.is_empty() {
        // Measured what answered; a system left out is still a failure.
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a measurement with progress on standard error unless `quiet`.
///
/// # Errors
/// As [`crate::overhead::measure`].
pub async fn measure(
    config: &OverheadConfig,
    cancel: CancellationToken,
    quiet: bool,
) -> anyhow::Result<OverheadReport> {
    let progress = move |line: &str| {
        if !quiet {
            crate::secret::eprintln!("overhead: {line}");
        }
    };
    crate::overhead::measure(config, cancel, &progress).await
}

/// Writes overhead.md and overhead.json into `dir`.
///
/// # Errors
/// A file that cannot be written.
pub fn write(dir: &Path, report: &OverheadReport) -> anyhow::Result<()> {
    let json = serde_json::to_vec_pretty(report).context("cannot serialise the overhead report")?;
    crate::report::exporter::write_atomic(&dir.join(JSON_FILE), &json)?;
    let md = format!(
        "# Overhead\n\n{}",
        render::render(report, render::Target::Markdown)
    );
    crate::report::exporter::write_atomic(&dir.join(MARKDOWN_FILE), md.as_bytes())?;
    Ok(())
}
