//! Tests of the generator: the same seed gives the same bytes, the
//! committed default is the seed-42 generation, anchors never overlap, and
//! composed datasets keep those promises at scale.

use super::*;
use crate::lexicon::{contains_words, tokens};
use crate::{TurnKind, BUILTIN_DATASETS};

fn opts(seed: u64) -> GenerateOptions {
    GenerateOptions {
        seed,
        conversations: 150,
        min_turns: 7,
        max_turns: 11,
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = generate(&opts(42)).to_jsonl();
    assert_eq!(a, generate(&opts(42)).to_jsonl());
    assert_ne!(a, generate(&opts(43)).to_jsonl());
}

#[test]
fn committed_file_is_the_seed_42_generation() {
    let committed = BUILTIN_DATASETS[0].text;
    assert!(
        committed == generate(&opts(42)).to_jsonl(),
        "datasets/continuity-150.jsonl is stale: regenerate it with \
         `cargo run -- generate --seed 42 --out datasets/continuity-150.jsonl`"
    );
}

#[test]
fn committed_dataset_shape() {
    let d = Dataset::builtin_default();
    assert_eq!(d.conversations.len(), 150);
    let stats = d.stats();
    assert_eq!(
        stats.turn_histogram.keys().copied().collect::<Vec<_>>(),
        (7..=11).collect::<Vec<_>>()
    );
    assert!(stats.turn_histogram.values().all(|&n| n == 30));
    for (c, n) in &stats.per_category {
        assert!(*n >= 20, "{c:?}: {n}");
    }
    assert!(stats.distractors > 0);
    // Upstreams recognise a conversation by its first user message.
    let firsts: HashSet<&str> = d
        .conversations
        .iter()
        .map(|c| c.first_user_message())
        .collect();
    assert_eq!(firsts.len(), d.conversations.len());
    let probes: HashSet<&str> = d.conversations.iter().map(|c| c.probe()).collect();
    assert_eq!(probes.len(), d.conversations.len(), "probes are unique");
    for c in &d.conversations {
        assert_eq!(c.turns[0].kind, TurnKind::Anchor);
        assert!(c.turns[1..c.n_turns() - 1]
            .iter()
            .all(|t| t.kind == TurnKind::Filler));
        assert!(c.anchor.variants.contains(&c.anchor.value), "{}", c.id);
    }
}

#[test]
fn committed_anchors_are_unique_and_never_overlap() {
    let d = Dataset::builtin_default();
    let mut seen = HashSet::new();
    for c in &d.conversations {
        assert!(
            seen.insert(c.anchor.value.to_lowercase()),
            "duplicate anchor {}",
            c.anchor.value
        );
    }
    // No variant of one anchor occurs in another's, even as plain text.
    for a in &d.conversations {
        for b in &d.conversations {
            if a.id == b.id {
                continue;
            }
            for va in &a.anchor.variants {
                for vb in &b.anchor.variants {
                    let (la, lb) = (va.to_lowercase(), vb.to_lowercase());
                    assert!(!lb.contains(&la), "{va} inside {vb}");
                }
            }
        }
    }
}

#[test]
fn anchors_are_not_guessable_defaults() {
    for c in &Dataset::builtin_default().conversations {
        let v = &c.anchor.value;
        if v.bytes().all(|b| b.is_ascii_digit()) {
            assert!(v.len() >= 3, "{}: {v}", c.id);
        }
        assert!(!["blue", "red", "green", "pizza", "london", "paris"]
            .contains(&v.to_lowercase().as_str()));
    }
}

#[test]
fn probes_and_filler_never_give_the_anchor_away() {
    for c in &Dataset::builtin_default().conversations {
        let variants: Vec<Vec<String>> = c.anchor.variants.iter().map(|v| tokens(v)).collect();
        for t in &c.turns[1..] {
            let words = tokens(&t.user);
            for v in &variants {
                assert!(
                    !contains_words(&words, v),
                    "{}: {:?} in {:?}",
                    c.id,
                    v,
                    t.user
                );
            }
            if let Some(reply) = &t.assistant {
                for v in &variants {
                    assert!(!contains_words(&tokens(reply), v), "{}: reply leaks", c.id);
                }
            }
        }
        // Digits appear only in the anchor turn and in distractor turns.
        for t in &c.turns[1..] {
            if t.distractor.is_none() {
                assert!(
                    !t.user.chars().any(|ch| ch.is_ascii_digit()),
                    "{}: {}",
                    c.id,
                    t.user
                );
            }
        }
    }
}

#[test]
fn scripted_replies_everywhere_but_the_probe() {
    for c in &Dataset::builtin_default().conversations {
        let (probe, rest) = c.turns.split_last().unwrap();
        assert_eq!(probe.kind, TurnKind::Probe);
        assert!(probe.assistant.is_none());
        assert!(rest
            .iter()
            .all(|t| t.assistant.as_deref().is_some_and(|a| !a.is_empty())));
    }
}

#[test]
fn distractors_present_in_their_turn_and_never_an_anchor() {
    let d = Dataset::builtin_default();
    let anchors: Vec<String> = d
        .conversations
        .iter()
        .flat_map(|c| c.anchor.variants.iter().map(|v| v.to_lowercase()))
        .collect();
    let mut count = 0;
    for c in &d.conversations {
        for t in &c.turns {
            if let Some(x) = &t.distractor {
                count += 1;
                assert!(t.user.contains(x.as_str()));
                let x = x.to_lowercase();
                for a in &anchors {
                    assert!(!a.contains(&x) && !x.contains(a.as_str()), "{}: {x}", c.id);
                }
            }
        }
        assert!(c.distractors().count() >= 1, "{}", c.id);
    }
    assert!(count > 0);
}

#[test]
fn turn_range_options_are_honoured_and_validated() {
    let o = GenerateOptions {
        seed: 5,
        conversations: 12,
        min_turns: 3,
        max_turns: 4,
    };
    let d = generate(&o);
    assert_eq!(d.conversations.len(), 12);
    let counts: Vec<usize> = d.conversations.iter().map(|c| c.n_turns()).collect();
    assert_eq!(counts.iter().filter(|&&n| n == 3).count(), 6);
    assert_eq!(counts.iter().filter(|&&n| n == 4).count(), 6);

    let bad = |min, max, n| {
        GenerateOptions {
            seed: 1,
            conversations: n,
            min_turns: min,
            max_turns: max,
        }
        .validate()
    };
    assert_eq!(bad(2, 5, 10), Err(GenerateError::MinTurnsTooSmall(2)));
    assert_eq!(
        bad(8, 7, 10),
        Err(GenerateError::MinAboveMax { min: 8, max: 7 })
    );
    assert_eq!(bad(7, 11, 0), Err(GenerateError::NoConversations));
    assert!(bad(7, 11, 100_000).is_ok());
    assert_eq!(
        bad(7, 11, MAX_CONVERSATIONS + 1),
        Err(GenerateError::TooManyConversations {
            requested: MAX_CONVERSATIONS + 1,
            max: MAX_CONVERSATIONS
        })
    );
    let curated = GenerateOptions {
        seed: 1,
        conversations: CURATED_MAX + 1,
        min_turns: 7,
        max_turns: 11,
    };
    assert!(matches!(
        curated.validate_for(Mode::Curated),
        Err(GenerateError::TooManyConversations {
            max: CURATED_MAX,
            ..
        })
    ));
    assert!(curated.validate_for(Mode::Composed).is_ok());
    assert!(bad(7, 11, 150).is_ok());
}

#[test]
fn sizes_pick_their_mode() {
    assert_eq!(curated_capacity(), CURATED_MAX);
    assert_eq!(Mode::for_size(150), Mode::Curated);
    assert_eq!(Mode::for_size(CURATED_MAX), Mode::Curated);
    assert_eq!(Mode::for_size(CURATED_MAX + 1), Mode::Composed);
    assert_eq!(max_conversations(), MAX_CONVERSATIONS);
    let err = GenerateError::TooManyConversations {
        requested: 300_000,
        max: MAX_CONVERSATIONS,
    };
    assert!(err
        .to_string()
        .contains("use --conversations 250000 or fewer"));
}

/// Every composed subject keeps at least half its values free at the
/// largest size, so that a free value is found within a couple of draws
/// to the end (and [`GenerateError::Exhausted`] stays theoretical).
#[test]
fn composed_subjects_have_room_for_the_largest_dataset() {
    use crate::compose::Compose;
    use crate::probes;
    use std::collections::BTreeMap;
    let per_category = MAX_CONVERSATIONS.div_ceil(Category::ALL.len()) as u64;
    let mut shapes: BTreeMap<&str, (&crate::syllables::Shape, u64)> = BTreeMap::new();
    let mut by_digits: BTreeMap<usize, u64> = BTreeMap::new();
    let mut years: Vec<(i32, i32)> = Vec::new();
    for c in Category::ALL {
        let subs = subjects::of_category(c, Mode::Composed);
        let share = per_category.div_ceil(subs.len() as u64);
        for s in subs {
            let wordings = probes::clauses() * s.probes.len() as u64;
            assert!(2 * share <= wordings, "{}: probes", s.key);
            match s.compose.unwrap() {
                Compose::Word(shape) => shapes.entry(shape.name).or_insert((shape, 0)).1 += share,
                Compose::Code(digits) => *by_digits.entry(digits as usize).or_default() += share,
                Compose::Count(low, high) => {
                    assert_eq!(low.to_string().len(), high.to_string().len(), "{}", s.key);
                    assert!(2 * share <= u64::from(high - low + 1), "{}", s.key);
                    *by_digits.entry(low.to_string().len()).or_default() += share;
                }
                date @ Compose::Date(from, to) => {
                    assert!(2 * share <= date.space(), "{}: {share}", s.key);
                    years.push((from, to));
                }
            }
        }
    }
    for (name, (shape, total)) in shapes {
        for (middles, words) in shape.classes() {
            let expected = total as f64 * shape.share_of(middles);
            assert!(2.0 * expected <= words as f64, "{name}, {middles} middles");
        }
    }
    for (digits, total) in by_digits {
        assert!(
            2 * total <= 9 * 10u64.pow(digits as u32 - 1),
            "{digits} digits"
        );
    }
    // Date subjects share no day, so their room adds up.
    years.sort_unstable();
    assert!(years.windows(2).all(|w| w[0].1 < w[1].0), "{years:?}");
}

#[test]
fn the_largest_curated_dataset_generates() {
    let d = generate(&GenerateOptions {
        seed: 9,
        conversations: CURATED_MAX,
        min_turns: 7,
        max_turns: 11,
    });
    let unique: HashSet<String> = d
        .conversations
        .iter()
        .map(|c| c.anchor.value.to_lowercase())
        .collect();
    assert_eq!(unique.len(), CURATED_MAX);
}

/// The full size takes a few seconds in a release build and minutes in
/// a debug one: `cargo test --release --lib the_largest_composed`.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in debug builds; run with --release")]
fn the_largest_composed_dataset_generates() {
    let d = try_generate(&GenerateOptions {
        seed: 9,
        conversations: MAX_CONVERSATIONS,
        min_turns: 7,
        max_turns: 11,
    })
    .unwrap();
    let unique: HashSet<String> = d
        .conversations
        .iter()
        .map(|c| c.anchor.value.to_lowercase())
        .collect();
    assert_eq!(unique.len(), MAX_CONVERSATIONS);
    let probes: HashSet<&str> = d.conversations.iter().map(|c| c.probe()).collect();
    assert_eq!(probes.len(), MAX_CONVERSATIONS);
}
