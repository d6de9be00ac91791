//! What the command prints after every round: the round's summary table
//! (per route: contracts passed, failed, undetermined, state, time left in
//! quarantine) and one line per decision, in the words of the log.

use super::machine::RoundDecisions;
use super::record::{LogRecord, RecordKind};
use super::summary::{render_markdown, RoundSummary};
use std::fmt::Write as _;

/// One decision as a line: `would quarantine dune/fp8 (junk_prefix) until
/// ...: evidence`.
pub fn decision_line(record: &LogRecord) -> String {
    let contract = record
        .contract
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    let until = record
        .until
        .map(|t| format!(" until {t}"))
        .unwrap_or_default();
    format!(
        "{} {}{contract}{until}: {}",
        record.action, record.route, record.evidence
    )
}

/// The text printed after a round: the summary, then its decisions
/// (transport freezes are in the table's notes already).
pub fn render_round(summary: &RoundSummary, decisions: &RoundDecisions) -> String {
    let mut out = render_markdown(summary);
    let lines: Vec<String> = decisions
        .records
        .iter()
        .filter(|r| r.kind != RecordKind::Frozen)
        .map(decision_line)
        .collect();
    if !lines.is_empty() {
        out.push('\n');
        for line in lines {
            // `writeln!` into a String cannot fail.
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}
