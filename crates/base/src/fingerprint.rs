//! Fingerprints of texts, for indexes that must recognise a text without
//! keeping a copy of it: the upstreams' conversation index (first messages,
//! probes, the lone messages of conversations with later probes) and the
//! scorer's anchor index (every spelling of every anchor). At 100,000
//! conversations the copies were most of both indexes.
//!
//! A fingerprint is 128 bits (two SipHash values, the second salted), so
//! two different texts share one with a chance of about 2^-128 a pair:
//! never, in practice, for texts nobody made to collide. The SipHash keys
//! are fixed (the same fingerprints in every run), so someone who knows
//! them could make a text to match another's; the indexes are built from
//! the user's own dataset and only looked up with what a gateway sends,
//! never grown by it, so a crafted text could at most be taken for one of
//! the dataset's. A word sequence gets the same fingerprint as the text of
//! its words joined by single spaces, without building that text.
//!
//! Maps keyed by fingerprints use [`FingerprintMap`], whose hasher takes
//! the fingerprint's own bits instead of hashing them again.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash, Hasher};

/// The salt written before the text for the second half.
const SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// A 128-bit fingerprint of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64, u64);

impl Fingerprint {
    /// The fingerprint of `text`.
    pub fn of(text: &str) -> Self {
        Self::of_words([text])
    }

    /// The fingerprint of `words` joined by single spaces (a word holds no
    /// space), without joining them.
    pub fn of_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Self {
        let mut plain = DefaultHasher::new();
        let mut salted = DefaultHasher::new();
        salted.write_u64(SALT);
        for (i, word) in words.into_iter().enumerate() {
            if i > 0 {
                plain.write(b" ");
                salted.write(b" ");
            }
            plain.write(word.as_bytes());
            salted.write(word.as_bytes());
        }
        Fingerprint(plain.finish(), salted.finish())
    }

    /// 32 bits of the fingerprint, where a collision only costs a choice
    /// among a few texts (a turn among a conversation's own).
    pub fn short(&self) -> u32 {
        self.0 as u32
    }
}

impl Hash for Fingerprint {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Either half is already a uniform hash: a map needs one.
        state.write_u64(self.0);
    }
}

/// The hasher of [`FingerprintMap`]: a fingerprint's first half as it is.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by `Fingerprint`; anything else is
        // folded in, so the hasher is never wrong, only slower.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by fingerprints, hashed by their own bits.
pub type FingerprintMap<V> = HashMap<Fingerprint, V, BuildHasherDefault<PassThrough>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_their_joined_text_share_a_fingerprint() {
        assert_eq!(
            Fingerprint::of_words(["the", "3rd", "of", "march"]),
            Fingerprint::of("the 3rd of march")
        );
        assert_ne!(
            Fingerprint::of_words(["the", "3rd"]),
            Fingerprint::of_words(["the3", "rd"])
        );
        assert_ne!(Fingerprint::of("abc"), Fingerprint::of("abd"));
        assert_ne!(Fingerprint::of(""), Fingerprint::of(" "));
    }

    #[test]
    fn the_halves_differ_and_a_map_finds_what_it_holds() {
        let print = Fingerprint::of("Gamasitese");
        assert_ne!(print.0, print.1);
        let mut map = FingerprintMap::default();
        for k in 0..10_000 {
            map.insert(Fingerprint::of(&format!("text {k}")), k);
        }
        assert_eq!(map.len(), 10_000);
        assert_eq!(map.get(&Fingerprint::of("text 4711")), Some(&4711));
        assert_eq!(map.get(&Fingerprint::of("text 10000")), None);
    }
}
