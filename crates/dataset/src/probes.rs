//! Probe wordings for composed datasets: a short clause about what the user
//! is about to do, then the subject's question ("Before I walk the dog this
//! evening, a quick memory test. What's my sister's name?").
//!
//! Every probe of a dataset must be unique: an upstream that receives a lone
//! probe (a gateway that dropped the history) attributes it by its text. The
//! curated openers give fourteen wordings per subject; these clauses give
//! tens of thousands. They contain no digit, no name and no word a value can
//! take, and they never mention anything another subject asks about.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Sentence frames; `{do}` is an activity, `{when}` a time (with its leading
/// space, or empty), `{ask}` a lead-in to the question.
pub const FRAMES: &[&str] = &[
    "Before I {do}{when}, {ask}.",
    "I'm about to {do}{when}, so {ask}.",
    "I need to {do}{when}, but first {ask}.",
    "I have to {do}{when}, so {ask}.",
];

/// What the user is about to do.
pub const ACTIVITIES: &[&str] = &[
    "head out",
    "log off",
    "catch my train",
    "go for a run",
    "put the kettle on",
    "water the plants",
    "leave for work",
    "jump in the shower",
    "pop to the shops",
    "start cooking",
    "hang up the washing",
    "take the bins out",
    "go to bed",
    "get some lunch",
    "answer a few emails",
    "do the dishes",
    "go for a walk",
    "get on the bus",
    "head to the gym",
    "make a coffee",
    "tidy the kitchen",
    "go to the post office",
    "run some errands",
    "start my shift",
    "go into a meeting",
    "pack my bag",
    "ring the plumber",
    "book a taxi",
    "go shopping",
    "get ready for work",
    "finish up here",
    "close my laptop",
    "iron a shirt",
    "grab a sandwich",
    "head to the station",
    "pick up a prescription",
    "stretch my legs",
    "join a video call",
    "put the laundry on",
    "wash the car",
    "mow the lawn",
    "fix the shelf",
    "take a nap",
    "clean the windows",
    "post a parcel",
    "cook lunch",
    "do the crossword",
    "fold the laundry",
    "charge my phone",
    "sort the recycling",
];

/// When; empty means no time is given.
pub const WHENS: &[&str] = &[
    "",
    " now",
    " in a minute",
    " in a moment",
    " shortly",
    " soon",
    " in a bit",
    " this evening",
    " tonight",
    " this afternoon",
    " this morning",
    " later today",
    " in a few minutes",
    " before lunch",
    " after this",
    " right away",
    " any minute now",
    " very soon",
    " in half an hour",
    " after dinner",
    " on my lunch break",
    " before it gets dark",
];

/// Lead-ins to the question.
pub const ASKS: &[&str] = &[
    "one more thing",
    "a quick question",
    "a quick memory test",
    "one last question",
    "let me check something",
    "humour me for a second",
    "a small test for you",
    "one question for you",
    "a quick check",
    "a last one",
];

/// Number of distinct clauses (frames x activities x times x lead-ins).
pub fn clauses() -> u64 {
    (FRAMES.len() * ACTIVITIES.len() * WHENS.len() * ASKS.len()) as u64
}

/// A probe: a drawn clause, then `question` (one of the subject's probes).
pub fn compose(question: &str, rng: &mut ChaCha8Rng) -> String {
    let pick = |pool: &[&'static str], rng: &mut ChaCha8Rng| pool[rng.random_range(0..pool.len())];
    let frame = pick(FRAMES, rng);
    let clause = frame
        .replacen("{do}", pick(ACTIVITIES, rng), 1)
        .replacen("{when}", pick(WHENS, rng), 1)
        .replacen("{ask}", pick(ASKS, rng), 1);
    format!("{clause} {question}")
}

/// Every fixed piece of probe text, for the lexicon's collision checks.
pub fn texts() -> impl Iterator<Item = &'static str> {
    FRAMES
        .iter()
        .chain(ACTIVITIES)
        .chain(WHENS)
        .chain(ASKS)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::{probed_subject, stated_subject, SUBJECTS};
    use cb_base::seed;

    #[test]
    fn composed_probes_ask_exactly_their_subject() {
        let mut rng = seed::rng(2, "probes-test", 0);
        for s in SUBJECTS {
            for q in s.probes {
                for _ in 0..40 {
                    let p = compose(q, &mut rng);
                    assert!(p.ends_with(q), "{p}");
                    assert_eq!(probed_subject(&p).map(|x| x.key), Some(s.key), "{p}");
                    assert!(stated_subject(&p).is_none(), "{p}");
                    assert!(!p.contains("{"), "{p}");
                    assert!(!p.chars().any(|c| c.is_ascii_digit()), "{p}");
                }
            }
        }
    }

    #[test]
    fn clauses_read_as_sentences() {
        let mut rng = seed::rng(2, "probes-test", 1);
        let p = compose("What's my sister's name?", &mut rng);
        assert!(p.starts_with(|c: char| c.is_ascii_uppercase()), "{p}");
        assert!(p.contains(". What's my sister's name?"), "{p}");
        assert!(clauses() > 40_000);
        // No piece is empty or ends with a stray space, but WHENS[0].
        for t in texts().filter(|t| !t.is_empty()) {
            assert_eq!(t.trim_end(), t);
        }
    }
}
