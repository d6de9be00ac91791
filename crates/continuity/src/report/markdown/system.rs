//! One system's section of summary.md: its stages, every rate with its
//! counts and intervals, bleed, upstream attempts and retry storms, latency,
//! the grouped CPR tables, the answer contracts and what reached its
//! fallback. The page around it (overview, CLO, provenance) is in the
//! parent module.

use super::{cell, distribution};
use crate::summary::{GroupRate, Summary, SystemSummary};
use cb_report::format::{
    confidence, counts, interval, mean, percent, rate_percent, rate_with_counts, NOT_MEASURED,
};
use std::fmt::Write as _;

// `write!` into a String cannot fail; the results are ignored on purpose.

/// The section of system `x`.
pub(super) fn system_section(out: &mut String, s: &Summary, x: &SystemSummary) {
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
    past_section(out, x, &level);
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

/// Past the fault: survival, return to primary, tool-call integrity (each
/// with both intervals and why the first events fell short) and the
/// probes' preservation by turns since the fault.
fn past_section(out: &mut String, x: &SystemSummary, level: &str) {
    let Some(p) = &x.past_fault else {
        return;
    };
    let _ = writeln!(
        out,
        "### Past the fault
"
    );
    let figure =
        |out: &mut String, name: &str, r: &crate::summary::past::PastRate, beside: String| {
            let _ = writeln!(
                out,
                "- {name}: {}, Wilson {level} {}, clustered bootstrap {level} {}{beside}",
                rate_with_counts(&r.rate),
                interval(&r.rate.wilson),
                interval(&r.clustered)
            );
            for reason in &r.reasons {
                let _ = writeln!(out, "  - {}", cell(reason));
            }
        };
    figure(
        out,
        "Conversation survival (every probe from the fault on answered from context)",
        &p.survival,
        String::new(),
    );
    let after: Vec<String> = p
        .returned_after
        .iter()
        .map(|(turns, events)| format!("{events} after {turns}"))
        .collect();
    figure(
        out,
        "Return to primary (a turn after the outage served by the primary)",
        &p.return_to_primary,
        format!(
            "; turns after the outage until it came back: {}; {} event(s) with no turn after the outage, beside",
            if after.is_empty() { NOT_MEASURED.to_string() } else { after.join(", ") },
            p.no_turn_after_outage
        ),
    );
    figure(
        out,
        "Tool-call integrity (no request from the fault on refused for its tool calls, in the upstream's dialect)",
        &p.tool_integrity,
        format!("; {} event(s) without tool calls, beside", p.without_tool_calls),
    );
    let _ = writeln!(out);
    if !p.by_turns_since.is_empty() {
        let _ = writeln!(
            out,
            "#### Probes preserved, by turns since the fault
"
        );
        let _ = writeln!(
            out,
            "| Turns since the fault | Preserved | Count | Wilson {level} |\n|---:|---:|---:|---|"
        );
        for g in &p.by_turns_since {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                g.key,
                rate_percent(&g.rate),
                counts(&g.rate),
                interval(&g.rate.wilson)
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
