//! Past the fault: what an event's conversation did after its first faulted
//! turn, as the event row records it. Every probe from the event turn on,
//! with its verdict; which upstream served each turn after the outage (the
//! last turn the plan faults); and what the upstreams' dialects made of the
//! tool calls of every request from the event turn on. The figures built
//! on these live in [`crate::summary::past`].

use cb_base::record::{AttemptAction, AttemptRecord, ToolCalls, TurnRecord};
use cb_dataset::Conversation;
use cb_faults::Role;
use cb_scoring::{score_fast, AnchorIndex, Scored, Verdict};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One probe at or after the event turn, and its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeVerdict {
    /// The probe's turn, from 1.
    pub turn: u32,
    /// Its verdict (`error` when the conversation never reached it).
    pub verdict: Verdict,
}

/// Who answered one turn after the outage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Server {
    /// The primary answered it (2xx, whole or degraded).
    Primary,
    /// The fallback answered it, the primary did not.
    Fallback,
    /// Neither upstream answered it (an error, or the gateway answered by
    /// itself).
    Neither,
}

impl Server {
    /// The snake_case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Server::Primary => "primary",
            Server::Fallback => "fallback",
            Server::Neither => "neither",
        }
    }
}

/// One turn after the outage and who served it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedTurn {
    /// The turn, from 1.
    pub turn: u32,
    /// Who served it.
    pub by: Server,
}

/// An item of a [`TurnList`]: a turn and one word about it.
pub trait Item: Sized {
    /// The turn, from 1.
    fn turn(&self) -> u32;
    /// The word written after the turn.
    fn word(&self) -> &'static str;
    /// The item a turn and a word name, if the word is one of its words.
    fn from_parts(turn: u32, word: &str) -> Option<Self>;
}

impl Item for ProbeVerdict {
    fn turn(&self) -> u32 {
        self.turn
    }
    fn word(&self) -> &'static str {
        self.verdict.as_str()
    }
    fn from_parts(turn: u32, word: &str) -> Option<Self> {
        let verdict = [
            Verdict::Preserved,
            Verdict::Lost,
            Verdict::Error,
            Verdict::Undetermined,
        ]
        .into_iter()
        .find(|v| v.as_str() == word)?;
        Some(ProbeVerdict { turn, verdict })
    }
}

impl Item for ServedTurn {
    fn turn(&self) -> u32 {
        self.turn
    }
    fn word(&self) -> &'static str {
        self.by.as_str()
    }
    fn from_parts(turn: u32, word: &str) -> Option<Self> {
        let by = [Server::Primary, Server::Fallback, Server::Neither]
            .into_iter()
            .find(|s| s.as_str() == word)?;
        Some(ServedTurn { turn, by })
    }
}

/// A list written as one CSV field: `3:preserved 6:lost`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnList<T>(pub Vec<T>);

impl<T> Default for TurnList<T> {
    fn default() -> Self {
        TurnList(Vec::new())
    }
}

impl<T: Item> fmt::Display for TurnList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}:{}", item.turn(), item.word())?;
        }
        Ok(())
    }
}

impl<T: Item> FromStr for TurnList<T> {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        text.split_whitespace()
            .map(|part| {
                part.split_once(':')
                    .and_then(|(turn, word)| T::from_parts(turn.parse().ok()?, word))
                    .ok_or_else(|| format!("{part:?} is not turn:word (e.g. 3:preserved)"))
            })
            .collect::<Result<Vec<T>, String>>()
            .map(TurnList)
    }
}

impl<T: Item> Serialize for TurnList<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de, T: Item> Deserialize<'de> for TurnList<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The verdicts of every probe of `conversation` before its final turn
/// (none in a dataset without later probes), on the answers the client got
/// (`turns`, whole): scored by the fast path against the fact each asks
/// for; one the conversation never reached, or got no answer to, is
/// `error`. Worked out by the collector, before answers are cut.
pub fn earlier_probe_verdicts(
    conversation: &Conversation,
    turns: &[TurnRecord],
    anchors: &AnchorIndex,
) -> Vec<ProbeVerdict> {
    let n = conversation.n_turns();
    conversation
        .probes()
        .filter(|(turn, _)| *turn < n)
        .map(|(turn, fact)| {
            let verdict = match turns.iter().find(|t| t.turn as usize == turn) {
                Some(t) if t.error.is_none() => {
                    score_fact(conversation, fact, &t.answer, anchors).verdict
                }
                _ => Verdict::Error,
            };
            ProbeVerdict {
                turn: turn as u32,
                verdict,
            }
        })
        .collect()
}

/// The probes from `event_turn` on: the `earlier` ones at or after it, then
/// the final one (turn `n_turns`) with `final_verdict` (the judge's, when
/// one was asked).
pub fn probes_from(
    earlier: &[ProbeVerdict],
    event_turn: u32,
    n_turns: u32,
    final_verdict: Verdict,
) -> Vec<ProbeVerdict> {
    earlier
        .iter()
        .copied()
        .filter(|p| p.turn >= event_turn && p.turn < n_turns)
        .chain(std::iter::once(ProbeVerdict {
            turn: n_turns,
            verdict: final_verdict,
        }))
        .collect()
}

/// Scores `answer` against `fact` (the anchor, or a fact stated later).
fn score_fact(
    conversation: &Conversation,
    fact: &cb_dataset::Anchor,
    answer: &str,
    anchors: &AnchorIndex,
) -> Scored {
    if *fact == conversation.anchor {
        return score_fast(conversation, Some(answer), anchors);
    }
    // The same scorer, with the later fact in the anchor's place (the
    // distractors are the anchor's category, not the fact's: none apply).
    let mut view = conversation.clone();
    view.anchor = fact.clone();
    for t in &mut view.turns {
        t.distractor = None;
    }
    score_fast(&view, Some(answer), anchors)
}

/// Who served each turn after `outage_end` that the client sent, from the
/// attempts the upstreams logged for this (run, system, conversation):
/// the primary when it answered the turn, else the fallback when it did;
/// neither when the client got no answer to it.
pub fn served_after(
    turns: &[TurnRecord],
    attempts: &[&AttemptRecord],
    outage_end: u32,
) -> Vec<ServedTurn> {
    let answered =
        |a: &&&AttemptRecord| matches!(a.action, AttemptAction::Ok | AttemptAction::Degraded);
    turns
        .iter()
        .filter(|t| t.turn > outage_end)
        .map(|t| {
            let of_turn = || {
                attempts
                    .iter()
                    .filter(|a| a.turn == t.turn)
                    .filter(answered)
            };
            // A turn the client got no answer to was served by nobody,
            // whatever an upstream answered behind the gateway.
            let by = if t.error.is_some() {
                Server::Neither
            } else if of_turn().any(|a| a.role == Role::Primary) {
                Server::Primary
            } else if of_turn().any(|a| a.role == Role::Fallback) {
                Server::Fallback
            } else {
                Server::Neither
            };
            ServedTurn { turn: t.turn, by }
        })
        .collect()
}

/// The tool calls of every request the upstreams received for this (run,
/// system, conversation) from `event_turn` on: refused when any was
/// refused, paired when any carried one, none otherwise; and, when refused,
/// where.
pub fn tool_calls(attempts: &[&AttemptRecord], event_turn: u32) -> (ToolCalls, String) {
    let from = || attempts.iter().filter(|a| a.turn >= event_turn);
    if let Some(a) = from().find(|a| a.tools == ToolCalls::Refused) {
        let role = match a.role {
            Role::Primary => "primary",
            Role::Fallback => "fallback",
        };
        let status = a
            .status
            .map_or_else(|| "no status recorded".to_string(), |s| format!("HTTP {s}"));
        return (
            ToolCalls::Refused,
            format!(
                "turn {}: the {role} refused the request's tool calls ({status})",
                a.turn
            ),
        );
    }
    if from().any(|a| a.tools == ToolCalls::Paired) {
        (ToolCalls::Paired, String::new())
    } else {
        (ToolCalls::None, String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_lists_read_back_what_they_write() {
        let probes = TurnList(vec![
            ProbeVerdict {
                turn: 3,
                verdict: Verdict::Preserved,
            },
            ProbeVerdict {
                turn: 6,
                verdict: Verdict::Lost,
            },
        ]);
        assert_eq!(probes.to_string(), "3:preserved 6:lost");
        assert_eq!("3:preserved 6:lost".parse(), Ok(probes));
        let served: TurnList<ServedTurn> = "6:primary 7:neither".parse().unwrap();
        assert_eq!(served.0[1].by, Server::Neither);
        assert_eq!("".parse(), Ok(TurnList::<ServedTurn>(Vec::new())));
        assert!("6:somebody".parse::<TurnList<ServedTurn>>().is_err());
        assert!("six:primary".parse::<TurnList<ServedTurn>>().is_err());
    }

    fn attempt(turn: u32, role: Role, action: AttemptAction, tools: ToolCalls) -> AttemptRecord {
        AttemptRecord {
            action,
            tools,
            ..cb_testkit::record::attempt(1, "history", role, "c001", turn, 0.0)
        }
    }

    #[test]
    fn a_turn_is_served_by_whoever_answered_it_the_primary_first() {
        let mut turns: Vec<TurnRecord> = (5..=9)
            .map(|turn| TurnRecord {
                turn,
                ..TurnRecord::default()
            })
            .collect();
        // The primary answered turn 9, but the client got an error.
        turns[4].error = Some("HTTP 502".into());
        let rows = [
            attempt(6, Role::Primary, AttemptAction::ApiError, ToolCalls::None),
            attempt(6, Role::Fallback, AttemptAction::Ok, ToolCalls::None),
            attempt(7, Role::Primary, AttemptAction::Degraded, ToolCalls::None),
            attempt(7, Role::Fallback, AttemptAction::Ok, ToolCalls::None),
            attempt(9, Role::Primary, AttemptAction::Ok, ToolCalls::None),
        ];
        let refs: Vec<&AttemptRecord> = rows.iter().collect();
        let served = served_after(&turns, &refs, 5);
        assert_eq!(
            TurnList(served).to_string(),
            "6:fallback 7:primary 8:neither 9:neither"
        );
    }

    #[test]
    fn one_refused_request_from_the_event_turn_on_breaks_the_tool_calls() {
        let rows = [
            attempt(
                2,
                Role::Fallback,
                AttemptAction::BadRequest,
                ToolCalls::Refused,
            ),
            attempt(3, Role::Primary, AttemptAction::Ok, ToolCalls::Paired),
            attempt(
                4,
                Role::Fallback,
                AttemptAction::BadRequest,
                ToolCalls::Refused,
            ),
        ];
        let refs: Vec<&AttemptRecord> = rows.iter().collect();
        let (tools, reason) = tool_calls(&refs, 3);
        assert_eq!(tools, ToolCalls::Refused);
        assert!(
            reason.starts_with("turn 4: the fallback refused"),
            "{reason}"
        );
        assert_eq!(tool_calls(&refs[..2], 3).0, ToolCalls::Paired);
        assert_eq!(tool_calls(&refs[..1], 3).0, ToolCalls::None);
    }
}
