//! Language detection restricted to the plausible languages, with a verdict
//! on whether the guess is reliable enough to act on.
//!
//! The script decides first, over the letters of the text that are not
//! code (see [`super::script`]): Cyrillic is Russian, Hangul Korean,
//! Arabic script Arabic, Devanagari Hindi, kana Japanese, and a long run
//! of ideographs without kana is Chinese. A short run of ideographs without
//! kana and without a simplified-only character is Japanese or Chinese
//! alike (a Japanese list of names is all kanji): both get the same
//! confidence, [`Detector::detect`] calls it nothing, and only a
//! conversation known to be in one of the two can settle it (see
//! `language.rs`). Letters of a minority script (a Japanese word in a
//! German sentence) are dropped before the Latin detector runs, so they
//! cannot sway it.
//!
//! Latin-script text goes to `lingua` (n-gram models compiled in, no
//! network, deterministic), with two shortcuts that give the same answer
//! for less:
//! - a memo keyed by the exact text lingua would read: the simulated and
//!   the real answers of a run repeat heavily, and lingua is a pure
//!   function of its input, so a repeated sentence costs one look-up;
//! - a decisive English path: text of at least [`MIN_STOPWORD_WORDS`]
//!   words, written in ASCII letters only, with no capitalised word after
//!   the first (a name sways lingua), of which at least
//!   [`MIN_STOPWORD_SHARE`] (and at least [`MIN_STOPWORDS`]) are English
//!   function words that are no word of the other Latin-script languages
//!   (`the`, `you`, `with`, ...; not `in`, `was`, `do`, `we`, `of`, `to`),
//!   is English with full confidence. A test checks, on every sentence of
//!   the calibration set, the phrasebook and the default dataset's answers
//!   where this path fires, that lingua reaches the same verdict (English
//!   first, reliable, and every other language under a quarter of it).
//!
//! The choice of lingua over whatlang is measured in [`super::language`].

use super::script::{script_vote, Script};
use super::text::is_kana;
use super::Language;
use lingua::LanguageDetector;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

/// Confidence from which a guess counts as reliable. On the calibration
/// set's user messages no lingua guess at 0.6 or above was wrong.
pub const RELIABLE_CONFIDENCE: f64 = 0.6;

/// Ideographs without kana shorter than this are not called Chinese when
/// Japanese is plausible, unless they include a simplified-only character.
const MIN_HAN_ONLY_CHARS: usize = 12;

/// Common simplified Chinese characters that Japanese does not use (it
/// writes the traditional or its own form: 這, 気, 語, ...).
const SIMPLIFIED_ONLY: &str = "这们么说还给让吗呢吧怎样你您个为过请对时长哪习门语问题认识发现经义乐气东车见观电话书买卖钱饭读听开关头间实应该";

/// The decisive English path needs at least this many words...
pub const MIN_STOPWORD_WORDS: usize = 12;
/// ...at least this many of them English function words...
pub const MIN_STOPWORDS: usize = 4;
/// ...making at least this share of the words.
pub const MIN_STOPWORD_SHARE: f64 = 0.35;

/// Common English words (function words, contractions and a few frequent
/// ones) that are no common word of pt, es, fr, it, de, nl, pl, tr, id or
/// vi, sorted for a binary search.
const ENGLISH_STOPWORDS: &[&str] = &[
    "about", "after", "again", "all", "always", "and", "any", "are", "at", "back", "be", "because",
    "been", "before", "being", "best", "both", "but", "by", "can", "can't", "could", "day", "does",
    "doesn't", "don't", "each", "even", "every", "few", "first", "for", "from", "get", "good",
    "had", "has", "have", "her", "him", "his", "how", "i'm", "if", "into", "is", "isn't", "it",
    "it's", "its", "just", "keep", "let", "like", "little", "long", "make", "may", "might", "more",
    "most", "much", "my", "never", "next", "not", "now", "often", "one", "only", "other", "our",
    "out", "own", "same", "she", "should", "small", "some", "still", "such", "than", "that",
    "that's", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through",
    "time", "too", "until", "up", "use", "usually", "very", "well", "what", "when", "where",
    "which", "while", "who", "why", "with", "won't", "would", "you", "you're", "your",
];

/// Texts the memo keeps; past this it starts again (the answers stay the
/// same, only the saving is lost).
const MEMO_CAPACITY: usize = 32_768;

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

/// A detector restricted to a set of languages.
pub struct Detector {
    languages: Vec<Language>,
    latin: Option<LanguageDetector>,
    memo: Mutex<HashMap<String, Vec<(Language, f64)>>>,
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
        let latin: Vec<lingua::Language> = languages.iter().filter_map(|&l| to_lingua(l)).collect();
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
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The language of `text`, or `None` when there is nothing to go on,
    /// its script belongs to no plausible language, or two languages tie
    /// (short ideographs without kana: Japanese or Chinese).
    pub fn detect(&self, text: &str) -> Option<Detection> {
        let values = self.confidences(text);
        let (language, confidence) = *values.first()?;
        if values.get(1).is_some_and(|&(_, c)| c >= confidence) {
            return None;
        }
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
        match script_vote(text) {
            None => Vec::new(),
            Some(Script::Cyrillic) => self.sure(Language::Ru),
            Some(Script::Hangul) => self.sure(Language::Ko),
            Some(Script::Arabic) => self.sure(Language::Ar),
            Some(Script::Devanagari) => self.sure(Language::Hi),
            Some(Script::Han) => self.han(text),
            Some(Script::Latin) => self.latin(text),
        }
    }

    fn sure(&self, language: Language) -> Vec<(Language, f64)> {
        if self.languages.contains(&language) {
            vec![(language, 1.0)]
        } else {
            Vec::new()
        }
    }

    /// Ideographs, with or without kana.
    fn han(&self, text: &str) -> Vec<(Language, f64)> {
        let ja = self.languages.contains(&Language::Ja);
        let zh = self.languages.contains(&Language::Zh);
        if ja && text.chars().any(is_kana) {
            return self.sure(Language::Ja);
        }
        let han = text
            .chars()
            .filter(|&c| super::script::of(c) == Some(Script::Han))
            .count();
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
        let latin_only = latin_only(text);
        if self.languages.contains(&Language::En) && decisively_english(&latin_only) {
            return vec![(Language::En, 1.0)];
        }
        if let Some(known) = self.memo_get(&latin_only) {
            return known;
        }
        let values = self.lingua(detector, &latin_only);
        self.memo_put(latin_only, &values);
        values
    }

    /// lingua's confidences for `latin_only`, restricted to the plausible
    /// languages.
    fn lingua(&self, detector: &LanguageDetector, latin_only: &str) -> Vec<(Language, f64)> {
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

    fn memo_get(&self, key: &str) -> Option<Vec<(Language, f64)>> {
        let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        memo.get(key).cloned()
    }

    fn memo_put(&self, key: String, values: &[(Language, f64)]) {
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.len() >= MEMO_CAPACITY {
            memo.clear();
        }
        memo.insert(key, values.to_vec());
    }

    /// lingua's own confidences, without the shortcuts.
    fn lingua_only(&self, text: &str) -> Vec<(Language, f64)> {
        match self.latin.as_ref() {
            Some(d) => self.lingua(d, text),
            None => Vec::new(),
        }
    }
}

/// `text` with the letters of other scripts than Latin blanked out: what
/// lingua reads.
fn latin_only(text: &str) -> String {
    text.chars()
        .map(|c| match super::script::of(c) {
            Some(Script::Latin) | None => c,
            Some(_) => ' ',
        })
        .collect()
}

/// How the decisive English path compares with lingua on some texts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnglishPathAudit {
    /// Pieces looked at: every sentence of each text's prose, and the
    /// prose whole.
    pub pieces: usize,
    /// Pieces the English path decided.
    pub fired: usize,
    /// Pieces it decided where lingua alone would not reach the same
    /// verdict (English first, reliable, every other language under a
    /// quarter of it), with lingua's figures.
    pub disagreements: Vec<String>,
}

/// Runs the English path and lingua, over all seventeen languages, on
/// every sentence of `texts`: the measure that the path agrees with lingua
/// where it fires.
pub fn audit_english_path<S: AsRef<str>>(texts: &[S]) -> EnglishPathAudit {
    let detector = Detector::new(&Language::ALL);
    let mut audit = EnglishPathAudit::default();
    for text in texts {
        let prose = super::text::prose(text.as_ref());
        let mut pieces = super::text::segments(&prose);
        pieces.push(&prose);
        for piece in pieces {
            audit.pieces += 1;
            let piece = latin_only(piece);
            if !decisively_english(&piece) {
                continue;
            }
            audit.fired += 1;
            let values = detector.lingua_only(&piece);
            let top = values.first().copied();
            let second = values.get(1).map_or(0.0, |&(_, c)| c);
            let agrees = top.is_some_and(|(l, c)| {
                l == Language::En && c >= RELIABLE_CONFIDENCE && c >= 4.0 * second
            });
            if !agrees {
                audit
                    .disagreements
                    .push(format!("{piece:?}: lingua says {values:?}"));
            }
        }
    }
    audit
}

/// Whether `text` (Latin script) is English by its function words alone:
/// see the file's documentation.
pub(crate) fn decisively_english(text: &str) -> bool {
    let mut words = 0usize;
    let mut stop = 0usize;
    for word in text.split(|c: char| !c.is_alphabetic() && c != '\'') {
        let word = word.trim_matches('\'');
        if word.is_empty() {
            continue;
        }
        if !word.chars().all(|c| c.is_ascii_alphabetic() || c == '\'') {
            return false;
        }
        // A capitalised word after the first may be a name, which lingua
        // weighs: leave such text to it.
        if words > 0 && word.len() > 1 && word.starts_with(|c: char| c.is_ascii_uppercase()) {
            return false;
        }
        words += 1;
        let lower = word.to_ascii_lowercase();
        if ENGLISH_STOPWORDS.binary_search(&lower.as_str()).is_ok() {
            stop += 1;
        }
    }
    words >= MIN_STOPWORD_WORDS
        && stop >= MIN_STOPWORDS
        && stop as f64 >= MIN_STOPWORD_SHARE * words as f64
}

/// The language of `text` among `languages`, when the guess is reliable.
/// Used by the degradation transforms to know what a reply is written in.
pub fn detect_language(text: &str, languages: &[Language]) -> Option<Language> {
    Detector::new(languages)
        .detect(text)
        .filter(|d| d.reliable)
        .map(|d| d.language)
}

/// lingua's name of a Latin-script language; `None` for those decided by
/// their script.
fn to_lingua(l: Language) -> Option<lingua::Language> {
    use lingua::Language as L;
    Some(match l {
        Language::En => L::English,
        Language::Pt => L::Portuguese,
        Language::Es => L::Spanish,
        Language::Fr => L::French,
        Language::It => L::Italian,
        Language::De => L::German,
        Language::Nl => L::Dutch,
        Language::Pl => L::Polish,
        Language::Tr => L::Turkish,
        Language::Id => L::Indonesian,
        Language::Vi => L::Vietnamese,
        Language::Ja | Language::Zh | Language::Ru | Language::Ko | Language::Ar | Language::Hi => {
            return None
        }
    })
}

fn from_lingua(l: lingua::Language) -> Option<Language> {
    Language::ALL.into_iter().find(|&x| to_lingua(x) == Some(l))
}

#[cfg(test)]
mod tests;
