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
//! network, deterministic), built and paged in only when first needed, with
//! three shortcuts:
//! - a memo keyed by the exact text lingua would read: the simulated and
//!   the real answers of a run repeat heavily, and lingua is a pure
//!   function of its input, so a repeated sentence costs one look-up;
//! - a decisive English path, taken by [`Detector::confidences`] (so by
//!   the conversation's language and every reply sentence): English with
//!   full confidence, where lingua would say English first, reliable, and
//!   every other language under a quarter of it. Any of three rules over
//!   the words (letters and apostrophes) of the text:
//!   - plain text: at least [`MIN_STOPWORD_WORDS`] words and
//!     [`MIN_STOPWORD_LETTERS`] letters, written in ASCII letters only,
//!     with no capitalised word after the first (a name sways lingua), of
//!     which at least [`MIN_STOPWORD_SHARE`] (and at least
//!     [`MIN_STOPWORDS`]) are English function words that are no word of
//!     the other Latin-script languages (`the`, `you`, `with`, ...; not
//!     `in`, `was`, `do`, `we`, `of`, `to`);
//!   - long text, names allowed: at least [`LONG_ENGLISH`]`.letters`
//!     letters, of which names (capitalised words that do not open a
//!     sentence) hold at most [`LONG_ENGLISH`]`.name_share`; at least
//!     [`LONG_ENGLISH`]`.stop_share` of the words are those function words,
//!     never more than [`LONG_ENGLISH`]`.longest_gap` words in a row
//!     without one (a sentence in another language has none), and a letter
//!     outside ASCII only in a name (`Zuriñe`);
//!   - long text by the English lexicon ([`LEXICON_DECISIVE`], below);
//! - an English-first path, taken only when the conversation is in
//!   English ([`Detector::english_first`]): the long-text rule with the
//!   thresholds of [`ENGLISH_FIRST`], or the lexicon rule with those of
//!   [`LEXICON_FIRST`]. Such a sentence counts for English. Where lingua
//!   is sure, it puts English first at [`ENGLISH_FIRST_CONFIDENCE`] or
//!   more there too; on a short sentence lingua is often unsure ("What did
//!   we name our cat?" is English at 0.31 to it, which counts for no
//!   language), and the lexicon rule then counts the sentence for English.
//!   It never counts for English a sentence that lingua counts for
//!   another language.
//!
//! The lexicon rule reads the English lexicon (`data/english-words.txt`,
//! written by `scripts/english-lexicon.py` from wordfreq's lists): the
//! 40,000 most frequent English words that are written in ASCII letters
//! (39,474), each marked when it is at least five
//! times as frequent in English as in each other Latin-script language the
//! contracts know (`the`, `you`, `sister`, `overnight`; not `a`, `is`,
//! `long`, `hotel`, which those languages use too). A text fits a
//! [`LexiconRule`] when it has enough letters and words, names hold at most
//! a share of its letters, and of its other words at least a share are
//! marked, at most a share are not in the lexicon at all, and never more
//! than a few in a row are unmarked (a sentence in another language has
//! few marked words and long runs without one, so a mixed text fails).
//!
//! The choice of lingua over whatlang is measured in [`super::language`].

use super::script::{script_vote, Script};
use super::text::is_kana;
use super::Language;
use lingua::LanguageDetector;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Confidence from which a guess counts as reliable. On the calibration
/// set's user messages no lingua guess at 0.6 or above was wrong.
pub const RELIABLE_CONFIDENCE: f64 = 0.6;

/// A reply left with fewer letters than [`MIN_REPLY_LETTERS`](crate::language::MIN_REPLY_LETTERS) once the
/// user's names are blanked, but at least this many, may pass on what is
/// left.
pub const MIN_MASKED_LETTERS: usize = 10;

/// Sentences with fewer letters than this are not judged on their own.
pub const MIN_SEGMENT_LETTERS: usize = 15;
/// A sentence counts for its top language from this confidence.
pub const SEGMENT_CONFIDENCE: f64 = 0.35;

/// A sentence counts as foreign only when its top language is this many
/// times as likely as the expected one.
pub const FOREIGN_RATIO: f64 = 4.0;

/// A weak guess of the conversation's language, from this confidence, may
/// confirm a reply but never fail one.
pub const WEAK_CONFIDENCE: f64 = 0.35;

/// Ideographs without kana shorter than this are not called Chinese when
/// Japanese is plausible, unless they include a simplified-only character.
const MIN_HAN_ONLY_CHARS: usize = 12;

/// Common simplified Chinese characters that Japanese does not use (it
/// writes the traditional or its own form: 這, 気, 語, ...).
const SIMPLIFIED_ONLY: &str = "这们么说还给让吗呢吧怎样你您个为过请对时长哪习门语问题认识发现经义乐气东车见观电话书买卖钱饭读听开关头间实应该";

/// The decisive English path needs at least this many words...
pub const MIN_STOPWORD_WORDS: usize = 12;
/// ...and at least this many letters (at 10,000 conversations, shorter
/// text that met the other conditions was English by lingua too, but not
/// always reliably: "I have to go for a walk, so one question for you."
/// is English at 0.49)...
pub const MIN_STOPWORD_LETTERS: usize = 60;
/// ...at least this many of them English function words...
pub const MIN_STOPWORDS: usize = 4;
/// ...making at least this share of the words.
pub const MIN_STOPWORD_SHARE: f64 = 0.35;

/// The thresholds of a function-word rule over long text (see the file's
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FunctionWordRule {
    /// At least this many letters.
    pub letters: usize,
    /// Names (capitalised words that do not open a sentence) hold at most
    /// this share of them.
    pub name_share: f64,
    /// At least this share of the words are English function words...
    pub stop_share: f64,
    /// ...never more than this many words in a row without one.
    pub longest_gap: usize,
}

/// The decisive English path for long text.
pub const LONG_ENGLISH: FunctionWordRule = FunctionWordRule {
    letters: 100,
    name_share: 0.2,
    stop_share: 0.2,
    longest_gap: 8,
};

/// The English-first path, in an English conversation.
pub const ENGLISH_FIRST: FunctionWordRule = FunctionWordRule {
    letters: 40,
    name_share: 0.15,
    stop_share: 0.2,
    longest_gap: 7,
};

/// The thresholds of a lexicon rule (see the file's documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexiconRule {
    /// At least this many letters...
    pub letters: usize,
    /// ...and this many words.
    pub words: usize,
    /// Names (capitalised words inside a sentence) hold at most this share
    /// of the letters.
    pub name_share: f64,
    /// At least this share of the other words are marked English in the
    /// lexicon (no other language uses them)...
    pub marked_share: f64,
    /// ...at most this share are not in it at all...
    pub unknown_share: f64,
    /// ...and never more than this many words in a row are unmarked.
    pub longest_gap: usize,
}

/// The decisive English path by the lexicon.
pub const LEXICON_DECISIVE: LexiconRule = LexiconRule {
    letters: 100,
    words: 20,
    name_share: 0.15,
    marked_share: 0.45,
    unknown_share: 0.1,
    longest_gap: 12,
};

/// The English-first path by the lexicon, in an English conversation.
pub const LEXICON_FIRST: LexiconRule = LexiconRule {
    letters: 10,
    words: 3,
    name_share: 0.2,
    marked_share: 0.25,
    unknown_share: 0.2,
    longest_gap: 6,
};

/// Where lingua is sure of a sentence the English-first path takes, it puts
/// English first at this confidence or more (the audit checks it); where
/// it is unsure, the path counts the sentence for English all the same.
pub const ENGLISH_FIRST_CONFIDENCE: f64 = 0.35;

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

/// The English lexicon after a `#` header, one word and its mark a line
/// (written by `scripts/english-lexicon.py` from wordfreq's lists: see the
/// file's documentation).
const ENGLISH_LEXICON: &str = include_str!("../data/english-words.txt");

/// The lexicon, built on first use: each word with whether it is marked
/// English.
fn english_lexicon() -> &'static HashMap<&'static str, bool> {
    static MAP: OnceLock<HashMap<&'static str, bool>> = OnceLock::new();
    MAP.get_or_init(|| {
        ENGLISH_LEXICON
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('\t'))
            .map(|(word, mark)| (word, mark == "1"))
            .collect()
    })
}

/// What the lexicon says of `word` (lower case): `Some(true)` marked
/// English, `Some(false)` a word English shares, `None` not in it. A
/// possessive not listed is looked up without its `'s`.
fn lexicon_entry(word: &str) -> Option<bool> {
    let lexicon = english_lexicon();
    lexicon.get(word).copied().or_else(|| {
        word.strip_suffix("'s")
            .and_then(|stem| lexicon.get(stem).copied())
    })
}

/// Whether `word` (lower case) is an English word by the lexicon, marked
/// or not.
pub(crate) fn is_english_word(word: &str) -> bool {
    lexicon_entry(word).is_some()
}

/// `word` with the accents of Latin letters taken off (`café` as `cafe`),
/// when that leaves it in ASCII; `None` for `weiß` or `dziś`.
fn fold_accents(word: &str) -> Option<String> {
    const FROM: &str = "àáâäãåèéêëìíîïòóôöõùúûüýÿñç";
    const TO: &str = "aaaaaaeeeeiiiiooooouuuuyync";
    word.chars()
        .map(|c| match FROM.chars().position(|f| f == c) {
            Some(i) => TO.chars().nth(i),
            None => c.is_ascii().then_some(c),
        })
        .collect()
}

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
    /// Built on first use: a run whose every sentence takes a shortcut
    /// never pages lingua's models in.
    latin: OnceLock<Option<LanguageDetector>>,
    memo: Mutex<HashMap<String, Vec<(Language, f64)>>>,
    /// Texts lingua has judged (the memo's misses): what the shortcuts
    /// left to it.
    lingua_calls: AtomicUsize,
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
        Detector {
            languages: languages.to_vec(),
            latin: OnceLock::new(),
            memo: Mutex::new(HashMap::new()),
            lingua_calls: AtomicUsize::new(0),
        }
    }

    /// lingua over the plausible Latin-script languages, built on first
    /// use; `None` when there is none.
    fn latin_detector(&self) -> Option<&LanguageDetector> {
        self.latin
            .get_or_init(|| {
                let latin: Vec<lingua::Language> = self
                    .languages
                    .iter()
                    .filter_map(|&l| to_lingua(l))
                    .collect();
                match latin.len() {
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
                }
            })
            .as_ref()
    }

    /// How many texts lingua has judged so far.
    pub fn lingua_calls(&self) -> usize {
        self.lingua_calls.load(Ordering::Relaxed)
    }

    /// Whether lingua has been built (a test's probe).
    #[cfg(test)]
    pub(crate) fn lingua_built(&self) -> bool {
        self.latin.get().is_some()
    }

    /// Whether the English-first path counts `text` for English in an
    /// English conversation (see the file's documentation): never a
    /// sentence lingua counts for another language; `false` says nothing.
    pub(crate) fn english_first(&self, text: &str) -> bool {
        self.languages.contains(&Language::En) && script_vote(text) == Some(Script::Latin) && {
            let counts = FunctionWords::of(&latin_only(text));
            counts.fits(&ENGLISH_FIRST) || counts.fits_lexicon(&LEXICON_FIRST)
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
        if !self.languages.iter().any(|&l| to_lingua(l).is_some()) {
            return Vec::new();
        }
        let latin_only = latin_only(text);
        if self.languages.contains(&Language::En) && decisively_english(&latin_only) {
            return vec![(Language::En, 1.0)];
        }
        if let Some(known) = self.memo_get(&latin_only) {
            return known;
        }
        let Some(detector) = self.latin_detector() else {
            return Vec::new();
        };
        let values = self.lingua(detector, &latin_only);
        self.lingua_calls.fetch_add(1, Ordering::Relaxed);
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
        match self.latin_detector() {
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

/// The word counts the function-word and lexicon rules read.
#[derive(Debug, Clone, Copy, Default)]
struct FunctionWords {
    words: usize,
    letters: usize,
    /// Capitalised words inside a sentence (not its first word): names.
    name_words: usize,
    /// Letters of those names.
    name_letters: usize,
    /// Whether any word after the first is capitalised, a sentence's first
    /// word included (the short rule's test: one plain sentence).
    later_capitals: bool,
    /// Whether a word that is not capitalised has a letter outside ASCII.
    foreign_letters: bool,
    /// Whether any word has a letter outside ASCII.
    non_ascii: bool,
    stopwords: usize,
    /// The most words in a row without a function word.
    longest_gap: usize,
    /// Words other than names marked English in the lexicon.
    marked: usize,
    /// Words other than names not in the lexicon.
    unknown: usize,
    /// The most words other than names in a row not marked English.
    unmarked_gap: usize,
}

impl FunctionWords {
    fn of(text: &str) -> Self {
        let mut counts = FunctionWords::default();
        let (mut gap, mut unmarked) = (0usize, 0usize);
        let mut sentence_start = true;
        let mut rest = text;
        while !rest.is_empty() {
            // The separator before the next word: a sentence ends in it
            // when it holds a terminator, a colon or a line break.
            let at = rest
                .find(|c: char| c.is_alphabetic() || c == '\'')
                .unwrap_or(rest.len());
            sentence_start |= rest[..at].contains(['.', '!', '?', ':', '\n']);
            rest = &rest[at..];
            let end = rest
                .find(|c: char| !c.is_alphabetic() && c != '\'')
                .unwrap_or(rest.len());
            let word = rest[..end].trim_matches('\'');
            rest = &rest[end..];
            if word.is_empty() {
                continue;
            }
            let starts = std::mem::take(&mut sentence_start);
            let letters = word.chars().filter(|c| c.is_alphabetic()).count();
            let ascii = word.chars().all(|c| c.is_ascii_alphabetic() || c == '\'');
            let capitalised = word.starts_with(char::is_uppercase);
            let lower = word.to_lowercase();
            // A capitalised word inside a sentence may be a name, which
            // lingua weighs.
            let name = !starts && word.chars().count() > 1 && capitalised;
            counts.later_capitals |= counts.words > 0 && word.chars().count() > 1 && capitalised;
            if name {
                counts.name_words += 1;
                counts.name_letters += letters;
            } else {
                // A letter outside ASCII in a word the lexicon knows
                // without its accents (`café`, `naïve`) is English's too.
                let folded = (!ascii).then(|| fold_accents(&lower)).flatten();
                if !ascii && folded.as_deref().and_then(lexicon_entry).is_none() {
                    counts.foreign_letters = true;
                }
                match lexicon_entry(folded.as_deref().unwrap_or(&lower)) {
                    Some(true) => {
                        counts.marked += 1;
                        unmarked = 0;
                    }
                    entry => {
                        counts.unknown += usize::from(entry.is_none());
                        unmarked += 1;
                        counts.unmarked_gap = counts.unmarked_gap.max(unmarked);
                    }
                }
            }
            counts.non_ascii |= !ascii;
            counts.words += 1;
            counts.letters += letters;
            if ENGLISH_STOPWORDS.binary_search(&lower.as_str()).is_ok() {
                counts.stopwords += 1;
                gap = 0;
            } else {
                gap += 1;
                counts.longest_gap = counts.longest_gap.max(gap);
            }
        }
        counts
    }

    /// The short-text rule of the decisive path.
    fn fits_short(&self) -> bool {
        !self.non_ascii
            && !self.later_capitals
            && self.words >= MIN_STOPWORD_WORDS
            && self.letters >= MIN_STOPWORD_LETTERS
            && self.stopwords >= MIN_STOPWORDS
            && self.stopwords as f64 >= MIN_STOPWORD_SHARE * self.words as f64
    }

    /// `rule`, over long text.
    fn fits(&self, rule: &FunctionWordRule) -> bool {
        !self.foreign_letters
            && self.letters >= rule.letters
            && self.name_letters as f64 <= rule.name_share * self.letters as f64
            && self.stopwords >= 1
            && self.stopwords as f64 >= rule.stop_share * self.words as f64
            && self.longest_gap <= rule.longest_gap
    }

    /// A lexicon `rule`.
    fn fits_lexicon(&self, rule: &LexiconRule) -> bool {
        let others = (self.words - self.name_words) as f64;
        !self.foreign_letters
            && self.letters >= rule.letters
            && self.words >= rule.words
            && self.name_letters as f64 <= rule.name_share * self.letters as f64
            && self.marked >= 1
            && self.marked as f64 >= rule.marked_share * others
            && self.unknown as f64 <= rule.unknown_share * others
            && self.unmarked_gap <= rule.longest_gap
    }
}

/// Whether `text` (Latin script) is English by its function words alone:
/// see the file's documentation.
pub(crate) fn decisively_english(text: &str) -> bool {
    let counts = FunctionWords::of(text);
    counts.fits_short() || counts.fits(&LONG_ENGLISH) || counts.fits_lexicon(&LEXICON_DECISIVE)
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

mod audit;
pub(crate) use audit::FOREIGN_RATIO as AUDIT_FOREIGN_RATIO;
pub use audit::{audit_english_path, EnglishPathAudit, PathAudit};

#[cfg(test)]
mod tests;
