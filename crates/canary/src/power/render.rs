//! `canary power`'s text: the power table, the false quarantines, the
//! budget table and the closed-form check, in the tool's one table format.

use super::{PowerReport, FALSE_SPAN, HORIZONS};
use crate::clock::human_span;
use cb_report::format::percent;
use cb_report::Table;
use std::fmt::Write as _;
use std::time::Duration;

fn share(p: f64) -> String {
    let text = format!("{:.2}", p * 100.0);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} %")
}

fn span_or_beyond(span: Option<Duration>) -> String {
    span.map_or_else(
        || format!("> {}", human_span(HORIZONS[HORIZONS.len() - 1])),
        human_span,
    )
}

/// The report as text.
pub fn render(report: &PowerReport) -> String {
    let s = &report.settings;
    let mut out = String::new();
    let unit = if s.sticky { "sessions" } else { "replies" };
    let _ = writeln!(
        out,
        "canary power: {} trials per figure, one round every {}, repeats {} ({} probes a round \
         before confirmations), transport errors {}, seed {}.\n\
         Incidence: the share of {unit} that carry the defect{}. A figure is the chance that \
         the quarantine rule ({} consecutive failing rounds) fires on the degraded route; the \
         closed form is beside it.\n",
        s.trials,
        human_span(s.interval),
        s.repeats,
        s.repeats.per_round(),
        share(s.transient),
        s.seed,
        if s.sticky {
            " (a degraded session degrades every reply in it; each probe copy draws its session anew)"
        } else {
            ""
        },
        super::failing_rounds()
    );
    let mut headers = vec![
        "contract".to_string(),
        "incidence".into(),
        "checks/round".into(),
    ];
    for span in HORIZONS {
        headers.push(format!("P(≤{}) [95 % CI]", human_span(span)));
        headers.push("closed form".into());
    }
    headers.extend(["median".into(), "p90".into(), "probes/day".into()]);
    let mut table = Table::new(headers).right_aligned_from(1);
    for c in &report.cells {
        let mut row = vec![
            c.contract.as_str().to_string(),
            share(c.incidence.share),
            s.repeats.checks_of(c.contract).to_string(),
        ];
        for h in &c.horizons {
            row.push(format!(
                "{} [{}, {}]",
                percent(h.quarantined as f64 / c.trials.max(1) as f64),
                percent(h.interval.lo),
                percent(h.interval.hi)
            ));
            row.push(percent(h.closed_form));
        }
        row.push(span_or_beyond(c.median));
        row.push(span_or_beyond(c.p90));
        row.push(format!("{:.0}", c.probes_per_day));
        table.push(row);
    }
    out.push_str(&table.render());

    let _ = writeln!(
        out,
        "\nHealthy routes: the chance of a false quarantine within {} from the checkers' false \
         positives, measured on the calibration set (both parts).",
        human_span(FALSE_SPAN)
    );
    let mut table = Table::new([
        "contract",
        "false positives",
        "at the measured rate",
        "at its 95 % upper bound",
    ])
    .right_aligned_from(1);
    for f in &report.false_quarantines {
        let (name, counts) = match (f.contract, f.measured) {
            (Some(c), Some(m)) => (
                c.as_str().to_string(),
                format!("{}/{}", m.false_positives, m.clean),
            ),
            (Some(c), None) => (c.as_str().to_string(), "not measured".into()),
            (None, _) => ("all together".into(), String::new()),
        };
        table.push([name, counts, percent(f.at_measured), percent(f.at_upper)]);
    }
    out.push_str(&table.render());
    let (trials, quarantined) = report.healthy_simulated;
    let _ = writeln!(
        out,
        "Simulated: {quarantined} of {trials} healthy routes quarantined within {} at the \
         measured rates.",
        human_span(FALSE_SPAN)
    );

    let _ = writeln!(
        out,
        "\nBudget: copies per round, of each probe that checks the contract, to quarantine \
         within {} with probability ≥ {} while a healthy route's false quarantine within {} \
         stays ≤ {} (closed form, measured rates). Buy it with `canary --repeats`, or with a \
         shorter --interval.",
        human_span(s.within),
        percent(s.confidence),
        human_span(FALSE_SPAN),
        percent(s.max_false)
    );
    let mut table = Table::new([
        "contract",
        "incidence",
        "copies/round",
        "--repeats",
        "P(in time)",
        "probes/day",
    ])
    .right_aligned_from(1);
    for b in &report.budgets {
        table.push([
            b.contract.as_str().to_string(),
            share(b.incidence.share),
            b.copies.map_or_else(
                || format!("> {}", crate::probe::MAX_REPEATS),
                |n| n.to_string(),
            ),
            b.repeats
                .map_or_else(|| "out of reach".into(), |r| r.to_string()),
            percent(b.within),
            format!("{:.0}", b.probes_per_day),
        ]);
    }
    out.push_str(&table.render());

    let c = &report.check;
    let _ = writeln!(
        out,
        "\nClosed-form check: {} at {} of replies, one checked reply per round, no transport \
         errors, within {}: simulated {} ({}/{}) [{}, {}] (99.9 % interval), closed form {}: {}.",
        c.contract.as_str(),
        share(c.share),
        human_span(c.span),
        percent(c.quarantined as f64 / c.trials.max(1) as f64),
        c.quarantined,
        c.trials,
        percent(c.interval.lo),
        percent(c.interval.hi),
        percent(c.closed_form),
        if c.agrees() {
            "agrees (inside the interval)"
        } else {
            "DISAGREES (outside the interval)"
        }
    );
    out
}

/// The report as one Markdown table per contract row (what the README
/// quotes): the chance of a quarantine within 24 h at each incidence, the
/// median time at each, and the budget for each, then the healthy routes
/// and the closed-form check.
pub fn markdown(report: &PowerReport) -> String {
    let s = &report.settings;
    let mut out = String::new();
    let unit = if s.sticky { "sessions" } else { "replies" };
    let day = HORIZONS
        .iter()
        .position(|h| *h == crate::clock::DAY)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "At `--repeats {}`, one round every {}: the chance that a route whose {unit} carry a \
         contract's defect at the given incidence is quarantined within 24 h (simulated, {} \
         trials; median time to quarantine in brackets), and the `--repeats` that raises the \
         chance of a quarantine within {} to {} (probes per route per day at that budget).\n",
        s.repeats,
        human_span(s.interval),
        s.trials,
        human_span(s.within),
        percent(s.confidence),
    );
    let mut header = String::from("| contract | checked replies per round |");
    let mut rule = String::from("|---|---:|");
    for p in &s.incidences {
        let _ = write!(header, " {} |", share(*p));
        rule.push_str("---:|");
    }
    for p in &s.incidences {
        let _ = write!(header, " budget for {} |", share(*p));
        rule.push_str("---|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for contract in &s.contracts {
        let mut row = format!(
            "| {} | {} |",
            contract.as_str(),
            s.repeats.checks_of(*contract)
        );
        for c in report.cells.iter().filter(|c| c.contract == *contract) {
            let h = &c.horizons[day];
            let _ = write!(
                row,
                " {} ({}) |",
                percent(h.quarantined as f64 / c.trials.max(1) as f64),
                span_or_beyond(c.median)
            );
        }
        for b in report.budgets.iter().filter(|b| b.contract == *contract) {
            let cell = match b.repeats {
                Some(r) => format!(" `{r}` ({:.0}/day) |", b.probes_per_day),
                None => " out of reach |".to_string(),
            };
            row.push_str(&cell);
        }
        let _ = writeln!(out, "{row}");
    }
    let all = report
        .false_quarantines
        .iter()
        .find(|f| f.contract.is_none());
    let (trials, quarantined) = report.healthy_simulated;
    if let Some(f) = all {
        let flagged: u64 = report.measured.values().map(|m| m.false_positives).sum();
        let judged: u64 = report.measured.values().map(|m| m.clean).sum();
        let fewest = report
            .measured
            .iter()
            .min_by_key(|(_, m)| m.clean)
            .map(|(c, m)| format!("{} has {} clean cases", c.as_str(), m.clean))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\nHealthy routes: the checkers flagged {flagged} of {judged} clean replies of the \
             calibration set, so at the measured rates a healthy route is quarantined within {} \
             with chance {} ({quarantined} of {trials} simulated); at the upper ends of the \
             rates' 95 % intervals ({fewest}, the fewest) it could be as high as {}.",
            human_span(FALSE_SPAN),
            percent(f.at_measured),
            percent(f.at_upper)
        );
    }
    let c = &report.check;
    let _ = writeln!(
        out,
        "\nClosed-form check ({} at {} of replies, one checked reply per round, within {}): \
         simulated {} [{}, {}] (99.9 % interval), closed form {}: {}.",
        c.contract.as_str(),
        share(c.share),
        human_span(c.span),
        percent(c.quarantined as f64 / c.trials.max(1) as f64),
        percent(c.interval.lo),
        percent(c.interval.hi),
        percent(c.closed_form),
        if c.agrees() {
            "inside the interval"
        } else {
            "OUTSIDE the interval"
        }
    );
    out
}
