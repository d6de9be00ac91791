//! The figures past the fault, one definition each (DESIGN.md, "Past the
//! fault"), over failover events only, each with its pooled Wilson interval
//! and, where it is a share of conversations, the clustered one:
//!
//! - *preservation by turns since the fault*: per probe at or after the
//!   event turn, preserved / failover events that have a probe that many
//!   turns after the fault (a probe never reached counts as an error);
//! - *survival*: failover events whose every probe from the event turn on
//!   was preserved / failover events;
//! - *return to primary*: failover events of which a turn after the outage
//!   was served by the primary / failover events with a turn sent after
//!   the outage; and after how many turns it came back;
//! - *tool-call integrity*: failover events whose requests from the event
//!   turn on were never refused for their tool calls by any upstream /
//!   failover events whose requests carried tool calls.
//!
//! The section is present only when the run measured something past the
//! fault: a probe before the final turn, a turn after the outage, or a tool
//! call. The default profile and dataset (one faulted final turn, no tool
//! calls) leave it out.

use super::GroupRate;
use crate::past::Server;
use crate::record::{EventRecord, Stage};
use cb_base::record::ToolCalls;
use cb_scoring::Verdict;
use cb_stats::{cluster_bootstrap, rate, Interval, Rate, CONFIDENCE};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most reasons kept per figure.
const MAX_REASONS: usize = 3;

/// A share of failover events with both intervals, and why the first few
/// that fell short did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastRate {
    /// The share, with its pooled Wilson interval.
    pub rate: Rate,
    /// Seeded cluster bootstrap over conversations; `None` when the
    /// denominator is empty.
    pub clustered: Option<Interval>,
    /// Up to three events that fell short: `run R, CONVERSATION: why`.
    pub reasons: Vec<String>,
}

/// What the run measured past the fault, for one system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastFault {
    /// Preservation of the probes by turns since the fault ("0" is the
    /// event turn), in order.
    pub by_turns_since: Vec<GroupRate>,
    /// Every probe from the event turn on preserved.
    pub survival: PastRate,
    /// A turn after the outage served by the primary again.
    pub return_to_primary: PastRate,
    /// Turns after the outage until the primary served one: (turns, events),
    /// for the events that came back.
    pub returned_after: Vec<(u32, u64)>,
    /// Failover events with no turn sent after the outage (the outage ran
    /// to the conversation's end, or it broke): beside the return figure.
    pub no_turn_after_outage: u64,
    /// No request from the event turn on refused for its tool calls.
    pub tool_integrity: PastRate,
    /// Failover events whose requests carried no tool call: beside the
    /// integrity figure.
    pub without_tool_calls: u64,
}

impl PastFault {
    /// The three figures in one line, with counts (`n/a` for an empty
    /// denominator): what the terminal table and the grade print.
    pub fn line(&self) -> String {
        use cb_report::format::rate_with_counts;
        format!(
            "conversation survival {} · return to primary {} · tool-call integrity {}",
            rate_with_counts(&self.survival.rate),
            rate_with_counts(&self.return_to_primary.rate),
            rate_with_counts(&self.tool_integrity.rate)
        )
    }
}

/// Builds one [`PastRate`] over `events` for which `applies`, a success
/// when `kept`; `why` says why one fell short.
fn past_rate(
    events: &[&EventRecord],
    seed: u64,
    resamples: u32,
    applies: impl Fn(&EventRecord) -> bool,
    kept: impl Fn(&EventRecord) -> bool,
    why: impl Fn(&EventRecord) -> String,
) -> PastRate {
    let mut clusters: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut reasons = Vec::new();
    for e in events.iter().filter(|e| applies(e)) {
        let c = clusters.entry(e.conversation.as_str()).or_default();
        let ok = kept(e);
        c.0 += u64::from(ok);
        c.1 += 1;
        if !ok && reasons.len() < MAX_REASONS {
            reasons.push(format!("run {}, {}: {}", e.run, e.conversation, why(e)));
        }
    }
    let (kept_n, trials) = clusters
        .values()
        .fold((0, 0), |(k, t), c| (k + c.0, t + c.1));
    let clusters: Vec<(u64, u64)> = clusters.into_values().collect();
    PastRate {
        rate: rate(kept_n, trials),
        clustered: (trials > 0).then(|| cluster_bootstrap(&clusters, resamples, CONFIDENCE, seed)),
        reasons,
    }
}

/// The first probe from the event turn on that was not preserved, in
/// words.
fn first_lost(e: &EventRecord) -> String {
    e.probes
        .0
        .iter()
        .find(|p| p.verdict != Verdict::Preserved)
        .map_or_else(String::new, |p| {
            let since = p.turn.saturating_sub(e.turn);
            let when = if since == 0 {
                "the faulted turn".to_string()
            } else {
                format!("{} after the fault", turns_word(since))
            };
            format!(
                "the probe at turn {} ({when}) was {}",
                p.turn,
                p.verdict.as_str()
            )
        })
}

fn turns_word(n: u32) -> String {
    if n == 1 {
        "1 turn".into()
    } else {
        format!("{n} turns")
    }
}

/// Who served the turns after the outage, in words.
fn never_returned(e: &EventRecord) -> String {
    let by = |s: Server| e.served_after.0.iter().filter(|t| t.by == s).count();
    format!(
        "turns {} to {} after the outage: {} served by the fallback, {} by neither upstream",
        e.outage_end + 1,
        e.served_after.0.last().map_or(e.outage_end, |t| t.turn),
        by(Server::Fallback),
        by(Server::Neither)
    )
}

/// Whether a run measured anything past the fault: a probe before the
/// final one, a turn after the outage or a tool call, in any event of any
/// system and stage. Decided over the whole run, so that every system of
/// it gets the section (`n/a` where it measured nothing).
pub fn measured_past(events: &[EventRecord]) -> bool {
    events.iter().any(|e| {
        e.probes.0.len() > 1
            || e.outage_end > e.turn
            || !e.served_after.0.is_empty()
            || e.tools != ToolCalls::None
    })
}

/// The figures past the fault of one system's `events` (all stages; only
/// failover events count), or `None` when the run measured nothing past
/// the fault (`measured`, [`measured_past`]).
pub fn past_fault(
    events: &[&EventRecord],
    measured: bool,
    seed: u64,
    resamples: u32,
) -> Option<PastFault> {
    if !measured {
        return None;
    }
    let failover: Vec<&EventRecord> = events
        .iter()
        .copied()
        .filter(|e| e.stage == Stage::Failover)
        .collect();
    let mut by_since: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for e in &failover {
        for p in &e.probes.0 {
            let g = by_since.entry(p.turn.saturating_sub(e.turn)).or_default();
            g.0 += u64::from(p.verdict == Verdict::Preserved);
            g.1 += 1;
        }
    }
    let mut returned_after: BTreeMap<u32, u64> = BTreeMap::new();
    for e in &failover {
        if let Some(t) = e.served_after.0.iter().find(|t| t.by == Server::Primary) {
            *returned_after
                .entry(t.turn.saturating_sub(e.outage_end))
                .or_default() += 1;
        }
    }
    Some(PastFault {
        by_turns_since: by_since
            .into_iter()
            .map(|(k, (s, t))| GroupRate {
                key: k.to_string(),
                rate: rate(s, t),
            })
            .collect(),
        survival: past_rate(
            &failover,
            seed,
            resamples,
            |_| true,
            |e| {
                !e.probes.0.is_empty() && e.probes.0.iter().all(|p| p.verdict == Verdict::Preserved)
            },
            first_lost,
        ),
        return_to_primary: past_rate(
            &failover,
            seed,
            resamples,
            |e| !e.served_after.0.is_empty(),
            |e| e.served_after.0.iter().any(|t| t.by == Server::Primary),
            never_returned,
        ),
        returned_after: returned_after.into_iter().collect(),
        no_turn_after_outage: failover
            .iter()
            .filter(|e| e.served_after.0.is_empty())
            .count() as u64,
        tool_integrity: past_rate(
            &failover,
            seed,
            resamples,
            |e| e.tools != ToolCalls::None,
            |e| e.tools == ToolCalls::Paired,
            |e| e.tools_reason.clone(),
        ),
        without_tool_calls: failover
            .iter()
            .filter(|e| e.tools == ToolCalls::None)
            .count() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::past::{ProbeVerdict, ServedTurn, TurnList};
    use crate::record::fixture::event;

    fn outage_event(
        conversation: &str,
        probes: &str,
        served: &str,
        tools: ToolCalls,
    ) -> EventRecord {
        EventRecord {
            turn: 3,
            outage_end: 5,
            probes: probes.parse::<TurnList<ProbeVerdict>>().unwrap(),
            served_after: served.parse::<TurnList<ServedTurn>>().unwrap(),
            tools,
            tools_reason: if tools == ToolCalls::Refused {
                "turn 4: the fallback refused the request's tool calls (HTTP 400)".into()
            } else {
                String::new()
            },
            ..event(1, "history", conversation, 10)
        }
    }

    #[test]
    fn nothing_past_the_fault_leaves_the_section_out() {
        let e = EventRecord {
            probes: "10:preserved".parse().unwrap(),
            ..event(1, "history", "c001", 10)
        };
        assert!(!measured_past(std::slice::from_ref(&e)));
        assert_eq!(past_fault(&[&e], false, 1, 100), None);
    }

    #[test]
    fn each_figure_counts_its_own_denominator() {
        let kept = outage_event(
            "c001",
            "3:preserved 6:preserved 10:preserved",
            "6:primary 7:primary",
            ToolCalls::Paired,
        );
        let gap = outage_event(
            "c002",
            "3:preserved 6:lost 10:preserved",
            "6:fallback 7:primary",
            ToolCalls::None,
        );
        let stuck = outage_event(
            "c003",
            "3:preserved 6:preserved 10:error",
            "6:fallback 7:neither",
            ToolCalls::Refused,
        );
        let ended = outage_event("c004", "3:preserved", "", ToolCalls::None);
        let broke = EventRecord {
            stage: Stage::BrokeBefore,
            ..outage_event("c005", "3:error", "", ToolCalls::None)
        };
        let all = [
            kept.clone(),
            gap.clone(),
            stuck.clone(),
            ended.clone(),
            broke.clone(),
        ];
        assert!(measured_past(&all));
        let p = past_fault(&[&kept, &gap, &stuck, &ended, &broke], true, 7, 200).unwrap();
        let keys: Vec<(&str, u64, u64)> = p
            .by_turns_since
            .iter()
            .map(|g| (g.key.as_str(), g.rate.successes, g.rate.trials))
            .collect();
        assert_eq!(keys, vec![("0", 4, 4), ("3", 2, 3), ("7", 2, 3)]);
        assert_eq!((p.survival.rate.successes, p.survival.rate.trials), (2, 4));
        assert!(
            p.survival.reasons[0].contains("turn 6 (3 turns after the fault) was lost"),
            "{:?}",
            p.survival.reasons
        );
        assert_eq!(
            (
                p.return_to_primary.rate.successes,
                p.return_to_primary.rate.trials
            ),
            (2, 3)
        );
        assert_eq!(p.returned_after, vec![(1, 1), (2, 1)]);
        assert_eq!(p.no_turn_after_outage, 1);
        assert!(p.return_to_primary.reasons[0].contains("1 served by the fallback, 1 by neither"));
        assert_eq!(
            (
                p.tool_integrity.rate.successes,
                p.tool_integrity.rate.trials
            ),
            (1, 2)
        );
        assert_eq!(p.without_tool_calls, 2);
        assert!(p.tool_integrity.reasons[0].contains("turn 4: the fallback refused"));
        assert!(p.survival.clustered.is_some());
    }

    #[test]
    fn a_system_with_no_failover_event_still_gets_the_section_as_na() {
        let broke = EventRecord {
            stage: Stage::BrokeBefore,
            ..outage_event("c001", "3:error", "", ToolCalls::None)
        };
        let p = past_fault(&[&broke], true, 1, 100).unwrap();
        assert_eq!(p.survival.rate.rate, None);
        assert!(
            p.line().contains("conversation survival n/a (0/0)"),
            "{}",
            p.line()
        );
    }

    #[test]
    fn an_empty_denominator_is_na_not_zero() {
        let e = outage_event(
            "c001",
            "3:preserved 6:preserved 10:preserved",
            "",
            ToolCalls::None,
        );
        let p = past_fault(&[&e], true, 1, 100).unwrap();
        assert_eq!(p.return_to_primary.rate.rate, None);
        assert_eq!(p.return_to_primary.clustered, None);
        assert_eq!(p.tool_integrity.rate.rate, None);
        assert_eq!(p.survival.rate.rate, Some(1.0));
    }
}
