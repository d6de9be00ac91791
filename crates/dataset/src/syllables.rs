//! Words built from syllables for composed datasets: given names, towns,
//! cuisines, composers, board games, flowers, tea estates and made-up names,
//! each a head, one or two middles and an ending of its own kind.
//!
//! The syllables follow rules that keep one composed word from ever hiding
//! inside another, so that an answer naming one value can never be read as
//! naming another, even by a plain substring search:
//!
//! - a head starts with a *head consonant* ([`HEAD_CONSONANTS`]), the only
//!   letters a value can start with; its second letter, if a consonant, is
//!   `l` or `r`;
//! - a middle is a *middle consonant* (`l m n r s v`) and a vowel, so no value
//!   can start inside the middles;
//! - an ending starts with a consonant, is never a middle, and no ending is a
//!   prefix of another ending, nor of any run of middles and an ending;
//! - a word is at least [`MIN_WORD_LEN`] letters, longer than any ending, so
//!   no value can start inside an ending either.
//!
//! A value found inside a word would have to start where that word starts,
//! and the endings make it the whole word. The tests check these rules on
//! the tables; the generator still checks every value it draws.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The shortest composed word, in letters (longer than any ending).
pub const MIN_WORD_LEN: usize = 6;

/// Letters a composed word starts with; no middle contains them.
pub const HEAD_CONSONANTS: &str = "bcdfghjkpqtwxz";

/// How one kind of word is composed.
#[derive(Debug, PartialEq, Eq)]
pub struct Shape {
    /// Name of the kind, for tests and messages.
    pub name: &'static str,
    /// Ending syllables of this kind.
    pub tails: &'static [&'static str],
    /// How many middles a word takes, one entry drawn uniformly.
    pub middle_counts: &'static [usize],
    /// A second word after a space ("oolong"); empty for one-word values.
    pub kinds: &'static [&'static str],
    /// Whether the word is written in lower case (flowers).
    pub lowercase: bool,
}

impl Shape {
    /// Draws one word.
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> String {
        let pick =
            |pool: &[&'static str], rng: &mut ChaCha8Rng| pool[rng.random_range(0..pool.len())];
        let mut word = String::with_capacity(24);
        word.push_str(pick(HEADS, rng));
        let middles = self.middle_counts[rng.random_range(0..self.middle_counts.len())];
        for _ in 0..middles {
            word.push_str(pick(MIDDLES, rng));
        }
        let tail = pick(self.tails, rng);
        // Every head, middle and ending has at least two letters, so one
        // middle always reaches the minimum; the loop only guards the tables.
        while word.len() + tail.len() < MIN_WORD_LEN {
            word.push_str(pick(MIDDLES, rng));
        }
        word.push_str(tail);
        if self.lowercase {
            word.make_ascii_lowercase();
        }
        if !self.kinds.is_empty() {
            word.push(' ');
            word.push_str(pick(self.kinds, rng));
        }
        word
    }

    /// Number of distinct words of each middle count this shape can make,
    /// as (middles, words).
    pub fn classes(&self) -> Vec<(usize, u64)> {
        let mut counts: Vec<usize> = self.middle_counts.to_vec();
        counts.sort_unstable();
        counts.dedup();
        counts
            .into_iter()
            .map(|m| {
                let words = (HEADS.len() as u64)
                    .saturating_mul((MIDDLES.len() as u64).saturating_pow(m as u32))
                    .saturating_mul(self.tails.len() as u64)
                    .saturating_mul(self.kinds.len().max(1) as u64);
                (m, words)
            })
            .collect()
    }

    /// The share of draws that take `middles` middles.
    pub fn share_of(&self, middles: usize) -> f64 {
        let n = self.middle_counts.iter().filter(|&&m| m == middles).count();
        n as f64 / self.middle_counts.len() as f64
    }
}

/// First syllables, shared by every shape.
pub const HEADS: &[&str] = &[
    "Ba", "Be", "Bi", "Bo", "Ca", "Ce", "Co", "Da", "De", "Di", "Do", "Fa", "Fe", "Fi", "Fo", "Ga",
    "Ge", "Go", "Ha", "He", "Hi", "Ho", "Ja", "Je", "Jo", "Ka", "Ke", "Ki", "Ko", "Pa", "Pe", "Pi",
    "Po", "Ta", "Te", "Ti", "To", "Wa", "We", "Wi", "Za", "Ze", "Zo", "Bla", "Ble", "Bra", "Bre",
    "Bri", "Bro", "Cla", "Cle", "Cra", "Cri", "Dra", "Dre", "Dro", "Fla", "Fle", "Fra", "Fre",
    "Gla", "Gra", "Gre", "Gri", "Kla", "Kra", "Kri", "Pra", "Pre", "Pri", "Tra", "Tre", "Tri",
];

/// Middle syllables, shared by every shape: a middle consonant and a vowel.
pub const MIDDLES: &[&str] = &[
    "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "na", "ne", "ni", "no", "nu", "ra", "re",
    "ri", "ro", "ru", "sa", "se", "si", "so", "va", "ve", "vi", "vo",
];

/// Women's names ("Kelanna").
pub const FEMININE: Shape = Shape {
    name: "feminine name",
    tails: &[
        "nna", "lle", "ria", "lia", "nia", "ssa", "vie", "tte", "dra", "mma", "lyn", "rsa", "sha",
        "lka",
    ],
    middle_counts: &[1, 1, 2],
    kinds: &[],
    lowercase: false,
};

/// Old-fashioned women's names, for grandmothers ("Delmatha").
pub const OLD_FEMININE: Shape = Shape {
    name: "old-fashioned feminine name",
    tails: &[
        "lda", "ttie", "rtha", "lde", "lma", "dith", "ssie", "tta", "lly", "nnie", "bel", "gitte",
        "wen",
    ],
    middle_counts: &[1, 1, 2],
    kinds: &[],
    lowercase: false,
};

/// Men's names ("Maritus").
pub const MASCULINE: Shape = Shape {
    name: "masculine name",
    tails: &[
        "rvin", "rn", "rk", "tus", "nzo", "rius", "dric", "stan", "bald", "win", "gor", "dek",
        "thar",
    ],
    middle_counts: &[1, 1, 2],
    kinds: &[],
    lowercase: false,
};

/// Names for anyone ("Dorasper").
pub const ANY_NAME: Shape = Shape {
    name: "name",
    tails: &[
        "ndi", "rren", "llard", "sper", "nsey", "ssel", "mmet", "llis", "ndal", "rrow", "nsi",
        "lvy", "ddie", "skey",
    ],
    middle_counts: &[1, 1, 2],
    kinds: &[],
    lowercase: false,
};

/// Towns ("Koveford").
pub const PLACE: Shape = Shape {
    name: "place",
    tails: &[
        "holm", "wick", "stad", "ford", "by", "mouth", "bury", "haven", "dale", "field", "berg",
        "ton", "stow", "burgh", "thorp", "gate", "wold", "combe", "hurst", "fjord", "pool", "wych",
        "wich",
    ],
    middle_counts: &[1, 2, 2],
    kinds: &[],
    lowercase: false,
};

/// Cuisines, named after a region ("Valotian").
pub const CUISINE: Shape = Shape {
    name: "cuisine",
    tails: &[
        "tian", "dian", "gian", "zian", "cian", "kian", "pian", "tese", "dese", "gese", "kese",
        "thic",
    ],
    middle_counts: &[1, 2],
    kinds: &[],
    lowercase: false,
};

/// Composers' surnames ("Karinski").
pub const COMPOSER: Shape = Shape {
    name: "composer",
    tails: &[
        "ski", "tto", "zzi", "llo", "ndel", "stein", "ghi", "cci", "tov", "dov", "kov", "sky",
    ],
    middle_counts: &[1, 2],
    kinds: &[],
    lowercase: false,
};

/// Board games ("Tessarix").
pub const BOARD_GAME: Shape = Shape {
    name: "board game",
    tails: &[
        "rix", "ndo", "nto", "dor", "zar", "quin", "tron", "phor", "bix", "gard", "mbo", "jax",
    ],
    middle_counts: &[1, 2],
    kinds: &[],
    lowercase: false,
};

/// Flowers, plural and in lower case ("kelanthus").
pub const FLOWERS: Shape = Shape {
    name: "flowers",
    tails: &[
        "nthus", "llias", "rrias", "ssias", "ndas", "pias", "tias", "dias",
    ],
    middle_counts: &[1, 2],
    kinds: &[],
    lowercase: true,
};

/// Teas: an estate and a kind of tea ("Tamoshi oolong").
pub const TEA: Shape = Shape {
    name: "tea",
    tails: &["shi", "jin", "mba", "kko", "tsu", "ppa", "rji", "ghat"],
    middle_counts: &[1, 2],
    kinds: &["oolong", "sencha", "matcha", "rooibos"],
    lowercase: false,
};

/// Made-up names for pets, boats, projects and starters ("Velabryn").
pub const INVENTED: Shape = Shape {
    name: "invented word",
    tails: &[
        "dris", "thas", "zell", "bryn", "phel", "jorn", "brix", "wyn", "ffin", "ttle", "gwen",
        "quor", "pix", "zog", "bolt", "tarn", "kelp", "jett", "wisp", "fizz", "cobb", "dusk",
        "quill", "spark",
    ],
    middle_counts: &[1, 2, 2],
    kinds: &[],
    lowercase: false,
};

/// Every shape, for tests and for checks over all endings.
pub const SHAPES: &[&Shape] = &[
    &FEMININE,
    &OLD_FEMININE,
    &MASCULINE,
    &ANY_NAME,
    &PLACE,
    &CUISINE,
    &COMPOSER,
    &BOARD_GAME,
    &FLOWERS,
    &TEA,
    &INVENTED,
];

#[cfg(test)]
mod tests {
    use super::*;
    use cb_base::seed;

    const VOWELS: &str = "aeiou";
    const MIDDLE_CONSONANTS: &str = "lmnrsv";

    fn all_tails() -> Vec<(&'static str, &'static str)> {
        SHAPES
            .iter()
            .flat_map(|s| s.tails.iter().map(move |t| (s.name, *t)))
            .collect()
    }

    #[test]
    fn heads_start_with_head_consonants_and_middles_never_hold_them() {
        for h in HEADS {
            let b = h.to_ascii_lowercase().into_bytes();
            assert!(HEAD_CONSONANTS.contains(b[0] as char), "{h}");
            assert!(VOWELS.contains(*b.last().unwrap() as char), "{h}");
            for &c in &b[1..b.len() - 1] {
                assert!("lr".contains(c as char), "{h}");
            }
        }
        for m in MIDDLES {
            let b = m.as_bytes();
            assert_eq!(b.len(), 2, "{m}");
            assert!(MIDDLE_CONSONANTS.contains(b[0] as char), "{m}");
            assert!(VOWELS.contains(b[1] as char), "{m}");
        }
    }

    #[test]
    fn endings_are_consonant_led_short_and_never_middles() {
        for (shape, t) in all_tails() {
            let b = t.as_bytes();
            assert!(!VOWELS.contains(b[0] as char), "{shape}: {t}");
            assert!(!MIDDLES.contains(&t), "{shape}: {t}");
            assert!(t.len() < MIN_WORD_LEN, "{shape}: {t}");
            assert!(t.bytes().all(|c| c.is_ascii_lowercase()), "{shape}: {t}");
        }
        let tails = all_tails();
        let unique: std::collections::HashSet<&str> = tails.iter().map(|(_, t)| *t).collect();
        assert_eq!(unique.len(), tails.len(), "an ending is used by two shapes");
    }

    /// Strings that can follow the head of a word, long enough to cover any
    /// ending: an ending, middles and an ending, or three middles.
    fn continuations() -> Vec<String> {
        let tails: Vec<&str> = all_tails().into_iter().map(|(_, t)| t).collect();
        let mut out: Vec<String> = tails.iter().map(|t| t.to_string()).collect();
        for m in MIDDLES {
            for t in &tails {
                out.push(format!("{m}{t}"));
            }
            for m2 in MIDDLES {
                for t in &tails {
                    out.push(format!("{m}{m2}{t}"));
                }
                for m3 in MIDDLES {
                    out.push(format!("{m}{m2}{m3}"));
                }
            }
        }
        out
    }

    #[test]
    fn no_ending_is_a_prefix_of_what_another_word_continues_with() {
        let continuations = continuations();
        for (shape, t) in all_tails() {
            for c in &continuations {
                assert!(
                    c == t || !c.starts_with(t),
                    "{shape} ending {t:?} is a prefix of {c:?}: one word could start another"
                );
            }
        }
    }

    #[test]
    fn drawn_words_keep_the_shape() {
        let mut rng = seed::rng(3, "syllables-test", 0);
        for shape in SHAPES {
            for _ in 0..500 {
                let w = shape.draw(&mut rng);
                let first = w.split(' ').next().unwrap();
                assert!(first.len() >= MIN_WORD_LEN, "{}: {w}", shape.name);
                assert!(w.is_ascii(), "{w}");
                let lower = first.to_ascii_lowercase();
                assert!(shape.tails.iter().any(|t| lower.ends_with(t)), "{w}");
                assert_eq!(shape.lowercase, first == lower, "{w}");
                assert_eq!(shape.kinds.is_empty(), !w.contains(' '), "{w}");
                // Head consonants occur only in the head or the ending.
                let tail = shape.tails.iter().find(|t| lower.ends_with(*t)).unwrap();
                let body = &lower[1..lower.len() - tail.len()];
                assert!(body.chars().all(|c| !HEAD_CONSONANTS.contains(c)), "{w}");
            }
        }
    }

    #[test]
    fn every_shape_offers_hundreds_of_thousands_of_words() {
        for shape in SHAPES {
            let total: u64 = shape.classes().iter().map(|(_, n)| n).sum();
            assert!(total > 200_000, "{}: {total}", shape.name);
            let shares: f64 = shape
                .classes()
                .iter()
                .map(|(m, _)| shape.share_of(*m))
                .sum();
            assert!((shares - 1.0).abs() < 1e-9);
        }
    }
}
