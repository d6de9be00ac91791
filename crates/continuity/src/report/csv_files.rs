//! turns.csv, events.csv and attempts.csv of a `run` report: every recorded
//! row, written through [`cb_report::csv`] so the columns are the record
//! fields, and read back by `report DIR`.

use super::ReportData;
use crate::record::EventRecord;
use cb_base::record::{AttemptRecord, TurnRecord};
use cb_report::{csv, Exporter, ReportError};
use std::io::Write;
use std::path::Path;

/// Columns of turns.csv, in order (the fields of [`TurnRecord`]).
pub const TURN_COLUMNS: [&str; 20] = [
    "run",
    "system",
    "conversation",
    "turn",
    "turns",
    "is_final",
    "messages_sent",
    "sent_at_ms",
    "status",
    "latency_ms",
    "answer",
    "answer_chars",
    "error",
    "bleed_from",
    "ttfb_ms",
    "ttft_ms",
    "finish_reason",
    "contracts",
    "contract_violations",
    "contract_reasons",
];

/// Columns added to turns.csv since the first release: a file without them
/// (an older report) is still read, the field taking its default.
pub const TURN_COLUMNS_ADDED: [&str; 8] = [
    "answer_chars",
    "bleed_from",
    "ttfb_ms",
    "ttft_ms",
    "finish_reason",
    "contracts",
    "contract_violations",
    "contract_reasons",
];

/// Columns of events.csv, in order (the fields of [`EventRecord`]).
pub const EVENT_COLUMNS: [&str; 18] = [
    "run",
    "system",
    "conversation",
    "turns",
    "turn",
    "stage",
    "stage_reason",
    "fault_mode",
    "client_status",
    "latency_ms",
    "verdict",
    "method",
    "reason",
    "bleed_from",
    "contract_violations",
    "answer_excerpt",
    "primary_attempts",
    "fallback_attempts",
];

/// Columns of attempts.csv, in order (the fields of [`AttemptRecord`]).
pub const ATTEMPT_COLUMNS: [&str; 21] = [
    "run",
    "system",
    "role",
    "conversation",
    "turn",
    "attempt",
    "arrived_ms",
    "action",
    "status",
    "retry_after_ms",
    "messages",
    "approx_tokens",
    "model",
    "stream",
    "params",
    "degradation",
    "client_gave_up",
    "duration_ms",
    "answered_by",
    "answer",
    "provider_error",
];

/// Columns added to attempts.csv after the first release: a file without
/// them (an older report) is still read, the field taking its default.
pub const ATTEMPT_COLUMNS_ADDED: [&str; 5] = [
    "params",
    "degradation",
    "answered_by",
    "answer",
    "provider_error",
];

/// File name of the turn rows.
pub const TURNS_FILE: &str = "turns.csv";
/// File name of the event rows.
pub const EVENTS_FILE: &str = "events.csv";
/// File name of the attempt rows.
pub const ATTEMPTS_FILE: &str = "attempts.csv";

/// Writes turns.csv.
#[derive(Debug, Clone, Copy)]
pub struct TurnsCsv;

/// Writes events.csv.
#[derive(Debug, Clone, Copy)]
pub struct EventsCsv;

/// Writes attempts.csv.
#[derive(Debug, Clone, Copy)]
pub struct AttemptsCsv;

/// A CSV exporter of one of [`ReportData`]'s row lists, under its file
/// name and columns.
macro_rules! csv_exporter {
    ($exporter:ty, $file:expr, $columns:expr, $rows:ident) => {
        impl Exporter<ReportData> for $exporter {
            fn file_name(&self) -> &'static str {
                $file
            }
            fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
                csv::write($file, &$columns, &data.$rows)
            }
            fn write_to(&self, data: &ReportData, out: &mut dyn Write) -> Result<(), ReportError> {
                csv::write_to(out, $file, &$columns, &data.$rows)
            }
        }
    };
}

csv_exporter!(TurnsCsv, TURNS_FILE, TURN_COLUMNS, turns);
csv_exporter!(EventsCsv, EVENTS_FILE, EVENT_COLUMNS, events);
csv_exporter!(AttemptsCsv, ATTEMPTS_FILE, ATTEMPT_COLUMNS, attempts);

/// Reads turns.csv of a report directory.
///
/// # Errors
/// [`ReportError`] naming the file, and the row and column when one is bad.
pub fn read_turns(dir: &Path) -> Result<Vec<TurnRecord>, ReportError> {
    csv::read(&dir.join(TURNS_FILE), &TURN_COLUMNS, &TURN_COLUMNS_ADDED)
}

/// Reads events.csv of a report directory.
///
/// # Errors
/// As [`read_turns`].
pub fn read_events(dir: &Path) -> Result<Vec<EventRecord>, ReportError> {
    csv::read(&dir.join(EVENTS_FILE), &EVENT_COLUMNS, &[])
}

/// Reads attempts.csv of a report directory.
///
/// # Errors
/// As [`read_turns`].
pub fn read_attempts(dir: &Path) -> Result<Vec<AttemptRecord>, ReportError> {
    csv::read(
        &dir.join(ATTEMPTS_FILE),
        &ATTEMPT_COLUMNS,
        &ATTEMPT_COLUMNS_ADDED,
    )
}

#[cfg(test)]
mod tests {
    use super::super::fixture::report_data;
    use super::*;
    use serde::Serialize;

    fn header(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes)
            .lines()
            .next()
            .unwrap()
            .to_string()
    }

    #[test]
    fn headers_are_exactly_the_documented_columns() {
        let data = report_data();
        assert_eq!(
            header(&TurnsCsv.render(&data).unwrap()),
            "run,system,conversation,turn,turns,is_final,messages_sent,sent_at_ms,status,latency_ms,answer,answer_chars,error,bleed_from,ttfb_ms,ttft_ms,finish_reason,contracts,contract_violations,contract_reasons"
        );
        assert_eq!(
            header(&EventsCsv.render(&data).unwrap()),
            "run,system,conversation,turns,turn,stage,stage_reason,fault_mode,client_status,latency_ms,verdict,method,reason,bleed_from,contract_violations,answer_excerpt,primary_attempts,fallback_attempts"
        );
        assert_eq!(
            header(&AttemptsCsv.render(&data).unwrap()),
            "run,system,role,conversation,turn,attempt,arrived_ms,action,status,retry_after_ms,messages,approx_tokens,model,stream,params,degradation,client_gave_up,duration_ms,answered_by,answer,provider_error"
        );
    }

    #[test]
    fn attempts_written_before_params_existed_are_still_read() {
        let old = "run,system,role,conversation,turn,attempt,arrived_ms,action,status,retry_after_ms,messages,approx_tokens,model,stream,client_gave_up,duration_ms\n\
                   1,history,primary,c001,7,1,12.5,ok,200,,14,300,continuity-sim,false,false,3.0\n";
        let rows: Vec<AttemptRecord> = csv::parse(
            Path::new("attempts.csv"),
            &ATTEMPT_COLUMNS,
            &ATTEMPT_COLUMNS_ADDED,
            old.as_bytes(),
        )
        .unwrap();
        assert_eq!(rows.len(), 1);
        assert!(rows[0].params.is_empty());
        assert_eq!(rows[0].messages, 14);
        // Any other missing column is still an error.
        let cut = old
            .replacen(",client_gave_up", "", 1)
            .replacen(",false,3.0", ",3.0", 1);
        let err = csv::parse::<AttemptRecord>(
            Path::new("attempts.csv"),
            &ATTEMPT_COLUMNS,
            &ATTEMPT_COLUMNS_ADDED,
            cut.as_bytes(),
        )
        .unwrap_err();
        assert!(matches!(err, ReportError::Columns { .. }), "{err}");
    }

    #[test]
    fn serde_field_order_matches_the_documented_columns() {
        // A field added to a record without updating the column list would
        // shift every later column; serialising one row with serde's own
        // header catches it.
        let data = report_data();
        fn serde_header<T: Serialize>(row: &T) -> String {
            let mut w = ::csv::Writer::from_writer(Vec::new());
            w.serialize(row).unwrap();
            header(&w.into_inner().unwrap())
        }
        assert_eq!(serde_header(&data.turns[0]), TURN_COLUMNS.join(","));
        assert_eq!(serde_header(&data.events[0]), EVENT_COLUMNS.join(","));
        assert_eq!(serde_header(&data.attempts[0]), ATTEMPT_COLUMNS.join(","));
    }

    #[test]
    fn event_row_uses_the_file_names_of_enums() {
        let data = report_data();
        let text = String::from_utf8(EventsCsv.render(&data).unwrap()).unwrap();
        let row = text
            .lines()
            .find(|l| l.starts_with("1,history,c001,"))
            .unwrap();
        assert!(row.contains(",TIMEOUT,200,"), "{row}");
        assert!(row.contains(",preserved,fast_path,"), "{row}");
    }

    #[test]
    fn empty_rows_still_have_a_header() {
        let mut data = report_data();
        data.events.clear();
        let text = String::from_utf8(EventsCsv.render(&data).unwrap()).unwrap();
        assert_eq!(text, format!("{}\n", EVENT_COLUMNS.join(",")));
        let back: Vec<EventRecord> = csv::parse(
            Path::new("events.csv"),
            &EVENT_COLUMNS,
            &[],
            text.as_bytes(),
        )
        .unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn misspelt_verdict_names_file_row_and_column() {
        let data = report_data();
        let text = String::from_utf8(EventsCsv.render(&data).unwrap()).unwrap();
        let broken = text.replacen(",preserved,", ",presrved,", 1);
        let row = broken.lines().position(|l| l.contains("presrved")).unwrap();
        let err = csv::parse::<EventRecord>(
            Path::new("reports/x/events.csv"),
            &EVENT_COLUMNS,
            &[],
            broken.as_bytes(),
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "reports/x/events.csv row {row}: column verdict: invalid value \"presrved\""
            )),
            "{message}"
        );
        assert!(
            message.ends_with("regenerate it with `continuity-bench run`"),
            "{message}"
        );
    }

    #[test]
    fn bad_number_and_short_row_are_reported() {
        let text = format!("{}\n1,history,c1\n", EVENT_COLUMNS.join(","));
        let err =
            csv::parse::<EventRecord>(Path::new("e.csv"), &EVENT_COLUMNS, &[], text.as_bytes())
                .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("e.csv row 1: 3 fields, expected 18"),
            "{err}"
        );

        let data = report_data();
        let good = String::from_utf8(EventsCsv.render(&data).unwrap()).unwrap();
        let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
        let row = lines
            .iter()
            .position(|l| l.starts_with("1,history,c001,"))
            .unwrap();
        lines[row] = lines[row].replacen("1,", "one,", 1);
        let err = csv::parse::<EventRecord>(
            Path::new("e.csv"),
            &EVENT_COLUMNS,
            &[],
            lines.join("\n").as_bytes(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("e.csv row {row}: column run:")),
            "{err}"
        );
    }

    #[test]
    fn wrong_header_is_rejected_with_both_headers() {
        let text = "run,system\n1,history\n";
        let err =
            csv::parse::<EventRecord>(Path::new("e.csv"), &EVENT_COLUMNS, &[], text.as_bytes())
                .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("columns are [run,system]"), "{message}");
        assert!(
            message.contains("expected [run,system,conversation,"),
            "{message}"
        );
    }
}
