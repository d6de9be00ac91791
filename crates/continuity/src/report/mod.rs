//! The report of a `run`: what it is made from ([`ReportData`]), one
//! exporter per file, the stdout table, and reading a report directory back
//! for `report DIR`. The files go through [`cb_report`]'s manager.
//!
//! Files: config.json, turns.csv, events.csv, attempts.csv, summary.json,
//! summary.md, and cpr_by_fault / clo / latency_by_length as SVG and PNG.

mod charts;
pub mod csv_files;
pub mod json;
pub mod markdown;
pub mod plot_data;
pub mod plots;
pub mod read;
pub mod table;

#[cfg(test)]
pub(crate) mod fixture;

pub use json::restore_delivery;
pub use read::{read_report, summary_context, ReportRows};
pub use table::{render_table, Columns};

use super::record::EventRecord;
use super::summary::Summary;
use crate::config::ResolvedConfig;
use cb_base::record::{AttemptRecord, TurnRecord};
use cb_report::{write_files, Exporter, ReportError};
use std::path::{Path, PathBuf};

/// Everything a report is made from.
#[derive(Debug, Clone)]
pub struct ReportData {
    /// The resolved configuration (config.json).
    pub config: ResolvedConfig,
    /// Every driver request.
    pub turns: Vec<TurnRecord>,
    /// Every failover event.
    pub events: Vec<EventRecord>,
    /// Every upstream attempt.
    pub attempts: Vec<AttemptRecord>,
    /// The summary.
    pub summary: Summary,
}

/// The files derived from the summary: summary.json, summary.md and the plots.
pub fn summary_exporters() -> Vec<Box<dyn Exporter<ReportData>>> {
    let mut exporters: Vec<Box<dyn Exporter<ReportData>>> = vec![
        Box::new(json::SummaryJson),
        Box::new(markdown::SummaryMarkdown),
    ];
    exporters.extend(plots::exporters());
    exporters
}

/// Every file of a report: config.json, the CSV files, then the summary files.
pub fn all_exporters() -> Vec<Box<dyn Exporter<ReportData>>> {
    let mut exporters: Vec<Box<dyn Exporter<ReportData>>> = vec![
        Box::new(json::ConfigJson),
        Box::new(csv_files::TurnsCsv),
        Box::new(csv_files::EventsCsv),
        Box::new(csv_files::AttemptsCsv),
        Box::new(json::DeliveryJson),
    ];
    exporters.extend(summary_exporters());
    exporters
}

/// Writes every file of a report into `dir` (created if missing) and returns
/// the paths written, in exporter order.
///
/// # Errors
/// [`ReportError::Write`] naming the file that could not be written, or
/// [`ReportError::Render`] naming the file that could not be produced.
pub fn write_report(dir: &Path, data: &ReportData) -> Result<Vec<PathBuf>, ReportError> {
    write_files(dir, data, &all_exporters())
}

/// Writes only summary.json, summary.md and the plots into `dir`: what
/// `report DIR` re-renders from the CSV files.
///
/// # Errors
/// As [`write_report`].
pub fn write_summary_files(dir: &Path, data: &ReportData) -> Result<Vec<PathBuf>, ReportError> {
    write_files(dir, data, &summary_exporters())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixture::report_data;

    const EXPECTED_FILES: [&str; 15] = [
        "config.json",
        "turns.csv",
        "events.csv",
        "attempts.csv",
        "fallback_delivery.json",
        "summary.json",
        "summary.md",
        "cpr_by_fault.svg",
        "cpr_by_fault.png",
        "clo.svg",
        "clo.png",
        "clo_by_length.svg",
        "clo_by_length.png",
        "latency_by_length.svg",
        "latency_by_length.png",
    ];

    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn write_report_writes_every_documented_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("nested/report");
        let paths = write_report(&target, &report_data()).unwrap();
        assert_eq!(names(&paths), EXPECTED_FILES);
        let mut on_disk: Vec<String> = std::fs::read_dir(&target)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut expected: Vec<String> = EXPECTED_FILES.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(on_disk, expected, "no .partial file may remain");
        for path in &paths {
            assert!(std::fs::metadata(path).unwrap().len() > 0, "{path:?} empty");
        }
    }

    #[test]
    fn write_summary_files_leaves_the_csv_files_alone() {
        let dir = tempfile::tempdir().unwrap();
        let paths = write_summary_files(dir.path(), &report_data()).unwrap();
        assert_eq!(names(&paths), EXPECTED_FILES[5..]);
        assert!(!dir.path().join("events.csv").exists());
        assert!(!dir.path().join("config.json").exists());
    }
}
