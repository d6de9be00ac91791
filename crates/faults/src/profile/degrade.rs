//! Degradation at HTTP 200: the `[degrade]` table of a fault profile. The
//! upstream answers, but the answer fails the user: a slow first token,
//! junk before the text, a language drift, a broken schema, a refusal, an
//! empty or a truncated reply. Each kind has the share of answers it hits;
//! which answer gets which is drawn from the master seed per (run,
//! conversation, turn), so the same seed degrades the same answers for
//! every system.
//!
//! ```toml
//! [degrade]
//! upstream = "primary"          # or "fallback"
//! turns = "all"                 # "all", "final", or a list of turns
//! [degrade.junk_prefix]         # each kind: rate (0-1), and its options
//! rate = 0.2
//! style = "stray_punctuation"   # optional; drawn per answer when absent
//! [degrade.slow_first_token]
//! rate = 0.1
//! delay = "12s"                 # the first content token comes this late
//! ```
//! The rates add up to at most 1: an answer gets one degradation or none.

use super::FaultError;
use crate::Role;
use cb_degrade::{DegradationKind, Drift, JunkStyle, SchemaBreakStyle};
use rand::Rng;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Keys of `[degrade]`.
pub(super) const DEGRADE_KEYS: &[&str] = &[
    "upstream",
    "turns",
    "slow_first_token",
    "junk_prefix",
    "language_drift",
    "schema_break",
    "refusal",
    "empty",
    "truncated",
];

/// Keys of each kind's table.
pub(super) fn kind_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "slow_first_token" => &["rate", "delay"],
        "junk_prefix" | "schema_break" => &["rate", "style"],
        "language_drift" => &["rate", "drift", "to"],
        _ => &["rate"],
    }
}

/// Default delay of a slow first token: past the default 10 s limit of the
/// `ttft` contract.
pub const DEFAULT_SLOW_DELAY: Duration = Duration::from_secs(12);

/// What one degraded answer gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Degradation {
    /// Headers at once, the first content token after `delay`.
    SlowFirstToken {
        /// How late the first token comes.
        delay: Duration,
    },
    /// The text changed by [`cb_degrade::apply`].
    Text(DegradationKind),
}

impl Degradation {
    /// The name used in files (`slow_first_token`, `junk_prefix`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Degradation::SlowFirstToken { .. } => "slow_first_token",
            Degradation::Text(kind) => match kind {
                DegradationKind::JunkPrefix { .. } => "junk_prefix",
                DegradationKind::LanguageDrift { .. } => "language_drift",
                DegradationKind::SchemaBreak { .. } => "schema_break",
                DegradationKind::Refusal => "refusal",
                DegradationKind::Empty => "empty",
                DegradationKind::Truncated => "truncated",
            },
        }
    }
}

/// Which turns degrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DegradeTurns {
    /// Every turn.
    All,
    /// The final turn.
    Final,
    /// These turns (from 1).
    List(Vec<usize>),
}

impl DegradeTurns {
    fn includes(&self, turn: usize, n_turns: usize) -> bool {
        match self {
            DegradeTurns::All => turn >= 1 && turn <= n_turns,
            DegradeTurns::Final => turn == n_turns && n_turns > 0,
            DegradeTurns::List(l) => turn <= n_turns && l.contains(&turn),
        }
    }
}

/// The validated `[degrade]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct DegradeSpec {
    /// The upstream whose answers degrade.
    pub upstream: Role,
    /// The turns whose answers may degrade.
    pub turns: DegradeTurns,
    /// Each kind with the share of answers it hits, in file order of kinds.
    pub kinds: Vec<(Degradation, f64)>,
}

/// A degradation drawn for one answer, with the seed its text change draws
/// from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Degraded {
    /// What the answer gets.
    pub degradation: Degradation,
    /// Seed of the transform's own choices.
    pub seed: u64,
}

impl DegradeSpec {
    /// What the `role` upstream does to its answer on `turn` of a
    /// conversation of `n_turns` (its index `conversation`) in `run`.
    pub fn draw(
        &self,
        master_seed: u64,
        run: u32,
        conversation: usize,
        turn: usize,
        n_turns: usize,
        role: Role,
    ) -> Option<Degraded> {
        if role != self.upstream || !self.turns.includes(turn, n_turns) {
            return None;
        }
        let mut h = Sha256::new();
        h.update(run.to_le_bytes());
        h.update((conversation as u64).to_le_bytes());
        h.update((turn as u64).to_le_bytes());
        let digest = h.finalize();
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest[..8]);
        let index = u64::from_le_bytes(bytes);
        let mut rng = cb_base::seed::rng(master_seed, "degrade", index);
        let u: f64 = rng.random();
        let mut acc = 0.0;
        for (degradation, rate) in &self.kinds {
            acc += rate;
            if u < acc {
                return Some(Degraded {
                    degradation: *degradation,
                    seed: rng.random(),
                });
            }
        }
        None
    }

    /// The share of answers a kind (by name) hits.
    pub fn rate(&self, name: &str) -> f64 {
        self.kinds
            .iter()
            .filter(|(d, _)| d.name() == name)
            .map(|(_, r)| r)
            .sum()
    }
}

/// `[degrade]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDegrade {
    upstream: Option<String>,
    turns: Option<super::schema::RawTurnsPub>,
    slow_first_token: Option<RawSlow>,
    junk_prefix: Option<RawStyled<JunkStyle>>,
    language_drift: Option<RawDrift>,
    schema_break: Option<RawStyled<SchemaBreakStyle>>,
    refusal: Option<RawRate>,
    empty: Option<RawRate>,
    truncated: Option<RawRate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRate {
    rate: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlow {
    rate: Option<f64>,
    delay: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStyled<S> {
    rate: Option<f64>,
    style: Option<S>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDrift {
    rate: Option<f64>,
    drift: Option<Drift>,
    to: Option<cb_contracts::Language>,
}

impl RawDegrade {
    /// Validates `[degrade]`; `origin` names the file in errors.
    pub(super) fn validate(self, origin: &str) -> Result<DegradeSpec, FaultError> {
        let invalid = |key: &str, value: String, fix: &str| FaultError::Invalid {
            path: origin.to_string(),
            key: format!("degrade.{key}"),
            value,
            fix: fix.to_string(),
        };
        let upstream = match self.upstream.as_deref() {
            None | Some("primary") => Role::Primary,
            Some("fallback") => Role::Fallback,
            Some(other) => {
                return Err(invalid(
                    "upstream",
                    format!("{other:?}"),
                    "write \"primary\" or \"fallback\"",
                ))
            }
        };
        let turns = match self.turns {
            None => DegradeTurns::All,
            Some(super::schema::RawTurnsPub::Word(w)) if w == "all" => DegradeTurns::All,
            Some(super::schema::RawTurnsPub::Word(w)) if w == "final" => DegradeTurns::Final,
            Some(super::schema::RawTurnsPub::Word(w)) => {
                return Err(invalid(
                    "turns",
                    format!("{w:?}"),
                    "write \"all\", \"final\" or a list of turn numbers from 1",
                ))
            }
            Some(super::schema::RawTurnsPub::List(list)) => {
                let mut turns = Vec::new();
                for t in list {
                    match usize::try_from(t) {
                        Ok(t) if t >= 1 => turns.push(t),
                        _ => {
                            return Err(invalid(
                                "turns",
                                t.to_string(),
                                "turn numbers count from 1",
                            ))
                        }
                    }
                }
                if turns.is_empty() {
                    return Err(invalid("turns", "[]".into(), "list at least one turn"));
                }
                DegradeTurns::List(turns)
            }
            Some(super::schema::RawTurnsPub::Outage(_)) => {
                return Err(invalid(
                    "turns",
                    "{ from, count }".into(),
                    "a degradation takes \"all\", \"final\" or a list of turn numbers from 1 (an outage is a fault, not a degradation)",
                ))
            }
        };
        let rate = |key: &str, raw: Option<f64>| -> Result<f64, FaultError> {
            let r = raw.unwrap_or(0.0);
            if !(r.is_finite() && (0.0..=1.0).contains(&r)) {
                return Err(invalid(
                    &format!("{key}.rate"),
                    r.to_string(),
                    "a rate is the share of answers degraded, from 0 to 1",
                ));
            }
            Ok(r)
        };
        let mut kinds = Vec::new();
        if let Some(s) = self.slow_first_token {
            let delay = match s.delay {
                None => DEFAULT_SLOW_DELAY,
                Some(text) => humantime::parse_duration(text.trim()).map_err(|e| {
                    invalid(
                        "slow_first_token.delay",
                        format!("{text:?}"),
                        &format!("{e}; write a duration like \"12s\""),
                    )
                })?,
            };
            kinds.push((
                Degradation::SlowFirstToken { delay },
                rate("slow_first_token", s.rate)?,
            ));
        }
        if let Some(j) = self.junk_prefix {
            kinds.push((
                Degradation::Text(DegradationKind::JunkPrefix { style: j.style }),
                rate("junk_prefix", j.rate)?,
            ));
        }
        if let Some(d) = self.language_drift {
            kinds.push((
                Degradation::Text(DegradationKind::LanguageDrift {
                    drift: d.drift,
                    to: d.to,
                }),
                rate("language_drift", d.rate)?,
            ));
        }
        if let Some(s) = self.schema_break {
            kinds.push((
                Degradation::Text(DegradationKind::SchemaBreak { style: s.style }),
                rate("schema_break", s.rate)?,
            ));
        }
        for (key, raw, kind) in [
            ("refusal", self.refusal, DegradationKind::Refusal),
            ("empty", self.empty, DegradationKind::Empty),
            ("truncated", self.truncated, DegradationKind::Truncated),
        ] {
            if let Some(r) = raw {
                kinds.push((Degradation::Text(kind), rate(key, r.rate)?));
            }
        }
        let total: f64 = kinds.iter().map(|(_, r)| r).sum();
        if total > 1.0 + 1e-9 {
            return Err(invalid(
                "*.rate",
                format!("{total}"),
                "the rates add up to more than 1; an answer gets one degradation at most, so keep their sum at 1 or less",
            ));
        }
        Ok(DegradeSpec {
            upstream,
            turns,
            kinds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FaultProfile;

    fn parse(text: &str) -> Result<FaultProfile, FaultError> {
        FaultProfile::parse(text, "fault_profiles/d.toml")
    }

    #[test]
    fn a_degrade_only_profile_parses_and_draws_at_its_rates() {
        let p = parse(
            "[degrade]\nturns = \"all\"\n[degrade.junk_prefix]\nrate = 0.2\n[degrade.refusal]\nrate = 0.1\n[degrade.slow_first_token]\nrate = 0.1\ndelay = \"3s\"\n",
        )
        .unwrap();
        let spec = p.degrade.as_ref().unwrap();
        assert_eq!(spec.upstream, Role::Primary);
        let mut counts = std::collections::HashMap::new();
        let n = 20_000;
        for i in 0..n {
            if let Some(d) = spec.draw(42, 1, i, 3, 9, Role::Primary) {
                *counts.entry(d.degradation.name()).or_insert(0) += 1;
            }
            assert_eq!(spec.draw(42, 1, i, 3, 9, Role::Fallback), None);
        }
        let share = |k: &str| f64::from(*counts.get(k).unwrap_or(&0)) / n as f64;
        assert!((share("junk_prefix") - 0.2).abs() < 0.015);
        assert!((share("refusal") - 0.1).abs() < 0.015);
        assert!((share("slow_first_token") - 0.1).abs() < 0.015);
        // Same seed, same draw; another seed, another.
        let a: Vec<_> = (0..50)
            .map(|i| spec.draw(42, 2, i, 1, 9, Role::Primary))
            .collect();
        let b: Vec<_> = (0..50)
            .map(|i| spec.draw(42, 2, i, 1, 9, Role::Primary))
            .collect();
        let c: Vec<_> = (0..50)
            .map(|i| spec.draw(43, 2, i, 1, 9, Role::Primary))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn bad_degrade_tables_name_the_key() {
        let err = parse("[degrade.junk_prefix]\nrate = 1.5\n").unwrap_err();
        assert!(
            err.to_string().contains("degrade.junk_prefix.rate"),
            "{err}"
        );
        let err =
            parse("[degrade.junk_prefix]\nrate = 0.6\n[degrade.empty]\nrate = 0.6\n").unwrap_err();
        assert!(err.to_string().contains("add up to more than 1"), "{err}");
        let err = parse("[degrade.junk_prefix]\nrate = 0.1\nstyle = \"sparkles\"\n").unwrap_err();
        assert!(err.to_string().contains("sparkles"), "{err}");
        let err = parse("[degrade.junk_prefix]\nrat = 0.1\n").unwrap_err();
        assert!(err.to_string().contains("[degrade.junk_prefix]"), "{err}");
    }
}
