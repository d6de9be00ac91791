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
         the quarantine rule (2 consecutive failing rounds) fires on the degraded route; the \
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
        }
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
         errors, within {}: simulated {} ({}/{}) [{}, {}], closed form {}: {}.",
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
