//! Upstream attempts on the event turn of each failover event, and the
//! retry storm they can show: an event that cost too many attempts, or a
//! retry sent before the `Retry-After` an upstream asked. A part of every
//! [`SystemSummary`](super::SystemSummary), apart because it reads the
//! upstreams' attempt log rather than the events.

use super::AttemptSummary;
use crate::record::EventRecord;
use cb_base::record::AttemptRecord;
use cb_faults::Role;
use cb_stats::describe;
use std::collections::{BTreeMap, HashMap};

/// Attempts of one (run, system, conversation, turn).
pub(super) type AttemptsByTurn<'a> = HashMap<(u32, &'a str, &'a str, u32), Vec<&'a AttemptRecord>>;

/// Upstream attempts on the event turn of each failover event: those logged
/// for the event's (run, system, conversation) at its event turn.
pub(super) fn attempt_summary(
    system: &str,
    events: &[&EventRecord],
    by_turn: &AttemptsByTurn<'_>,
) -> AttemptSummary {
    let mut primary_total = 0u64;
    let mut fallback_total = 0u64;
    let mut fallback_429s = 0u64;
    let mut histogram: BTreeMap<u32, u64> = BTreeMap::new();
    let mut gaps = Vec::new();
    let mut early_retries = 0u64;
    for e in events {
        let mut mine: Vec<&AttemptRecord> = by_turn
            .get(&(e.run, system, e.conversation.as_str(), e.turn))
            .cloned()
            .unwrap_or_default();
        mine.sort_by(|a, b| a.arrived_ms.total_cmp(&b.arrived_ms));
        let primary = mine.iter().filter(|a| a.role == Role::Primary).count() as u64;
        let fallback = mine.len() as u64 - primary;
        primary_total += primary;
        fallback_total += fallback;
        fallback_429s += mine
            .iter()
            .filter(|a| a.role == Role::Fallback && a.status == Some(429))
            .count() as u64;
        *histogram.entry(mine.len() as u32).or_default() += 1;
        gaps.extend(mine.windows(2).map(|w| w[1].arrived_ms - w[0].arrived_ms));
        early_retries += early_retries_of(&mine);
    }
    let n = events.len() as f64;
    let mean = |total: u64| {
        if events.is_empty() {
            0.0
        } else {
            total as f64 / n
        }
    };
    let max_per_event = histogram.keys().next_back().copied().unwrap_or(0);
    let mut storm_reasons = Vec::new();
    if max_per_event > STORM_MAX_ATTEMPTS {
        let over: u64 = histogram
            .range(STORM_MAX_ATTEMPTS + 1..)
            .map(|(_, n)| n)
            .sum();
        storm_reasons.push(format!(
            "{over} event(s) cost more than {STORM_MAX_ATTEMPTS} upstream attempts (at most {max_per_event})"
        ));
    }
    if early_retries > 0 {
        storm_reasons.push(format!(
            "{early_retries} retr{} came sooner than the Retry-After the upstream asked",
            if early_retries == 1 { "y" } else { "ies" }
        ));
    }
    AttemptSummary {
        primary_mean: mean(primary_total),
        fallback_mean: mean(fallback_total),
        max_per_event,
        per_event: histogram.into_iter().collect(),
        fallback_429s,
        gaps_ms: describe(&gaps),
        early_retries,
        storm: !storm_reasons.is_empty(),
        storm_reasons,
    }
}

/// Most upstream attempts one event may cost before it counts as a storm:
/// one primary attempt, one fallback attempt and up to four retries. The
/// reference proxies need at most five (1 + 1 + 3 retries on a 429).
pub const STORM_MAX_ATTEMPTS: u32 = 6;

/// Slack for timer granularity when comparing a retry's gap with the
/// `Retry-After` asked.
const RETRY_AFTER_SLACK_MS: f64 = 10.0;

/// Retries of one event (attempts sorted by arrival) that reached the same
/// upstream sooner after a 429 than its `Retry-After`.
fn early_retries_of(attempts: &[&AttemptRecord]) -> u64 {
    let mut early = 0;
    for (i, a) in attempts.iter().enumerate() {
        let (Some(429), Some(wait)) = (a.status, a.retry_after_ms) else {
            continue;
        };
        let next_same = attempts[i + 1..].iter().find(|b| b.role == a.role);
        if let Some(b) = next_same {
            if b.arrived_ms - a.arrived_ms + RETRY_AFTER_SLACK_MS < wait as f64 {
                early += 1;
            }
        }
    }
    early
}
