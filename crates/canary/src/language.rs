//! The language probe's rotation and its two safeguards: a language that
//! failed on a route is asked again next round (so rotating to another
//! language cannot dodge the two-consecutive-rounds rule), and an anomaly is
//! confirmed by two immediate re-probes, a majority of three deciding (so one
//! odd sample does not count as a failure).

pub use cb_contracts::Language;
use cb_contracts::Outcome;
use serde::{Deserialize, Serialize};

/// The rotation, in order: round `n` asks `ROTATION[n % len]` unless a
/// re-check is due. Every language the contracts know, once.
pub const ROTATION: [Language; 17] = [
    Language::En,
    Language::Fr,
    Language::De,
    Language::Es,
    Language::Ja,
    Language::It,
    Language::Pt,
    Language::Ru,
    Language::Nl,
    Language::Pl,
    Language::Zh,
    Language::Ko,
    Language::Tr,
    Language::Ar,
    Language::Hi,
    Language::Id,
    Language::Vi,
];

/// What the machine remembers about a route's language probe.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageMemory {
    /// The language that failed on the route's last scored language probe,
    /// still to be re-checked; cleared by a pass of the language contract.
    pub recheck: Option<Language>,
}

/// The language to probe a route with in round `round` (1-based or 0-based,
/// as long as the caller is consistent): the failed language again while a
/// re-check is due, else the rotation's.
pub fn next_language(round: u64, memory: &LanguageMemory) -> Language {
    if let Some(language) = memory.recheck {
        return language;
    }
    let index = (round % ROTATION.len() as u64) as usize;
    ROTATION[index]
}

/// Whether `first` is an anomaly that needs two immediate confirmations.
pub fn needs_confirmation(first: &Outcome) -> bool {
    matches!(first, Outcome::Fail { .. })
}

/// The language verdict of a probe and its confirmations.
///
/// Only a failure is an anomaly: a pass or an undetermined first sample is
/// returned as it is, and the confirmations are ignored (pass `None`).
/// After a failure, a majority of the three decides: two failures fail
/// (the reason of the first failure, with the count), two passes pass,
/// anything else (a confirmation undetermined, or `None`: lost to a
/// transport error or not sent) is undetermined.
pub fn confirm(first: &Outcome, second: Option<&Outcome>, third: Option<&Outcome>) -> Outcome {
    let Outcome::Fail { reason } = first else {
        return first.clone();
    };
    let samples = [Some(first), second, third];
    let fails = samples
        .iter()
        .filter(|o| matches!(o, Some(Outcome::Fail { .. })))
        .count();
    let passes = samples
        .iter()
        .filter(|o| matches!(o, Some(Outcome::Pass)))
        .count();
    if fails >= 2 {
        Outcome::fail(format!("{fails} of 3 samples failed; first: {reason}"))
    } else if passes >= 2 {
        Outcome::Pass
    } else {
        Outcome::undetermined(format!(
            "{fails} of 3 samples failed and {passes} passed: no majority (first: {reason})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn fail(text: &str) -> Outcome {
        Outcome::fail(text)
    }

    fn unsure() -> Outcome {
        Outcome::undetermined("short")
    }

    #[test]
    fn the_rotation_asks_every_language_once() {
        let distinct: BTreeSet<Language> = ROTATION.iter().copied().collect();
        assert_eq!(distinct.len(), ROTATION.len());
        assert_eq!(distinct, Language::ALL.into_iter().collect());
    }

    #[test]
    fn without_a_failure_the_rotation_advances_every_round() {
        let memory = LanguageMemory::default();
        let asked: Vec<Language> = (0..ROTATION.len() as u64)
            .map(|r| next_language(r, &memory))
            .collect();
        assert_eq!(asked, ROTATION.to_vec());
        assert_eq!(next_language(ROTATION.len() as u64, &memory), ROTATION[0]);
    }

    #[test]
    fn a_failed_language_is_asked_again_next_round() {
        let memory = LanguageMemory {
            recheck: Some(Language::Ja),
        };
        for round in 0..30 {
            assert_eq!(next_language(round, &memory), Language::Ja);
        }
    }

    #[test]
    fn codes_match_serde() {
        for l in ROTATION {
            assert_eq!(
                serde_json::to_string(&l).unwrap(),
                format!("\"{}\"", l.code())
            );
        }
    }

    #[test]
    fn a_pass_needs_no_confirmation() {
        assert!(!needs_confirmation(&Outcome::Pass));
        assert!(!needs_confirmation(&unsure()));
        assert!(needs_confirmation(&fail("mixed")));
        assert_eq!(confirm(&Outcome::Pass, None, None), Outcome::Pass);
        assert_eq!(
            confirm(&unsure(), Some(&fail("x")), Some(&fail("y"))),
            unsure()
        );
    }

    #[test]
    fn two_failures_of_three_confirm_an_anomaly() {
        let out = confirm(
            &fail("fr+en mixed"),
            Some(&Outcome::Pass),
            Some(&fail("again")),
        );
        assert_eq!(
            out,
            Outcome::fail("2 of 3 samples failed; first: fr+en mixed")
        );
        assert!(confirm(&fail("a"), Some(&fail("b")), Some(&fail("c"))).is_fail());
        assert!(confirm(&fail("a"), Some(&fail("b")), None).is_fail());
    }

    #[test]
    fn one_odd_sample_is_not_a_failure() {
        assert_eq!(
            confirm(&fail("a"), Some(&Outcome::Pass), Some(&Outcome::Pass)),
            Outcome::Pass
        );
        let no_majority = confirm(&fail("a"), Some(&Outcome::Pass), Some(&unsure()));
        assert!(matches!(no_majority, Outcome::Undetermined { .. }));
        assert!(matches!(
            confirm(&fail("a"), None, None),
            Outcome::Undetermined { .. }
        ));
    }
}
