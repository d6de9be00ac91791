//! summary.md: the human-readable report. Every rate carries its counts and
//! both intervals; the run's provenance (seed, version, dataset, fault
//! profile, percentile method) and its notes are part of the page.

use super::plots::{CLO_BY_LENGTH_FILE, CLO_FILE, CPR_BY_FAULT_FILE, LATENCY_BY_LENGTH_FILE};
use super::ReportData;
use crate::summary::{CloSummary, GroupRate, Summary, SystemSummary};
use cb_report::format::{
    confidence, counts, interval, mean, ms, percent, rate_percent, rate_with_counts, signed_ms,
    NOT_MEASURED,
};
use cb_report::{Exporter, ReportError};
use cb_stats::Distribution;
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
    if s.interrupted {
        let _ = writeln!(
            out,
            "> **Interrupted (Ctrl-C).** The figures cover only the conversations that finished before it.\n"
        );
    }
    for warning in s.systems.iter().filter_map(|x| x.warning.as_ref()) {
        let _ = writeln!(out, "> **Warning.** {warning}\n");
    }
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
        "A planned event is a (run, system, conversation) whose event turn the fault profile faults. It is a \
         *failover event* when the faulted request reached the faulted upstream and the fault fired there \
         (the upstream's attempt log shows it); it *broke before* when the conversation ended before that \
         turn; it was *not exercised* when the turn was sent but the faulted upstream never saw it. \
         CPR (Continuity Preservation Rate) = preserved / failover events; errors count as not preserved, \
         and only failover events enter CPR and every figure built on it. Survival = planned events whose \
         conversation ended with the anchor recalled / all planned events, whatever their stage. \
         Intervals are {level}: pooled Wilson over all failover events, and a clustered bootstrap over \
         conversations ({resamples} resamples), the honest one since runs replay the same conversations. \
         A rate with nothing measured is n/a.\n",
        level = confidence(s.confidence),
        resamples = s.bootstrap_resamples,
    );
}

fn overview(out: &mut String, s: &Summary) {
    let level = confidence(s.confidence);
    let _ = writeln!(out, "## Overview\n");
    let _ = writeln!(
        out,
        "| System | Planned | Failover | Broke before | Not exercised | CPR | Wilson {level} (pooled) | Clustered {level} | Availability | Conditional CPR | Survival | Bleeding answers |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|"
    );
    for x in &s.systems {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&x.name),
            x.stages.total(),
            x.stages.failover,
            x.stages.broke_before,
            x.stages.not_exercised,
            rate_with_counts(&x.cpr),
            interval(&x.cpr.wilson),
            interval(&x.cpr_clustered),
            rate_with_counts(&x.availability),
            rate_with_counts(&x.conditional_cpr),
            rate_with_counts(&x.survival),
            x.bleed.answers_bleeding
        );
    }
    let _ = writeln!(out);
}

fn system_section(out: &mut String, s: &Summary, x: &SystemSummary) {
    let level = confidence(s.confidence);
    let _ = writeln!(out, "## System `{}`\n", x.name);
    let st = &x.stages;
    let _ = writeln!(
        out,
        "- Planned events: {}: {} failover, {} broke before the faulted turn, {} not exercised",
        st.total(),
        st.failover,
        st.broke_before,
        st.not_exercised
    );
    for r in &x.stage_reasons {
        let _ = writeln!(out, "  - {} × {}: {}", r.events, r.stage.as_str(), r.reason);
    }
    if let Some(warning) = &x.warning {
        let _ = writeln!(out, "- **Warning**: {warning}");
    }
    let _ = writeln!(
        out,
        "- Survival (anchor recalled at the end, over every planned event): {}",
        rate_with_counts(&x.survival)
    );
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
    let _ = writeln!(
        out,
        "- Clean CPR (preserved, and no answer contract broken from the event turn on): {}, Wilson {level} {}",
        rate_with_counts(&x.clean_cpr),
        interval(&x.clean_cpr.wilson)
    );
    if x.ttft_ms.n > 0 {
        let _ = writeln!(
            out,
            "- Time to first token (streams, every answered turn): {}",
            distribution(&x.ttft_ms, false)
        );
    }
    let v = &x.verdicts;
    let _ = writeln!(
        out,
        "- Verdicts: {} preserved, {} lost, {} error, {} undetermined ({} by fast path, {} by judge)",
        v.preserved, v.lost, v.error, v.undetermined, v.by_fast_path, v.by_judge
    );
    let _ = writeln!(
        out,
        "- CPR per run: {} – {} (min – max over {} run(s))",
        x.cpr_run_min
            .map_or_else(|| NOT_MEASURED.to_string(), percent),
        x.cpr_run_max
            .map_or_else(|| NOT_MEASURED.to_string(), percent),
        x.cpr_per_run.len()
    );
    let b = &x.bleed;
    let _ = writeln!(
        out,
        "- Context bleed: {} of {} answers, on any turn, carried another conversation's anchor ({} failover event(s) in the final answer){}",
        b.answers_bleeding,
        b.answers,
        b.events,
        if b.by_turn.is_empty() {
            String::new()
        } else {
            format!(
                "; by turn: {}",
                b.by_turn
                    .iter()
                    .map(|(turn, n)| format!("turn {turn}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
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
                crate::summary::attempts::STORM_MAX_ATTEMPTS
            )
        }
    );
    let _ = writeln!(
        out,
        "- Event-turn latency: {}\n",
        distribution(&x.event_latency_ms, false)
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
    contracts_table(out, x, &level);
    delivery_section(out, x);
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
            "| Run | Conversation | Turn | Anchor of | Answer excerpt |\n|---:|---|---:|---|---|"
        );
        for e in &x.bleed.examples {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                e.run,
                cell(&e.conversation),
                e.turn,
                cell(&e.anchor_of),
                cell(&e.answer_excerpt)
            );
        }
        let _ = writeln!(out);
    }
}

/// What reached the fallback: the share of system messages, tool results
/// and user turns of the fallback requests that happened, with the
/// diagnosis of each share below 100 % and the context squeeze's outcomes.
fn delivery_section(out: &mut String, x: &SystemSummary) {
    let Some(d) = &x.fallback_delivery else {
        return;
    };
    let share = |s: &crate::summary::delivery::DeliveryShare| match s.rate {
        Some(r) => format!("{:.2} % ({}/{})", r * 100.0, s.reached, s.sent),
        None => "n/a".to_string(),
    };
    let _ = writeln!(
        out,
        "### What reached the fallback
"
    );
    let _ = writeln!(
        out,
        "- Fallback dialect: {}; fallback requests: {}; without the anchor's message: {}; refused as invalid: {}",
        d.dialect, d.requests, d.anchor_missing, d.rejected
    );
    let _ = writeln!(
        out,
        "- System messages: {} · tool results: {} · user turns: {}",
        share(&d.system_messages),
        share(&d.tool_results),
        share(&d.user_turns)
    );
    if let Some(q) = &d.squeeze {
        let _ = writeln!(
            out,
            "- Context squeeze, per failover event: trimmed with the anchor {}, trimmed without it {}, sent whole {}, rejected by the fallback {}, failed clearly {}",
            q.trimmed_anchor_kept, q.trimmed_anchor_lost, q.sent_whole, q.rejected_by_fallback, q.failed_clearly
        );
    }
    for line in &d.diagnosis {
        let _ = writeln!(out, "- **Diagnosis**: {line}");
    }
    let _ = writeln!(out);
}

/// Per contract: the answers it applied to, those it could not judge, and
/// the share of the rest that broke it.
fn contracts_table(out: &mut String, x: &SystemSummary, level: &str) {
    if x.contracts.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Answer contracts (every delivered answer)\n");
    let _ = writeln!(
        out,
        "| Contract | Applied | Undetermined | Broken | Wilson {level} |\n|---|---:|---:|---:|---|"
    );
    for c in &x.contracts {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            c.contract.as_str(),
            c.applied,
            c.undetermined,
            rate_with_counts(&c.broken),
            interval(&c.broken.wilson)
        );
    }
    let _ = writeln!(out);
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
            rate_percent(&g.rate),
            counts(&g.rate),
            interval(&g.rate.wilson)
        );
    }
    let _ = writeln!(out);
}

/// "median 1,480 ms, mean 3,212 ms, P95 12,894 ms, P99 14,211 ms (n = 750)".
fn distribution(d: &Distribution, signed: bool) -> String {
    if d.n == 0 {
        return "n/a (n = 0)".to_string();
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
    let Some(CloSummary {
        treatment,
        baseline,
        delta_ms,
        by_length,
    }) = &s.clo
    else {
        let _ = writeln!(
            out,
            "Not computed: it needs both reference systems, `stateless` and `history`.\n"
        );
        return;
    };
    let _ = writeln!(
        out,
        "Event-turn latency under `{treatment}` minus under `{baseline}` (request sent to last byte), per \
         (run, conversation) that is a failover event answered 2xx under both (n = {}). With the \
         simulated model both answers cost the same to generate and input tokens cost prefill time, so \
         CLO is the price of forwarding the history, and it grows with conversation length.\n",
        delta_ms.n
    );
    if delta_ms.n == 0 {
        let _ = writeln!(
            out,
            "n/a: no (run, conversation) was a failover event answered by both.\n"
        );
        return;
    }
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
    if !by_length.is_empty() {
        let _ = writeln!(out, "### CLO by conversation length\n");
        let _ = writeln!(
            out,
            "| Turns | n | Median | Mean | P95 |\n|---:|---:|---:|---:|---:|"
        );
        for l in by_length {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                l.turns,
                l.delta_ms.n,
                signed_ms(l.delta_ms.median),
                signed_ms(l.delta_ms.mean),
                signed_ms(l.delta_ms.p95)
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "Percentile method: {}.\n", s.percentile_method);
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
        ("CLO by conversation length", CLO_BY_LENGTH_FILE),
        (
            "Event-turn latency by conversation length",
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
        s.systems[0].warning =
            Some("stateless: only 1 of 10 planned events reached the fault".into());
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
}
