//! `report merge DIR...`: the shards of one run (`run --shard K/N`, each
//! perhaps on its own machine) joined into one report, as if one machine
//! had run it.
//!
//! The shards are checked first ([`checks`]): every shard of one run, each
//! once, none interrupted. Then their rows are concatenated and put in the
//! one row order ([`crate::order`]), conversation `K + p * N` being the
//! p-th of shard K's manifest, and every statistic is computed again from
//! the rows by the same [`summarize`] a run
//! uses: CPR with its Wilson and clustered intervals (the bootstrap with
//! the run's seed), the groupings, attempts and storms, CLO and its
//! percentiles. Nothing of a shard's summary.json is carried over but what
//! the rows cannot give: what reached each fallback (summed, its shares
//! worked out again) and each shard's requests in flight.

pub mod checks;
#[cfg(test)]
mod tests;

pub use checks::{MergeError, ShardDir};

use crate::config::{MergedShard, RequestsInFlight, ResolvedConfig};
use crate::order::RowOrder;
use crate::report::{read_report, ReportData};
use crate::summary::delivery::{self, Delivery};
use crate::summary::summarize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Merges the shard directories `dirs` into one report's data.
///
/// # Errors
/// A [`MergeError`] naming the directory: one that is not a readable shard,
/// shards of different runs, an interrupted, duplicate or missing shard,
/// or a row of a conversation the shard did not replay.
pub fn merge(dirs: &[PathBuf]) -> Result<ReportData, MergeError> {
    let shards = dirs
        .iter()
        .map(|d| ShardDir::read(d))
        .collect::<Result<Vec<_>, _>>()?;
    let shards = checks::check(shards)?;
    let count = shards.first().map_or(1, |s| s.manifest.shard.count) as usize;
    // Conversation K + p * N is the p-th of shard K.
    let mut index: HashMap<String, usize> = HashMap::new();
    for s in &shards {
        for (p, id) in s.manifest.conversations.iter().enumerate() {
            index.insert(id.clone(), s.manifest.shard.index as usize + p * count);
        }
    }
    let mut turns = Vec::new();
    let mut events = Vec::new();
    let mut attempts = Vec::new();
    let mut deliveries: BTreeMap<String, Vec<Delivery>> = BTreeMap::new();
    for s in &shards {
        let (_, t, e, a) = read_report(&s.dir).map_err(|source| MergeError::Read {
            dir: s.dir.clone(),
            source,
        })?;
        let mine = |id: &str| {
            index
                .get(id)
                .is_some_and(|i| i % count == s.manifest.shard.index as usize)
        };
        let foreign = t
            .iter()
            .map(|t| t.conversation.as_str())
            .chain(e.iter().map(|e| e.conversation.as_str()))
            .find(|id| !mine(id));
        if let Some(id) = foreign {
            return Err(MergeError::Inconsistent {
                dir: s.dir.clone(),
                detail: format!(
                    "its rows hold conversation {id:?}, which is not one of shard {}'s",
                    s.manifest.shard
                ),
            });
        }
        turns.extend(t);
        events.extend(e);
        attempts.extend(a);
        let mut systems = summary_systems(&s.config);
        crate::report::restore_delivery(&s.dir, &mut systems).map_err(|source| {
            MergeError::Read {
                dir: s.dir.clone(),
                source,
            }
        })?;
        for system in systems {
            if let Some(d) = system.fallback_delivery {
                deliveries.entry(system.name).or_default().push(d);
            }
        }
    }
    let config = merged_config(&shards);
    let order = RowOrder::new(
        config.systems.iter().map(String::as_str),
        index.iter().map(|(id, i)| (id.as_str(), *i)),
    );
    order.sort_turns(&mut turns);
    order.sort_events(&mut events);
    order.sort_attempts(&mut attempts);
    let ctx = crate::report::summary_context(&config, crate::run_notes(&config));
    let mut summary = summarize(&ctx, &events, &turns, &attempts);
    for system in &mut summary.systems {
        system.fallback_delivery = deliveries.get(&system.name).and_then(delivery::combine);
    }
    Ok(ReportData {
        config,
        turns,
        events,
        attempts,
        summary,
    })
}

/// Empty system summaries named as `config`'s systems, for reading back
/// what reached each fallback.
fn summary_systems(config: &ResolvedConfig) -> Vec<crate::summary::SystemSummary> {
    let ctx = crate::report::summary_context(config, Vec::new());
    summarize(&ctx, &[], &[], &[]).systems
}

/// The configuration of the merged report: the shards' common settings,
/// no shard, the conversations in flight of all the shards together, and
/// each shard's own in `merged_from`.
fn merged_config(shards: &[ShardDir]) -> ResolvedConfig {
    let first = &shards[0].config;
    ResolvedConfig {
        shard: None,
        interrupted: false,
        interrupted_by: None,
        concurrency: shards.iter().map(|s| s.config.concurrency).sum(),
        requests_in_flight: RequestsInFlight::default(),
        merged_from: shards
            .iter()
            .map(|s| MergedShard {
                shard: s.manifest.shard,
                dir: s.dir.display().to_string(),
                concurrency: s.config.concurrency,
                requests_in_flight: s.config.requests_in_flight,
            })
            .collect(),
        ..first.clone()
    }
}
