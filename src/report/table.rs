//! The summary table printed on stdout.

use crate::summary::Summary;

/// The table.
pub fn render_table(_summary: &Summary) -> String {
    todo!()
}
