//! `truncated`: the provider says the reply was cut: `finish_reason` is
//! `length` (the token limit was reached) or `content_filter` (a filter
//! stopped it). A gateway that passes such a reply on as a normal answer
//! presents a partial answer as complete.
//!
//! Undetermined when no `finish_reason` was received (a stream that ended
//! without one is a streaming fault, judged by the semantics suite). Blind
//! spot: a provider that cuts a reply and still says `stop`.

use super::{Contract, ContractInput, ContractName, Outcome};

/// The `truncated` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct Truncated;

impl Contract for Truncated {
    fn name(&self) -> ContractName {
        ContractName::Truncated
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        Some(match input.finish_reason {
            Some("length") => {
                Outcome::fail("finish_reason is length: the reply was cut at the token limit")
            }
            Some("content_filter") => Outcome::fail(
                "finish_reason is content_filter: the provider's filter stopped the reply",
            ),
            Some(_) => Outcome::Pass,
            None => Outcome::undetermined("no finish_reason was received"),
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
}
