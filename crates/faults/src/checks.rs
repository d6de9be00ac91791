//! The checks of a fault profile that need more than its own text: whether
//! its faulted turns occur in the dataset (and in how many conversations),
//! and whether its TIMEOUT hold outlasts the timeout of the systems under
//! test. The caller runs them before the first request, so a profile that
//! cannot produce an event is refused instead of giving "0 events" and
//! exit 0.

use super::profile::{FaultError, FaultProfile, TurnSelector};
use super::FaultMode;
use std::time::Duration;

/// How far a profile's faulted turns reach into a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// Conversations in the dataset.
    pub conversations: usize,
    /// Conversations with at least one faulted turn, i.e. with an event.
    pub with_event: usize,
    /// For a turn list, each listed turn with the number of conversations
    /// long enough to have it, in ascending turn order; empty for `"final"`,
    /// which reaches every conversation.
    pub turns: Vec<TurnReach>,
}

/// One listed turn and the conversations it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnReach {
    /// The turn number, from 1.
    pub turn: u32,
    /// Conversations that have this turn.
    pub conversations: usize,
}

impl Reach {
    /// Whether some conversations have no event (a turn list longer than
    /// part of the dataset): worth a line in the run's output.
    pub fn is_partial(&self) -> bool {
        self.with_event < self.conversations
    }
}

impl std::fmt::Display for Reach {
    /// One line for the run's output, e.g. "events in 90 of 150
    /// conversations (turn 9: 90, turn 11: 30)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "events in {} of {} conversations",
            self.with_event, self.conversations
        )?;
        if !self.turns.is_empty() {
            let per_turn: Vec<String> = self
                .turns
                .iter()
                .map(|t| format!("turn {}: {}", t.turn, t.conversations))
                .collect();
            write!(f, " ({})", per_turn.join(", "))?;
        }
        Ok(())
    }
}

impl FaultProfile {
    /// How far the faulted turns reach into a dataset whose conversation `i`
    /// has `turns_per_conversation[i]` turns; refused when they reach no
    /// conversation (e.g. `turns = [99]` with 7-11-turn conversations). A
    /// list that reaches only some conversations is accepted: the caller
    /// reports [`Reach`].
    ///
    /// # Errors
    /// [`FaultError::Unreachable`], naming `turns`, the dataset's turn range
    /// and the fix.
    pub fn check_reach(&self, turns_per_conversation: &[usize]) -> Result<Reach, FaultError> {
        let with_event = turns_per_conversation
            .iter()
            .filter(|n| !self.turns.turns_in(**n).is_empty())
            .count();
        let turns = match &self.turns {
            TurnSelector::Final => Vec::new(),
            TurnSelector::List(list) => list
                .iter()
                .map(|t| TurnReach {
                    turn: u32::try_from(*t).unwrap_or(u32::MAX),
                    conversations: turns_per_conversation.iter().filter(|n| *n >= t).count(),
                })
                .collect(),
        };
        if with_event == 0 {
            return Err(FaultError::Unreachable {
                path: self.origin.clone(),
                turns: self.turns.to_string(),
                min_turns: turns_per_conversation.iter().copied().min().unwrap_or(0),
                max_turns: turns_per_conversation.iter().copied().max().unwrap_or(0),
            });
        }
        Ok(Reach {
            conversations: turns_per_conversation.len(),
            with_event,
            turns,
        })
    }

    /// The TIMEOUT hold, when the profile schedules TIMEOUT at all.
    fn scheduled_hold(&self) -> Option<Duration> {
        self.timeout
            .as_ref()
            .filter(|_| self.weight(FaultMode::Timeout) > 0.0)
            .map(|t| t.hold)
    }

    /// Refuses a TIMEOUT hold that is not longer than `attempt_timeout`, the
    /// built-in proxies' per-attempt timeout: the upstream would answer 504
    /// before the proxy gave up on it, and TIMEOUT would test nothing. Call
    /// it when the built-in systems run; for external gateways print
    /// [`FaultProfile::hold_warning`] instead.
    ///
    /// # Errors
    /// [`FaultError::HoldNotPastTimeout`], naming `--attempt-timeout` and
    /// `modes.timeout.hold`.
    pub fn check_hold(&self, attempt_timeout: Duration) -> Result<(), FaultError> {
        match self.scheduled_hold() {
            Some(hold) if hold <= attempt_timeout => Err(FaultError::HoldNotPastTimeout {
                path: self.origin.clone(),
                hold: humantime::format_duration(hold).to_string(),
                attempt_timeout: humantime::format_duration(attempt_timeout).to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// What to print for external gateways, whose timeouts the harness
    /// cannot see, when the profile schedules TIMEOUT.
    pub fn hold_warning(&self) -> Option<String> {
        self.scheduled_hold().map(|hold| {
            format!(
                "note: the TIMEOUT hold of {} ({}: modes.timeout.hold) must exceed the gateway's own upstream timeout, \
                 or the gateway gets a 504 instead of a timeout and TIMEOUT tests nothing",
                humantime::format_duration(hold),
                self.origin
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> FaultProfile {
        FaultProfile::parse(text, "fault_profiles/t.toml").unwrap()
    }

    /// 150 conversations of 7 to 11 turns, 30 of each length.
    fn lengths() -> Vec<usize> {
        (0..150).map(|i| 7 + i % 5).collect()
    }

    #[test]
    fn a_turn_past_every_conversation_is_refused_with_the_range() {
        let p = parse("turns = [99]\n[modes.api_error]\n");
        let err = p.check_reach(&lengths()).unwrap_err();
        assert!(matches!(err, FaultError::Unreachable { .. }), "{err}");
        let msg = err.to_string();
        for part in [
            "fault_profiles/t.toml",
            "turns = [99]",
            "7 to 11 turns",
            "from 1 to 11",
            "\"final\"",
        ] {
            assert!(msg.contains(part), "{part:?} missing from: {msg}");
        }
    }

    #[test]
    fn a_partial_list_is_accepted_and_counted_per_turn() {
        let p = parse("turns = [3, 9, 11, 40]\n[modes.api_error]\n");
        let reach = p.check_reach(&lengths()).unwrap();
        assert_eq!((reach.conversations, reach.with_event), (150, 150));
        let per_turn: Vec<(u32, usize)> = reach
            .turns
            .iter()
            .map(|t| (t.turn, t.conversations))
            .collect();
        assert_eq!(per_turn, vec![(3, 150), (9, 90), (11, 30), (40, 0)]);
        assert!(!reach.is_partial());

        let late = parse("turns = [10]\n[modes.api_error]\n");
        let reach = late.check_reach(&lengths()).unwrap();
        assert_eq!(reach.with_event, 60);
        assert!(reach.is_partial());
        assert_eq!(
            reach.to_string(),
            "events in 60 of 150 conversations (turn 10: 60)"
        );
    }

    #[test]
    fn final_reaches_every_conversation() {
        let p = parse("[modes.api_error]\n");
        let reach = p.check_reach(&lengths()).unwrap();
        assert_eq!((reach.with_event, reach.turns.len()), (150, 0));
        assert_eq!(reach.to_string(), "events in 150 of 150 conversations");
        assert!(p.check_reach(&[]).is_err(), "an empty dataset has no event");
    }

    #[test]
    fn a_hold_within_the_attempt_timeout_is_refused() {
        let p = parse("[modes.timeout]\nhold = \"3s\"\n");
        let err = p.check_hold(Duration::from_secs(3)).unwrap_err();
        let msg = err.to_string();
        for part in [
            "--attempt-timeout 3s",
            "modes.timeout.hold = 3s",
            "fault_profiles/t.toml",
        ] {
            assert!(msg.contains(part), "{part:?} missing from: {msg}");
        }
        assert!(p.check_hold(Duration::from_millis(2999)).is_ok());
    }

    #[test]
    fn a_hold_never_scheduled_is_not_checked() {
        let p = parse("[modes.timeout]\nweight = 0\nhold = \"1s\"\n[modes.api_error]\n");
        assert!(p.check_hold(Duration::from_secs(10)).is_ok());
        assert_eq!(p.hold_warning(), None);
        assert_eq!(parse("[modes.api_error]\n").hold_warning(), None);
    }

    #[test]
    fn external_gateways_get_a_warning_naming_the_hold() {
        let w = parse("[modes.timeout]\n").hold_warning().unwrap();
        assert!(w.contains("hold of 30s"), "{w}");
        assert!(
            w.contains("must exceed the gateway's own upstream timeout"),
            "{w}"
        );
    }
}
