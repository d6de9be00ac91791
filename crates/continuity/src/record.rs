//! The `run` suite's own row: one per (run, system, conversation) the plan
//! faults, with the stage it reached and its verdict; the columns of
//! `events.csv` and the input of its summary.

use crate::past::{ProbeVerdict, ServedTurn, TurnList};
use cb_base::record::ToolCalls;
use cb_faults::FaultMode;
use cb_scoring::{Verdict, VerdictMethod};
use serde::{Deserialize, Serialize};

/// How far a planned failover event got. Only [`Stage::Failover`] events
/// enter CPR and every figure built on it; the others are counted beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The faulted request reached the faulted upstream and the fault fired
    /// there, as its attempt log shows.
    Failover,
    /// The conversation ended before the faulted turn (a capacity or
    /// protocol failure of the system), so the fault was never reached.
    BrokeBefore,
    /// The faulted turn was sent, but the faulted upstream never saw it (a
    /// cooldown, a cache, an answer made up by the gateway, a wrong port).
    NotExercised,
}

impl Stage {
    /// Every stage, in report order.
    pub const ALL: [Stage; 3] = [Stage::Failover, Stage::BrokeBefore, Stage::NotExercised];

    /// The snake_case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Failover => "failover",
            Stage::BrokeBefore => "broke_before",
            Stage::NotExercised => "not_exercised",
        }
    }
}

/// One planned failover event: a (run, system, conversation) whose event
/// turn the plan faults, with the stage it reached and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Run index, from 1.
    pub run: u32,
    /// System under test.
    pub system: String,
    /// Conversation id.
    pub conversation: String,
    /// Number of turns in the conversation.
    pub turns: u32,
    /// The event turn: the turn the plan faults (the final one by default).
    pub turn: u32,
    /// How far the event got.
    pub stage: Stage,
    /// Why it stopped short of `failover` (empty when it did not): the turn
    /// and error a conversation broke at, or what the faulted upstream saw.
    pub stage_reason: String,
    /// The fault the plan scheduled on the event turn.
    pub fault_mode: FaultMode,
    /// HTTP status the client received on the event turn, if any.
    pub client_status: Option<u16>,
    /// End-to-end client latency of the event turn in milliseconds (0 when
    /// it was never sent).
    pub latency_ms: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Which scorer decided the verdict.
    pub method: VerdictMethod,
    /// Why the scorer decided so (or why the request failed).
    pub reason: String,
    /// Ids of other conversations whose anchor appeared in the final answer,
    /// separated by `;` (context bleed). Empty when none.
    pub bleed_from: String,
    /// The answer contracts broken from the event turn to the end,
    /// `;`-separated; empty when none. A preserved event with none is
    /// *clean*.
    #[serde(default)]
    pub contract_violations: String,
    /// The first 160 characters of the final answer.
    pub answer_excerpt: String,
    /// Requests the primary upstream saw for the event turn.
    pub primary_attempts: u32,
    /// Requests the fallback upstream saw for the event turn.
    pub fallback_attempts: u32,
    /// Every probe from the event turn on, with its verdict (`3:preserved
    /// 6:lost 12:preserved`); the final probe's is `verdict`. A probe the
    /// conversation never reached is `error`.
    #[serde(default)]
    pub probes: TurnList<ProbeVerdict>,
    /// The last turn the plan faults in this conversation: the outage's
    /// end (the event turn for a one-turn fault).
    #[serde(default)]
    pub outage_end: u32,
    /// Who served each turn the client sent after the outage
    /// (`6:primary 7:fallback`); empty when none came after it.
    #[serde(default)]
    pub served_after: TurnList<ServedTurn>,
    /// What the upstreams' dialects made of the tool calls of every request
    /// of this conversation from the event turn on.
    #[serde(default)]
    pub tools: ToolCalls,
    /// Where a request's tool calls were refused; empty otherwise.
    #[serde(default)]
    pub tools_reason: String,
}

/// Rows for tests, so every test builds its events the same way.
#[cfg(test)]
pub(crate) mod fixture {
    use super::{EventRecord, Stage};
    use cb_faults::FaultMode;
    use cb_scoring::{Verdict, VerdictMethod};

    /// A failover event on the final turn, answered 200 and preserved: the
    /// base every test adjusts with struct-update syntax.
    pub(crate) fn event(run: u32, system: &str, conversation: &str, turns: u32) -> EventRecord {
        EventRecord {
            run,
            system: system.into(),
            conversation: conversation.into(),
            turns,
            turn: turns,
            stage: Stage::Failover,
            stage_reason: String::new(),
            fault_mode: FaultMode::Timeout,
            client_status: Some(200),
            latency_ms: 1.0,
            verdict: Verdict::Preserved,
            method: VerdictMethod::FastPath,
            reason: String::new(),
            bleed_from: String::new(),
            contract_violations: String::new(),
            answer_excerpt: String::new(),
            primary_attempts: 1,
            fallback_attempts: 1,
            probes: Default::default(),
            outage_end: turns,
            served_after: Default::default(),
            tools: Default::default(),
            tools_reason: String::new(),
        }
    }
}
