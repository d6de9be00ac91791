//! summary.md: the human-readable report. Every rate carries its counts and
//! both intervals; the run's provenance (seed, version, dataset, fault
//! profile, percentile method) and its notes are part of the page.

use super::plots::{CLO_FILE, CPR_BY_FAULT_FILE, LATENCY_BY_LENGTH_FILE};
use super::ReportData;
use crate::continuity::summary::{CloSummary, GroupRate, Summary, SystemSummary};
use crate::report::format::{
    confidence, counts, interval, mean, ms, percent, rate_with_counts, signed_ms,
};
use crate::report::{Exporter, ReportError};
use crate::stats::Distribution;
use std::fmt::Write as _;

/// File name of the Markdown report.
pub const MARKDOWN_FILE: &str = "summary.md";

/// Writes summary.md.
#[derive(Debug, Clone, Copy)]
pub struct SummaryMarkdown;

impl Exporter<ReportData> for SummaryMarkdown {
    fn file_name(&self) -> &'static str {
        MARKDOWN_FILE
    }
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        Ok(render_markdown(&data.summary).into_bytes())
    }
}

/// The whole page.
pub fn render_markdown(summary: &Summary) -> String {
    let mut out = String::new();
    header(&mut out, summary);
    overview(&mut out, summary);
    for system in &summary.systems {
        system_section(&mut out, summary, system);
    }
    clo_section(&mut out, summary);
    provenance(&mut out, summary);
    notes(&mut out, summary);
    plots(&mut out);
    out
}

// `write!` into a String cannot fail; the results are ignored on purpose.

fn header(out: &mut String, s: &Summary) {
    let _ = writeln!(out, "# Continuity report\n");
    let _ = writeln!(
        out,
        "{} {}, seed {}, {} run(s) × {} conversations, systems: {}.\n",
        s.tool,
        s.version,
        s.seed,
        s.runs,
        s.conversations,
        s.systems
            .iter()
            .map(|x| format!("`{}`", x.name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "CPR (Continuity Preservation Rate) = preserved / failover events; errors count as not preserved. \
         Intervals are {level}: pooled Wilson over all events, and a clustered bootstrap over \
         conversations ({resamples} resamples), the honest one since runs replay the same conversations.\n",
        level = confidence(s.confidence),
        resamples = s.bootstrap_resamples,
    );
}

fn overview(out: &mut String, s: &Summary) {
    let level = confidence(s.confidence);
    let _ = writeln!(out, "## Overview\n");
    let _ = writeln!(
        out,
        "| System | Events | CPR | Wilson {level} (pooled) | Clustered {level} | Availability | Conditional CPR | Bleed |"
    );
    let _ = writeln!(out, "|---|---:|---:|---|---|---:|---:|---:|");
    for x in &s.systems {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&x.name),
            x.events,
            rate_with_counts(&x.cpr),
            interval(&x.cpr.wilson),
            interval(&x.cpr_clustered),
            rate_with_counts(&x.availability),
            rate_with_counts(&x.conditional_cpr),
            x.bleed.events
        );
    }
    let _ = writeln!(out);
}

fn system_section(out: &mut String, s: &Summary, x: &SystemSummary) {
    let level = confidence(s.confidence);
    let _ = writeln!(out, "## System `{}`\n", x.name);
    let _ = writeln!(
        out,
        "- CPR: {}, pooled Wilson {level} {}, clustered bootstrap {level} {}",
        rate_with_counts(&x.cpr),
        interval(&x.cpr.wilson),
        interval(&x.cpr_clustered)
    );
    let _ = writeln!(
        out,
        "- Availability (answered 2xx): {}, Wilson {level} {}",
        rate_with_counts(&x.availability),
        interval(&x.availability.wilson)
    );
    let _ = writeln!(
        out,
        "- Conditional CPR (preserved / answered): {}, Wilson {level} {}",
        rate_with_counts(&x.conditional_cpr),
        interval(&x.conditional_cpr.wilson)
    );
    let v = &x.verdicts;
    let _ = writeln!(
        out,
        "- Verdicts: {} preserved, {} lost, {} error, {} undetermined ({} by fast path, {} by judge)",
        v.preserved, v.lost, v.error, v.undetermined, v.by_fast_path, v.by_judge
    );
    let _ = writeln!(
        out,
        "- CPR per run: {} – {} (min – max over {} run(s))",
        percent(x.cpr_run_min),
        percent(x.cpr_run_max),
        x.cpr_per_run.len()
    );
    let _ = writeln!(out, "- Context bleed: {} event(s)", x.bleed.events);
    let a = &x.attempts;
    let _ = writeln!(
        out,
        "- Upstream attempts per event: {} (primary {}, fallback {}), at most {}; fallback 429s: {}",
        mean(a.primary_mean + a.fallback_mean),
        mean(a.primary_mean),
        mean(a.fallback_mean),
        a.max_per_event,
        a.fallback_429s
    );
    let _ = writeln!(
        out,
        "- Gap between attempts of one event: {}",
        distribution(&a.gaps_ms, false)
    );
    let _ = writeln!(
        out,
        "- Retry storm: {}",
        if a.storm {
            format!("**flagged**: {}", a.storm_reasons.join("; "))
        } else {
            format!(
                "no (no event over {} attempts, no retry before its Retry-After)",
                crate::continuity::summary::build::STORM_MAX_ATTEMPTS
            )
        }
    );
    let _ = writeln!(
        out,
        "- Final-turn latency: {}\n",
        distribution(&x.final_turn_latency_ms, false)
    );
    group_table(
        out,
        "CPR by fault mode",
        "Fault mode",
        &x.cpr_by_fault,
        &level,
    );
    group_table(
        out,
        "CPR by conversation length",
        "Turns",
        &x.cpr_by_length,
        &level,
    );
    group_table(out, "CPR per run", "Run", &x.cpr_per_run, &level);
    if !a.per_event.is_empty() {
        let _ = writeln!(out, "### Attempts per event\n");
        let _ = writeln!(out, "| Attempts | Events |\n|---:|---:|");
        for (attempts, events) in &a.per_event {
            let _ = writeln!(out, "| {attempts} | {events} |");
        }
        let _ = writeln!(out);
    }
    if !x.bleed.examples.is_empty() {
        let _ = writeln!(out, "### Context bleed examples\n");
        let _ = writeln!(
            out,
            "| Run | Conversation | Anchor of | Answer excerpt |\n|---:|---|---|---|"
        );
        for e in &x.bleed.examples {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                e.run,
                cell(&e.conversation),
                cell(&e.anchor_of),
                cell(&e.answer_excerpt)
            );
        }
        let _ = writeln!(out);
    }
}

fn group_table(out: &mut String, title: &str, key: &str, groups: &[GroupRate], level: &str) {
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {title}\n");
    let _ = writeln!(
        out,
        "| {key} | CPR | Count | Wilson {level} |\n|---|---:|---:|---|"
    );
    for g in groups {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&g.key),
            percent(g.rate.rate),
            counts(&g.rate),
            interval(&g.rate.wilson)
        );
    }
    let _ = writeln!(out);
}

/// "median 1,480 ms, mean 3,212 ms, P95 12,894 ms, P99 14,211 ms (n = 750)".
fn distribution(d: &Distribution, signed: bool) -> String {
    if d.n == 0 {
        return "no values (n = 0)".to_string();
    }
    let f = if signed { signed_ms } else { ms };
    format!(
        "median {}, mean {}, P95 {}, P99 {}, min {}, max {} (n = {})",
        f(d.median),
        f(d.mean),
        f(d.p95),
        f(d.p99),
        f(d.min),
        f(d.max),
        d.n
    )
}

fn clo_section(out: &mut String, s: &Summary) {
    let _ = writeln!(out, "## Continuity latency overhead (CLO)\n");
    match &s.clo {
        Some(CloSummary {
            treatment,
            baseline,
            delta_ms,
        }) => {
            let _ = writeln!(
                out,
                "Final-turn latency under `{treatment}` minus under `{baseline}`, per (run, conversation) \
                 where both answered 2xx (n = {}).\n",
                delta_ms.n
            );
            if delta_ms.n == 0 {
                let _ = writeln!(out, "No (run, conversation) was answered by both.\n");
            } else {
                let _ = writeln!(out, "- Median: {}", signed_ms(delta_ms.median));
                let _ = writeln!(out, "- Mean: {}", signed_ms(delta_ms.mean));
                let _ = writeln!(out, "- P95: {}", signed_ms(delta_ms.p95));
                let _ = writeln!(out, "- P99: {}", signed_ms(delta_ms.p99));
                let _ = writeln!(
                    out,
                    "- Min – max: {} – {}\n",
                    signed_ms(delta_ms.min),
                    signed_ms(delta_ms.max)
                );
            }
            let _ = writeln!(out, "Percentile method: {}.\n", s.percentile_method);
        }
        None => {
            let _ = writeln!(
                out,
                "Not computed: it needs both reference systems, `stateless` and `history`.\n"
            );
        }
    }
}

fn provenance(out: &mut String, s: &Summary) {
    let _ = writeln!(out, "## Run\n");
    let _ = writeln!(out, "- Tool: {} {}", s.tool, s.version);
    let _ = writeln!(out, "- Seed: {}", s.seed);
    let _ = writeln!(out, "- Runs: {}", s.runs);
    let _ = writeln!(
        out,
        "- Dataset: `{}` ({} conversations)",
        s.dataset, s.conversations
    );
    let _ = writeln!(out, "- Fault profile: `{}`", s.fault_profile);
    let _ = writeln!(out, "- Confidence level: {}", confidence(s.confidence));
    let _ = writeln!(out, "- Bootstrap resamples: {}", s.bootstrap_resamples);
    let _ = writeln!(out, "- Percentile method: {}\n", s.percentile_method);
}

fn notes(out: &mut String, s: &Summary) {
    if s.notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "## What this run tests\n");
    for note in &s.notes {
        let _ = writeln!(out, "- {note}");
    }
    let _ = writeln!(out);
}

fn plots(out: &mut String) {
    let _ = writeln!(out, "## Plots\n");
    for (title, file) in [
        ("CPR by fault mode", CPR_BY_FAULT_FILE),
        ("CLO distribution", CLO_FILE),
        (
            "Final-turn latency by conversation length",
            LATENCY_BY_LENGTH_FILE,
        ),
    ] {
        let stem = file.trim_end_matches(".svg");
        let _ = writeln!(out, "![{title}]({file}) ([PNG]({stem}.png))\n");
    }
}

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
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
            "| history | 750 | 99.20 % (744/750) | [98.27 %, 99.63 %] | [98.13 %, 99.73 %] | 99.60 % (747/750) | 99.60 % (744/747) | 1 |",
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
        has_line(&page, "- Context bleed: 1 event(s)");
        has_line(&page, "| 3 | c042 | c117 | Your sister is called Maelis. |");
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
            &format!("Percentile method: {}.", crate::stats::PERCENTILE_METHOD),
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
    fn table_cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
