//! Turning what a run collected into report data: one event per faulted
//! final turn with its upstream attempts, and the summary with its notes.

use super::collect::Collected;
use super::order::RowOrder;
use super::past::{self, TurnList};
use super::record::{EventRecord, Stage};
use super::report::{self, ReportData};
use super::summary::summarize;
use super::EXCERPT_CHARS;
use crate::config::ResolvedConfig;
use cb_base::record::{AttemptAction, AttemptRecord, ToolCalls, TurnRecord};
use cb_dataset::Dataset;
use cb_faults::{FaultPlan, Role};
use std::collections::HashMap;

/// What the report needs of the dataset: each conversation's id and
/// number of turns, by index. Kept instead of the dataset once the answers
/// are scored, so that the dataset's texts are freed before the report's
/// rows are built (at 100,000 conversations, about 190 MB against 4).
pub(super) struct Roster {
    ids: Vec<String>,
    turns: Vec<u32>,
}

impl Roster {
    /// The ids and turn counts of `dataset`'s conversations.
    pub(super) fn of(dataset: &Dataset) -> Self {
        let (ids, turns) = dataset
            .conversations
            .iter()
            .map(|c| (c.id.clone(), c.n_turns() as u32))
            .unzip();
        Roster { ids, turns }
    }

    /// The conversations' ids, by index.
    pub(super) fn ids(&self) -> &[String] {
        &self.ids
    }
}

/// Builds the report data: turn rows, one event per planned failover
/// event with its stage and attempts, and the summary.
pub(super) fn assemble(
    resolved: &ResolvedConfig,
    roster: &Roster,
    plan: &FaultPlan,
    mut collected: Vec<Collected>,
    attempts: Vec<AttemptRecord>,
) -> ReportData {
    // Events are built in (run, system, conversation) order; `collected`
    // itself stays in the order the conversations finished (see the turns
    // below).
    let mut order: Vec<usize> = (0..collected.len()).collect();
    order.sort_by_key(|&i| {
        let o = &collected[i].outcome;
        (o.run, o.system, o.conversation)
    });
    // Attempts are counted on event turns only (one per conversation and
    // run), not on every turn of the run.
    let event_turns: std::collections::HashSet<(u32, &str, u32)> = collected
        .iter()
        .filter_map(|c| {
            let planned = plan.event(c.outcome.run, c.outcome.conversation)?;
            let id = roster.ids[c.outcome.conversation].as_str();
            Some((c.outcome.run, id, planned.turn))
        })
        .collect();
    // The attempts past the fault, by (run, system, conversation): those
    // after the event turn, and those of the event turn that carried tool
    // calls (all that `served_after` and `tool_calls` read; under the
    // default profile, none).
    let event_turn_of: HashMap<(u32, &str), u32> = event_turns
        .iter()
        .map(|&(run, id, turn)| ((run, id), turn))
        .collect();
    let mut from_event: HashMap<(u32, &str, &str), Vec<&AttemptRecord>> = HashMap::new();
    for a in &attempts {
        let key = (a.run, a.conversation.as_str());
        let past = |t: &u32| a.turn > *t || (a.turn == *t && a.tools != ToolCalls::None);
        if event_turn_of.get(&key).is_some_and(past) {
            from_event
                .entry((a.run, a.system.as_str(), a.conversation.as_str()))
                .or_default()
                .push(a);
        }
    }
    // Per event turn: attempts at the primary and at the fallback, and
    // those of each that the upstream refused as invalid before any fault
    // (a refused request is not one the fault fired on).
    let mut per_turn: HashMap<(u32, &str, &str, u32), [u32; 4]> = HashMap::new();
    for a in attempts
        .iter()
        .filter(|a| event_turns.contains(&(a.run, a.conversation.as_str(), a.turn)))
    {
        let counts = per_turn
            .entry((a.run, a.system.as_str(), a.conversation.as_str(), a.turn))
            .or_default();
        let refused = usize::from(a.action == AttemptAction::BadRequest) * 2;
        match a.role {
            Role::Primary => counts[refused] += 1,
            Role::Fallback => counts[refused + 1] += 1,
        }
    }
    // One event per finished conversation with a planned event: room for
    // all of them at once (grown by doubling, 200,000 rows would be
    // copied on the way and held twice for a moment).
    let mut events = Vec::with_capacity(
        collected
            .iter()
            .filter(|c| !c.outcome.interrupted)
            .filter(|c| plan.event(c.outcome.run, c.outcome.conversation).is_some())
            .count(),
    );
    for &i in &order {
        let c = &mut collected[i];
        if c.outcome.interrupted {
            continue;
        }
        let o = &c.outcome;
        let id = &roster.ids[o.conversation];
        let n_turns = roster.turns[o.conversation];
        let Some(planned) = plan.event(o.run, o.conversation) else {
            continue;
        };
        let system = &resolved.systems[o.system];
        let [primary_fired, fallback_fired, primary_refused, fallback_refused] = per_turn
            .get(&(o.run, system.as_str(), id.as_str(), planned.turn))
            .copied()
            .unwrap_or_default();
        let (primary_attempts, fallback_attempts) = (
            primary_fired + primary_refused,
            fallback_fired + fallback_refused,
        );
        let at_turn = o.turns.iter().find(|t| t.turn == planned.turn);
        let (faulted_seen, faulted_refused) = match planned.role {
            Role::Primary => (primary_fired, primary_refused),
            Role::Fallback => (fallback_fired, fallback_refused),
        };
        let (stage, stage_reason) = stage_of(
            &o.turns,
            planned.turn,
            planned.role,
            (faulted_seen, faulted_refused),
            fallback_attempts,
        );
        let last = o.turns.last();
        let later: &[&AttemptRecord] = from_event
            .get(&(o.run, system.as_str(), id.as_str()))
            .map_or(&[], Vec::as_slice);
        let outage_end = plan
            .faulted_turns(o.run, o.conversation)
            .last()
            .copied()
            .unwrap_or(planned.turn);
        let (tools, tools_reason) = past::tool_calls(later, planned.turn);
        events.push(EventRecord {
            run: o.run,
            system: system.clone(),
            conversation: id.clone(),
            turns: n_turns,
            turn: planned.turn,
            stage,
            stage_reason,
            fault_mode: planned.mode,
            client_status: at_turn.and_then(|t| t.status),
            latency_ms: at_turn.map(|t| t.latency_ms).unwrap_or_default(),
            verdict: c.scored.verdict,
            method: c.scored.method,
            // Moved, not copied: nothing reads the verdict's reason after
            // the event.
            reason: std::mem::take(&mut c.scored.reason),
            bleed_from: c.scored.bleed_from.join(";"),
            contract_violations: violations_from(&o.turns, planned.turn),
            answer_excerpt: last
                .filter(|t| t.is_final)
                .map(|t| excerpt(&t.answer).to_string())
                .unwrap_or_default(),
            primary_attempts,
            fallback_attempts,
            probes: TurnList(past::probes_from(
                &c.earlier_probes,
                planned.turn,
                n_turns,
                c.scored.verdict,
            )),
            outage_end,
            served_after: TurnList(past::served_after(&o.turns, later, outage_end)),
            tools,
            tools_reason,
        });
    }
    let order = RowOrder::new(
        resolved.systems.iter().map(String::as_str),
        roster
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i)),
    );
    let turns = flatten_turns(&order, collected);
    // The upstreams logged attempts as they finished; the report keeps
    // them in the one row order (see `order`), as a merge of shards does.
    let mut attempts = attempts;
    order.sort_attempts(&mut attempts);
    let summary = summarize(
        &report::summary_context(resolved, run_notes(resolved)),
        &events,
        &turns,
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

/// Every turn row in one buffer, in (run, system, conversation, turn)
/// order. The buffer has the exact size (collecting from `flat_map` would
/// grow it by doubling), and the conversations are moved into it in the
/// order they finished, which is about the order their rows were
/// allocated: the memory they leave is then freed page after page as the
/// buffer fills, where moving them in report order would free it only at
/// the end, holding every row twice for a moment (51 MB at 10,000
/// conversations). The rows are then sorted in place; (run, system,
/// conversation, turn) is unique, so the order is fully determined.
fn flatten_turns(order: &RowOrder<'_>, collected: Vec<Collected>) -> Vec<TurnRecord> {
    let mut turns: Vec<TurnRecord> =
        Vec::with_capacity(collected.iter().map(|c| c.outcome.turns.len()).sum());
    for c in collected {
        turns.extend(c.outcome.turns);
    }
    order.sort_turns(&mut turns);
    turns
}

/// The first [`EXCERPT_CHARS`] characters of `answer`, borrowed (a
/// `String` collected from characters would keep up to twice the room).
fn excerpt(answer: &str) -> &str {
    match answer.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => &answer[..end],
        None => answer,
    }
}

/// The contracts broken on the event turn or after it, once each, in the
/// order first met.
fn violations_from(turns: &[TurnRecord], event_turn: u32) -> String {
    let mut names: Vec<&str> = Vec::new();
    for t in turns.iter().filter(|t| t.turn >= event_turn) {
        for name in t.violations().map(|n| n.as_str()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.join(";")
}

/// The stage an event reached, from the conversation's turns and the
/// attempts the upstreams logged for its event turn: `broke_before` when
/// the conversation ended before the event turn was sent, `failover` when
/// the faulted upstream saw the event turn (every attempt there gets the
/// fault), `not_exercised` otherwise, with the reason.
fn stage_of(
    turns: &[TurnRecord],
    event_turn: u32,
    faulted: Role,
    (faulted_seen, faulted_refused): (u32, u32),
    fallback_seen: u32,
) -> (Stage, String) {
    if !turns.iter().any(|t| t.turn == event_turn) {
        let reason = match turns.last() {
            Some(last) => format!(
                "broke at turn {}: {}",
                last.turn,
                error_class(last.error.as_deref().unwrap_or("no answer"))
            ),
            None => "no request was sent".to_string(),
        };
        return (Stage::BrokeBefore, reason);
    }
    if faulted_seen > 0 {
        return (Stage::Failover, String::new());
    }
    if faulted_refused > 0 {
        return (
            Stage::NotExercised,
            "the faulted upstream refused the event turn's request as invalid (HTTP 400, before its fault): see the tools and action columns of attempts.csv".to_string(),
        );
    }
    let reason = match (faulted, fallback_seen) {
        (Role::Primary, 0) => {
            "no upstream saw the faulted turn: the gateway answered by itself (a cache, a made-up answer) or sends its traffic elsewhere (check its upstream ports)"
        }
        (Role::Primary, _) => {
            "the faulted turn went straight to the fallback: the primary was skipped (a cooldown after an earlier failure?)"
        }
        (Role::Fallback, _) => "the faulted fallback never saw the faulted turn",
    };
    (Stage::NotExercised, reason.to_string())
}

/// The kind of a driver error, without the detail that makes every reason
/// unique (a body excerpt, a byte count), so that reasons group: "HTTP 500",
/// "connection failed", "no complete response within 30000 ms".
fn error_class(error: &str) -> &str {
    match error.split_once(':') {
        Some((head, _)) => head.trim(),
        None => error.trim(),
    }
}

/// The notes every report of a run carries: what the figures mean, and
/// how the run was made when that changes them (streamed, interrupted).
pub fn run_notes(config: &ResolvedConfig) -> Vec<String> {
    let model_note = match &config.providers {
        Some(providers) => format!(
            "The upstreams are pass-through: {}. Faults are still injected on the wire by the upstreams \
             before the provider is called (a faulted attempt never reaches it), and every other request is \
             forwarded with the provider's model id. The fast-path scorer decides only clear answers (the \
             anchor's value stated, or a plain refusal); a real model's wording can leave answers undetermined \
             or misread, so pass `--judge URL --judge-model MODEL` to have an LLM judge decide what the fast \
             path cannot{}.",
            providers.answered_by(),
            if config.judge.is_some() { " (a judge was used in this run)" } else { "" }
        ),
        None => "The upstreams are simulated: the model answers only from the messages it receives, so a fallback \
         that is not sent the history cannot answer the probe. With this model the CPR gap between `stateless` \
         and `history` is by construction; it is a calibration of the harness, not a finding about gateways."
            .to_string(),
    };
    let mut notes = vec![
        model_note,
        "What the run does test: faults happen on the wire (the primary really holds the connection past the \
         proxy's timeout, really answers 503 with an error body, really answers 429 with Retry-After); the \
         gateway's error classification and failover path fire; the history reaches the fallback intact; \
         answers carry no other conversation's facts; and what forwarding the history costs in latency."
            .to_string(),
    ];
    if config.api == cb_client::Api::Responses {
        notes.push(
            "Every request used the Responses API (`--api responses`): the client sent only each turn's new input \
             and the previous answer's `previous_response_id`, so the system under test kept the history. A fallback \
             asked to continue a response it never stored answers 400 (`previous_response_not_found`), as the real \
             API does."
                .into(),
        );
    }
    if config.stream {
        notes.push(format!(
            "Every request asked for a streamed answer (server-sent events), read `{}` (`--client`): {}. \
             Latency is to the last byte.",
            config.client,
            config.client.rule()
        ));
    }
    let flight = config.requests_in_flight;
    if let Some(cap) = flight.cap {
        let bound = flight.bound.map_or("the open-file limit", |b| b.describe());
        let files = match (flight.bound, flight.open_file_limit) {
            (None | Some(cb_driver::Bound::OpenFiles), Some(limit)) => {
                format!(" ({limit})")
            }
            _ => String::new(),
        };
        notes.push(format!(
            "All {} conversations were in flight at once, but requests waited for room: at most {cap} at once, \
             set by {bound}{files}; peak measured across all systems: {}. `--max-in-flight` and `ulimit -n` \
             change the cap.",
            config.concurrency,
            flight.peak.map_or_else(|| "n/a".to_string(), |p| p.to_string())
        ));
    }
    if let Some(shard) = config.shard {
        notes.push(format!(
            "This report covers shard {shard} of the run only: every {}-th conversation by index, from {} (the fault \
             plan and the verdicts are those of the whole run for the same conversations). `continuity-bench report \
             merge DIR...` joins the {} shards' directories into the report of the whole run.",
            shard.count, shard.index, shard.count
        ));
    }
    if !config.merged_from.is_empty() {
        let peaks: Vec<String> = config
            .merged_from
            .iter()
            .map(|m| {
                let peak = m
                    .requests_in_flight
                    .peak
                    .map_or_else(|| "n/a".to_string(), |p| p.to_string());
                format!("shard {}: {peak} of {}", m.shard, m.concurrency)
            })
            .collect();
        notes.push(format!(
            "Merged by `report merge` from {} shards, each a process of its own: the rows of all of them, every \
             figure computed again from the rows. Requests in flight at once, peak of --concurrency per shard: {}.",
            config.merged_from.len(),
            peaks.join(", ")
        ));
    }
    if config.interrupted {
        notes.push(format!(
            "The run was interrupted ({}): the figures cover only the conversations that finished.",
            cb_base::stop::Stop::name_of(config.interrupted_by)
        ));
    }
    notes
}
