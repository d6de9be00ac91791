//! `report.md`: the grade for people who read Markdown (a pull request, a
//! terminal): the systems with CPR and clean CPR, the scorecard across
//! systems, the contract violation rates and what was not measured. The
//! evidence of each case is in `report.html` and in the semantics report.

use super::summary::GradeSummary;
use cb_report::format::{interval, rate_with_counts};
use std::fmt::Write as _;

/// A Markdown table row; `|` inside a cell is escaped.
fn row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn rule(columns: usize) -> String {
    format!("|{}\n", "---|".repeat(columns))
}

/// The whole file.
pub fn render(s: &GradeSummary) -> String {
    let mut out = String::from("# continuity-bench grade\n\n");
    let _ = writeln!(
        out,
        "{} {} · seed {} · written {} · systems {}\n",
        s.tool,
        s.version,
        s.seed,
        s.written_at,
        s.systems_file
            .as_deref()
            .unwrap_or("from the command-line flags")
    );
    if s.interrupted {
        let _ = writeln!(
            out,
            "**Interrupted ({})**: the figures cover what finished.\n",
            crate::stop::Stop::name_of(s.interrupted_by)
        );
    }
    if let Some(gate) = &s.gate {
        let _ = writeln!(
            out,
            "`--fail-under {}`: {}\n",
            gate.spec,
            if gate.passed() { "met" } else { "**NOT met**" }
        );
        for c in gate.checks.iter().filter(|c| !c.passed) {
            let _ = writeln!(
                out,
                "- {}: {} measured {}",
                c.system, c.threshold, c.measured
            );
        }
        if !gate.passed() {
            out.push('\n');
        }
    }
    let lines = super::headline::headlines(s);
    if !lines.is_empty() {
        out.push_str("## In one sentence\n\n");
        out.push_str(&row(&[
            "system".into(),
            "what the figures below say".into(),
        ]));
        out.push_str(&rule(2));
        for (sys, line) in lines {
            out.push_str(&row(&[sys.name.clone(), line]));
        }
        out.push('\n');
    }
    out.push_str("## Systems\n\n");
    let headers = [
        "system",
        "profile",
        "failover/planned",
        "CPR",
        "95 % Wilson",
        "clustered 95 %",
        "clean CPR",
        "clean 95 % Wilson",
    ];
    out.push_str(&row(&headers.map(str::to_string)));
    out.push_str(&rule(headers.len()));
    for sys in &s.systems {
        for f in &sys.continuity {
            out.push_str(&row(&[
                sys.name.clone(),
                f.profile.clone(),
                format!("{}/{}", f.events, f.planned),
                rate_with_counts(&f.cpr),
                interval(&f.cpr.wilson),
                interval(&f.cpr_clustered),
                rate_with_counts(&f.clean_cpr),
                interval(&f.clean_cpr.wilson),
            ]));
        }
    }
    out.push('\n');
    let past: Vec<String> = s
        .systems
        .iter()
        .flat_map(|sys| {
            sys.continuity.iter().filter_map(move |f| {
                let p = f.past_fault.as_ref()?;
                Some(row(&[
                    sys.name.clone(),
                    f.profile.clone(),
                    rate_with_counts(&p.survival.rate),
                    rate_with_counts(&p.return_to_primary.rate),
                    rate_with_counts(&p.tool_integrity.rate),
                ]))
            })
        })
        .collect();
    if !past.is_empty() {
        out.push_str("## Past the fault\n\n");
        let headers = [
            "system",
            "profile",
            "conversation survival",
            "return to primary",
            "tool-call integrity",
        ];
        out.push_str(&row(&headers.map(str::to_string)));
        out.push_str(&rule(headers.len()));
        out.push_str(&past.concat());
        out.push('\n');
    }
    if let Some(report) = &s.overhead {
        out.push_str("## Overhead when nothing fails\n\n");
        let headers = ["system", "added p50 / p99, ms (plain)", "peak RSS"];
        out.push_str(&row(&headers.map(str::to_string)));
        out.push_str(&rule(headers.len()));
        for sys in &s.systems {
            let added = cb_overhead::render::added_by_concurrency(report, &sys.name);
            // Escaped whole (a failure's reason is a peer's text), not by
            // `row`, which escapes pipes only.
            let cells = [
                sys.name.clone(),
                added,
                cb_overhead::render::peak_rss_cell(report, &sys.name),
            ]
            .map(|c| cb_report::escape::markdown_cell(&c));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
        out.push_str(&cb_overhead::render::render(
            report,
            cb_overhead::render::Target::Markdown,
        ));
        out.push('\n');
    }
    if !s.cases.is_empty() {
        out.push_str("## Scorecard\n\n");
        for sys in &s.systems {
            if let Some(c) = sys.scorecard {
                let honesty = sys
                    .honesty
                    .map_or_else(String::new, |h| format!("; honest claims: {}", h.line()));
                let load = sys.load.as_ref().map_or_else(String::new, |l| {
                    format!("; attempts per request under load: {}", l.overview())
                });
                let _ = writeln!(
                    out,
                    "- {}: {} pass / {} partial / {} safe / {} fail, {} inconclusive{honesty}{load}",
                    sys.name, c.pass, c.partial, c.safe, c.fail, c.inconclusive
                );
            }
        }
        out.push('\n');
        let mut headers = vec!["case".to_string()];
        headers.extend(s.systems.iter().map(|sys| sys.name.clone()));
        out.push_str(&row(&headers));
        out.push_str(&rule(headers.len()));
        for case in &s.cases {
            let mut cells = vec![if case.scored {
                format!("`{}`", case.case)
            } else {
                format!("`{}` (not scored)", case.case)
            }];
            for sys in &s.systems {
                cells.push(
                    sys.cases
                        .iter()
                        .find(|c| c.case == case.case)
                        .map_or("not run".into(), |c| c.verdict.as_str().to_string()),
                );
            }
            out.push_str(&row(&cells));
        }
        out.push('\n');
    }
    out.push_str("## Contract violation rates\n\n");
    let headers = [
        "system",
        "profile",
        "contract",
        "applied",
        "undetermined",
        "broken",
        "95 % Wilson",
    ];
    out.push_str(&row(&headers.map(str::to_string)));
    out.push_str(&rule(headers.len()));
    for sys in &s.systems {
        for f in &sys.continuity {
            for c in &f.contracts {
                out.push_str(&row(&[
                    sys.name.clone(),
                    f.profile.clone(),
                    format!("`{}`", c.contract.as_str()),
                    c.applied.to_string(),
                    c.undetermined.to_string(),
                    rate_with_counts(&c.broken),
                    interval(&c.broken.wilson),
                ]));
            }
        }
    }
    out.push('\n');
    for p in &s.profiles {
        if let Some(line) = super::headline::same_contract_rates(s, &p.profile) {
            let _ = writeln!(out, "{line}\n");
        }
    }
    out.push_str("## Not measured\n\n");
    for sys in &s.systems {
        if sys.unmeasured.is_empty() {
            let _ = writeln!(out, "- {}: everything was measured", sys.name);
        }
        for note in &sys.unmeasured {
            let _ = writeln!(out, "- {}: {note}", sys.name);
        }
    }
    out
}
