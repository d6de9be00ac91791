//! Builds a [`Summary`] from the recorded rows, with the definitions of
//! DESIGN.md and nothing else: the stage of every planned event; CPR over
//! failover events only (errors and undetermined count as not preserved),
//! pooled Wilson and clustered bootstrap intervals, availability,
//! conditional CPR, groupings, upstream attempts of the event turn
//! ([`attempts`](super::attempts)) and CLO ([`clo`](super::clo)), all over
//! failover events; conversation survival over every planned event; context
//! bleed over every answer.
//!
//! Pure: the same rows in any order give the same summary.

use super::attempts::{attempt_summary, AttemptsByTurn};
use super::clo::{clo, HISTORY_SYSTEM, STATELESS_SYSTEM};
use super::{
    BleedExample, BleedSummary, ContractRate, GroupRate, InFlight, StageCounts, StageReason,
    Summary, SystemSummary, VerdictCounts,
};
use crate::record::{EventRecord, Stage};
use cb_base::record::{AttemptRecord, TurnRecord};
use cb_contracts::{ContractName, Outcome};
use cb_driver::Shard;
use cb_faults::FaultMode;
use cb_scoring::{Verdict, VerdictMethod};
use cb_stats::{cluster_bootstrap, describe, rate, CONFIDENCE, PERCENTILE_METHOD};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Most bleed examples kept per system.
pub const MAX_BLEED_EXAMPLES: usize = 10;

/// What a summary needs besides the rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryContext {
    /// Master seed (the bootstrap derives its seed from it).
    pub seed: u64,
    /// Number of runs.
    pub runs: u32,
    /// Conversations in the dataset.
    pub conversations: u32,
    /// Dataset file.
    pub dataset: String,
    /// Fault profile file.
    pub fault_profile: String,
    /// Systems, in report order.
    pub systems: Vec<String>,
    /// Bootstrap resamples of the clustered interval.
    pub bootstrap_resamples: u32,
    /// Notes to carry into the summary.
    pub notes: Vec<String>,
    /// Whether Ctrl-C or SIGTERM cut the run short.
    pub interrupted: bool,
    /// Which signal did, when known.
    pub interrupted_by: Option<cb_base::stop::Stop>,
    /// The shard the rows cover, for a shard's own report.
    pub shard: Option<Shard>,
    /// The shards a merged report joined.
    pub merged_shards: Option<u32>,
    /// Requests in flight in each process that replayed.
    pub requests_in_flight: Vec<InFlight>,
}

/// Least share of planned events that must reach the fault before the
/// report stops warning that its figures rest on few events.
pub const MIN_FAILOVER_SHARE: f64 = 0.9;

/// Most stage reasons kept per system.
pub const MAX_STAGE_REASONS: usize = 5;

/// Summarises events, turns and attempts.
///
/// One [`SystemSummary`] per entry of `ctx.systems`, in that order (a system
/// without events appears with zero counts); rows of systems not listed are
/// ignored. Every figure on CPR (its intervals, availability, the groupings,
/// attempts, latency, CLO) counts only `failover` events; the stages are
/// counted beside them. The clustered interval of every system uses the
/// bootstrap stream `seed::rng(ctx.seed, "bootstrap", 0)`, so systems are
/// compared on the same resamples. CLO is present when both `history` and
/// `stateless` are listed.
pub fn summarize(
    ctx: &SummaryContext,
    events: &[EventRecord],
    turns: &[TurnRecord],
    attempts: &[AttemptRecord],
) -> Summary {
    // Attempts of one (run, system, conversation, turn), for the event
    // turns only: the figures built on them are per event, and indexing
    // every turn's attempts would cost a run of 10,000 conversations some
    // 40 MB for rows never read.
    let event_turns: HashSet<(u32, &str, &str, u32)> = events
        .iter()
        .map(|e| (e.run, e.system.as_str(), e.conversation.as_str(), e.turn))
        .collect();
    let mut by_turn: HashMap<(u32, &str, &str, u32), Vec<&AttemptRecord>> = HashMap::new();
    for a in attempts {
        let key = (a.run, a.system.as_str(), a.conversation.as_str(), a.turn);
        if !event_turns.contains(&key) {
            continue;
        }
        by_turn.entry(key).or_default().push(a);
    }

    let past = super::past::measured_past(events);
    let systems = ctx
        .systems
        .iter()
        .map(|name| {
            let mut mine: Vec<&EventRecord> = events.iter().filter(|e| e.system == *name).collect();
            // Rows arrive in completion order; sort so examples and sums are
            // the same whatever the order.
            mine.sort_by(|a, b| (a.run, &a.conversation).cmp(&(b.run, &b.conversation)));
            let answers: Vec<&TurnRecord> = turns
                .iter()
                .filter(|t| t.system == *name && t.error.is_none())
                .collect();
            system_summary(ctx, name, &mine, &answers, &by_turn, past)
        })
        .collect();

    let has = |s: &str| ctx.systems.iter().any(|x| x == s);
    let clo = (has(HISTORY_SYSTEM) && has(STATELESS_SYSTEM)).then(|| clo(events));

    Summary {
        tool: "continuity-bench".into(),
        version: cb_base::VERSION.into(),
        seed: ctx.seed,
        interrupted: ctx.interrupted,
        interrupted_by: ctx.interrupted_by,
        runs: ctx.runs,
        conversations: ctx.conversations,
        dataset: ctx.dataset.clone(),
        fault_profile: ctx.fault_profile.clone(),
        confidence: CONFIDENCE,
        percentile_method: PERCENTILE_METHOD.into(),
        bootstrap_resamples: ctx.bootstrap_resamples,
        systems,
        clo,
        notes: ctx.notes.clone(),
        shard: ctx.shard,
        merged_shards: ctx.merged_shards,
        requests_in_flight: ctx.requests_in_flight.clone(),
    }
}

pub(super) fn answered(e: &EventRecord) -> bool {
    e.client_status.is_some_and(|s| (200..300).contains(&s))
}

fn preserved(e: &EventRecord) -> bool {
    e.verdict == Verdict::Preserved
}

pub(super) fn is_failover(e: &EventRecord) -> bool {
    e.stage == Stage::Failover
}

/// CPR of each group, groups in key order.
fn cpr_by<K: Ord>(
    events: &[&EventRecord],
    key: impl Fn(&EventRecord) -> K,
    name: impl Fn(&K) -> String,
) -> Vec<GroupRate> {
    let mut groups: BTreeMap<K, (u64, u64)> = BTreeMap::new();
    for e in events {
        let g = groups.entry(key(e)).or_default();
        g.0 += u64::from(preserved(e));
        g.1 += 1;
    }
    groups
        .iter()
        .map(|(k, (s, t))| GroupRate {
            key: name(k),
            rate: rate(*s, *t),
        })
        .collect()
}

/// The stages of `all` (every planned event of one system), the commonest
/// reasons, and the warning when too few reached the fault.
fn stages(name: &str, all: &[&EventRecord]) -> (StageCounts, Vec<StageReason>, Option<String>) {
    let mut counts = StageCounts::default();
    let mut reasons: BTreeMap<(Stage, &str), u64> = BTreeMap::new();
    for e in all {
        match e.stage {
            Stage::Failover => counts.failover += 1,
            Stage::BrokeBefore => counts.broke_before += 1,
            Stage::NotExercised => counts.not_exercised += 1,
        }
        if e.stage != Stage::Failover {
            *reasons
                .entry((e.stage, e.stage_reason.as_str()))
                .or_default() += 1;
        }
    }
    let mut reasons: Vec<StageReason> = reasons
        .into_iter()
        .map(|((stage, reason), events)| StageReason {
            stage,
            reason: reason.to_string(),
            events,
        })
        .collect();
    // Commonest first; the sort is stable, so ties keep stage and text order.
    reasons.sort_by_key(|r| std::cmp::Reverse(r.events));
    reasons.truncate(MAX_STAGE_REASONS);
    let total = counts.total();
    let warning = (total > 0 && (counts.failover as f64) < MIN_FAILOVER_SHARE * total as f64).then(
        || {
            let cause = reasons.first().map_or_else(String::new, |r| {
                format!(
                    "; commonest: {} ({} event{}): {}",
                    r.stage.as_str(),
                    r.events,
                    if r.events == 1 { "" } else { "s" },
                    r.reason
                )
            });
            format!(
                "{name}: only {} of {total} planned events reached the fault ({} broke before it, {} never reached the faulted upstream){cause}",
                counts.failover, counts.broke_before, counts.not_exercised
            )
        },
    );
    (counts, reasons, warning)
}

/// Context bleed over every answer of one system, and the failover events
/// whose final answer bled.
fn bleed(events: &[&EventRecord], answers: &[&TurnRecord]) -> BleedSummary {
    let bleeding_events: Vec<&&EventRecord> = events
        .iter()
        .filter(|e| !e.bleed_from.trim().is_empty())
        .collect();
    let bleeding_answers: Vec<&&TurnRecord> = answers
        .iter()
        .filter(|t| !t.bleed_from.is_empty())
        .collect();
    let mut by_turn: BTreeMap<u32, u64> = BTreeMap::new();
    for t in &bleeding_answers {
        *by_turn.entry(t.turn).or_default() += 1;
    }
    let mut examples: Vec<BleedExample> = bleeding_events
        .iter()
        .map(|e| BleedExample {
            run: e.run,
            conversation: e.conversation.clone(),
            turn: e.turns,
            anchor_of: e.bleed_from.clone(),
            answer_excerpt: e.answer_excerpt.clone(),
        })
        .collect();
    let mut earlier: Vec<&TurnRecord> = bleeding_answers
        .iter()
        .filter(|t| !t.is_final)
        .map(|t| **t)
        .collect();
    earlier.sort_by(|a, b| (a.run, &a.conversation, a.turn).cmp(&(b.run, &b.conversation, b.turn)));
    examples.extend(earlier.into_iter().map(|t| BleedExample {
        run: t.run,
        conversation: t.conversation.clone(),
        turn: t.turn,
        anchor_of: t.bleed_from.join(";"),
        answer_excerpt: t.answer.chars().take(160).collect(),
    }));
    examples.truncate(MAX_BLEED_EXAMPLES);
    BleedSummary {
        events: bleeding_events.len() as u64,
        answers: answers.len() as u64,
        answers_bleeding: bleeding_answers.len() as u64,
        by_turn: by_turn.into_iter().collect(),
        examples,
    }
}

/// The share of delivered answers that broke each contract, over the
/// answers it applied to and decided; contracts that applied to nothing
/// are left out.
fn contract_rates(answers: &[&TurnRecord]) -> Vec<ContractRate> {
    let mut tally: BTreeMap<ContractName, (u64, u64, u64)> = BTreeMap::new();
    for t in answers {
        for check in &t.contracts {
            let entry = tally.entry(check.name).or_default();
            entry.0 += 1;
            match check.outcome {
                Outcome::Fail { .. } => entry.1 += 1,
                Outcome::Undetermined { .. } => entry.2 += 1,
                Outcome::Pass => {}
            }
        }
    }
    ContractName::ALL
        .iter()
        .filter_map(|name| {
            let (applied, failed, undetermined) = tally.get(name).copied()?;
            Some(ContractRate {
                contract: *name,
                applied,
                undetermined,
                broken: rate(failed, applied - undetermined),
            })
        })
        .collect()
}

fn system_summary(
    ctx: &SummaryContext,
    name: &str,
    all: &[&EventRecord],
    answers: &[&TurnRecord],
    by_turn: &AttemptsByTurn<'_>,
    past: bool,
) -> SystemSummary {
    let (stage_counts, stage_reasons, warning) = stages(name, all);
    let events: Vec<&EventRecord> = all.iter().copied().filter(|e| is_failover(e)).collect();
    let events = events.as_slice();
    let n = events.len() as u64;
    let mut verdicts = VerdictCounts::default();
    for e in events {
        match e.verdict {
            Verdict::Preserved => verdicts.preserved += 1,
            Verdict::Lost => verdicts.lost += 1,
            Verdict::Error => verdicts.error += 1,
            Verdict::Undetermined => verdicts.undetermined += 1,
        }
        match e.method {
            VerdictMethod::FastPath => verdicts.by_fast_path += 1,
            VerdictMethod::Judge => verdicts.by_judge += 1,
        }
    }
    let answered_n = events.iter().filter(|e| answered(e)).count() as u64;
    let preserved_answered = events
        .iter()
        .filter(|e| answered(e) && preserved(e))
        .count() as u64;
    let survived = all.iter().filter(|e| preserved(e)).count() as u64;

    // One cluster per conversation, across runs.
    let mut clusters: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for e in events {
        let c = clusters.entry(e.conversation.as_str()).or_default();
        c.0 += u64::from(preserved(e));
        c.1 += 1;
    }
    let clusters: Vec<(u64, u64)> = clusters.into_values().collect();

    let cpr_per_run = cpr_by(events, |e| e.run, |r| r.to_string());
    let run_rates = cpr_per_run.iter().filter_map(|g| g.rate.rate);
    let cpr_run_min = run_rates.clone().reduce(f64::min);
    let cpr_run_max = run_rates.reduce(f64::max);
    let fault_order = |m: &FaultMode| FaultMode::ALL.iter().position(|x| x == m);
    let cpr_by_fault = cpr_by(
        events,
        |e| (fault_order(&e.fault_mode), e.fault_mode),
        |(_, m)| m.as_str().to_string(),
    );
    let cpr_by_length = cpr_by(events, |e| e.turns, |t| t.to_string());

    let latencies: Vec<f64> = events.iter().map(|e| e.latency_ms).collect();
    let clean = events
        .iter()
        .filter(|e| preserved(e) && e.contract_violations.is_empty())
        .count() as u64;
    let ttfts: Vec<f64> = answers.iter().filter_map(|t| t.ttft_ms).collect();
    SystemSummary {
        name: name.to_string(),
        stages: stage_counts,
        stage_reasons,
        warning,
        events: n,
        verdicts,
        cpr: rate(verdicts.preserved, n),
        cpr_clustered: (n > 0)
            .then(|| cluster_bootstrap(&clusters, ctx.bootstrap_resamples, CONFIDENCE, ctx.seed)),
        availability: rate(answered_n, n),
        conditional_cpr: rate(preserved_answered, answered_n),
        survival: rate(survived, all.len() as u64),
        cpr_per_run,
        cpr_run_min,
        cpr_run_max,
        cpr_by_fault,
        cpr_by_length,
        clean_cpr: rate(clean, n),
        contracts: contract_rates(answers),
        ttft_ms: describe(&ttfts),
        bleed: bleed(events, answers),
        attempts: attempt_summary(name, events, by_turn),
        event_latency_ms: describe(&latencies),
        fallback_delivery: None,
        past_fault: super::past::past_fault(all, past, ctx.seed, ctx.bootstrap_resamples),
    }
}
