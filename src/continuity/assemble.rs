//! Turning what a run collected into report data: one event per faulted
//! final turn with its upstream attempts, and the summary with its notes.

use super::collect::Collected;
use super::record::EventRecord;
use super::report::{self, ReportData};
use super::summary::summarize;
use super::EXCERPT_CHARS;
use crate::config::ResolvedConfig;
use crate::dataset::Dataset;
use crate::faults::{FaultPlan, Role};
use crate::record::{AttemptRecord, TurnRecord};
use std::collections::HashMap;

/// Builds the report data: turn rows, one event per faulted final turn with
/// its attempts, and the summary.
pub(super) fn assemble(
    resolved: &ResolvedConfig,
    dataset: &Dataset,
    plan: &FaultPlan,
    mut collected: Vec<Collected>,
    attempts: Vec<AttemptRecord>,
) -> ReportData {
    collected.sort_by_key(|c| (c.outcome.run, c.outcome.system, c.outcome.conversation));
    let mut final_attempts: HashMap<(u32, &str, &str, u32), (u32, u32)> = HashMap::new();
    for a in &attempts {
        let counts = final_attempts
            .entry((a.run, a.system.as_str(), a.conversation.as_str(), a.turn))
            .or_default();
        match a.role {
            Role::Primary => counts.0 += 1,
            Role::Fallback => counts.1 += 1,
        }
    }
    let mut events = Vec::new();
    for c in &collected {
        let o = &c.outcome;
        let conversation = &dataset.conversations[o.conversation];
        let Some(fault_mode) = plan.final_turn_mode(o.run, o.conversation) else {
            continue;
        };
        let last = o.turns.last();
        let n = conversation.n_turns() as u32;
        let system = &resolved.systems[o.system];
        let (primary_attempts, fallback_attempts) = final_attempts
            .get(&(o.run, system.as_str(), conversation.id.as_str(), n))
            .copied()
            .unwrap_or_default();
        events.push(EventRecord {
            run: o.run,
            system: system.clone(),
            conversation: conversation.id.clone(),
            turns: n,
            fault_mode,
            client_status: last.and_then(|t| t.status),
            latency_ms: last.map(|t| t.latency_ms).unwrap_or_default(),
            verdict: c.scored.verdict,
            method: c.scored.method,
            reason: c.scored.reason.clone(),
            bleed_from: c.scored.bleed_from.join(";"),
            answer_excerpt: last
                .map(|t| t.answer.chars().take(EXCERPT_CHARS).collect())
                .unwrap_or_default(),
            primary_attempts,
            fallback_attempts,
        });
    }
    let turns: Vec<TurnRecord> = collected
        .into_iter()
        .flat_map(|c| c.outcome.turns)
        .collect();
    let summary = summarize(
        &report::summary_context(resolved, run_notes(resolved)),
        &events,
        &attempts,
    );
    ReportData {
        config: resolved.clone(),
        turns,
        events,
        attempts,
        summary,
    }
}

/// The notes every report of a run carries: what the figures mean, and
/// how the run was made when that changes them (streamed, interrupted).
pub fn run_notes(config: &ResolvedConfig) -> Vec<String> {
    let mut notes = vec![
        "The upstreams are simulated: the model answers only from the messages it receives, so a fallback \
         that is not sent the history cannot answer the probe. With this model the CPR gap between `stateless` \
         and `history` is by construction; it is a calibration of the harness, not a finding about gateways."
            .to_string(),
        "What the run does test: faults happen on the wire (the primary really holds the connection past the \
         proxy's timeout, really answers 503 with an error body, really answers 429 with Retry-After); the \
         gateway's error classification and failover path fire; the history reaches the fallback intact; \
         answers carry no other conversation's facts; and what forwarding the history costs in latency."
            .to_string(),
    ];
    if config.stream {
        notes.push(
            "Every request asked for a streamed answer (server-sent events): an answer counts only when its \
             stream ended with `data: [DONE]`, and latency is to the last byte."
                .into(),
        );
    }
    if config.interrupted {
        notes.push("The run was interrupted (Ctrl-C): the figures cover only the conversations that finished.".into());
    }
    notes
}
