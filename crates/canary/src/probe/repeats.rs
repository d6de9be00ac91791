//! The probe budget: how many copies of each probe a route gets per round.
//! One copy of each is the designed round; more copies of a probe buy
//! sensitivity to a degradation that hits only a share of replies or of
//! sessions (`canary power` says how many a target needs). Every copy
//! carries its own session identity (see [`session_id`]), so that a fault
//! stuck to some sessions is reachable.

use super::contracts_of;
use crate::evidence::ProbeKind;
use cb_contracts::ContractName;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Most copies of one probe per round: a bound on a round's requests.
pub const MAX_REPEATS: u32 = 512;

/// Copies of each probe sent to a route per round (each at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repeats {
    /// Copies of the roleplay probe.
    pub roleplay: u32,
    /// Copies of the schema probe.
    pub schema: u32,
    /// Copies of the language probe.
    pub language: u32,
}

impl Default for Repeats {
    fn default() -> Self {
        Repeats::uniform(1)
    }
}

/// A `--repeats` value that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--repeats {given:?}: {problem}; write a count for every probe (e.g. 4) or per probe \
     (e.g. language=60,roleplay=2), each from 1 to {MAX_REPEATS}"
)]
pub struct RepeatsError {
    given: String,
    problem: String,
}

impl Repeats {
    /// `n` copies of every probe.
    pub fn uniform(n: u32) -> Self {
        let n = n.clamp(1, MAX_REPEATS);
        Repeats {
            roleplay: n,
            schema: n,
            language: n,
        }
    }

    /// Copies of `kind`.
    pub fn of(&self, kind: ProbeKind) -> u32 {
        match kind {
            ProbeKind::Roleplay => self.roleplay,
            ProbeKind::Schema => self.schema,
            ProbeKind::Language => self.language,
        }
    }

    /// These repeats with `kind` at `n` copies.
    pub fn with(mut self, kind: ProbeKind, n: u32) -> Self {
        let n = n.clamp(1, MAX_REPEATS);
        match kind {
            ProbeKind::Roleplay => self.roleplay = n,
            ProbeKind::Schema => self.schema = n,
            ProbeKind::Language => self.language = n,
        }
        self
    }

    /// These repeats with every probe that checks `contract` at `n` copies.
    pub fn for_contract(self, contract: ContractName, n: u32) -> Self {
        super::PROBES
            .into_iter()
            .filter(|k| contracts_of(*k).contains(&contract))
            .fold(self, |r, k| r.with(k, n))
    }

    /// The replies per round that `contract` is checked on.
    pub fn checks_of(&self, contract: ContractName) -> u32 {
        super::PROBES
            .into_iter()
            .filter(|k| contracts_of(*k).contains(&contract))
            .map(|k| self.of(k))
            .sum()
    }

    /// Probes sent per round before any confirmation.
    pub fn per_round(&self) -> u32 {
        self.roleplay + self.schema + self.language
    }

    /// Reads `4` (every probe) or `language=60,roleplay=2` (the others
    /// stay at 1).
    ///
    /// # Errors
    /// [`RepeatsError`] naming what to write.
    pub fn parse(text: &str) -> Result<Self, RepeatsError> {
        let error = |problem: String| RepeatsError {
            given: text.to_string(),
            problem,
        };
        let count = |s: &str| -> Result<u32, RepeatsError> {
            match s.trim().parse::<u32>() {
                Ok(n) if (1..=MAX_REPEATS).contains(&n) => Ok(n),
                _ => Err(error(format!(
                    "{s:?} is not a count from 1 to {MAX_REPEATS}"
                ))),
            }
        };
        if !text.contains('=') {
            return Ok(Repeats::uniform(count(text)?));
        }
        let mut out = Repeats::uniform(1);
        for part in text.split(',') {
            let (name, n) = part
                .split_once('=')
                .ok_or_else(|| error(format!("{part:?} is not probe=count")))?;
            let kind = match name.trim() {
                "roleplay" => ProbeKind::Roleplay,
                "schema" => ProbeKind::Schema,
                "language" => ProbeKind::Language,
                other => {
                    return Err(error(format!(
                        "{other:?} is not a probe (roleplay, schema, language)"
                    )))
                }
            };
            out = out.with(kind, count(n)?);
        }
        Ok(out)
    }
}

impl fmt::Display for Repeats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.roleplay == self.schema && self.schema == self.language {
            return write!(f, "{}", self.roleplay);
        }
        // The probes above one copy, as `--repeats` reads them (the others
        // stay at 1).
        let raised: Vec<String> = super::PROBES
            .into_iter()
            .filter(|k| self.of(*k) != 1)
            .map(|k| format!("{k}={}", self.of(k)))
            .collect();
        f.write_str(&raised.join(","))
    }
}

/// The session identity of copy `copy` of `kind` sent to `route` in round
/// `round`: sent as the request's `user` field, different every round and
/// every copy (derived from the master seed, so a rerun sends the same),
/// so that over the rounds the probes reach every session bucket a sticky
/// fault could be keyed on.
pub fn session_id(seed: u64, round: u64, route: &str, kind: ProbeKind, copy: u32) -> String {
    let label = format!("canary-session/{route}/{kind}/{copy}");
    format!("canary-{:016x}", cb_base::seed::derive(seed, &label, round))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_of_each_is_the_designed_round() {
        let r = Repeats::default();
        assert_eq!(r.per_round(), 3);
        assert_eq!(r.checks_of(ContractName::Language), 1);
        // Junk prefix is checked on the roleplay and the language probes.
        assert_eq!(r.checks_of(ContractName::JunkPrefix), 2);
        assert_eq!(r.to_string(), "1");
    }

    #[test]
    fn repeats_read_as_a_count_or_per_probe() {
        assert_eq!(Repeats::parse("4").unwrap(), Repeats::uniform(4));
        let r = Repeats::parse("language=60, roleplay=2").unwrap();
        assert_eq!((r.roleplay, r.schema, r.language), (2, 1, 60));
        assert_eq!(r.to_string(), "roleplay=2,language=60");
        assert_eq!(Repeats::parse(&r.to_string()).unwrap(), r);
        for bad in ["0", "x", "language=0", "tone=3", "language", "9999"] {
            let e = Repeats::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--repeats"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_contract_s_repeats_raise_every_probe_that_checks_it() {
        let r = Repeats::default().for_contract(ContractName::JunkPrefix, 5);
        assert_eq!((r.roleplay, r.schema, r.language), (5, 1, 5));
        assert_eq!(r.checks_of(ContractName::JunkPrefix), 10);
    }

    #[test]
    fn every_copy_and_round_has_its_own_session() {
        let a = session_id(7, 1, "atlas", ProbeKind::Language, 0);
        assert_eq!(a, session_id(7, 1, "atlas", ProbeKind::Language, 0));
        assert_ne!(a, session_id(7, 2, "atlas", ProbeKind::Language, 0));
        assert_ne!(a, session_id(7, 1, "atlas", ProbeKind::Language, 1));
        assert_ne!(a, session_id(7, 1, "atlas", ProbeKind::Roleplay, 0));
        assert_ne!(a, session_id(8, 1, "atlas", ProbeKind::Language, 0));
    }
}
