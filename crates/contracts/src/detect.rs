//! Language detection restricted to the plausible languages, with a verdict
//! on whether the guess is reliable enough to act on.
//!
//! Backed by `lingua` (n-gram models compiled in, no network, deterministic)
//! for Latin-script text. The script decides first: Cyrillic text is
//! Russian, kana is Japanese, a long run of ideographs without kana is
//! Chinese, and a short one is too ambiguous to call (a Japanese list of
//! names is all kanji). Letters of a minority script (a Japanese word in a
//! German sentence) are dropped before detection, so they cannot sway it.
//! The choice of lingua over whatlang is measured in [`super::language`].

use super::text::{is_cjk, is_kana};
use super::Language;
use lingua::LanguageDetector;
use std::fmt;

/// Confidence from which a guess counts as reliable. On the calibration
/// set's user messages no lingua guess at 0.6 or above was wrong.
pub const RELIABLE_CONFIDENCE: f64 = 0.6;

/// Ideographs without kana shorter than this are not called Chinese when
/// Japanese is plausible, unless they include a simplified-only character.
const MIN_HAN_ONLY_CHARS: usize = 12;

/// Common simplified Chinese characters that Japanese does not use (it
/// writes the traditional or its own form: 這, 気, 語, ...).
const SIMPLIFIED_ONLY: &str = "这们么说还给让吗呢吧怎样你您个为过请对时长哪习门语问题认识发现经义乐气东车见观电话书买卖钱饭读听开关头间实应该";

/// A language guess for one piece of text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// The most likely language among the plausible ones.
    pub language: Language,
    /// The detector's confidence, 0 to 1.
    pub confidence: f64,
    /// Whether the guess is reliable enough to act on.
    pub reliable: bool,
}

/// The script most of a text's letters are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Cyrillic,
    Cjk,
}

fn script_of(c: char) -> Option<Script> {
    if is_cjk(c) {
        Some(Script::Cjk)
    } else if matches!(c as u32, 0x0400..=0x052F) {
        Some(Script::Cyrillic)
    } else if (c.is_alphabetic() && (c as u32) < 0x0250) || matches!(c as u32, 0x1E00..=0x1EFF) {
        Some(Script::Latin)
    } else {
        None
    }
}

/// A detector restricted to a set of languages.
pub struct Detector {
    languages: Vec<Language>,
    latin: Option<LanguageDetector>,
}

impl fmt::Debug for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Detector")
            .field("languages", &self.languages)
            .finish_non_exhaustive()
    }
}

impl Detector {
    /// A detector choosing among `languages`.
    pub fn new(languages: &[Language]) -> Self {
        let latin: Vec<lingua::Language> = languages
            .iter()
            .filter(|l| !matches!(l, Language::Ja | Language::Zh | Language::Ru))
            .map(|&l| to_lingua(l))
            .collect();
        let latin = match latin.len() {
            0 => None,
            // lingua needs two languages to compare; a single one is
            // compared with English, whose guesses are then discarded.
            1 => Some(
                lingua::LanguageDetectorBuilder::from_languages(&[
                    latin[0],
                    lingua::Language::English,
                ])
                .build(),
            ),
            _ => Some(lingua::LanguageDetectorBuilder::from_languages(&latin).build()),
        };
        Detector {
            languages: languages.to_vec(),
            latin,
        }
    }

    /// The language of `text`, or `None` when there is nothing to go on or
    /// its script belongs to no plausible language.
    pub fn detect(&self, text: &str) -> Option<Detection> {
        let (language, confidence) = *self.confidences(text).first()?;
        Some(Detection {
            language,
            confidence,
            reliable: confidence >= RELIABLE_CONFIDENCE,
        })
    }

    /// The confidence of each plausible language for `text`, highest
    /// first; languages with no chance are left out, and the list is empty
    /// when there is nothing to go on.
    pub fn confidences(&self, text: &str) -> Vec<(Language, f64)> {
        let mut counts = [0usize; 3];
        for c in text.chars() {
            match script_of(c) {
                Some(Script::Latin) => counts[0] += 1,
                Some(Script::Cyrillic) => counts[1] += 1,
                Some(Script::Cjk) => counts[2] += 3, // one is about a word
                None => {}
            }
        }
        if counts.iter().all(|&n| n == 0) {
            return Vec::new();
        }
        let script = match counts.iter().enumerate().max_by_key(|(_, &n)| n) {
            Some((2, _)) => Script::Cjk,
            Some((1, _)) => Script::Cyrillic,
            _ => Script::Latin,
        };
        match script {
            Script::Cjk => self.cjk(text),
            Script::Cyrillic => self.sure(Language::Ru),
            Script::Latin => self.latin(text),
        }
    }

    fn sure(&self, language: Language) -> Vec<(Language, f64)> {
        if self.languages.contains(&language) {
            vec![(language, 1.0)]
        } else {
            Vec::new()
        }
    }

    fn cjk(&self, text: &str) -> Vec<(Language, f64)> {
        let ja = self.languages.contains(&Language::Ja);
        let zh = self.languages.contains(&Language::Zh);
        if ja && text.chars().any(is_kana) {
            return self.sure(Language::Ja);
        }
        let han = text.chars().filter(|&c| is_cjk(c)).count();
        let simplified = text.chars().any(|c| SIMPLIFIED_ONLY.contains(c));
        match (ja, zh) {
            (true, true) if simplified || han >= MIN_HAN_ONLY_CHARS => self.sure(Language::Zh),
            (true, true) => vec![(Language::Ja, 0.5), (Language::Zh, 0.5)],
            (false, true) => self.sure(Language::Zh),
            (true, false) => self.sure(Language::Ja),
            (false, false) => Vec::new(),
        }
    }

    fn latin(&self, text: &str) -> Vec<(Language, f64)> {
        let Some(detector) = self.latin.as_ref() else {
            return Vec::new();
        };
        let latin_only: String = text
            .chars()
            .map(|c| match script_of(c) {
                Some(Script::Latin) | None => c,
                Some(_) => ' ',
            })
            .collect();
        let values = detector.compute_language_confidence_values(latin_only);
        // With a single plausible language, English is only a comparator:
        // when it wins, the text is not in the plausible language.
        let top_plausible = values
            .first()
            .and_then(|&(l, _)| from_lingua(l))
            .is_some_and(|l| self.languages.contains(&l));
        if !top_plausible {
            return Vec::new();
        }
        values
            .into_iter()
            .filter(|&(_, c)| c > 0.0)
            .filter_map(|(l, c)| from_lingua(l).map(|l| (l, c)))
            .filter(|(l, _)| self.languages.contains(l))
            .collect()
    }
}

/// The language of `text` among `languages`, when the guess is reliable.
/// Used by the degradation transforms to know what a reply is written in.
pub fn detect_language(text: &str, languages: &[Language]) -> Option<Language> {
    Detector::new(languages)
        .detect(text)
        .filter(|d| d.reliable)
        .map(|d| d.language)
}

fn to_lingua(l: Language) -> lingua::Language {
    use lingua::Language as L;
    match l {
        Language::En => L::English,
        Language::Pt => L::Portuguese,
        Language::Es => L::Spanish,
        Language::Fr => L::French,
        Language::It => L::Italian,
        Language::De => L::German,
        Language::Nl => L::Dutch,
        Language::Pl => L::Polish,
        Language::Tr => L::Turkish,
        Language::Ja => L::Japanese,
        Language::Ru => L::Russian,
        Language::Zh => L::Chinese,
    }
}

fn from_lingua(l: lingua::Language) -> Option<Language> {
    Language::ALL.into_iter().find(|&x| to_lingua(x) == l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_portuguese_from_spanish_in_short_sentences() {
        let d = Detector::new(&Language::ALL);
        for (text, lang) in [
            ("O mais importante é manter a constância.", Language::Pt),
            (
                "En la mayoría de los casos, la solución más sencilla también es la mejor.",
                Language::Es,
            ),
            (
                "Normalmente leva algumas semanas até você notar uma diferença.",
                Language::Pt,
            ),
            (
                "Normalmente pasan unas semanas antes de que notes la diferencia.",
                Language::Es,
            ),
        ] {
            let got = d.detect(text).unwrap();
            assert_eq!(got.language, lang, "{text}");
            assert!(got.reliable, "{text}: {got:?}");
        }
        let short = d.detect("How do I reverse a list in Python?").unwrap();
        assert_eq!(short.language, Language::En);
    }

    #[test]
    fn script_decides_cjk_and_cyrillic() {
        let d = Detector::new(&Language::ALL);
        assert_eq!(
            d.detect("始める前に説明書をよく読んでください。")
                .unwrap()
                .language,
            Language::Ja
        );
        let zh = d.detect("每天散步三十分钟是最容易坚持的运动。").unwrap();
        assert_eq!((zh.language, zh.reliable), (Language::Zh, true));
        assert!(!d.detect("富士山 北岳").unwrap().reliable);
        assert_eq!(
            d.detect("Привет, как дела?").unwrap().language,
            Language::Ru
        );
        let de = d
            .detect("„Danke“ heißt auf Japanisch „arigatō“ (ありがとう).")
            .unwrap();
        assert_eq!(de.language, Language::De);
    }

    #[test]
    fn restricted_to_the_plausible_languages() {
        let d = Detector::new(&[Language::Pt]);
        assert_eq!(
            d.detect("Obrigado pela ajuda, foi muito útil.")
                .unwrap()
                .language,
            Language::Pt
        );
        assert_eq!(
            d.detect("Thank you very much for all of your help today."),
            None
        );
        assert_eq!(Detector::new(&[Language::Pt]).detect("Привет"), None);
        assert_eq!(d.detect("123 !!"), None);
    }
}
