//! CLO, the continuity latency overhead: what forwarding the history costs,
//! as `history`'s event-turn latency minus `stateless`'s on the same
//! (run, conversation). The one figure of a [`Summary`](super::Summary)
//! that compares two systems.

use super::build::{answered, is_failover};
use super::{CloByLength, CloSummary};
use crate::record::EventRecord;
use cb_proxy::ProxyMode;
use cb_stats::describe;
use std::collections::{BTreeMap, HashMap};

/// The reference system that forwards the full history (CLO treatment).
pub const HISTORY_SYSTEM: &str = ProxyMode::History.as_str();

/// The reference system that forwards only the last message (CLO baseline).
pub const STATELESS_SYSTEM: &str = ProxyMode::Stateless.as_str();

/// CLO: for each (run, conversation) that is a failover event answered 2xx
/// under both reference systems, history latency minus stateless latency,
/// in all and by conversation length.
pub(super) fn clo(events: &[EventRecord]) -> CloSummary {
    let counted = |e: &&EventRecord| is_failover(e) && answered(e);
    let stateless: HashMap<(u32, &str), f64> = events
        .iter()
        .filter(|e| e.system == STATELESS_SYSTEM)
        .filter(counted)
        .map(|e| ((e.run, e.conversation.as_str()), e.latency_ms))
        .collect();
    let mut deltas = Vec::new();
    let mut by_length: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e.system == HISTORY_SYSTEM)
        .filter(counted)
    {
        if let Some(base) = stateless.get(&(e.run, e.conversation.as_str())) {
            let delta = e.latency_ms - base;
            deltas.push(delta);
            by_length.entry(e.turns).or_default().push(delta);
        }
    }
    CloSummary {
        treatment: HISTORY_SYSTEM.into(),
        baseline: STATELESS_SYSTEM.into(),
        delta_ms: describe(&deltas),
        by_length: by_length
            .into_iter()
            .map(|(turns, d)| CloByLength {
                turns,
                delta_ms: describe(&d),
            })
            .collect(),
    }
}
