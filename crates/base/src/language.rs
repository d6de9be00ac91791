//! The languages the contracts know, as one enum shared by the detector, the
//! refusal patterns, the degradation transforms and the phrasebook.
//!
//! The set is deliberately small: detection is restricted to the languages a
//! conversation can plausibly be in, which is what makes a deterministic
//! local detector accurate enough on short replies (Portuguese against
//! Spanish in particular).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A language a reply can be judged in, written by serde as its ISO 639-1
/// code (`"pt"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// English.
    En,
    /// Portuguese.
    Pt,
    /// Spanish.
    Es,
    /// French.
    Fr,
    /// Italian.
    It,
    /// German.
    De,
    /// Dutch.
    Nl,
    /// Polish.
    Pl,
    /// Turkish.
    Tr,
    /// Japanese.
    Ja,
    /// Russian.
    Ru,
    /// Chinese (Mandarin, simplified or traditional script).
    Zh,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 12] = [
        Language::En,
        Language::Pt,
        Language::Es,
        Language::Fr,
        Language::It,
        Language::De,
        Language::Nl,
        Language::Pl,
        Language::Tr,
        Language::Ja,
        Language::Ru,
        Language::Zh,
    ];

    /// The ISO 639-1 code (`"pt"`).
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Pt => "pt",
            Language::Es => "es",
            Language::Fr => "fr",
            Language::It => "it",
            Language::De => "de",
            Language::Nl => "nl",
            Language::Pl => "pl",
            Language::Tr => "tr",
            Language::Ja => "ja",
            Language::Ru => "ru",
            Language::Zh => "zh",
        }
    }

    /// The English name (`"Portuguese"`), for reasons and reports.
    pub fn name(self) -> &'static str {
        match self {
            Language::En => "English",
            Language::Pt => "Portuguese",
            Language::Es => "Spanish",
            Language::Fr => "French",
            Language::It => "Italian",
            Language::De => "German",
            Language::Nl => "Dutch",
            Language::Pl => "Polish",
            Language::Tr => "Turkish",
            Language::Ja => "Japanese",
            Language::Ru => "Russian",
            Language::Zh => "Chinese",
        }
    }

    /// The language from its ISO 639-1 code, ignoring case.
    pub fn from_code(code: &str) -> Option<Language> {
        Language::ALL
            .into_iter()
            .find(|l| l.code().eq_ignore_ascii_case(code))
    }

    /// The language a drifting model most plausibly slides into: a close
    /// relative where there is one (pt and es, it to es, nl and de, ja and
    /// zh, pl and ru), else English, the usual fallback of a confused model.
    pub fn neighbour(self) -> Language {
        match self {
            Language::Pt => Language::Es,
            Language::Es => Language::Pt,
            Language::It => Language::Es,
            Language::Fr => Language::It,
            Language::Nl => Language::De,
            Language::De => Language::Nl,
            Language::Ja => Language::Zh,
            Language::Zh => Language::Ja,
            Language::Pl => Language::Ru,
            Language::Ru => Language::Pl,
            Language::En => Language::De,
            Language::Tr => Language::En,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_serde_and_from_code() {
        for l in Language::ALL {
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(json, format!("\"{}\"", l.code()));
            assert_eq!(Language::from_code(l.code()), Some(l));
            assert_ne!(l.neighbour(), l);
        }
        assert_eq!(Language::from_code("PT"), Some(Language::Pt));
        assert_eq!(Language::from_code("xx"), None);
    }
}
