//! `grade`: the suites' results over one systems file, folded into one
//! comparison. The suites run on their own (the command in
//! `commands/grade.rs` calls each); this module turns what they produced
//! into one [`GradeSummary`] ([`assemble`]), checks `--fail-under`
//! ([`gate`]), and writes the three files of a grade directory from that
//! summary alone: `summary.json` (schema `schema/grade.schema.json`),
//! `report.md` ([`markdown`]) and the self-contained `report.html`
//! ([`page`], each scorecard cell's target in [`evidence`]; what an
//! inconclusive case means, a cooldown or a system gone, in
//! [`unreached`]). It sits in the root package because it reads two
//! suites, and no suite may import another.

pub mod assemble;
pub mod evidence;
pub mod gate;
pub mod headline;
pub mod markdown;
pub mod page;
pub mod summary;
#[cfg(test)]
pub(crate) mod tests;
pub mod unreached;

pub use summary::{GradeSummary, GRADE_KIND};

use cb_report::{write_files, Exporter, ReportError};
use std::path::{Path, PathBuf};

/// The grade's own summary file.
pub const SUMMARY_FILE: &str = "summary.json";
/// The page.
pub const HTML_FILE: &str = "report.html";
/// The Markdown report.
pub const MARKDOWN_FILE: &str = "report.md";

struct SummaryJson;
struct ReportMarkdown;
struct ReportHtml;

impl Exporter<GradeSummary> for SummaryJson {
    fn file_name(&self) -> &'static str {
        SUMMARY_FILE
    }
    fn render(&self, data: &GradeSummary) -> Result<Vec<u8>, ReportError> {
        cb_report::json::pretty(SUMMARY_FILE, data)
    }
}

impl Exporter<GradeSummary> for ReportMarkdown {
    fn file_name(&self) -> &'static str {
        MARKDOWN_FILE
    }
    fn render(&self, data: &GradeSummary) -> Result<Vec<u8>, ReportError> {
        Ok(markdown::render(data).into_bytes())
    }
}

impl Exporter<GradeSummary> for ReportHtml {
    fn file_name(&self) -> &'static str {
        HTML_FILE
    }
    fn render(&self, data: &GradeSummary) -> Result<Vec<u8>, ReportError> {
        Ok(page::render(data).into_bytes())
    }
}

/// Writes summary.json, report.md and report.html into `dir` and returns
/// their paths (through the one file manager: atomic, redacted).
///
/// # Errors
/// [`ReportError`] naming the file.
pub fn write_grade(dir: &Path, summary: &GradeSummary) -> Result<Vec<PathBuf>, ReportError> {
    let exporters: Vec<Box<dyn Exporter<GradeSummary>>> = vec![
        Box::new(SummaryJson),
        Box::new(ReportMarkdown),
        Box::new(ReportHtml),
    ];
    write_files(dir, summary, &exporters)
}

/// Whether `dir` holds a grade (its summary.json says `"kind": "grade"`).
pub fn is_grade_dir(dir: &Path) -> bool {
    let Ok(bytes) = std::fs::read(dir.join(SUMMARY_FILE)) else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| {
            v.get("kind")
                .and_then(|k| k.as_str())
                .map(|k| k == GRADE_KIND)
        })
        .unwrap_or(false)
}

/// Reads a grade directory's summary.json back.
///
/// # Errors
/// [`ReportError`] naming the file when it cannot be read or is not a
/// grade summary of this version.
pub fn read_grade(dir: &Path) -> Result<GradeSummary, ReportError> {
    cb_report::json::read(&dir.join(SUMMARY_FILE))
}
