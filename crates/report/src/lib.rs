//! The report machinery every suite's result goes through: one exporter
//! trait and the manager that owns the files ([`exporter`]), one
//! fixed-width table renderer ([`table`]), the number formats ([`format`](mod@format)),
//! CSV and JSON helpers, chart rendering to SVG and PNG ([`plot`]), the
//! pieces of a self-contained HTML page ([`html`]) and its inline SVG charts,
//! text a peer sent made safe for Markdown and the terminal ([`escape`])
//! ([`svg`]), and
//! the one calibration piece: labelled sets, confusion matrices, agreement
//! and kappa ([`calibration`]).
//!
//! A suite defines what its report holds and one exporter per file; this
//! module never knows which suite it is writing for.

pub mod calibration;
pub mod csv;
pub mod dir;
pub mod escape;
pub mod exporter;
pub mod format;
pub mod html;
pub mod json;
pub mod plot;
pub mod svg;
pub mod table;

pub use exporter::{write_files, Exporter, ReportError};
pub use table::{Align, Table};
