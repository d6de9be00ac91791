//! `report.html`: the grade as one self-contained page (inline CSS and SVG,
//! no script, nothing fetched). Per system: CPR and clean CPR with their
//! intervals, the scorecard with each cell linked to its evidence from the
//! attempt log (an anchor in the page), the contract violation rates,
//! latency by length, and what could not be measured. Rendered from the
//! [`GradeSummary`] alone, so `report DIR` renders it again from
//! `summary.json`.

use super::summary::{ContinuityFigures, GradeSummary, GradeSystem, LengthLatency};
use cb_report::format::{interval, ms, rate_with_counts};
use cb_report::html::{anchor, escape, page, table, Cell};
use cb_report::svg::{log_lines, stacked_bars, Bar, Segment, Series};
use std::fmt::Write as _;

/// Verdicts in scorecard order, with their colours.
pub const VERDICT_COLOURS: [(&str, &str); 5] = [
    ("pass", "#4caf50"),
    ("partial", "#f2c94c"),
    ("safe", "#5b8def"),
    ("fail", "#d64545"),
    ("inconclusive", "#9e9e9e"),
];

/// One colour per system, in page order (cycled).
const SYSTEM_COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

/// One colour per contract, in the order the suites list them (cycled).
const CONTRACT_COLOURS: [&str; 7] = [
    "#e45756", "#f58518", "#54a24b", "#4c78a8", "#b279a2", "#9d755d", "#72b7b2",
];

/// The id of a system's evidence of one case.
pub fn evidence_id(system: &str, case: &str) -> String {
    anchor(&["ev", system, case])
}

/// The id of a system's section.
pub fn system_id(system: &str) -> String {
    anchor(&["sys", system])
}

/// The whole page.
pub fn render(summary: &GradeSummary) -> String {
    let mut body = String::new();
    header(summary, &mut body);
    headlines(summary, &mut body);
    overview(summary, &mut body);
    scorecard(summary, &mut body);
    overhead(summary, &mut body);
    charts(summary, &mut body);
    for (i, system) in summary.systems.iter().enumerate() {
        system_section(summary, system, i, &mut body);
    }
    page("continuity-bench grade", &body)
}

fn header(s: &GradeSummary, out: &mut String) {
    let _ = writeln!(
        out,
        "<p class=\"note\">{} {} · seed {} · written {} · systems {}</p>",
        escape(&s.tool),
        escape(&s.version),
        s.seed,
        escape(&s.written_at),
        escape(
            s.systems_file
                .as_deref()
                .unwrap_or("from the command-line flags")
        ),
    );
    if s.interrupted {
        let _ = writeln!(
            out,
            "<p class=\"warn\">Interrupted ({}): the figures cover what finished.</p>",
            crate::stop::Stop::name_of(s.interrupted_by)
        );
    }
    let runs: Vec<String> = s
        .profiles
        .iter()
        .map(|p| {
            format!(
                "<a href=\"{d}/summary.md\">{p}</a> ({r} run(s) × {c} conversations{i})",
                d = escape(&p.dir),
                p = escape(&p.profile),
                r = p.runs,
                c = p.conversations,
                i = if p.interrupted { ", interrupted" } else { "" },
            )
        })
        .collect();
    let semantics = match (&s.semantics_profile, &s.semantics_dir) {
        (Some(profile), Some(dir)) => format!(
            "the semantics catalogue, <a href=\"{d}/scorecard.md\">{p} profile</a> ({n} cases{c})",
            d = escape(dir),
            p = escape(profile),
            n = s.cases.len(),
            c = s.semantics_client.map_or_else(String::new, |c| format!(
                ", streams read as <code>{}</code>: {}",
                c.as_str(),
                escape(c.rule())
            )),
        ),
        _ => "no semantics catalogue".to_string(),
    };
    let _ = writeln!(
        out,
        "<p>Continuity under {} and {}. Files beside this page: <a href=\"summary.json\">summary.json</a>, <a href=\"report.md\">report.md</a>.</p>",
        if runs.is_empty() { "no profile".into() } else { runs.join(" and ") },
        semantics,
    );
    if let Some(gate) = &s.gate {
        let verdict = if gate.passed() { "met" } else { "NOT met" };
        let _ = writeln!(
            out,
            "<p class=\"{}\">--fail-under {}: {verdict}</p>",
            if gate.passed() { "note" } else { "warn" },
            escape(&gate.spec),
        );
        let rows: Vec<Vec<Cell>> = gate
            .checks
            .iter()
            .map(|c| {
                vec![
                    Cell::text(&c.system),
                    Cell::text(&c.threshold),
                    Cell::num(&c.measured),
                    Cell::html(
                        if c.passed { "met" } else { "not met" }.into(),
                        Some(if c.passed { "pass" } else { "fail" }),
                    ),
                ]
            })
            .collect();
        out.push_str(&table(&["system", "threshold", "measured", ""], &rows));
    }
}

/// One sentence per system, generated from its figures
/// ([`super::headline`]), before the tables it summarises.
fn headlines(s: &GradeSummary, out: &mut String) {
    let lines = super::headline::headlines(s);
    if lines.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"verdicts\">In one sentence</h2>\n<ul class=\"verdicts\">\n");
    for (sys, line) in lines {
        let _ = writeln!(
            out,
            "<li><a href=\"#{}\"><strong>{}</strong></a>{}: {}</li>",
            system_id(&sys.name),
            escape(&sys.name),
            if sys.control { " (control)" } else { "" },
            escape(&line)
        );
    }
    out.push_str("</ul>\n");
}

fn figures<'a>(system: &'a GradeSystem, profile: &str) -> Option<&'a ContinuityFigures> {
    system.continuity.iter().find(|c| c.profile == profile)
}

fn overview(s: &GradeSummary, out: &mut String) {
    out.push_str("<h2 id=\"overview\">Systems</h2>\n");
    let rows: Vec<Vec<Cell>> = s
        .systems
        .iter()
        .map(|sys| {
            let paper = figures(sys, "paper");
            let cpr = paper.map_or("not run".into(), |f| rate_with_counts(&f.cpr));
            let wilson = paper.map_or("-".into(), |f| interval(&f.cpr.wilson));
            let clustered = paper.map_or("-".into(), |f| interval(&f.cpr_clustered));
            let clean = paper.map_or("not run".into(), |f| rate_with_counts(&f.clean_cpr));
            let clean_wilson = paper.map_or("-".into(), |f| interval(&f.clean_cpr.wilson));
            let card = sys.scorecard.map_or("not run".into(), |c| {
                format!(
                    "{} pass / {} partial / {} safe / {} fail, {} inconclusive",
                    c.pass, c.partial, c.safe, c.fail, c.inconclusive
                )
            });
            let honesty = sys.honesty.map_or("not run".into(), |h| h.line());
            let past = figures(sys, "outage").map_or("not run".into(), |f| {
                f.past_fault.as_ref().map_or("n/a".into(), |p| p.line())
            });
            let load = sys
                .load
                .as_ref()
                .map_or("not run".into(), cb_semantics::load::LoadFigures::overview);
            let (added, rss) = overhead_cells(s, &sys.name);
            let name = format!(
                "<a href=\"#{}\">{}</a>{}",
                system_id(&sys.name),
                escape(&sys.name),
                if sys.control { " (control)" } else { "" }
            );
            vec![
                Cell::html(name, None),
                Cell::text(sys.kind.as_str()),
                Cell::num(&cpr),
                Cell::num(&wilson),
                Cell::num(&clustered),
                Cell::num(&clean),
                Cell::num(&clean_wilson),
                Cell::text(&past),
                Cell::text(&card),
                Cell::text(&honesty),
                Cell::text(&load),
                Cell::num(&added),
                Cell::num(&rss),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "system",
            "kind",
            "CPR (paper)",
            "95 % Wilson",
            "clustered 95 %",
            "clean CPR",
            "clean 95 % Wilson",
            "past the fault (outage)",
            "semantics scorecard",
            "honest claims (cases)",
            "attempts per request under load",
            "added latency p50 / p99, ms (plain)",
            "peak RSS",
        ],
        &rows,
    ));
}

/// A system's overview cells of the overhead: what it adds (p50 / p99,
/// plain) at each concurrency, and its process's peak memory.
fn overhead_cells(s: &GradeSummary, system: &str) -> (String, String) {
    let Some(report) = &s.overhead else {
        return ("not run".into(), "not run".into());
    };
    (
        cb_overhead::render::added_by_concurrency(report, system),
        cb_overhead::render::peak_rss_cell(report, system),
    )
}

/// Table cells of text rows whose first cell is a name and the rest
/// figures (right-aligned).
fn name_then_numbers(rows: Vec<Vec<String>>) -> Vec<Vec<Cell>> {
    rows.into_iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, cell)| {
                    if i == 0 {
                        Cell::text(cell)
                    } else {
                        Cell::num(cell)
                    }
                })
                .collect()
        })
        .collect()
}

/// The overhead measurement: its setup, a table per (concurrency, mode)
/// with the baseline's own latency first, and the gateway processes.
fn overhead(s: &GradeSummary, out: &mut String) {
    let Some(report) = &s.overhead else {
        return;
    };
    use cb_overhead::render::{
        latency_rows, process_rows, Target, LATENCY_HEADERS, PROCESS_HEADERS,
    };
    out.push_str("<h2 id=\"overhead\">Overhead when nothing fails</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">What each system adds over a direct call to the same simulated upstream \
         (answering after {:.1} ms), client-side: {} trials of {} measured requests per point, \
         interleaved with a no-gateway baseline in a seeded random order (baseline first). p50 and \
         p99 with 95 % order-statistic intervals; added = the system's quantile minus the \
         baseline's, its interval joined from both at 97.5 %. A point where the baseline's own p99 \
         is more than twice its p99 at the lowest concurrency is rig-limited and charged to no \
         system. Files: <code>{}</code>.</p>",
        report.upstream_delay_ms,
        report.trials,
        report.requests,
        escape(s.overhead_dir.as_deref().unwrap_or("overhead")),
    );
    for (c, mode) in report.measured_at() {
        let _ = writeln!(
            out,
            "<h3>C = {c}, {mode} (latency {})</h3>",
            mode.measures()
        );
        let rows = name_then_numbers(latency_rows(report, c, mode, Target::Html));
        out.push_str(&table(&LATENCY_HEADERS, &rows));
    }
    if !report.processes.is_empty() {
        out.push_str("<h3>Gateway processes</h3>\n");
        let rows = name_then_numbers(process_rows(report, Target::Html));
        out.push_str(&table(&PROCESS_HEADERS, &rows));
    }
    let failures = report.points.iter().filter(|p| p.failed > 0).map(|p| {
        format!(
            "{} at C = {}, {}: {} of {} measured requests failed, first: {}",
            p.subject,
            p.concurrency,
            p.mode,
            p.failed,
            p.failed + p.measured,
            p.first_failure.as_deref().unwrap_or("?")
        )
    });
    let failures = failures.chain(
        report
            .slots
            .iter()
            .filter_map(cb_overhead::SlotRecord::warmup_note),
    );
    let interrupted = report.interrupted.then(|| {
        format!(
            "interrupted: {} slots of the schedule ran",
            report.slots.len()
        )
    });
    let left_out = report.left_out.iter().map(|(n, why)| {
        format!("{n}: not measured, it did not answer its preflight request: {why}")
    });
    let notes: Vec<String> = failures
        .chain(left_out)
        .chain(interrupted)
        .chain(report.unread.iter().map(|(n, why)| format!("{n}: {why}")))
        .chain(
            report
                .fallback_attempts
                .iter()
                .filter(|(_, k)| *k > 0)
                .map(|(n, k)| {
                    format!("{n}: sent {k} attempts to its fallback although nothing failed")
                }),
        )
        .collect();
    if !notes.is_empty() {
        out.push_str("<ul class=\"reasons\">\n");
        for note in notes {
            let _ = writeln!(out, "<li>{}</li>", escape(&note));
        }
        out.push_str("</ul>\n");
    }
}

/// The figures past the fault of each profile that measured them, with
/// both intervals and the first reasons each fell short.
fn past_table(sys: &GradeSystem, out: &mut String) {
    let measured: Vec<(&str, &cb_continuity::summary::past::PastFault)> = sys
        .continuity
        .iter()
        .filter_map(|f| f.past_fault.as_ref().map(|p| (f.profile.as_str(), p)))
        .collect();
    if measured.is_empty() {
        return;
    }
    out.push_str("<h3>Past the fault</h3>\n");
    let mut rows = Vec::new();
    let mut reasons = Vec::new();
    for (profile, p) in measured {
        for (name, r) in [
            ("conversation survival", &p.survival),
            ("return to primary", &p.return_to_primary),
            ("tool-call integrity", &p.tool_integrity),
        ] {
            rows.push(vec![
                Cell::text(profile),
                Cell::text(name),
                Cell::num(&rate_with_counts(&r.rate)),
                Cell::num(&interval(&r.rate.wilson)),
                Cell::num(&interval(&r.clustered)),
            ]);
            reasons.extend(
                r.reasons
                    .iter()
                    .map(|why| format!("{profile}, {name}: {why}")),
            );
        }
    }
    out.push_str(&table(
        &["profile", "figure", "rate", "95 % Wilson", "clustered 95 %"],
        &rows,
    ));
    if !reasons.is_empty() {
        out.push_str("<ul class=\"reasons\">\n");
        for why in reasons {
            let _ = writeln!(out, "<li>{}</li>", escape(&why));
        }
        out.push_str("</ul>\n");
    }
}

fn scorecard(s: &GradeSummary, out: &mut String) {
    out.push_str("<h2 id=\"scorecard\">Scorecard</h2>\n");
    if s.cases.is_empty() {
        out.push_str("<p class=\"note\">The semantics catalogue did not run, so there is no scorecard.</p>\n");
        return;
    }
    out.push_str("<p class=\"note\">Each cell links to its evidence: the checks and every attempt the upstreams logged. Cases marked * are reported, not scored.</p>\n");
    let mut headers = vec!["case", "what the upstream does"];
    headers.extend(s.systems.iter().map(|sys| sys.name.as_str()));
    let rows: Vec<Vec<Cell>> = s
        .cases
        .iter()
        .map(|case| {
            let mut row = vec![
                Cell::html(
                    format!(
                        "<code>{}</code>{}",
                        escape(&case.case),
                        if case.scored { "" } else { " *" }
                    ),
                    None,
                ),
                Cell::text(&case.upstream),
            ];
            for sys in &s.systems {
                row.push(match sys.cases.iter().find(|c| c.case == case.case) {
                    Some(c) => Cell::html(
                        format!(
                            "<a href=\"#{}\" title=\"{}\">{}</a>",
                            evidence_id(&sys.name, &c.case),
                            escape(&c.reason),
                            escape(c.verdict.as_str())
                        ),
                        Some(if c.scored {
                            c.verdict.as_str()
                        } else {
                            "not_scored"
                        }),
                    ),
                    None => Cell::text("not run"),
                });
            }
            row
        })
        .collect();
    // Many systems make the table wider than the page: it scrolls in its
    // own box instead of pushing the whole page sideways.
    out.push_str("<div style=\"overflow-x:auto\">\n");
    out.push_str(&table(&headers, &rows));
    out.push_str("</div>\n");
}

fn charts(s: &GradeSummary, out: &mut String) {
    out.push_str("<h2 id=\"charts\">Charts</h2>\n");
    let bars: Vec<Bar> = s
        .systems
        .iter()
        .filter_map(|sys| {
            let card = sys.scorecard?;
            let counts = [
                card.pass,
                card.partial,
                card.safe,
                card.fail,
                card.inconclusive,
            ];
            Some(Bar {
                label: sys.name.clone(),
                segments: VERDICT_COLOURS
                    .iter()
                    .zip(counts)
                    .map(|((name, colour), n)| Segment {
                        name: (*name).to_string(),
                        value: u64::from(n),
                        colour: (*colour).to_string(),
                    })
                    .collect(),
            })
        })
        .collect();
    out.push_str(&stacked_bars(
        "Semantics scorecard: scored cases per verdict",
        "cases",
        &bars,
        "no scorecard: the semantics catalogue did not run",
    ));
    for profile in s.profiles.iter().map(|p| p.profile.as_str()) {
        out.push_str(&contracts_chart(s, profile));
        if let Some(line) = super::headline::same_contract_rates(s, profile) {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&line));
        }
    }
    latency_charts(s, out);
}

/// Event-turn latency by conversation length, one chart per fault mode
/// (paper profile), with what the charts can and cannot show. A grade
/// written before the per-mode figures gets the pooled chart.
fn latency_charts(s: &GradeSummary, out: &mut String) {
    let modes: Vec<cb_faults::FaultMode> = cb_faults::FaultMode::ALL
        .into_iter()
        .filter(|m| {
            s.systems.iter().any(|sys| {
                figures(sys, "paper")
                    .is_some_and(|f| f.latency_by_mode.iter().any(|l| l.fault_mode == *m))
            })
        })
        .collect();
    let series_of = |rows: &dyn Fn(&ContinuityFigures) -> Vec<LengthLatency>| {
        let mut series = Vec::new();
        for (i, sys) in s.systems.iter().enumerate() {
            let Some(f) = figures(sys, "paper") else {
                continue;
            };
            let rows = rows(f);
            if rows.is_empty() {
                continue;
            }
            let colour = SYSTEM_COLOURS[i % SYSTEM_COLOURS.len()].to_string();
            for (stat, dashed) in [("median", false), ("P95", true)] {
                series.push(Series {
                    name: format!("{} {stat}", sys.name),
                    colour: colour.clone(),
                    dashed,
                    points: rows
                        .iter()
                        .map(|l| {
                            let y = if dashed { l.p95_ms } else { l.median_ms };
                            (f64::from(l.turns), y)
                        })
                        .collect(),
                });
            }
        }
        series
    };
    if modes.is_empty() {
        out.push_str(&log_lines(
            "Event-turn latency by conversation length (paper profile)",
            "conversation length, turns",
            "latency, ms",
            &series_of(&|f| f.latency_by_length.clone()),
            "no failover event under the paper profile, so no latency to show",
        ));
        return;
    }
    out.push_str("<p class=\"note\">One chart per fault mode: a TIMEOUT holds the connection until the gateway gives up on it, a 503 or a 429 answers at once, and each conversation length draws its own mix of modes, so lengths pooled together would compare mixes, not lengths. Within one mode, a rise with length is what the longer history costs; a point resting on a few events (the counts are in each system's section) says little.</p>\n");
    for mode in modes {
        let series = series_of(&|f| {
            f.latency_by_mode
                .iter()
                .find(|l| l.fault_mode == mode)
                .map(|l| l.by_length.clone())
                .unwrap_or_default()
        });
        out.push_str(&log_lines(
            &format!(
                "Event-turn latency by conversation length, {} faults (paper profile)",
                mode.as_str()
            ),
            "conversation length, turns",
            "latency, ms",
            &series,
            "no failover event of this mode",
        ));
    }
}

/// Answers that broke each contract, per system, under `profile`.
fn contracts_chart(s: &GradeSummary, profile: &str) -> String {
    let bars: Vec<Bar> = s
        .systems
        .iter()
        .filter_map(|sys| {
            let f = figures(sys, profile)?;
            Some(Bar {
                label: sys.name.clone(),
                segments: f
                    .contracts
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Segment {
                        name: c.contract.as_str().to_string(),
                        value: c.broken.successes,
                        colour: CONTRACT_COLOURS[i % CONTRACT_COLOURS.len()].to_string(),
                    })
                    .collect(),
            })
        })
        .collect();
    stacked_bars(
        &format!("Delivered answers that broke a contract ({profile} profile)"),
        "answers",
        &bars,
        &format!("no delivered answer broke a contract under the {profile} profile"),
    )
}

fn system_section(s: &GradeSummary, sys: &GradeSystem, _index: usize, out: &mut String) {
    let _ = writeln!(
        out,
        "<h2 id=\"{}\">{}{}</h2>",
        system_id(&sys.name),
        escape(&sys.name),
        if sys.control {
            " (negative control)"
        } else {
            ""
        }
    );
    let place = sys.url.as_deref().unwrap_or("built into the harness");
    let _ = writeln!(
        out,
        "<p>{} · {}</p>",
        escape(sys.kind.as_str()),
        escape(place)
    );
    if !sys.notes.is_empty() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&sys.notes));
    }
    out.push_str("<h3>Continuity</h3>\n");
    let rows: Vec<Vec<Cell>> = sys
        .continuity
        .iter()
        .map(|f| {
            let dir = s
                .profiles
                .iter()
                .find(|p| p.profile == f.profile)
                .map_or(String::new(), |p| p.dir.clone());
            vec![
                Cell::html(
                    format!(
                        "<a href=\"{d}/events.csv\">{p}</a>",
                        d = escape(&dir),
                        p = escape(&f.profile)
                    ),
                    None,
                ),
                Cell::num(&format!("{}/{}", f.events, f.planned)),
                Cell::num(&rate_with_counts(&f.cpr)),
                Cell::num(&interval(&f.cpr.wilson)),
                Cell::num(&interval(&f.cpr_clustered)),
                Cell::num(&rate_with_counts(&f.clean_cpr)),
                Cell::num(&interval(&f.clean_cpr.wilson)),
                Cell::num(&rate_with_counts(&f.availability)),
                Cell::text(if f.storm { "yes" } else { "no" }),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "profile",
            "failover/planned",
            "CPR",
            "95 % Wilson",
            "clustered 95 %",
            "clean CPR",
            "clean 95 % Wilson",
            "availability",
            "storm",
        ],
        &rows,
    ));
    for f in sys.continuity.iter().filter_map(|f| f.warning.as_ref()) {
        let _ = writeln!(out, "<p class=\"warn\">WARNING: {}</p>", escape(f));
    }
    past_table(sys, out);
    out.push_str("<h3>Contract violation rates</h3>\n");
    let rows: Vec<Vec<Cell>> = sys
        .continuity
        .iter()
        .flat_map(|f| {
            f.contracts.iter().map(|c| {
                vec![
                    Cell::text(&f.profile),
                    Cell::html(format!("<code>{}</code>", c.contract.as_str()), None),
                    Cell::num(&c.applied.to_string()),
                    Cell::num(&c.undetermined.to_string()),
                    Cell::num(&rate_with_counts(&c.broken)),
                    Cell::num(&interval(&c.broken.wilson)),
                ]
            })
        })
        .collect();
    out.push_str(&table(
        &[
            "profile",
            "contract",
            "applied",
            "undetermined",
            "broken",
            "95 % Wilson",
        ],
        &rows,
    ));
    out.push_str("<h3>Latency by length (paper profile)</h3>\n");
    match figures(sys, "paper").filter(|f| !f.latency_by_length.is_empty()) {
        Some(f) => {
            let rows: Vec<Vec<Cell>> = f
                .latency_by_length
                .iter()
                .map(|l| {
                    vec![
                        Cell::num(&l.turns.to_string()),
                        Cell::num(&l.n.to_string()),
                        Cell::num(&ms(l.median_ms)),
                        Cell::num(&ms(l.p95_ms)),
                    ]
                })
                .collect();
            out.push_str(&table(&["turns", "events", "median", "P95"], &rows));
        }
        None => out.push_str("<p class=\"note\">No failover event under the paper profile.</p>\n"),
    }
    out.push_str("<h3>Not measured</h3>\n");
    if sys.unmeasured.is_empty() {
        out.push_str("<p class=\"note\">Everything was measured.</p>\n");
    } else {
        out.push_str("<ul>\n");
        for note in &sys.unmeasured {
            let _ = writeln!(out, "<li>{}</li>", escape(note));
        }
        out.push_str("</ul>\n");
    }
    if !sys.cases.is_empty() {
        out.push_str("<h3>Evidence per case</h3>\n");
        for case in &sys.cases {
            super::evidence::render(sys, case, out);
        }
    }
}
