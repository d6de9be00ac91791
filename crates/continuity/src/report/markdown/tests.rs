//! summary.md from the fixture summary: every rate line with its counts and
//! intervals, the tables, CLO, provenance and notes, and what the page says
//! when something was not measured.

use super::super::fixture::summary;
use super::*;

fn page() -> String {
    render_markdown(&summary())
}

fn has_line(page: &str, line: &str) {
    assert!(
        page.lines().any(|l| l == line),
        "missing line:\n{line}\n--- page ---\n{page}"
    );
}

#[test]
fn cpr_lines_carry_counts_and_both_intervals() {
    let page = page();
    has_line(
        &page,
        "- CPR: 99.20 % (744/750), pooled Wilson 95 % [98.27 %, 99.63 %], clustered bootstrap 95 % [98.13 %, 99.73 %]",
    );
    has_line(
        &page,
        "- CPR: 0.00 % (0/750), pooled Wilson 95 % [0.00 %, 0.51 %], clustered bootstrap 95 % [0.00 %, 0.00 %]",
    );
    has_line(
        &page,
        "| history | 750 | 750 | 0 | 0 | 99.20 % (744/750) | [98.27 %, 99.63 %] | [98.13 %, 99.73 %] | 99.60 % (747/750) | 99.60 % (744/747) | 99.20 % (744/750) | 2 |",
    );
    has_line(
        &page,
        "- Availability (answered 2xx): 99.60 % (747/750), Wilson 95 % [98.83 %, 99.86 %]",
    );
    has_line(
        &page,
        "- CPR per run: 98.67 % – 100.00 % (min – max over 5 run(s))",
    );
}

#[test]
fn groups_bleed_and_attempts_are_listed() {
    let page = page();
    has_line(
        &page,
        "| TIMEOUT | 99.20 % | 248/250 | [97.13 %, 99.78 %] |",
    );
    has_line(&page, "| 9 | 100.00 % | 150/150 | [97.50 %, 100.00 %] |");
    has_line(&page, "- Context bleed: 2 of 6747 answers, on any turn, carried another conversation's anchor (1 failover event(s) in the final answer); by turn: turn 4: 1, turn 9: 1");
    has_line(
        &page,
        "| 3 | c042 | 9 | c117 | Your sister is called Maelis. |",
    );
    has_line(
        &page,
        "- Planned events: 750: 750 failover, 0 broke before the faulted turn, 0 not exercised",
    );
    has_line(
        &page,
        "| junk_prefix | 6747 | 10 | 0.01 % (1/6737) | [0.00 %, 0.08 %] |",
    );
    has_line(
        &page,
        "- Clean CPR (preserved, and no answer contract broken from the event turn on): 99.07 % (743/750), Wilson 95 % [98.09 %, 99.55 %]",
    );
    has_line(
        &page,
        "- Upstream attempts per event: 2.004 (primary 1.000, fallback 1.004), at most 3; fallback 429s: 3",
    );
    has_line(&page, "| 3 | 3 |");
}

#[test]
fn clo_has_the_paper_figures_and_names_the_method() {
    let page = page();
    has_line(&page, "- Median: -450 ms");
    has_line(&page, "- Mean: +59.2 ms");
    has_line(&page, "- P95: +13,614 ms");
    has_line(&page, "- P99: +14,890 ms");
    has_line(
        &page,
        &format!("Percentile method: {}.", cb_stats::PERCENTILE_METHOD),
    );
}

#[test]
fn provenance_notes_and_plots() {
    let page = page();
    has_line(&page, "- Seed: 42");
    has_line(&page, "- Tool: continuity-bench 0.1.0");
    has_line(
        &page,
        "- Dataset: `datasets/continuity-150.jsonl` (150 conversations)",
    );
    has_line(&page, "- Fault profile: `fault_profiles/paper.toml`");
    has_line(&page, "## What this run tests");
    assert!(page.contains("- With the simulated model the fallback can only answer"));
    has_line(
        &page,
        "![CPR by fault mode](cpr_by_fault.svg) ([PNG](cpr_by_fault.png))",
    );
    has_line(&page, "![CLO distribution](clo.svg) ([PNG](clo.png))");
}

#[test]
fn without_clo_or_notes_says_so() {
    let mut s = summary();
    s.clo = None;
    s.notes.clear();
    let page = render_markdown(&s);
    assert!(page.contains("Not computed: it needs both reference systems"));
    assert!(!page.contains("What this run tests"));
}

#[test]
fn interruption_warnings_and_stage_reasons_come_first() {
    let mut s = summary();
    s.interrupted = true;
    s.systems[0].warning = Some("stateless: only 1 of 10 planned events reached the fault".into());
    s.systems[0].stage_reasons = vec![crate::summary::StageReason {
        stage: crate::record::Stage::BrokeBefore,
        reason: "broke at turn 1: connection failed".into(),
        events: 9,
    }];
    let page = render_markdown(&s);
    let interrupted = page.find("**Interrupted (Ctrl-C).**").unwrap();
    let warning = page
        .find("> **Warning.** stateless: only 1 of 10 planned events")
        .unwrap();
    assert!(interrupted < warning && warning < page.find("## Overview").unwrap());
    has_line(
        &page,
        "  - 9 × broke_before: broke at turn 1: connection failed",
    );
    has_line(&page, "| 9 | 150 | +72.0 ms | +90.0 ms | +270 ms |");
}

#[test]
fn nothing_measured_prints_n_a() {
    let mut s = summary();
    let x = &mut s.systems[0];
    x.events = 0;
    x.cpr = cb_stats::rate(0, 0);
    x.cpr_clustered = None;
    x.cpr_run_min = None;
    x.cpr_run_max = None;
    let page = render_markdown(&s);
    has_line(
        &page,
        "- CPR: n/a (0/0), pooled Wilson 95 % n/a, clustered bootstrap 95 % n/a",
    );
    has_line(&page, "- CPR per run: n/a – n/a (min – max over 5 run(s))");
    assert!(!page.contains("0.00 % (0/0)"));
}

#[test]
fn table_cells_escape_pipes_and_newlines() {
    assert_eq!(cell("a|b\nc"), "a\\|b c");
}
