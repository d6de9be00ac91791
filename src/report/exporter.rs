//! The exporter trait and the manager that owns the report directory.
//!
//! Every file format is one [`Exporter`] that turns [`ReportData`] into bytes;
//! only the manager ([`write_report`], [`write_summary_files`]) touches the
//! file system, and it writes each file under a temporary name and renames it,
//! so a crash never leaves half a file behind.

use crate::record::{AttemptRecord, EventRecord, TurnRecord};
use crate::summary::Summary;
use std::path::{Path, PathBuf};

/// What to tell the user when a report directory cannot be read back.
pub(crate) const REGENERATE: &str = "regenerate it with `continuity-bench run`";

/// Why a report could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or directory could not be written.
    #[error("cannot write {}: {source}; check that the directory is writable and the disk is not full", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file of a report directory could not be read.
    #[error("cannot read {}: {source}; is this a report directory written by `continuity-bench run`?", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A JSON file of a report directory is not what `run` writes.
    #[error("{}: invalid JSON: {source}; {}", path.display(), REGENERATE)]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// A CSV file has other columns than the ones this version writes.
    #[error("{}: columns are [{found}], expected [{expected}]; it was written by another version, {}", path.display(), REGENERATE)]
    Columns {
        /// The file.
        path: PathBuf,
        /// The header found, comma-separated.
        found: String,
        /// The header expected, comma-separated.
        expected: String,
    },
    /// One row of a CSV file could not be parsed.
    #[error("{} row {row}: {message}; {}", path.display(), REGENERATE)]
    Row {
        /// The file.
        path: PathBuf,
        /// Data row number, from 1 (the header is not counted).
        row: u64,
        /// What is wrong with the row, naming the column.
        message: String,
    },
    /// A file's content could not be produced in memory.
    #[error("cannot render {file}: {message}")]
    Render {
        /// The file name inside the report directory.
        file: &'static str,
        /// The cause.
        message: String,
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
    ///
    /// # Errors
    /// [`ReportError::Render`] when the content cannot be produced.
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError>;
}

/// The files derived from the summary: summary.json, summary.md and the plots.
pub fn summary_exporters() -> Vec<Box<dyn Exporter>> {
    let mut exporters: Vec<Box<dyn Exporter>> = vec![
        Box::new(super::json::SummaryJson),
        Box::new(super::markdown::SummaryMarkdown),
    ];
    exporters.extend(super::plots::exporters());
    exporters
}

/// Every file of a report: config.json, the CSV files, then the summary files.
pub fn all_exporters() -> Vec<Box<dyn Exporter>> {
    let mut exporters: Vec<Box<dyn Exporter>> = vec![
        Box::new(super::json::ConfigJson),
        Box::new(super::csv_files::TurnsCsv),
        Box::new(super::csv_files::EventsCsv),
        Box::new(super::csv_files::AttemptsCsv),
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
    write_with(dir, data, &all_exporters())
}

/// Writes only summary.json, summary.md and the plots into `dir`: what
/// `report DIR` re-renders from the CSV files.
///
/// # Errors
/// As [`write_report`].
pub fn write_summary_files(dir: &Path, data: &ReportData) -> Result<Vec<PathBuf>, ReportError> {
    write_with(dir, data, &summary_exporters())
}

/// Renders every exporter first, then writes the files, so that a rendering
/// error leaves the directory untouched.
fn write_with(
    dir: &Path,
    data: &ReportData,
    exporters: &[Box<dyn Exporter>],
) -> Result<Vec<PathBuf>, ReportError> {
    let rendered = exporters
        .iter()
        .map(|exporter| Ok((exporter.file_name(), exporter.render(data)?)))
        .collect::<Result<Vec<_>, ReportError>>()?;
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    rendered
        .into_iter()
        .map(|(name, bytes)| write_atomic(&dir.join(name), &bytes))
        .collect()
}

/// Writes `bytes` to a temporary sibling of `path`, then renames it over
/// `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{file_name}.partial"));
    let result = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    match result {
        Ok(()) => Ok(path.to_path_buf()),
        Err(source) => {
            // Best effort: the temporary file is useless now.
            let _ = std::fs::remove_file(&temp);
            Err(ReportError::Write {
                path: path.to_path_buf(),
                source,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::report_data;

    const EXPECTED_FILES: [&str; 12] = [
        "config.json",
        "turns.csv",
        "events.csv",
        "attempts.csv",
        "summary.json",
        "summary.md",
        "cpr_by_fault.svg",
        "cpr_by_fault.png",
        "clo.svg",
        "clo.png",
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
        assert_eq!(names(&paths), EXPECTED_FILES[4..]);
        assert!(!dir.path().join("events.csv").exists());
        assert!(!dir.path().join("config.json").exists());
    }

    #[test]
    fn unwritable_directory_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"not a directory").unwrap();
        let err = write_report(&blocker.join("report"), &report_data()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("file/report"), "{message}");
        assert!(message.starts_with("cannot write"), "{message}");
    }
}
