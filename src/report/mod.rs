//! Report directory: one exporter per file format behind one trait, a manager
//! that owns the files, and the plots.

pub mod csv_files;
pub mod exporter;
pub mod markdown;
pub mod plots;
pub mod table;

pub use exporter::{read_report, write_report, Exporter, ReportData, ReportError};
pub use table::render_table;
