//! The languages the contracts know, as one enum shared by the detector, the
//! refusal patterns, the degradation transforms and the phrasebook.
//!
//! Seventeen languages, chosen for a product used worldwide: the twelve the
//! contracts started with (en, pt, es, fr, it, de, nl, pl, tr, ja, ru, zh)
//! and ko, ar, hi, id, vi. The set stays closed: detection is restricted to
//! the languages a conversation can plausibly be in, which is what makes a
//! deterministic local detector accurate enough on short replies
//! (Portuguese against Spanish in particular). Three of the five new ones
//! have a script of their own (Hangul, Arabic, Devanagari), which decides
//! them; Indonesian and Vietnamese are Latin-script and need the detector.

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
    /// Korean (Hangul).
    Ko,
    /// Arabic (Modern Standard).
    Ar,
    /// Hindi (Devanagari).
    Hi,
    /// Indonesian.
    Id,
    /// Vietnamese.
    Vi,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 17] = [
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
        Language::Ko,
        Language::Ar,
        Language::Hi,
        Language::Id,
        Language::Vi,
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
            Language::Ko => "ko",
            Language::Ar => "ar",
            Language::Hi => "hi",
            Language::Id => "id",
            Language::Vi => "vi",
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
            Language::Ko => "Korean",
            Language::Ar => "Arabic",
            Language::Hi => "Hindi",
            Language::Id => "Indonesian",
            Language::Vi => "Vietnamese",
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
    /// zh, pl and ru, ko to ja), else English, the usual fallback of a
    /// confused model.
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
            Language::Ko => Language::Ja,
            Language::Ar => Language::En,
            Language::Hi => Language::En,
            Language::Id => Language::En,
            Language::Vi => Language::En,
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
