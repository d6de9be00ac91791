//! The evidence of one scorecard cell in `report.html`: the verdict and its
//! reason, every check measured against its bound, and every attempt the
//! upstreams logged for the case's requests, under the anchor the cell
//! links to.

use super::page::evidence_id;
use super::summary::{CaseEvidence, GradeSystem};
use cb_report::format::ms;
use cb_report::html::{escape, table, Cell};
use cb_semantics::verdict::Verdict;
use std::fmt::Write as _;

/// One case of one system: a `<details>` element with the evidence id the
/// scorecard links to (open when the case did not pass).
pub fn render(sys: &GradeSystem, case: &CaseEvidence, out: &mut String) {
    let open = if case.verdict == Verdict::Pass {
        ""
    } else {
        " open"
    };
    let _ = writeln!(
        out,
        "<details id=\"{id}\"{open}><summary><code>{c}</code>: {v}{r}</summary>\n<section class=\"evidence\">",
        id = evidence_id(&sys.name, &case.case),
        c = escape(&case.case),
        v = escape(case.verdict.as_str()),
        r = if case.reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", escape(&case.reason))
        },
    );
    let rows: Vec<Vec<Cell>> = case
        .checks
        .iter()
        .map(|k| {
            vec![
                Cell::html(format!("<code>{}</code>", escape(&k.check)), None),
                Cell::text(k.severity.as_str()),
                match (k.applicable, k.passed) {
                    (false, _) => Cell::html("n/a".into(), None),
                    (true, true) => Cell::html("held".into(), Some("pass")),
                    (true, false) => Cell::html("broken".into(), Some("fail")),
                },
                Cell::text(&k.value),
                Cell::text(&k.bound),
            ]
        })
        .collect();
    if !rows.is_empty() {
        out.push_str(&table(
            &["check", "severity", "", "measured", "bound"],
            &rows,
        ));
    }
    for note in &case.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    for (i, request) in case.requests.iter().enumerate() {
        let _ = writeln!(out, "<p>request {}: {}</p>", i + 1, escape(&request.client));
        let rows: Vec<Vec<Cell>> = request
            .attempts
            .iter()
            .map(|a| {
                vec![
                    Cell::text(a.role.as_str()),
                    Cell::num(&a.attempt.to_string()),
                    Cell::num(&ms(a.at_ms)),
                    Cell::num(&a.status.map_or("-".into(), |s| s.to_string())),
                    Cell::text(&a.detail),
                    Cell::text(&a.model),
                ]
            })
            .collect();
        if rows.is_empty() {
            out.push_str("<p class=\"note\">No upstream saw this request.</p>\n");
        } else {
            out.push_str(&table(
                &[
                    "upstream",
                    "attempt",
                    "arrived after",
                    "status",
                    "action",
                    "model",
                ],
                &rows,
            ));
        }
    }
    out.push_str("</section>\n</details>\n");
}
