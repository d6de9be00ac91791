//! `truncated`: the provider says the reply was cut: its `finish_reason`
//! means the token limit was reached, or that a filter stopped the reply.
//! A gateway that passes such a reply on as a normal answer presents a
//! partial answer as complete.
//!
//! The rule: `finish_reason` is compared case-insensitively and by what it
//! means, not by one provider's spelling ([`stop_kind`]):
//! - cut for length: `length`, any `*_length` (`model_length`), any
//!   `max*token*` (`max_tokens`, `MAX_TOKENS`, `max_output_tokens`), or a
//!   context window exceeded;
//! - filtered: `content_filter`, `safety`, `recitation`,
//!   `prohibited_content`, `blocklist`, `spii`, `refusal`, a guardrail's
//!   intervention, or any value that names a filter or safety
//!   (`image_safety`);
//! - anything else (`stop`, `end_turn`, `eos`, `tool_calls`,
//!   `stop_sequence`) passes.
//!
//! The reason names the value received. Undetermined when no
//! `finish_reason` was received. Under `run --stream` with the default
//! `openai-sdk` client, a stream that ends cleanly without one (or without
//! `data: [DONE]`) is scored as an answer, as given, as that SDK reads it;
//! whether it was cut is then unknown here, so `truncated` leaves it
//! undetermined (only the `strict` client makes such a stream an error).
//! Blind spot: a provider that cuts a reply and still says `stop`.

use super::{Contract, ContractInput, ContractName, Outcome};

/// The `truncated` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct Truncated;

/// What a `finish_reason` says about how the reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopKind {
    /// Cut at the token limit or the context window.
    Length,
    /// Stopped by a content or safety filter.
    Filtered,
    /// Ended on its own (or for a reason that cuts nothing).
    Other,
}

/// Filter verdicts providers spell as a word of their own.
const FILTERED: &[&str] = &[
    "content_filter",
    "safety",
    "recitation",
    "prohibited_content",
    "blocklist",
    "spii",
    "refusal",
    "guardrail_intervened",
];

/// What `finish_reason` means, by the rule in the module's doc.
pub(crate) fn stop_kind(finish_reason: &str) -> StopKind {
    let value = finish_reason.trim().to_ascii_lowercase();
    let length = value == "length"
        || value.ends_with("_length")
        || (value.starts_with("max") && value.contains("token"))
        || value.contains("context_window");
    let filtered = FILTERED.contains(&value.as_str())
        || value.contains("filter")
        || value.contains("safety")
        || value.contains("guardrail");
    if length {
        StopKind::Length
    } else if filtered {
        StopKind::Filtered
    } else {
        StopKind::Other
    }
}

impl Contract for Truncated {
    fn name(&self) -> ContractName {
        ContractName::Truncated
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        let Some(value) = input.finish_reason else {
            return Some(Outcome::undetermined("no finish_reason was received"));
        };
        Some(match stop_kind(value) {
            StopKind::Length => Outcome::fail(format!(
                "finish_reason is {value}: the reply was cut at the token limit"
            )),
            StopKind::Filtered => Outcome::fail(format!(
                "finish_reason is {value}: the provider's filter stopped the reply"
            )),
            StopKind::Other => Outcome::Pass,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::input;

    #[test]
    fn length_and_content_filter_fail_and_are_named() {
        let mut i = input("Half a", "Tell me.");
        for (reason, named) in [("length", "length"), ("content_filter", "content_filter")] {
            i.finish_reason = Some(reason);
            let out = Truncated.check(&i).unwrap();
            assert!(out.is_fail() && out.reason().unwrap().contains(named));
        }
        for ok in ["stop", "tool_calls"] {
            i.finish_reason = Some(ok);
            assert_eq!(Truncated.check(&i), Some(Outcome::Pass));
        }
        i.finish_reason = None;
        assert!(matches!(
            Truncated.check(&i),
            Some(Outcome::Undetermined { .. })
        ));
    }

    #[test]
    fn every_providers_spelling_of_a_cut_fails_naming_the_value() {
        let mut i = input("Half a", "Tell me.");
        for (value, kind) in [
            ("length", "token limit"),
            ("Length", "token limit"),
            ("max_tokens", "token limit"),
            ("MAX_TOKENS", "token limit"),
            ("max_output_tokens", "token limit"),
            ("model_length", "token limit"),
            ("model_context_window_exceeded", "token limit"),
            ("content_filter", "filter"),
            ("SAFETY", "filter"),
            ("RECITATION", "filter"),
            ("PROHIBITED_CONTENT", "filter"),
            ("BLOCKLIST", "filter"),
            ("SPII", "filter"),
            ("IMAGE_SAFETY", "filter"),
        ] {
            i.finish_reason = Some(value);
            let out = Truncated.check(&i).unwrap();
            let reason = out.reason().unwrap_or_default().to_string();
            assert!(out.is_fail(), "{value}: {out}");
            assert!(
                reason.contains(&format!("is {value}:")),
                "{value}: {reason}"
            );
            assert!(reason.contains(kind), "{value}: {reason}");
        }
    }

    #[test]
    fn every_providers_spelling_of_a_normal_end_passes() {
        let mut i = input("Done.", "Tell me.");
        for value in [
            "stop",
            "STOP",
            "end_turn",
            "eos",
            "eos_token",
            "stop_sequence",
            "tool_calls",
            "tool_use",
            "function_call",
            "FINISH_REASON_UNSPECIFIED",
        ] {
            i.finish_reason = Some(value);
            assert_eq!(Truncated.check(&i), Some(Outcome::Pass), "{value}");
        }
    }
}
