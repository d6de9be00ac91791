//! The tables of a measurement, as Markdown (which a terminal shows as
//! is): per concurrency and mode, the baseline's own latency first, then
//! each system's and what it adds, with intervals; then each gateway
//! process's memory and CPU. Names come from a systems file and are
//! escaped for Markdown.

use crate::figures::{Estimate, Point};
use crate::schedule::{Mode, Subject};
use crate::{OverheadReport, SlotRecord};
use cb_report::escape::markdown_cell;
use cb_report::Table;
use std::fmt::Write as _;

/// `ms` with three decimals, `n/a` for none.
fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}"))
}

/// `1.234 [1.100, 1.400]`; an end the sample cannot bound is `?`.
pub fn with_interval(e: Option<&Estimate>, signed: bool) -> String {
    let Some(e) = e else {
        return "n/a".to_string();
    };
    let end = |v: Option<f64>| {
        v.map_or_else(
            || "?".to_string(),
            |v| {
                if signed {
                    format!("{v:+.3}")
                } else {
                    format!("{v:.3}")
                }
            },
        )
    };
    let value = if signed {
        format!("{:+.3}", e.ms)
    } else {
        format!("{:.3}", e.ms)
    };
    format!("{value} [{}, {}]", end(e.low), end(e.high))
}

/// What a system adds at a point: the estimate with its interval, or
/// `rig-limited` where the baseline saturated.
pub fn added_cell(point: &Point, added: Option<&Estimate>) -> String {
    if point.subject == Subject::Baseline {
        return "(baseline)".to_string();
    }
    if point.rig_limited {
        return "rig-limited".to_string();
    }
    with_interval(added, true)
}

/// Where a rendering goes: a terminal (fixed-width tables, control
/// characters shown) or a Markdown file (pipe tables, cells escaped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Standard output.
    Terminal,
    /// overhead.md, or a page that embeds it.
    Markdown,
    /// Cells of an HTML table whose renderer escapes every text cell.
    Html,
}

impl Target {
    fn text(self, text: &str) -> String {
        match self {
            Target::Terminal => cb_report::escape::terminal(text),
            Target::Markdown => markdown_cell(text),
            Target::Html => text.to_string(),
        }
    }

    fn table(self, headers: &[&str], rows: Vec<Vec<String>>) -> String {
        match self {
            Target::Terminal => {
                let mut table = Table::new(headers.iter().copied()).right_aligned_from(1);
                for row in rows {
                    table.push(row);
                }
                table.render()
            }
            Target::Markdown | Target::Html => {
                let mut out = format!("| {} |\n|", headers.join(" | "));
                out.push_str(&"---|".repeat(headers.len()));
                out.push('\n');
                for row in rows {
                    let _ = writeln!(out, "| {} |", row.join(" | "));
                }
                out
            }
        }
    }
}

/// The latency table of one (concurrency, mode): the baseline, then each
/// system.
pub fn latency_rows(report: &OverheadReport, c: usize, mode: Mode, to: Target) -> Vec<Vec<String>> {
    report
        .points
        .iter()
        .filter(|p| p.concurrency == c && p.mode == mode)
        .map(|p| {
            vec![
                to.text(p.subject.name()),
                format!("{} / {}", p.measured, p.failed),
                with_interval(p.p50.as_ref(), false),
                with_interval(p.p99.as_ref(), false),
                added_cell(p, p.added_p50.as_ref()),
                added_cell(p, p.added_p99.as_ref()),
            ]
        })
        .collect()
}

/// Headers of [`latency_rows`].
pub const LATENCY_HEADERS: [&str; 6] = [
    "system",
    "ok / failed",
    "p50 ms",
    "p99 ms",
    "added p50 ms",
    "added p99 ms",
];

/// Headers of [`process_rows`].
pub const PROCESS_HEADERS: [&str; 5] = [
    "system",
    "pid",
    "RSS before, MiB",
    "peak RSS, MiB",
    "CPU ms per 1,000 requests",
];

/// One row per gateway process read.
pub fn process_rows(report: &OverheadReport, to: Target) -> Vec<Vec<String>> {
    report
        .processes
        .iter()
        .map(|p| {
            vec![
                format!(
                    "{}{}",
                    to.text(&p.system),
                    if p.started_here {
                        " (started here)"
                    } else {
                        ""
                    }
                ),
                p.pid.to_string(),
                p.rss_before_kib.map_or_else(
                    || "n/a".to_string(),
                    |k| format!("{:.1}", k as f64 / 1024.0),
                ),
                format!(
                    "{:.1}{}",
                    p.peak_rss_kib as f64 / 1024.0,
                    if p.peak_reset { "" } else { " (since start)" }
                ),
                ms(p.cpu_ms_per_1k()),
            ]
        })
        .collect()
}

/// What `system` adds at (`concurrency`, `mode`) in one cell: `+0.30 /
/// +2.96` (p50 / p99, ms), `rig-limited`, `n/a` without a success (with
/// the first failure), or `not measured`.
pub fn overview_cell(
    report: &OverheadReport,
    system: &str,
    concurrency: usize,
    mode: Mode,
) -> String {
    let Some(p) = report.point(&Subject::System(system.to_string()), concurrency, mode) else {
        return if report.left_out.iter().any(|(n, _)| n == system) {
            "not measured (no answer to its preflight)".to_string()
        } else {
            "not measured".to_string()
        };
    };
    if p.rig_limited {
        return "rig-limited".to_string();
    }
    match (&p.added_p50, &p.added_p99) {
        (Some(a), Some(b)) => format!("{:+.2} / {:+.2}", a.ms, b.ms),
        _ if p.measured == 0 => format!(
            "n/a (all {} failed: {})",
            p.failed,
            p.first_failure.as_deref().unwrap_or("?")
        ),
        _ => "n/a (the baseline had no success)".to_string(),
    }
}

/// What `system` adds (p50 / p99, plain) at each concurrency measured, in
/// one cell: `+0.30 / +2.96 at C = 1; rig-limited at C = 64`; a system left
/// out is said once.
pub fn added_by_concurrency(report: &OverheadReport, system: &str) -> String {
    if report.left_out.iter().any(|(n, _)| n == system) {
        return "not measured (no answer to its preflight)".to_string();
    }
    let cells: Vec<String> = report
        .concurrency
        .iter()
        .map(|&c| {
            format!(
                "{} at C = {c}",
                overview_cell(report, system, c, Mode::Plain)
            )
        })
        .collect();
    cells.join("; ")
}

/// A system's peak RSS in MiB, or why it is unknown.
pub fn peak_rss_cell(report: &OverheadReport, system: &str) -> String {
    report
        .processes
        .iter()
        .find(|p| p.system == system)
        .map_or_else(
            || {
                if report.unread.iter().any(|(n, _)| n == system) {
                    "not read".to_string()
                } else {
                    "n/a".to_string()
                }
            },
            |p| {
                format!(
                    "{:.0} MiB{}",
                    p.peak_rss_kib as f64 / 1024.0,
                    if p.peak_reset { "" } else { " (since start)" }
                )
            },
        )
}

/// The whole report, for `to`.
pub fn render(report: &OverheadReport, to: Target) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Latency in ms, client-side; p50 and p99 with 95 % intervals (order statistics over {} \
         trials of {} measured requests, after {} warm-up requests or one per client); added = \
         the system's quantile minus the baseline's, interval at 95 % joined from both at 97.5 %. \
         The simulated upstream answers after {:.1} ms. A point where the baseline's own p99 is \
         more than twice its p99 at C = {} is rig-limited and not charged to any system.\n",
        report.trials,
        report.requests,
        report.warmup,
        report.upstream_delay_ms,
        report.concurrency.iter().min().copied().unwrap_or(1),
    );
    let heading = match to {
        Target::Terminal | Target::Html => "",
        Target::Markdown => "### ",
    };
    for (c, mode) in report.measured_at() {
        let _ = writeln!(
            out,
            "{heading}C = {c}, {mode} (latency {})\n",
            mode.measures()
        );
        let _ = writeln!(
            out,
            "{}",
            to.table(&LATENCY_HEADERS, latency_rows(report, c, mode, to))
        );
        for p in report
            .points
            .iter()
            .filter(|p| p.concurrency == c && p.mode == mode && p.failed > 0)
        {
            let _ = writeln!(
                out,
                "- {}: {} of {} measured requests failed, first: {}",
                to.text(p.subject.name()),
                p.failed,
                p.failed + p.measured,
                to.text(p.first_failure.as_deref().unwrap_or("?"))
            );
        }
        for note in report
            .slots
            .iter()
            .filter(|s| s.slot.concurrency == c && s.slot.mode == mode)
            .filter_map(SlotRecord::warmup_note)
        {
            let _ = writeln!(out, "- {}", to.text(&note));
        }
        out.push('\n');
    }
    if !report.processes.is_empty() || !report.unread.is_empty() {
        let _ = writeln!(out, "{heading}Gateway processes\n");
        let rows = process_rows(report, to);
        let headers = PROCESS_HEADERS;
        let _ = writeln!(out, "{}", to.table(&headers, rows));
        for (name, why) in &report.unread {
            let _ = writeln!(out, "- {}: {}", to.text(name), to.text(why));
        }
        out.push('\n');
    }
    for (name, why) in &report.left_out {
        let _ = writeln!(
            out,
            "- {}: NOT MEASURED, it did not answer its preflight request: {}",
            to.text(name),
            to.text(why)
        );
    }
    for (name, n) in report.fallback_attempts.iter().filter(|(_, n)| *n > 0) {
        let _ = writeln!(
            out,
            "- {}: sent {n} attempts to its fallback upstream although nothing failed",
            to.text(name)
        );
    }
    if report.interrupted {
        let _ = writeln!(
            out,
            "- interrupted: {} slots of the schedule ran",
            report.slots.len()
        );
    }
    out
}
