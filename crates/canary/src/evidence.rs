//! What one canary round observed for one route, in the terms the quarantine
//! state machine needs: per probe, the outcome of each answer contract, plus
//! the flags that make a round say nothing about the route (a transport
//! error, a reply served by another route).
//!
//! The prober fills these in; the machine only reads them. Aggregating a
//! route's probes into one verdict per contract lives here too, so the
//! machine and the summary count the same way.

pub use cb_contracts::{ContractName, Language, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One probe of the fixed probe set sent to every route each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// The streamed roleplay-style continuation: time to first token,
    /// filtering, refusal, empty, junk prefix. This is the filtering probe the
    /// positive control checks.
    Roleplay,
    /// The fixed-schema object (structured output).
    Schema,
    /// The prompt in one language of the rotation (language integrity).
    Language,
}

impl fmt::Display for ProbeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProbeKind::Roleplay => "roleplay",
            ProbeKind::Schema => "schema",
            ProbeKind::Language => "language",
        })
    }
}

/// One contract's outcome on one probe (a contract that does not apply to
/// the probe, or was not run, has no entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractResult {
    /// Which contract.
    pub contract: ContractName,
    /// What it found: `pass`, `fail` or `undetermined`, with a `reason`
    /// for the last two.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The contracts checked on one probe's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeEvidence {
    /// Which probe.
    pub probe: ProbeKind,
    /// One entry per contract checked (a contract absent here was not run).
    pub results: Vec<ContractResult>,
    /// Whether the prober trusts this probe's passes (default true). The
    /// machine also distrusts the filtering probe on its own when the
    /// positive control passes it; a pass of an untrusted probe is no
    /// evidence of health, its failures still count.
    #[serde(default = "trusted_by_default")]
    pub trusted: bool,
    /// The reply's `finish_reason`, when it carried one (the positive
    /// control reads `content_filter` here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

fn trusted_by_default() -> bool {
    true
}

impl ProbeEvidence {
    /// A trusted probe with these outcomes.
    pub fn new(
        probe: ProbeKind,
        results: impl IntoIterator<Item = (ContractName, Outcome)>,
    ) -> Self {
        ProbeEvidence {
            probe,
            results: results
                .into_iter()
                .map(|(contract, outcome)| ContractResult { contract, outcome })
                .collect(),
            trusted: true,
            finish_reason: None,
        }
    }
}

/// Why a probe got no usable reply: a transport error, never a contract
/// failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// No reply within the deadline.
    Timeout,
    /// HTTP 429.
    RateLimited,
    /// HTTP 5xx.
    ServerError,
    /// The connection failed or broke, or a 2xx body was cut short or
    /// malformed (no usable reply to judge).
    Connection,
    /// Another HTTP 4xx (a refused key, an unknown model, a route that
    /// cannot take the request): nothing was answered, so nothing is scored.
    Refused,
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportKind::Timeout => "timeout",
            TransportKind::RateLimited => "HTTP 429",
            TransportKind::ServerError => "HTTP 5xx",
            TransportKind::Connection => "connection error",
            TransportKind::Refused => "HTTP 4xx",
        })
    }
}

/// A transport error seen while probing a route this round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportError {
    /// What kind.
    pub kind: TransportKind,
    /// Details for the log (status line, elapsed time).
    pub detail: String,
}

/// Everything one round observed for one route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteEvidence {
    /// The route (endpoint tag, else provider name).
    pub route: String,
    /// The probes that got a reply, with their contract outcomes.
    pub probes: Vec<ProbeEvidence>,
    /// The first transport error (timeout, 429, 5xx, ...) any probe of the
    /// route hit this round. It freezes the contracts of the probes in
    /// [`RouteEvidence::frozen_probes`] only; when no probe got a reply the
    /// whole route is frozen (no step toward quarantine, none toward
    /// release, no reset).
    pub transport_error: Option<TransportError>,
    /// The probes that got a transport error instead of a reply: their
    /// contracts are frozen this round, the other probes still count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frozen_probes: Vec<ProbeKind>,
    /// Set when a reply named another route as its provider: pinning was not
    /// honoured, so nothing is scored against this route this round.
    pub served_by_other: Option<String>,
    /// The language the language probe used this round, if it ran.
    pub language: Option<Language>,
}

impl RouteEvidence {
    /// Evidence with no probes and no flags, to fill in.
    pub fn new(route: impl Into<String>) -> Self {
        RouteEvidence {
            route: route.into(),
            probes: Vec::new(),
            transport_error: None,
            frozen_probes: Vec::new(),
            served_by_other: None,
            language: None,
        }
    }

    /// Records that `probe` got `error` instead of a reply.
    pub fn freeze_probe(&mut self, probe: ProbeKind, error: TransportError) {
        self.transport_error.get_or_insert(error);
        if !self.frozen_probes.contains(&probe) {
            self.frozen_probes.push(probe);
        }
    }

    /// Whether some probes were frozen by a transport error while others
    /// got a reply: those replies are scored, the frozen probes' contracts
    /// are not.
    pub fn partly_frozen(&self) -> bool {
        self.transport_error.is_some() && !self.probes.is_empty()
    }

    /// Why this round says nothing about the route, if it does not.
    pub fn freeze_reason(&self) -> Option<FreezeReason> {
        if let Some(other) = &self.served_by_other {
            return Some(FreezeReason::PinningNotHonoured {
                served_by: other.clone(),
            });
        }
        // Each probe is scored on its own outcome: a transport error
        // freezes the whole route only when no probe got a reply.
        self.transport_error
            .as_ref()
            .filter(|_| self.probes.is_empty())
            .map(|e| FreezeReason::Transport(e.clone()))
    }

    /// One verdict per contract checked, over all probes. A probe in `weak`
    /// (or not `trusted`) contributes its failures but not its passes. Order of precedence: any
    /// failure, then any undetermined outcome, then any weak pass, then pass.
    pub fn verdicts(&self, weak: &[ProbeKind]) -> BTreeMap<ContractName, ContractVerdict> {
        self.merged(weak)
    }

    /// [`RouteEvidence::verdicts`] where `frozen` are the contracts of the
    /// probes that got a transport error (see
    /// [`RouteEvidence::frozen_probes`]): such a contract keeps only a
    /// failure seen on another probe; a pass there is not the whole round's
    /// verdict, so the contract is frozen (absent).
    pub fn verdicts_frozen(
        &self,
        weak: &[ProbeKind],
        frozen: &[ContractName],
    ) -> BTreeMap<ContractName, ContractVerdict> {
        let mut out = self.merged(weak);
        out.retain(|c, v| !frozen.contains(c) || matches!(v, ContractVerdict::Fail { .. }));
        out
    }

    fn merged(&self, weak: &[ProbeKind]) -> BTreeMap<ContractName, ContractVerdict> {
        let mut out: BTreeMap<ContractName, ContractVerdict> = BTreeMap::new();
        for probe in &self.probes {
            let is_weak = !probe.trusted || weak.contains(&probe.probe);
            for result in &probe.results {
                let this = match &result.outcome {
                    Outcome::Pass if is_weak => ContractVerdict::WeakPass,
                    Outcome::Pass => ContractVerdict::Pass,
                    Outcome::Fail { reason } => ContractVerdict::Fail {
                        evidence: format!("{} probe: {reason}", probe.probe),
                    },
                    Outcome::Undetermined { .. } => ContractVerdict::Undetermined,
                };
                let merged = match out.remove(&result.contract) {
                    Some(previous) if previous.rank() >= this.rank() => previous,
                    _ => this,
                };
                out.insert(result.contract, merged);
            }
        }
        out
    }
}

/// Why a round is frozen for a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum FreezeReason {
    /// A timeout, 429 or 5xx.
    Transport(TransportError),
    /// The reply came from another route.
    PinningNotHonoured {
        /// The route that actually answered.
        served_by: String,
    },
}

impl fmt::Display for FreezeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FreezeReason::Transport(e) => write!(f, "transport error ({}): {}", e.kind, e.detail),
            FreezeReason::PinningNotHonoured { served_by } => {
                write!(f, "pinning not honoured: the reply came from {served_by}")
            }
        }
    }
}

/// A route's verdict on one contract for one round, over all its probes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum ContractVerdict {
    /// Passed on trusted probes only.
    Pass,
    /// Passed, but on a probe marked weak this round: no evidence of health.
    WeakPass,
    /// Undetermined on some probe and failed on none.
    Undetermined,
    /// Failed on at least one probe.
    Fail {
        /// The failing probe and what its checker saw.
        evidence: String,
    },
}

impl ContractVerdict {
    fn rank(&self) -> u8 {
        match self {
            ContractVerdict::Pass => 0,
            ContractVerdict::WeakPass => 1,
            ContractVerdict::Undetermined => 2,
            ContractVerdict::Fail { .. } => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(kind: ProbeKind, results: &[(ContractName, Outcome)]) -> ProbeEvidence {
        ProbeEvidence::new(kind, results.iter().cloned())
    }

    fn fail(text: &str) -> Outcome {
        Outcome::fail(text)
    }

    #[test]
    fn names_are_snake_case_on_the_wire() {
        for c in ContractName::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
        assert_eq!(
            serde_json::to_string(&TransportKind::RateLimited).unwrap(),
            "\"rate_limited\""
        );
    }

    #[test]
    fn a_failure_on_any_probe_wins() {
        let mut e = RouteEvidence::new("a");
        e.probes = vec![
            probe(ProbeKind::Roleplay, &[(ContractName::Empty, Outcome::Pass)]),
            probe(ProbeKind::Schema, &[(ContractName::Empty, fail("0 bytes"))]),
        ];
        let v = e.verdicts(&[]);
        assert_eq!(
            v[&ContractName::Empty],
            ContractVerdict::Fail {
                evidence: "schema probe: 0 bytes".into()
            }
        );
    }

    #[test]
    fn undetermined_beats_pass_and_not_run_is_absent() {
        let mut e = RouteEvidence::new("a");
        e.probes = vec![
            probe(ProbeKind::Roleplay, &[(ContractName::Empty, Outcome::Pass)]),
            probe(
                ProbeKind::Schema,
                &[(ContractName::Empty, Outcome::undetermined("short"))],
            ),
        ];
        let v = e.verdicts(&[]);
        assert_eq!(v[&ContractName::Empty], ContractVerdict::Undetermined);
        assert!(!v.contains_key(&ContractName::Refusal));
    }

    #[test]
    fn a_weak_probe_keeps_failures_and_loses_passes() {
        let mut e = RouteEvidence::new("a");
        e.probes = vec![probe(
            ProbeKind::Roleplay,
            &[
                (ContractName::Refusal, Outcome::Pass),
                (ContractName::JunkPrefix, fail("junk")),
            ],
        )];
        let v = e.verdicts(&[ProbeKind::Roleplay]);
        assert_eq!(v[&ContractName::Refusal], ContractVerdict::WeakPass);
        assert!(matches!(
            v[&ContractName::JunkPrefix],
            ContractVerdict::Fail { .. }
        ));
        // The prober's own distrust has the same effect.
        e.probes[0].trusted = false;
        assert_eq!(
            e.verdicts(&[])[&ContractName::Refusal],
            ContractVerdict::WeakPass
        );
    }

    #[test]
    fn evidence_reads_back_from_json_with_trust_defaulted() {
        let json = r#"{"route": "a", "probes": [{"probe": "schema", "results": [
            {"contract": "schema", "outcome": "fail", "reason": "missing `name`"},
            {"contract": "empty", "outcome": "pass"}]}],
            "transport_error": null, "served_by_other": null, "language": "fr"}"#;
        let e: RouteEvidence = serde_json::from_str(json).unwrap();
        assert!(e.probes[0].trusted);
        assert_eq!(e.language, Some(Language::Fr));
        assert_eq!(
            e.probes[0].results[0].outcome,
            Outcome::fail("missing `name`")
        );
        let back: RouteEvidence =
            serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn pinning_beats_transport_as_freeze_reason() {
        let mut e = RouteEvidence::new("a");
        assert_eq!(e.freeze_reason(), None);
        e.transport_error = Some(TransportError {
            kind: TransportKind::Timeout,
            detail: "30 s".into(),
        });
        assert!(matches!(
            e.freeze_reason(),
            Some(FreezeReason::Transport(_))
        ));
        e.served_by_other = Some("b".into());
        assert_eq!(
            e.freeze_reason(),
            Some(FreezeReason::PinningNotHonoured {
                served_by: "b".into()
            })
        );
    }
}
