//! The language probe's rotation and its two safeguards: a language that
//! failed on a route is asked again next round (so rotating to another
//! language cannot dodge the two-consecutive-rounds rule), and an anomaly is
//! confirmed by two immediate re-probes, a majority of three deciding (so one
//! odd sample does not count as a failure).

use super::evidence::Outcome;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A language of the rotation, written as its ISO 639-1 code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Language {
    /// English.
    #[serde(rename = "en")]
    English,
    /// French.
    #[serde(rename = "fr")]
    French,
    /// German.
    #[serde(rename = "de")]
    German,
    /// Spanish.
    #[serde(rename = "es")]
    Spanish,
    /// Italian.
    #[serde(rename = "it")]
    Italian,
    /// Portuguese.
    #[serde(rename = "pt")]
    Portuguese,
    /// Dutch.
    #[serde(rename = "nl")]
    Dutch,
    /// Polish.
    #[serde(rename = "pl")]
    Polish,
    /// Japanese.
    #[serde(rename = "ja")]
    Japanese,
    /// Russian.
    #[serde(rename = "ru")]
    Russian,
}

/// The rotation, in order: round `n` asks `ROTATION[n % len]` unless a
/// re-check is due.
pub const ROTATION: [Language; 10] = [
    Language::English,
    Language::French,
    Language::German,
    Language::Spanish,
    Language::Japanese,
    Language::Italian,
    Language::Portuguese,
    Language::Russian,
    Language::Dutch,
    Language::Polish,
];

impl Language {
    /// The ISO 639-1 code.
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::French => "fr",
            Language::German => "de",
            Language::Spanish => "es",
            Language::Italian => "it",
            Language::Portuguese => "pt",
            Language::Dutch => "nl",
            Language::Polish => "pl",
            Language::Japanese => "ja",
            Language::Russian => "ru",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

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
/// Only a failure is an anomaly: a pass, an undetermined or a not-run first
/// sample is returned as it is, and `second`/`third` are ignored (pass
/// [`Outcome::NotRun`]). After a failure, a majority of the three decides:
/// two failures fail (evidence of the first failure, with the count), two
/// passes pass, anything else (a confirmation undetermined or lost to a
/// transport error) is undetermined.
pub fn confirm(first: &Outcome, second: &Outcome, third: &Outcome) -> Outcome {
    let Outcome::Fail { evidence } = first else {
        return first.clone();
    };
    let samples = [first, second, third];
    let fails = samples
        .iter()
        .filter(|o| matches!(o, Outcome::Fail { .. }))
        .count();
    let passes = samples
        .iter()
        .filter(|o| matches!(o, Outcome::Pass))
        .count();
    if fails >= 2 {
        Outcome::Fail {
            evidence: format!("{fails} of 3 samples failed; first: {evidence}"),
        }
    } else if passes >= 2 {
        Outcome::Pass
    } else {
        Outcome::Undetermined
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn fail(text: &str) -> Outcome {
        Outcome::Fail {
            evidence: text.into(),
        }
    }

    #[test]
    fn the_rotation_has_at_least_eight_distinct_languages() {
        let distinct: BTreeSet<Language> = ROTATION.iter().copied().collect();
        assert!(distinct.len() >= 8);
        assert_eq!(distinct.len(), ROTATION.len());
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
            recheck: Some(Language::Japanese),
        };
        for round in 0..30 {
            assert_eq!(next_language(round, &memory), Language::Japanese);
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
        assert!(!needs_confirmation(&Outcome::Undetermined));
        assert!(needs_confirmation(&fail("mixed")));
        assert_eq!(
            confirm(&Outcome::Pass, &Outcome::NotRun, &Outcome::NotRun),
            Outcome::Pass
        );
        assert_eq!(
            confirm(&Outcome::Undetermined, &fail("x"), &fail("y")),
            Outcome::Undetermined
        );
    }

    #[test]
    fn two_failures_of_three_confirm_an_anomaly() {
        let out = confirm(&fail("fr+en mixed"), &Outcome::Pass, &fail("again"));
        assert_eq!(
            out,
            Outcome::Fail {
                evidence: "2 of 3 samples failed; first: fr+en mixed".into()
            }
        );
        assert!(matches!(
            confirm(&fail("a"), &fail("b"), &fail("c")),
            Outcome::Fail { .. }
        ));
        assert!(matches!(
            confirm(&fail("a"), &fail("b"), &Outcome::NotRun),
            Outcome::Fail { .. }
        ));
    }

    #[test]
    fn one_odd_sample_is_not_a_failure() {
        assert_eq!(
            confirm(&fail("a"), &Outcome::Pass, &Outcome::Pass),
            Outcome::Pass
        );
        assert_eq!(
            confirm(&fail("a"), &Outcome::Pass, &Outcome::Undetermined),
            Outcome::Undetermined
        );
        assert_eq!(
            confirm(&fail("a"), &Outcome::NotRun, &Outcome::NotRun),
            Outcome::Undetermined
        );
    }
}
