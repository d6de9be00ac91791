//! `ttft`: time from sending the request to the first non-empty content
//! token of a stream. A route that sends headers at once and the first
//! token after many seconds looks healthy to an HTTP check; a user has
//! given up by then.
//!
//! Streams only (`None` otherwise). Fails strictly above the limit (default
//! 10 s, generous on purpose: only a clear stall fails). Undetermined when
//! the stream carried no content token at all (an empty stream is judged by
//! `empty`). Blind spot: a stream whose first token is fast and which then
//! stalls; that is a streaming fault for the semantics suite.

use super::{Contract, ContractInput, ContractName, Outcome};
use std::time::Duration;

/// The `ttft` contract with its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ttft {
    limit: Duration,
}

impl Ttft {
    /// The contract failing first tokens later than `limit`.
    pub fn new(limit: Duration) -> Self {
        Ttft { limit }
    }
}

impl Contract for Ttft {
    fn name(&self) -> ContractName {
        ContractName::Ttft
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        if !input.stream {
            return None;
        }
        let Some(ttft) = input.ttft else {
            return Some(Outcome::undetermined("the stream carried no content token"));
        };
        if ttft <= self.limit {
            return Some(Outcome::Pass);
        }
        let headers = input
            .ttfb
            .map(|b| format!(" (first byte after {:.1} s)", b.as_secs_f64()))
            .unwrap_or_default();
        Some(Outcome::fail(format!(
            "first content token after {:.1} s{headers}; the limit is {:.1} s",
            ttft.as_secs_f64(),
            self.limit.as_secs_f64()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::input;

    #[test]
    fn fails_only_above_the_limit_and_only_streams() {
        let t = Ttft::new(Duration::from_secs(10));
        let mut i = input("Hello there.", "Hi?");
        i.ttft = Some(Duration::from_secs(30));
        assert_eq!(t.check(&i), None, "not a stream");
        i.stream = true;
        i.ttfb = Some(Duration::from_millis(100));
        let out = t.check(&i).unwrap();
        assert!(out.is_fail());
        assert!(
            out.reason().unwrap().contains("30.0 s") && out.reason().unwrap().contains("0.1 s")
        );
        i.ttft = Some(Duration::from_secs(10));
        assert_eq!(t.check(&i), Some(Outcome::Pass), "the limit itself passes");
        i.ttft = None;
        assert!(matches!(t.check(&i), Some(Outcome::Undetermined { .. })));
    }
}
