//! The values a dataset already uses, and the check that a new one is free.
//!
//! A drawn value is free when none of its spellings overlaps a spelling of a
//! value already taken, as plain case-insensitive text either way round
//! (stricter than whole words, so that even a naive substring scorer cannot
//! mistake one anchor for another: no "163" beside "180163", no "202" beside
//! "2027"), and none occurs as whole words in the lexicon's fixed text or
//! among the words the scorer reads as numbers, months or doubt.
//!
//! The checks are answered from indexes rather than by scanning every taken
//! value, so a dataset of n anchors costs time and memory linear in n: a
//! taken spelling inside the candidate is found by looking up each of the
//! candidate's substrings; the candidate inside a taken spelling, through an
//! index of six-byte grams, verifying only the spellings that share the
//! candidate's rarest gram. Six bytes make the rarest gram of a composed
//! value specific (a date's "h 1653" is shared by at most a month of dates),
//! so a check costs the same at 100,000 anchors as at 1,000.

use super::lexicon::{self, contains_words, tokens};
use super::lexicon::{HEDGES, NEGATIONS};
use super::pools::Drawn;
use std::collections::{HashMap, HashSet};

/// Gram length of the containment index, in bytes.
const GRAM: usize = 6;

/// Longest run of words the lexicon index holds; longer spellings are
/// checked by scanning the lexicon.
const MAX_PHRASE_WORDS: usize = 8;

/// Words of refusal a composed value must never be; with the lexicon's
/// number and calendar words ([`lexicon::words`]) and the scorer's own
/// negations and hedges ([`NEGATIONS`], [`HEDGES`]), added in
/// [`Taken::new_strict`].
const REFUSAL_WORDS: &[&str] = &["remember", "idea", "know"];

/// Which lexicon word runs a spelling must not be.
#[derive(Debug, Clone, Default)]
struct Phrases {
    /// Every run of up to [`MAX_PHRASE_WORDS`] words of every text, joined
    /// by single spaces.
    runs: HashSet<String>,
    /// The texts' words, for spellings longer than the runs.
    texts: Vec<Vec<String>>,
}

impl Phrases {
    fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let texts: Vec<Vec<String>> = texts.into_iter().map(tokens).collect();
        let mut runs = HashSet::new();
        for words in &texts {
            for len in 1..=MAX_PHRASE_WORDS.min(words.len()) {
                for run in words.windows(len) {
                    runs.insert(run.join(" "));
                }
            }
        }
        Phrases { runs, texts }
    }

    /// Whether `words` occurs as whole words in a text.
    fn contains(&self, words: &[String]) -> bool {
        if words.len() <= MAX_PHRASE_WORDS {
            self.runs.contains(&words.join(" "))
        } else {
            self.texts.iter().any(|t| contains_words(t, words))
        }
    }
}

/// The spellings already taken, and the lexicon they must stay out of.
#[derive(Debug, Clone, Default)]
pub struct Taken {
    /// Every taken spelling, lower-cased, by id.
    spellings: Vec<Box<str>>,
    /// The same spellings, for exact look-ups.
    exact: HashSet<Box<str>>,
    /// `lengths[l]`: some taken spelling is `l` bytes long.
    lengths: Vec<bool>,
    /// Ids of the spellings containing each gram, in insertion order.
    grams: HashMap<[u8; GRAM], Vec<u32>>,
    /// Lexicon word runs a spelling must not be.
    lexicon: Phrases,
}

impl Taken {
    /// Nothing taken yet; spellings must stay out of the lexicon's fixed
    /// text (the check the curated generator has always made).
    pub fn new() -> Self {
        Taken {
            lexicon: Phrases::new(lexicon::fixed_texts()),
            ..Taken::default()
        }
    }

    /// Nothing taken yet; spellings must also not be a word the scorer reads
    /// as a number, month or doubt (for composed values).
    pub fn new_strict() -> Self {
        let mut texts = lexicon::fixed_texts();
        texts.extend(lexicon::words::all());
        texts.extend(REFUSAL_WORDS);
        texts.extend(NEGATIONS);
        texts.extend(HEDGES);
        Taken {
            lexicon: Phrases::new(texts),
            ..Taken::default()
        }
    }

    /// Number of distinct spellings taken.
    pub fn len(&self) -> usize {
        self.spellings.len()
    }

    /// Whether nothing is taken.
    pub fn is_empty(&self) -> bool {
        self.spellings.is_empty()
    }

    /// True when no spelling of `drawn` overlaps a taken spelling as plain
    /// text, either way round, and none occurs as whole words in the lexicon.
    pub fn is_free(&self, drawn: &Drawn) -> bool {
        drawn.variants.iter().all(|v| {
            let words = tokens(v);
            !words.is_empty() && !self.overlaps(&v.to_lowercase()) && !self.lexicon.contains(&words)
        })
    }

    /// Takes every spelling of `drawn`.
    pub fn take(&mut self, drawn: &Drawn) {
        for v in &drawn.variants {
            self.insert(v.to_lowercase());
        }
    }

    fn insert(&mut self, spelling: String) {
        if self.exact.contains(spelling.as_str()) {
            return;
        }
        let id = u32::try_from(self.spellings.len()).unwrap_or(u32::MAX);
        let bytes = spelling.as_bytes();
        if self.lengths.len() <= bytes.len() {
            self.lengths.resize(bytes.len() + 1, false);
        }
        self.lengths[bytes.len()] = true;
        for gram in bytes.windows(GRAM) {
            let ids = self.grams.entry(gram_key(gram)).or_default();
            if ids.last() != Some(&id) {
                ids.push(id);
            }
        }
        let boxed: Box<str> = spelling.into_boxed_str();
        self.exact.insert(boxed.clone());
        self.spellings.push(boxed);
    }

    /// Whether `lower` contains a taken spelling or lies inside one.
    fn overlaps(&self, lower: &str) -> bool {
        self.holds_taken(lower) || self.inside_taken(lower)
    }

    /// Whether some taken spelling occurs in `lower`.
    fn holds_taken(&self, lower: &str) -> bool {
        let n = lower.len();
        let longest = self.lengths.len().saturating_sub(1);
        (0..n).filter(|&i| lower.is_char_boundary(i)).any(|i| {
            (i + 1..=n.min(i + longest)).any(|j| {
                self.lengths[j - i]
                    && lower.is_char_boundary(j)
                    && self.exact.contains(&lower[i..j])
            })
        })
    }

    /// Whether `lower` occurs in some taken spelling.
    fn inside_taken(&self, lower: &str) -> bool {
        let bytes = lower.as_bytes();
        if bytes.len() < GRAM {
            return self.spellings.iter().any(|t| t.contains(lower));
        }
        // Every spelling containing `lower` holds each of its grams: verify
        // only those holding the rarest one.
        let mut rarest: Option<&Vec<u32>> = None;
        for gram in bytes.windows(GRAM) {
            match self.grams.get(&gram_key(gram)) {
                None => return false,
                Some(ids) if rarest.is_none_or(|r| ids.len() < r.len()) => rarest = Some(ids),
                Some(_) => {}
            }
        }
        let finder = memchr::memmem::Finder::new(bytes);
        rarest.is_some_and(|ids| {
            ids.iter().any(|&id| {
                finder
                    .find(self.spellings[id as usize].as_bytes())
                    .is_some()
            })
        })
    }
}

fn gram_key(gram: &[u8]) -> [u8; GRAM] {
    let mut key = [0u8; GRAM];
    key.copy_from_slice(gram);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drawn(variants: &[&str]) -> Drawn {
        Drawn {
            value: variants[0].to_string(),
            written: variants[0].to_string(),
            variants: variants.iter().map(|v| v.to_string()).collect(),
        }
    }

    /// The check as the generator first wrote it: a scan of every taken
    /// spelling and every lexicon text.
    fn naive_free(taken: &[String], texts: &[Vec<String>], d: &Drawn) -> bool {
        d.variants.iter().all(|v| {
            let lower = v.to_lowercase();
            let tv = tokens(v);
            !tv.is_empty()
                && taken
                    .iter()
                    .all(|a| !a.contains(&lower) && !lower.contains(a.as_str()))
                && texts.iter().all(|t| !contains_words(t, &tv))
        })
    }

    #[test]
    fn overlap_either_way_round_is_taken() {
        let mut t = Taken::new();
        t.take(&drawn(&["180163"]));
        t.take(&drawn(&["2027-03-14", "14 March 2027"]));
        t.take(&drawn(&["Tromsø", "Tromso"]));
        for busy in [
            "163",
            "0163",
            "180163",
            "1801634",
            "2027",
            "4 march 2027",
            "TROMSØ",
            "oms",
        ] {
            assert!(!t.is_free(&drawn(&[busy])), "{busy}");
        }
        for free in ["1802", "2028", "Trondheim", "15 March 2027"] {
            assert!(t.is_free(&drawn(&[free])), "{free}");
        }
        // One busy spelling is enough.
        assert!(!t.is_free(&drawn(&["Ghent", "180163"])));
    }

    #[test]
    fn lexicon_words_and_reserved_words_are_not_free() {
        let t = Taken::new();
        assert!(!t.is_free(&drawn(&["kettle"])), "a filler word");
        assert!(
            !t.is_free(&drawn(&["My sister"])),
            "a run of template words"
        );
        assert!(t.is_free(&drawn(&["seven"])), "not in the lexicon text");
        assert!(!Taken::new_strict().is_free(&drawn(&["Seven"])));
        assert!(!Taken::new_strict().is_free(&drawn(&["perhaps"])));
        assert!(Taken::new_strict().is_free(&drawn(&["Kelanna"])));
        assert!(!t.is_free(&drawn(&["..."])), "no words at all");
    }

    #[test]
    fn agrees_with_the_naive_scan() {
        use cb_base::seed;
        use rand::Rng;
        let texts: Vec<Vec<String>> = lexicon::fixed_texts().iter().map(|t| tokens(t)).collect();
        let mut rng = seed::rng(4, "taken-test", 0);
        let alphabet: Vec<char> = "abcdeø1234 ".chars().collect();
        let mut index = Taken::new();
        let mut naive: Vec<String> = Vec::new();
        for _ in 0..3000 {
            let len = rng.random_range(1..14);
            let s: String = (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            let d = drawn(&[s.as_str()]);
            let free = naive_free(&naive, &texts, &d);
            assert_eq!(index.is_free(&d), free, "{s:?}");
            if free {
                index.take(&d);
                naive.extend(d.variants.iter().map(|v| v.to_lowercase()));
            }
        }
        assert!(index.len() > 50, "{}", index.len());
    }
}
