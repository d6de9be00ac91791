//! Report directory: one exporter per file format behind one trait, a
//! manager that owns the files, the plots, the stdout table, and reading a
//! report directory back for `report DIR`.
//!
//! Files: config.json, turns.csv, events.csv, attempts.csv, summary.json,
//! summary.md, and cpr_by_fault / clo / latency_by_length as SVG and PNG.

mod charts;
pub mod csv_files;
pub mod exporter;
pub mod format;
pub mod json;
pub mod markdown;
pub mod plot_data;
pub mod plots;
pub mod read;
pub mod table;

#[cfg(test)]
pub(crate) mod fixture;

pub use exporter::{write_report, write_summary_files, Exporter, ReportData, ReportError};
pub use read::{read_report, summary_context, ReportRows};
pub use table::render_table;
