//! `report.md`: the canary run for a person, from the same
//! [`CanaryReport`] as `summary.json`: the setup and the rules with their
//! numbers, one row per route (state, rounds scored, frozen, pinning not
//! honoured), the contracts per route, every decision, the ignore list, and
//! what the canary deliberately does not judge.

use super::{CanaryReport, EndpointKind};
use crate::clock::human_span;
use cb_contracts::ContractName;
use std::fmt::Write as _;
use std::time::Duration;

/// A table cell: pipes escaped, line breaks flattened.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn state_label(row: &super::RouteReport) -> String {
    use crate::summary::RouteStatus;
    let label = match row.status {
        RouteStatus::Healthy => "healthy",
        RouteStatus::Quarantined => "quarantined",
        RouteStatus::WouldBeQuarantined => "would be quarantined",
        RouteStatus::Control => "control",
    };
    match row.contract {
        Some(c) => format!("{label} ({c})"),
        None => label.to_string(),
    }
}

/// The report as Markdown.
pub fn render(r: &CanaryReport) -> String {
    let mut out = String::new();
    // `write!` into a String cannot fail; the results are ignored on purpose.
    let _ = writeln!(out, "# Canary report\n");
    let endpoint = match (&r.endpoint.kind, &r.endpoint.url) {
        (EndpointKind::Remote, Some(url)) => format!("`{url}`"),
        _ => match r.endpoint.transient_rate {
            Some(rate) if rate > 0.0 => format!(
                "the built-in simulated endpoint (transport errors on {:.0} % of requests)",
                rate * 100.0
            ),
            _ => "the built-in simulated endpoint".to_string(),
        },
    };
    let _ = writeln!(
        out,
        "Probe set `{}` · model `{}` · {} · seed {} · **{}** mode ({} {}).\n",
        r.probe_set_version, r.model, endpoint, r.seed, r.mode, r.tool, r.version
    );
    let clock = match (&r.clock.first_round_at, &r.clock.last_round_at) {
        (Some(a), Some(b)) => format!("clock {a} to {b}"),
        _ => "no round ran".to_string(),
    };
    let numbers = match (r.rounds.first, r.rounds.last) {
        (Some(a), Some(b)) => format!(" (rounds {a} to {b} of the state file)"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "Rounds: {} completed{numbers}, {clock}, every {}{}. Requests: {} (one per probe copy per route per round, with {} copies of each probe (`--repeats`); 2 more per language anomaly to confirm it). Time-to-first-token limit {} ms, probe deadline {} ms.{}\n",
        r.rounds.completed,
        human_span(Duration::from_secs(r.clock.interval_secs)),
        if r.clock.no_wait {
            " on a simulated clock (--no-wait)"
        } else {
            " on the wall clock"
        },
        r.requests,
        r.repeats,
        r.ttft_limit_ms,
        r.probe_timeout_ms,
        if r.interrupted {
            " Interrupted: the round in progress was abandoned; this is what finished."
        } else {
            ""
        }
    );
    let p = &r.policy;
    let control = match &p.control {
        Some(c) => format!(
            "The positive control is `{c}`; the filtering probe was weak or unverified in {} round(s).",
            r.weak_probe_rounds
        ),
        None => "No positive control was configured.".to_string(),
    };
    let _ = writeln!(
        out,
        "Rules: a route failing any contract in {} consecutive scored rounds is quarantined (the evidence names the contracts); {} consecutive fully passing rounds lift it early; quarantines last {}, {}, then {}, and {} without a new one start that over; a quarantine that would leave fewer than {} routes in production (listed this round, not excluded by the reviewed or runtime lists, not quarantined) is not applied and raises an alert for a person, the worst evidence going first; a transport error (timeout before the headers, 429, 5xx) freezes the contracts of its probe only, and a reply from another route freezes the route, never counting; an open stream with no text fails ttft. {control}\n",
        p.failing_rounds,
        p.clean_rounds,
        human_span(p.durations.first),
        human_span(p.durations.second),
        human_span(p.durations.later),
        human_span(p.history_reset),
        p.min_healthy,
    );

    if !r.power.is_empty() {
        let _ = writeln!(
            out,
            "Power: at this budget, a route is quarantined within 24 h with chance at least 90 % when at least this share of its replies (of its sessions, for a defect stuck to sessions) breaks a contract: {}. A rarer defect is likely missed; `canary power` gives the full table and the `--repeats` that catches it.\n",
            crate::power::floors_line(&r.power)
        );
    }
    out.push_str("## Routes\n\n");
    out.push_str("| route | state | time left | probed | scored | clean | frozen | pinning not honoured | quarantines | alerts | requests |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in &r.routes {
        let left = row
            .time_left_secs
            .map(|s| human_span(Duration::from_secs(s)))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "| {} | {} | {left} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&row.route),
            state_label(row),
            row.rounds_probed,
            row.rounds_scored,
            row.rounds_clean,
            row.rounds_frozen,
            row.rounds_pinning_not_honoured,
            row.quarantines,
            row.alerts,
            row.requests
        );
    }

    out.push_str("\n## Contracts per route\n\nScored rounds failed / undetermined / passed (weak passes, on a probe the control showed weak, are added as `+Nw`).\n\n| route |");
    for c in ContractName::ALL {
        let _ = write!(out, " {c} |");
    }
    out.push_str("\n|---|");
    for _ in ContractName::ALL {
        out.push_str("---:|");
    }
    out.push('\n');
    for row in &r.routes {
        let _ = write!(out, "| {} |", cell(&row.route));
        for c in ContractName::ALL {
            match row.contracts.get(&c) {
                Some(t) => {
                    let weak = if t.weak_pass > 0 {
                        format!(" +{}w", t.weak_pass)
                    } else {
                        String::new()
                    };
                    let _ = write!(out, " {}/{}/{}{weak} |", t.fail, t.undetermined, t.pass);
                }
                None => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }

    out.push_str("\n## Decisions\n\n");
    if r.decisions.is_empty() {
        out.push_str("None.\n");
    }
    for d in &r.decisions {
        let contract = d.contract.map(|c| format!(" ({c})")).unwrap_or_default();
        let until = d.until.map(|t| format!(" until {t}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "- round {}, {}: **{}** `{}`{contract}{until}: {}",
            d.round,
            d.time,
            d.action,
            d.route,
            cell(&d.evidence)
        );
    }

    let _ = writeln!(
        out,
        "\n## Ignore list\n\nWritten to `{}` (reviewed list: {}; runtime list: {}; active quarantines only in enforce mode):\n\n```json\n{}```\n",
        r.files.ignore_out,
        r.files.reviewed,
        r.files.runtime.as_deref().unwrap_or("none"),
        r.ignore.to_json()
    );
    let _ = writeln!(
        out,
        "State: `{}` · decision log: `{}`.\n",
        r.files.state, r.files.log
    );
    out.push_str(
        "## What the canary does not judge\n\nEach reply is checked against code-checkable answer contracts only: time to first token, junk before the text, the language asked in, the requested JSON schema, a high-confidence refusal, an empty reply, a reply cut short or filtered. Whether a reply is good, true, helpful or well written is deliberately not judged, and a contract that cannot decide says undetermined, which never counts as a failure.\n",
    );
    out
}
