//! The exporter trait and the manager that writes a report directory.

use crate::record::{AttemptRecord, EventRecord, TurnRecord};
use crate::summary::Summary;
use std::path::{Path, PathBuf};

/// Why a report could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Placeholder.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Everything a report is made from.
#[derive(Debug, Clone)]
pub struct ReportData {
    /// The resolved configuration (config.json).
    pub config: crate::config::ResolvedConfig,
    /// Every driver request.
    pub turns: Vec<TurnRecord>,
    /// Every failover event.
    pub events: Vec<EventRecord>,
    /// Every upstream attempt.
    pub attempts: Vec<AttemptRecord>,
    /// The summary.
    pub summary: Summary,
}

/// One output file format.
pub trait Exporter {
    /// File name inside the report directory.
    fn file_name(&self) -> &'static str;
    /// The file's bytes.
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError>;
}

/// Writes every file of a report into `dir`.
pub fn write_report(_dir: &Path, _data: &ReportData) -> Result<Vec<PathBuf>, ReportError> {
    todo!()
}

/// Reads config.json and the CSV files of a report directory.
pub fn read_report(
    _dir: &Path,
) -> Result<
    (
        crate::config::ResolvedConfig,
        Vec<TurnRecord>,
        Vec<EventRecord>,
        Vec<AttemptRecord>,
    ),
    ReportError,
> {
    todo!()
}
