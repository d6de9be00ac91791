//! summary.md: the human-readable report. Every rate carries its counts and
//! both intervals; the run's provenance (seed, version, dataset, fault
//! profile, percentile method) and its notes are part of the page. Each
//! system's section is rendered by `system`.

mod system;

use super::plots::{CLO_BY_LENGTH_FILE, CLO_FILE, CPR_BY_FAULT_FILE, LATENCY_BY_LENGTH_FILE};
use super::ReportData;
use crate::summary::{CloSummary, Summary};
use cb_report::format::{confidence, interval, ms, rate_with_counts, signed_ms};
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
        system::system_section(&mut out, summary, system);
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
            "> **Interrupted ({}).** The figures cover only the conversations that finished before it.\n",
            cb_base::stop::Stop::name_of(s.interrupted_by)
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
mod tests;
