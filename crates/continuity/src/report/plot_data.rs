//! The numbers behind the plots that the summary does not carry in raw form:
//! the CLO differences and event-turn latency per conversation length, both
//! computed from the failover events' rows. Pure functions, tested on their
//! own.

use crate::record::{EventRecord, Stage};
use cb_stats::percentile_type7;
use std::collections::BTreeMap;

/// Whether the event is a failover event the client received a 2xx
/// answer for.
fn answered(event: &EventRecord) -> bool {
    event.stage == Stage::Failover && matches!(event.client_status, Some(200..=299))
}

/// CLO differences: for each (run, conversation) where both `treatment` and
/// `baseline` answered 2xx, final-turn latency under `treatment` minus under
/// `baseline`, in (run, conversation) order.
pub fn clo_deltas(events: &[EventRecord], treatment: &str, baseline: &str) -> Vec<f64> {
    let latencies = |system: &str| -> BTreeMap<(u32, &str), f64> {
        events
            .iter()
            .filter(|e| e.system == system && answered(e))
            .map(|e| ((e.run, e.conversation.as_str()), e.latency_ms))
            .collect()
    };
    let base = latencies(baseline);
    latencies(treatment)
        .into_iter()
        .filter_map(|(key, t)| base.get(&key).map(|b| t - b))
        .collect()
}

/// Final-turn latency of one system for one conversation length.
#[derive(Debug, Clone, PartialEq)]
pub struct LengthLatency {
    /// Conversation length in turns.
    pub turns: u32,
    /// Events of this length.
    pub n: usize,
    /// Median final-turn latency, milliseconds.
    pub median: f64,
    /// 95th percentile, milliseconds.
    pub p95: f64,
}

/// Final-turn latency (every event, answered or not: a failure's latency is
/// what the user waited) per conversation length for `system`, by length.
pub fn latency_by_length(events: &[EventRecord], system: &str) -> Vec<LengthLatency> {
    lengths(
        events
            .iter()
            .filter(|e| e.system == system && e.stage == Stage::Failover),
    )
}

/// [`latency_by_length`] per fault mode, modes in report order (those with
/// no failover event left out): each mode holds the connection its own
/// time, and each length draws its own mix of modes, so pooled lengths
/// compare mixes, not lengths.
pub fn latency_by_length_per_mode(
    events: &[EventRecord],
    system: &str,
) -> Vec<(cb_faults::FaultMode, Vec<LengthLatency>)> {
    cb_faults::FaultMode::ALL
        .into_iter()
        .map(|mode| {
            let rows = lengths(events.iter().filter(|e| {
                e.system == system && e.stage == Stage::Failover && e.fault_mode == mode
            }));
            (mode, rows)
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

fn lengths<'a>(events: impl Iterator<Item = &'a EventRecord>) -> Vec<LengthLatency> {
    let mut by_length: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for e in events {
        by_length.entry(e.turns).or_default().push(e.latency_ms);
    }
    by_length
        .into_iter()
        .map(|(turns, mut values)| {
            values.sort_by(f64::total_cmp);
            LengthLatency {
                turns,
                n: values.len(),
                median: percentile_type7(&values, 0.5),
                p95: percentile_type7(&values, 0.95),
            }
        })
        .collect()
}

/// Points of the empirical CDF of `values`: (value, fraction ≤ value),
/// sorted, one per value.
pub fn ecdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    sorted
        .into_iter()
        .enumerate()
        .map(|(i, v)| (v, (i + 1) as f64 / n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(
        run: u32,
        system: &str,
        conversation: &str,
        status: Option<u16>,
        latency: f64,
    ) -> EventRecord {
        EventRecord {
            client_status: status,
            latency_ms: latency,
            ..crate::record::fixture::event(run, system, conversation, 7)
        }
    }

    #[test]
    fn clo_pairs_by_run_and_conversation_where_both_answered() {
        let events = vec![
            event(1, "history", "a", Some(200), 1500.0),
            event(1, "stateless", "a", Some(200), 1000.0),
            // Same conversation, other run: paired separately.
            event(2, "stateless", "a", Some(200), 900.0),
            event(2, "history", "a", Some(200), 400.0),
            // History failed: no pair.
            event(1, "history", "b", Some(502), 100.0),
            event(1, "stateless", "b", Some(200), 1000.0),
            // Stateless timed out: no pair.
            event(1, "history", "c", Some(200), 100.0),
            event(1, "stateless", "c", None, 30_000.0),
            // Only one system ran it: no pair.
            event(1, "history", "d", Some(200), 100.0),
            // Another system is ignored.
            event(1, "gateway", "a", Some(200), 1.0),
        ];
        assert_eq!(
            clo_deltas(&events, "history", "stateless"),
            vec![500.0, -500.0]
        );
        assert!(clo_deltas(&events, "history", "nobody").is_empty());
    }

    #[test]
    fn latency_by_length_groups_per_system_and_length() {
        let mut events = vec![
            event(1, "history", "a", Some(200), 100.0),
            event(1, "history", "b", Some(200), 300.0),
            event(1, "stateless", "a", Some(200), 5.0),
        ];
        let mut long = event(1, "history", "c", None, 900.0);
        long.turns = 9;
        events.push(long);
        let rows = latency_by_length(&events, "history");
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].turns, rows[0].n, rows[0].median), (7, 2, 200.0));
        assert!((rows[0].p95 - 290.0).abs() < 1e-9);
        assert_eq!((rows[1].turns, rows[1].n, rows[1].median), (9, 1, 900.0));
    }

    #[test]
    fn ecdf_reaches_one() {
        let points = ecdf(&[3.0, 1.0, 2.0, 2.0]);
        assert_eq!(points.first(), Some(&(1.0, 0.25)));
        assert_eq!(points.last(), Some(&(3.0, 1.0)));
    }
}
