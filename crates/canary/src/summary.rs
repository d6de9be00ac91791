//! What a person reads after each round: per route, the contracts passed,
//! failed and undetermined, its state and the time left in quarantine, with
//! a Markdown table renderer. Built from the machine and the round's
//! decisions; no I/O.

use super::clock::{human_span, secs, Timestamp};
use super::evidence::{ContractName, ContractVerdict, ProbeKind};
use super::machine::{Machine, RoundDecisions};
use super::policy::Mode;
use super::record::RecordKind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// A route's state as the summary shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteStatus {
    /// Not quarantined.
    Healthy,
    /// Quarantined and enforced.
    Quarantined,
    /// Quarantined in observe mode: tracked, not enforced.
    WouldBeQuarantined,
    /// The positive control: probed, never scored.
    Control,
}

impl RouteStatus {
    fn label(self) -> &'static str {
        match self {
            RouteStatus::Healthy => "healthy",
            RouteStatus::Quarantined => "quarantined",
            RouteStatus::WouldBeQuarantined => "would be quarantined",
            RouteStatus::Control => "control",
        }
    }
}

/// One route after one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteSummary {
    /// The route.
    pub route: String,
    /// Contracts passed this round (weak passes included, and noted).
    pub passed: usize,
    /// Contracts failed this round.
    pub failed: usize,
    /// Contracts undetermined this round.
    pub undetermined: usize,
    /// State after the round.
    pub status: RouteStatus,
    /// The contract of the quarantine, when quarantined.
    pub contract: Option<ContractName>,
    /// Time left in quarantine, in seconds, when quarantined.
    #[serde(serialize_with = "opt_secs")]
    pub time_left: Option<Duration>,
    /// Frozen rounds, failed contracts, weak passes, alerts, in words.
    pub notes: Vec<String>,
}

/// One round's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundSummary {
    /// The round number.
    pub round: u64,
    /// When it ran.
    pub time: Timestamp,
    /// Observe or enforce.
    pub mode: Mode,
    /// Probes whose passes were not evidence of health this round.
    pub weak_probes: Vec<ProbeKind>,
    /// Per route, by name.
    pub routes: Vec<RouteSummary>,
}

fn opt_secs<S: serde::Serializer>(span: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match span {
        Some(d) => secs::serialize(d, s),
        None => s.serialize_none(),
    }
}

/// The summary of the round `decisions` came from, on `machine` as it stands
/// after that round. Routes the machine knows but the round did not probe are
/// listed with a note.
pub fn summarise(machine: &Machine, decisions: &RoundDecisions) -> RoundSummary {
    let mut rows: BTreeMap<String, RouteSummary> = BTreeMap::new();
    for name in machine.state().routes.keys() {
        rows.insert(name.clone(), empty_row(name));
    }
    for scored in &decisions.routes {
        let row = rows
            .entry(scored.route.clone())
            .or_insert_with(|| empty_row(&scored.route));
        row.notes.clear();
        let mut weak = 0;
        let mut failed = Vec::new();
        for (contract, verdict) in &scored.verdicts {
            match verdict {
                ContractVerdict::Pass => row.passed += 1,
                ContractVerdict::WeakPass => {
                    row.passed += 1;
                    weak += 1;
                }
                ContractVerdict::Undetermined => row.undetermined += 1,
                ContractVerdict::Fail { .. } => {
                    row.failed += 1;
                    failed.push(contract.as_str());
                }
            }
        }
        if let Some(reason) = &scored.frozen {
            row.notes.push(format!("frozen: {reason}"));
        }
        if !failed.is_empty() {
            row.notes.push(format!("failed: {}", failed.join(", ")));
        }
        if weak > 0 {
            row.notes
                .push(format!("{weak} weak pass(es), not evidence of health"));
        }
        if scored.control {
            row.status = RouteStatus::Control;
        }
    }
    for row in rows.values_mut() {
        if row.status == RouteStatus::Control {
            continue;
        }
        if let Some(q) = machine
            .route(&row.route)
            .and_then(|r| r.quarantine.as_ref())
        {
            row.status = match decisions.mode {
                Mode::Enforce => RouteStatus::Quarantined,
                Mode::Observe => RouteStatus::WouldBeQuarantined,
            };
            row.contract = Some(q.contract);
            row.time_left = Some(q.until.since(decisions.time));
        }
        if !decisions.routes.iter().any(|r| r.route == row.route) {
            row.notes.push("not probed this round".into());
        }
    }
    for alert in decisions.alerts() {
        if let Some(row) = rows.get_mut(&alert.route) {
            row.notes.push(format!(
                "alert: not quarantined (capacity floor), a person must decide; healthy: {}",
                alert.healthy_routes.join(", ")
            ));
        }
    }
    for r in decisions.of_kind(RecordKind::EarlyRelease) {
        if let Some(row) = rows.get_mut(&r.route) {
            row.notes.push(r.action.clone());
        }
    }
    RoundSummary {
        round: decisions.round,
        time: decisions.time,
        mode: decisions.mode,
        weak_probes: decisions.weak_probes.clone(),
        routes: rows.into_values().collect(),
    }
}

fn empty_row(route: &str) -> RouteSummary {
    RouteSummary {
        route: route.to_string(),
        passed: 0,
        failed: 0,
        undetermined: 0,
        status: RouteStatus::Healthy,
        contract: None,
        time_left: None,
        notes: Vec::new(),
    }
}

/// The round as Markdown: a heading line, the weak-probe warning if any, and
/// one table row per route.
pub fn render_markdown(summary: &RoundSummary) -> String {
    let mut out = String::new();
    // `write!` into a String cannot fail; the results are ignored on purpose.
    let _ = writeln!(
        out,
        "Round {} at {} ({} mode)\n",
        summary.round, summary.time, summary.mode
    );
    if !summary.weak_probes.is_empty() {
        let probes: Vec<String> = summary.weak_probes.iter().map(|p| p.to_string()).collect();
        let _ = writeln!(
            out,
            "Weak probe(s) this round: {}; their passes are not evidence of health.\n",
            probes.join(", ")
        );
    }
    out.push_str("| route | state | passed | failed | undetermined | time left | notes |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---|\n");
    for row in &summary.routes {
        let state = match row.contract {
            Some(c) => format!("{} ({c})", row.status.label()),
            None => row.status.label().to_string(),
        };
        let left = row.time_left.map(human_span).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&row.route),
            state,
            row.passed,
            row.failed,
            row.undetermined,
            left,
            cell(&row.notes.join("; "))
        );
    }
    out
}

/// A table cell: pipes escaped, newlines flattened.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Outcome, ProbeEvidence, RouteEvidence};
    use crate::policy::Policy;

    fn route(name: &str, results: &[(ContractName, Outcome)]) -> RouteEvidence {
        let mut e = RouteEvidence::new(name);
        e.probes = vec![ProbeEvidence::new(
            ProbeKind::Roleplay,
            results.iter().cloned(),
        )];
        e
    }

    #[test]
    fn the_table_shows_counts_state_and_time_left() {
        let policy = Policy {
            enforce: true,
            ..Policy::default()
        };
        let bad = || {
            route(
                "bad|x",
                &[
                    (ContractName::JunkPrefix, Outcome::fail("\x00\x01")),
                    (ContractName::Empty, Outcome::Pass),
                    (ContractName::Ttft, Outcome::undetermined("no token")),
                ],
            )
        };
        let good = |n: &str| route(n, &[(ContractName::JunkPrefix, Outcome::Pass)]);
        let mut m = Machine::new();
        let t0 = Timestamp::from_unix(1_700_000_000).unwrap();
        m.round(t0, &[bad(), good("a"), good("b"), good("c")], &policy);
        let t1 = t0.plus(Duration::from_secs(1800));
        let d = m.round(t1, &[bad(), good("a"), good("c")], &policy);
        let s = summarise(&m, &d);
        let bad_row = s.routes.iter().find(|r| r.route == "bad|x").unwrap();
        assert_eq!(
            (bad_row.passed, bad_row.failed, bad_row.undetermined),
            (1, 1, 1)
        );
        assert_eq!(bad_row.status, RouteStatus::Quarantined);
        assert_eq!(bad_row.time_left, Some(crate::clock::DAY));
        let b_row = s.routes.iter().find(|r| r.route == "b").unwrap();
        assert_eq!(b_row.notes, ["not probed this round"]);

        let md = render_markdown(&s);
        assert_eq!(
            md,
            "Round 2 at 2023-11-14T22:43:20Z (enforce mode)\n\n\
             | route | state | passed | failed | undetermined | time left | notes |\n\
             |---|---|---:|---:|---:|---:|---|\n\
             | a | healthy | 1 | 0 | 0 | - |  |\n\
             | b | healthy | 0 | 0 | 0 | - | not probed this round |\n\
             | bad\\|x | quarantined (junk_prefix) | 1 | 1 | 1 | 1d | failed: junk_prefix |\n\
             | c | healthy | 1 | 0 | 0 | - |  |\n"
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["routes"][2]["time_left"], 86_400);
        assert_eq!(json["routes"][2]["status"], "quarantined");
    }

    #[test]
    fn observe_mode_and_the_control_are_labelled() {
        let policy = Policy {
            control: Some("ctl".into()),
            ..Policy::default()
        };
        let bad = || route("bad", &[(ContractName::Schema, Outcome::fail("x"))]);
        let ctl = || route("ctl", &[(ContractName::Refusal, Outcome::Pass)]);
        let good = |n: &str| route(n, &[(ContractName::Refusal, Outcome::Pass)]);
        let mut m = Machine::new();
        let t0 = Timestamp::from_unix(0).unwrap();
        m.round(t0, &[bad(), ctl(), good("a"), good("b")], &policy);
        let d = m.round(
            t0.plus(Duration::from_secs(60)),
            &[bad(), ctl(), good("a"), good("b")],
            &policy,
        );
        let s = summarise(&m, &d);
        let status: Vec<_> = s
            .routes
            .iter()
            .map(|r| (r.route.as_str(), r.status))
            .collect();
        assert_eq!(
            status,
            [
                ("a", RouteStatus::Healthy),
                ("b", RouteStatus::Healthy),
                ("bad", RouteStatus::WouldBeQuarantined),
                ("ctl", RouteStatus::Control),
            ]
        );
        let md = render_markdown(&s);
        assert!(md.contains("Weak probe(s) this round: roleplay"), "{md}");
        assert!(md.contains("would be quarantined (schema)"), "{md}");
        assert!(md.contains("1 weak pass(es)"), "{md}");
    }
}
