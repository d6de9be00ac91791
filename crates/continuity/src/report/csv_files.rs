//! turns.csv, events.csv and attempts.csv of a `run` report: every recorded
//! row, written through [`cb_report::csv`] so the columns are the record
//! fields, and read back by `report DIR`. A turn's typed lists (the
//! conversations it bled from, the contracts checked) are written one field
//! each by `TurnRow`, the one place that knows turns.csv's text.

use super::ReportData;
use crate::record::EventRecord;
use cb_base::contract::{ContractCheck, ContractName, Outcome};
use cb_base::record::{bounded_answer, AttemptRecord, TurnRecord};
use cb_report::{csv, Exporter, ReportError};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
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
pub const EVENT_COLUMNS: [&str; 23] = [
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
    "probes",
    "outage_end",
    "served_after",
    "tools",
    "tools_reason",
];

/// Columns added to events.csv since the first release: a file without
/// them (an older report) is still read, the field taking its default.
pub const EVENT_COLUMNS_ADDED: [&str; 5] = [
    "probes",
    "outage_end",
    "served_after",
    "tools",
    "tools_reason",
];

/// Columns of attempts.csv, in order (the fields of [`AttemptRecord`]).
pub const ATTEMPT_COLUMNS: [&str; 22] = [
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
    "tools",
];

/// Columns added to attempts.csv after the first release: a file without
/// them (an older report) is still read, the field taking its default.
pub const ATTEMPT_COLUMNS_ADDED: [&str; 6] = [
    "params",
    "degradation",
    "answered_by",
    "answer",
    "provider_error",
    "tools",
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

impl Exporter<ReportData> for TurnsCsv {
    fn file_name(&self) -> &'static str {
        TURNS_FILE
    }
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        csv::write(
            TURNS_FILE,
            &TURN_COLUMNS,
            data.turns.iter().map(TurnRow::from),
        )
    }
    fn write_to(&self, data: &ReportData, out: &mut dyn Write) -> Result<(), ReportError> {
        csv::write_to(
            out,
            TURNS_FILE,
            &TURN_COLUMNS,
            data.turns.iter().map(TurnRow::from),
        )
    }
}
csv_exporter!(EventsCsv, EVENTS_FILE, EVENT_COLUMNS, events);
csv_exporter!(AttemptsCsv, ATTEMPTS_FILE, ATTEMPT_COLUMNS, attempts);

/// Reads turns.csv of a report directory.
///
/// # Errors
/// [`ReportError`] naming the file, and the row and column when one is bad.
pub fn read_turns(dir: &Path) -> Result<Vec<TurnRecord>, ReportError> {
    let rows: Vec<TurnRow<'static>> =
        csv::read(&dir.join(TURNS_FILE), &TURN_COLUMNS, &TURN_COLUMNS_ADDED)?;
    Ok(rows.into_iter().map(TurnRecord::from).collect())
}

/// Reads events.csv of a report directory.
///
/// # Errors
/// As [`read_turns`].
pub fn read_events(dir: &Path) -> Result<Vec<EventRecord>, ReportError> {
    csv::read(&dir.join(EVENTS_FILE), &EVENT_COLUMNS, &EVENT_COLUMNS_ADDED)
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

/// One row of turns.csv: a [`TurnRecord`] as the file holds it. The answer
/// is cut at [`cb_base::record::ANSWER_BOUND`] characters (its full length
/// beside it); the conversations it bled from are `;`-separated; the
/// contracts that applied are `name=outcome` pairs, the broken ones'
/// names and `name: reason` texts are written beside them (`;` and `; `).
/// An undetermined outcome's reason is not written: read back, it is empty.
#[derive(Debug, Serialize, Deserialize)]
struct TurnRow<'a> {
    run: u32,
    system: Cow<'a, str>,
    conversation: Cow<'a, str>,
    turn: u32,
    turns: u32,
    is_final: bool,
    messages_sent: u32,
    sent_at_ms: f64,
    status: Option<u16>,
    latency_ms: f64,
    answer: Cow<'a, str>,
    #[serde(default)]
    answer_chars: u64,
    error: Option<Cow<'a, str>>,
    #[serde(default)]
    bleed_from: String,
    #[serde(default)]
    ttfb_ms: Option<f64>,
    #[serde(default)]
    ttft_ms: Option<f64>,
    #[serde(default)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    contracts: String,
    #[serde(default)]
    contract_violations: String,
    #[serde(default)]
    contract_reasons: String,
}

impl<'a> From<&'a TurnRecord> for TurnRow<'a> {
    fn from(t: &'a TurnRecord) -> Self {
        let join = |items: Vec<String>, by: &str| items.join(by);
        TurnRow {
            run: t.run,
            system: Cow::Borrowed(&t.system),
            conversation: Cow::Borrowed(&t.conversation),
            turn: t.turn,
            turns: t.turns,
            is_final: t.is_final,
            messages_sent: t.messages_sent,
            sent_at_ms: t.sent_at_ms,
            status: t.status,
            latency_ms: t.latency_ms,
            answer: Cow::Borrowed(bounded_answer(&t.answer)),
            answer_chars: t.answer_chars,
            error: t.error.as_deref().map(Cow::Borrowed),
            bleed_from: t.bleed_from.join(";"),
            ttfb_ms: t.ttfb_ms,
            ttft_ms: t.ttft_ms,
            finish_reason: t.finish_reason.as_deref().map(Cow::Borrowed),
            contracts: join(
                t.contracts
                    .iter()
                    .map(|c| format!("{}={}", c.name, c.outcome.as_str()))
                    .collect(),
                ";",
            ),
            contract_violations: join(t.violations().map(|n| n.to_string()).collect(), ";"),
            contract_reasons: join(
                t.contracts
                    .iter()
                    .filter(|c| c.failed())
                    .map(|c| format!("{}: {}", c.name, c.outcome.reason().unwrap_or_default()))
                    .collect(),
                "; ",
            ),
        }
    }
}

impl From<TurnRow<'static>> for TurnRecord {
    fn from(row: TurnRow<'static>) -> Self {
        let failed: Vec<&str> = row
            .contract_violations
            .split(';')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        let reasons = failure_reasons(&row.contract_reasons, &failed);
        let contracts = row
            .contracts
            .split(';')
            .filter_map(|item| {
                let (name, outcome) = item.split_once('=')?;
                let name = ContractName::from_name(name.trim())?;
                let reason = || {
                    reasons
                        .iter()
                        .find(|(n, _)| *n == name.as_str())
                        .map(|(_, r)| r.to_string())
                        .unwrap_or_default()
                };
                let outcome = match outcome.trim() {
                    "pass" => Outcome::Pass,
                    "fail" => Outcome::fail(reason()),
                    "undetermined" => Outcome::undetermined(String::new()),
                    _ => return None,
                };
                Some(ContractCheck { name, outcome })
            })
            .collect();
        TurnRecord {
            run: row.run,
            system: row.system.into_owned(),
            conversation: row.conversation.into_owned(),
            turn: row.turn,
            turns: row.turns,
            is_final: row.is_final,
            messages_sent: row.messages_sent,
            sent_at_ms: row.sent_at_ms,
            status: row.status,
            latency_ms: row.latency_ms,
            answer: row.answer.into_owned(),
            answer_chars: row.answer_chars,
            error: row.error.map(Cow::into_owned),
            bleed_from: row
                .bleed_from
                .split(';')
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .map(str::to_string)
                .collect(),
            ttfb_ms: row.ttfb_ms,
            ttft_ms: row.ttft_ms,
            finish_reason: row.finish_reason.map(Cow::into_owned),
            contracts,
        }
    }
}

/// The `contract_reasons` field read back: the reason of each name in
/// `failed` (the `contract_violations` field, in the same order, names this
/// version does not know included), the text after `name: ` up to `; ` and
/// the next failed name (a reason may itself hold `; `, but not `; ` and
/// the next failed name and `: `).
fn failure_reasons<'f, 'n>(field: &'f str, failed: &[&'n str]) -> Vec<(&'n str, &'f str)> {
    let mut out = Vec::new();
    let mut rest = field;
    for (i, name) in failed.iter().enumerate() {
        let Some(text) = rest.strip_prefix(name).and_then(|r| r.strip_prefix(": ")) else {
            break;
        };
        let end = failed
            .get(i + 1)
            .and_then(|next| text.find(&format!("; {next}: ")))
            .unwrap_or(text.len());
        out.push((*name, &text[..end]));
        rest = text[end..].strip_prefix("; ").unwrap_or("");
    }
    out
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
            "run,system,conversation,turns,turn,stage,stage_reason,fault_mode,client_status,latency_ms,verdict,method,reason,bleed_from,contract_violations,answer_excerpt,primary_attempts,fallback_attempts,probes,outage_end,served_after,tools,tools_reason"
        );
        assert_eq!(
            header(&AttemptsCsv.render(&data).unwrap()),
            "run,system,role,conversation,turn,attempt,arrived_ms,action,status,retry_after_ms,messages,approx_tokens,model,stream,params,degradation,client_gave_up,duration_ms,answered_by,answer,provider_error,tools"
        );
    }

    #[test]
    fn events_written_before_the_past_the_fault_columns_are_still_read() {
        let old = EVENT_COLUMNS[..18].join(",");
        let row = "1,history,c001,10,10,failover,,TIMEOUT,200,12.5,preserved,fast_path,ok,,,Your sister is called Oriane.,1,1";
        let text = format!("{old}\n{row}\n");
        let events: Vec<EventRecord> = csv::parse(
            Path::new("events.csv"),
            &EVENT_COLUMNS,
            &EVENT_COLUMNS_ADDED,
            text.as_bytes(),
        )
        .unwrap();
        assert_eq!(events[0].probes, Default::default());
        assert_eq!(events[0].tools, cb_base::record::ToolCalls::None);
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
        assert_eq!(
            serde_header(&TurnRow::from(&data.turns[0])),
            TURN_COLUMNS.join(",")
        );
        assert_eq!(serde_header(&data.events[0]), EVENT_COLUMNS.join(","));
        assert_eq!(serde_header(&data.attempts[0]), ATTEMPT_COLUMNS.join(","));
    }

    fn turn(answer: String) -> TurnRecord {
        TurnRecord {
            run: 1,
            system: "g".into(),
            conversation: "c001".into(),
            turn: 1,
            turns: 7,
            messages_sent: 2,
            status: Some(200),
            latency_ms: 1.0,
            answer_chars: answer.chars().count() as u64,
            answer,
            ..TurnRecord::default()
        }
    }

    fn written(turns: Vec<TurnRecord>) -> Vec<u8> {
        let mut data = report_data();
        data.turns = turns;
        TurnsCsv.render(&data).unwrap()
    }

    fn read_back(bytes: &[u8]) -> Vec<TurnRecord> {
        let rows: Vec<TurnRow<'static>> = csv::parse(
            Path::new("turns.csv"),
            &TURN_COLUMNS,
            &TURN_COLUMNS_ADDED,
            bytes,
        )
        .unwrap();
        rows.into_iter().map(TurnRecord::from).collect()
    }

    #[test]
    fn a_long_answer_is_written_cut_with_its_full_length() {
        // Commas force CSV quoting, which once made a long field quadratic
        // to write: 10 MB must be written as a bounded row. The row's size
        // is the check (a bounded field is written in bounded time); a
        // wall-clock bound would measure the machine, not the code.
        let long = "é, ".repeat(3_500_000);
        let record = turn(long.clone());
        let bytes = written(vec![record.clone()]);
        assert!(
            bytes.len() < 4 * cb_base::record::ANSWER_BOUND + 500,
            "{} bytes",
            bytes.len()
        );
        let back = read_back(&bytes).remove(0);
        assert_eq!(back.answer.chars().count(), cb_base::record::ANSWER_BOUND);
        assert!(long.starts_with(&back.answer));
        assert_eq!(back.answer_chars, 10_500_000);
        let mut bounded = record;
        bounded.bound_answer();
        assert_eq!(bounded, back);
    }

    #[test]
    fn typed_lists_are_written_as_the_documented_fields_and_read_back() {
        let mut t = turn("Bonjour, voici la réponse.".into());
        t.bleed_from = vec!["c002".into(), "c017".into()];
        t.contracts = vec![
            ContractCheck {
                name: ContractName::JunkPrefix,
                outcome: Outcome::fail("starts with \",\"; then text; language: not a name"),
            },
            ContractCheck {
                name: ContractName::Language,
                outcome: Outcome::undetermined("too short to judge"),
            },
            ContractCheck {
                name: ContractName::Empty,
                outcome: Outcome::Pass,
            },
            ContractCheck {
                name: ContractName::Truncated,
                outcome: Outcome::fail("finish_reason length"),
            },
        ];
        let bytes = written(vec![t.clone()]);
        let text = String::from_utf8(bytes.clone()).unwrap();
        let row = text.lines().nth(1).unwrap();
        assert!(row.contains(",c002;c017,"), "{row}");
        assert!(
            row.contains(",junk_prefix=fail;language=undetermined;empty=pass;truncated=fail,junk_prefix;truncated,"),
            "{row}"
        );
        assert!(
            row.ends_with("; truncated: finish_reason length\""),
            "{row}"
        );
        // An undetermined outcome's reason is not written (documented):
        // read back, it is empty; everything else comes back whole.
        t.contracts[1].outcome = Outcome::undetermined("");
        assert_eq!(read_back(&bytes), vec![t]);
        let failed = ["junk_prefix", "from_a_newer_version", "language"];
        assert_eq!(
            failure_reasons(
                "junk_prefix: a; b; from_a_newer_version: x; language: c",
                &failed
            ),
            vec![
                ("junk_prefix", "a; b"),
                ("from_a_newer_version", "x"),
                ("language", "c")
            ]
        );
        assert!(failure_reasons("", &failed).is_empty());
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
                .starts_with("e.csv row 1: 3 fields, expected 23"),
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
