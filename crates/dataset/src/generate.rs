//! The seeded dataset generator.
//!
//! Categories and conversation lengths are balanced (an evenly filled list,
//! shuffled with a seeded generator); anchor values are unique across the
//! dataset and never hide inside one another or inside ordinary lexicon text,
//! so an answer that contains another conversation's anchor is recognisable
//! as context bleed. Every random choice goes through [`cb_base::seed::rng`].
//!
//! Two modes share that procedure and differ in where values come from. Up to
//! [`CURATED_MAX`] conversations (the default 150 among them) the generator
//! draws from curated lists and narrow ranges, exactly as it always has, so
//! those datasets stay byte-identical. Beyond that it composes them
//! ([`super::compose`]): names and places from syllables, codes and counts
//! over wide ranges, dates over centuries, and probes with a composed clause,
//! up to [`MAX_CONVERSATIONS`]. Time and memory grow linearly with the size.

use super::build::{build_conversation, compose_unique_probe, make_probe_unique};
use super::lexicon::{self, Subject};
use super::pools::{Drawn, Pool};
use super::taken::Taken;
use super::{subjects, Category, Dataset};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

/// Options of the generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateOptions {
    /// Master seed.
    pub seed: u64,
    /// Number of conversations.
    pub conversations: usize,
    /// Fewest turns.
    pub min_turns: usize,
    /// Most turns.
    pub max_turns: usize,
}

/// Fewest turns a conversation can have: anchor, one filler turn, probe.
pub const MIN_TURNS: usize = 3;

/// Most turns a conversation can have (keeps requests a sensible size).
pub const MAX_TURNS: usize = 60;

/// Largest dataset drawn from the curated lists (see [`curated_capacity`]);
/// larger ones are composed.
pub const CURATED_MAX: usize = 300;

/// Largest dataset the generator makes. Dates bound it: every anchor is a
/// distinct value, and at this size the narrowest date subject (45 years)
/// is still less than half full, so free values stay quick to find.
pub const MAX_CONVERSATIONS: usize = 250_000;

/// List entries of every subject kept back from anchors so that distractors
/// can be drawn from them.
const DISTRACTOR_RESERVE: usize = 2;

/// How many fresh values to try before giving up on one draw.
pub(super) const MAX_DRAWS: usize = 10_000;

/// Where a dataset's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Curated lists of uncommon names, places and tastes, and narrow ranges
    /// of codes, quantities and dates: the generator's original values, for
    /// up to [`CURATED_MAX`] conversations.
    Curated,
    /// Values composed from syllables, wide ranges and many years, for up to
    /// [`MAX_CONVERSATIONS`] conversations.
    Composed,
}

impl Mode {
    /// The mode [`generate`] uses for `conversations` conversations.
    pub fn for_size(conversations: usize) -> Mode {
        if conversations <= CURATED_MAX {
            Mode::Curated
        } else {
            Mode::Composed
        }
    }

    /// The most conversations this mode can make.
    pub fn max_conversations(self) -> usize {
        match self {
            Mode::Curated => CURATED_MAX,
            Mode::Composed => MAX_CONVERSATIONS,
        }
    }
}

/// Why generator options were rejected, or (never in practice) generation
/// could not find a free value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenerateError {
    /// `--conversations` was 0.
    #[error("--conversations must be at least 1")]
    NoConversations,
    /// `--conversations` exceeds what the values can keep unique.
    #[error(
        "--conversations {requested} is more than the {max} conversations whose anchors can be \
         kept unique; use --conversations {max} or fewer"
    )]
    TooManyConversations {
        /// What was asked for.
        requested: usize,
        /// The most the mode supports.
        max: usize,
    },
    /// `--min-turns` below [`MIN_TURNS`].
    #[error("--min-turns must be at least {MIN_TURNS} (anchor, one filler turn, probe); got {0}")]
    MinTurnsTooSmall(usize),
    /// `--max-turns` above [`MAX_TURNS`].
    #[error("--max-turns must be at most {MAX_TURNS}; got {0}")]
    MaxTurnsTooLarge(usize),
    /// `--min-turns` above `--max-turns`.
    #[error("--min-turns ({min}) must not exceed --max-turns ({max})")]
    MinAboveMax {
        /// `--min-turns`.
        min: usize,
        /// `--max-turns`.
        max: usize,
    },
    /// No free value was found within 10,000 draws.
    #[error(
        "could not find a free {what} for {subject} within {MAX_DRAWS} draws; \
         use fewer --conversations or another --seed (and please report it)"
    )]
    Exhausted {
        /// The subject key or category being drawn for.
        subject: &'static str,
        /// What was drawn ("anchor value", "probe wording").
        what: &'static str,
    },
}

impl GenerateOptions {
    /// Checks the options for the mode [`generate`] picks; [`generate`]
    /// requires options that pass.
    ///
    /// # Errors
    /// The first problem found, naming the flag to change.
    pub fn validate(&self) -> Result<(), GenerateError> {
        self.validate_for(Mode::for_size(self.conversations))
    }

    /// Checks the options for `mode`.
    ///
    /// # Errors
    /// As [`GenerateOptions::validate`].
    pub fn validate_for(&self, mode: Mode) -> Result<(), GenerateError> {
        if self.conversations == 0 {
            return Err(GenerateError::NoConversations);
        }
        let max = mode.max_conversations();
        if self.conversations > max {
            return Err(GenerateError::TooManyConversations {
                requested: self.conversations,
                max,
            });
        }
        if self.min_turns < MIN_TURNS {
            return Err(GenerateError::MinTurnsTooSmall(self.min_turns));
        }
        if self.max_turns > MAX_TURNS {
            return Err(GenerateError::MaxTurnsTooLarge(self.max_turns));
        }
        if self.min_turns > self.max_turns {
            return Err(GenerateError::MinAboveMax {
                min: self.min_turns,
                max: self.max_turns,
            });
        }
        Ok(())
    }
}

/// The most conversations [`generate`] makes.
pub fn max_conversations() -> usize {
    MAX_CONVERSATIONS
}

/// The most conversations whose anchors the curated lists can keep unique
/// while leaving values over for distractors ([`CURATED_MAX`]).
pub fn curated_capacity() -> usize {
    Category::ALL
        .iter()
        .map(|&c| {
            let subs = subjects::of_category(c, Mode::Curated);
            let per_subject = subs
                .iter()
                .filter_map(|s| s.pool.and_then(Pool::capacity))
                .map(|n| n.saturating_sub(DISTRACTOR_RESERVE))
                .min()
                .unwrap_or(1000);
            // Subjects share a category's anchors evenly, and categories share
            // the conversations evenly.
            per_subject * subs.len() * Category::ALL.len()
        })
        .min()
        .unwrap_or(0)
}

/// `items` repeated in order until `n` entries, then shuffled.
fn balanced<T: Clone>(items: &[T], n: usize, rng: &mut ChaCha8Rng) -> Vec<T> {
    let mut out: Vec<T> = items.iter().cycle().take(n).cloned().collect();
    out.shuffle(rng);
    out
}

/// Where the values of one generation come from.
pub(super) struct Source {
    mode: Mode,
    /// Curated mode: a seeded walk order through each subject's list, by
    /// position in [`lexicon::SUBJECTS`].
    orders: Vec<Vec<usize>>,
}

impl Source {
    fn new(mode: Mode, seed: u64) -> Self {
        let orders = match mode {
            Mode::Curated => lexicon::SUBJECTS
                .iter()
                .enumerate()
                .map(|(si, s)| {
                    let capacity = s.pool.and_then(Pool::capacity).unwrap_or(0);
                    let mut order: Vec<usize> = (0..capacity).collect();
                    order.shuffle(&mut cb_base::seed::rng(
                        seed,
                        "dataset-pool-order",
                        si as u64,
                    ));
                    order
                })
                .collect(),
            Mode::Composed => Vec::new(),
        };
        Source { mode, orders }
    }

    /// The walk order of `subject`'s list (empty unless curated and a list).
    fn order(&self, subject: &Subject) -> &[usize] {
        lexicon::SUBJECTS
            .iter()
            .position(|x| x.key == subject.key)
            .and_then(|i| self.orders.get(i))
            .map_or(&[], Vec::as_slice)
    }

    /// A free value of `subject` that is not in `also_not`. Curated lists
    /// are walked in the order `order`; everything else draws until a free
    /// value appears.
    fn draw(
        &self,
        subject: &Subject,
        rng: &mut ChaCha8Rng,
        order: &[usize],
        taken: &Taken,
        also_not: &[String],
    ) -> Option<Drawn> {
        let fresh = |d: &Drawn| taken.is_free(d) && !also_not.contains(&d.value);
        match self.mode {
            Mode::Curated => match subject.pool? {
                pool @ Pool::List(_) => order.iter().map(|&i| pool.draw(rng, i)).find(fresh),
                pool => (0..MAX_DRAWS).map(|_| pool.draw(rng, 0)).find(fresh),
            },
            Mode::Composed => {
                let compose = subject.compose?;
                (0..MAX_DRAWS).map(|_| compose.draw(rng)).find(fresh)
            }
        }
    }

    /// A free anchor value of `subject`.
    fn anchor(&self, subject: &Subject, rng: &mut ChaCha8Rng, taken: &Taken) -> Option<Drawn> {
        self.draw(subject, rng, self.order(subject), taken, &[])
    }

    /// A distractor of `subject`: free of every anchor, and none of `used`.
    pub(super) fn distractor(
        &self,
        subject: &Subject,
        rng: &mut ChaCha8Rng,
        taken: &Taken,
        used: &[String],
    ) -> Option<Drawn> {
        match self.mode {
            Mode::Curated => {
                let mut walk = self.order(subject).to_vec();
                walk.shuffle(rng);
                let mut d = self.draw(subject, rng, &walk, taken, used)?;
                // Other people's quantities read best in digits.
                if subject.pool == Some(Pool::Quantity) {
                    d.written = d.value.clone();
                }
                Some(d)
            }
            Mode::Composed => self.draw(subject, rng, &[], taken, used),
        }
    }
}

/// Generates a dataset in the mode its size calls for
/// ([`Mode::for_size`]).
///
/// # Panics
/// If `opts` fails [`GenerateOptions::validate`] (the command line validates
/// first), or if no free value is found, which the capacity of every subject
/// rules out in practice; [`try_generate`] returns both as errors.
pub fn generate(opts: &GenerateOptions) -> Dataset {
    match try_generate(opts) {
        Ok(dataset) => dataset,
        Err(e) => panic!("cannot generate the dataset: {e}"),
    }
}

/// [`generate`], returning every problem as an error.
///
/// # Errors
/// Options that fail [`GenerateOptions::validate`], or
/// [`GenerateError::Exhausted`].
pub fn try_generate(opts: &GenerateOptions) -> Result<Dataset, GenerateError> {
    generate_in(opts, Mode::for_size(opts.conversations))
}

/// Generates a dataset of `mode`, whatever its size (a composed dataset of
/// 150 conversations, for instance).
///
/// # Errors
/// As [`try_generate`], with the limit of `mode`.
pub fn generate_in(opts: &GenerateOptions, mode: Mode) -> Result<Dataset, GenerateError> {
    opts.validate_for(mode)?;
    let seed = opts.seed;
    let n = opts.conversations;

    let categories = balanced(
        &Category::ALL,
        n,
        &mut cb_base::seed::rng(seed, "dataset-categories", 0),
    );
    let lengths: Vec<usize> = balanced(
        &(opts.min_turns..=opts.max_turns).collect::<Vec<_>>(),
        n,
        &mut cb_base::seed::rng(seed, "dataset-lengths", 0),
    );

    // Subjects: balanced within each category.
    let mut counts = [0usize; Category::ALL.len()];
    for &c in &categories {
        counts[category_index(c)] += 1;
    }
    let mut subject_queues: Vec<Vec<&'static Subject>> = Category::ALL
        .iter()
        .enumerate()
        .map(|(ci, &c)| {
            let mut q = balanced(
                &subjects::of_category(c, mode),
                counts[ci],
                &mut cb_base::seed::rng(seed, "dataset-subjects", ci as u64),
            );
            q.reverse();
            q
        })
        .collect();

    let source = Source::new(mode, seed);
    // Anchors first, for every conversation, so that distractors can avoid
    // every anchor of the dataset.
    let mut taken = match mode {
        Mode::Curated => Taken::new(),
        Mode::Composed => Taken::new_strict(),
    };
    let mut anchors: Vec<(&'static Subject, Drawn)> = Vec::with_capacity(n);
    for (i, &c) in categories.iter().enumerate() {
        let subject = subject_queues[category_index(c)]
            .pop()
            .ok_or(GenerateError::Exhausted {
                subject: c.as_str(),
                what: "subject",
            })?;
        let mut rng = cb_base::seed::rng(seed, "dataset-anchor", i as u64);
        let drawn = source
            .anchor(subject, &mut rng, &taken)
            .ok_or(GenerateError::Exhausted {
                subject: subject.key,
                what: "anchor value",
            })?;
        taken.take(&drawn);
        anchors.push((subject, drawn));
    }

    let width = n.to_string().len().max(3);
    let mut used_probes = HashSet::with_capacity(n);
    let mut conversations = Vec::with_capacity(n);
    for (i, (subject, drawn)) in anchors.into_iter().enumerate() {
        let mut rng = cb_base::seed::rng(seed, "dataset-conversation", i as u64);
        let mut conversation = build_conversation(
            format!("c{:0width$}", i + 1),
            subject,
            drawn,
            lengths[i],
            &mut rng,
            &source,
            &taken,
        );
        match mode {
            Mode::Curated => {
                make_probe_unique(&mut conversation, subject, &mut used_probes, seed, i)
            }
            Mode::Composed => {
                compose_unique_probe(&mut conversation, subject, &mut used_probes, seed, i)?
            }
        }
        conversations.push(conversation);
    }
    Ok(Dataset { conversations })
}

/// Position of `c` in [`Category::ALL`].
fn category_index(c: Category) -> usize {
    Category::ALL.iter().position(|&x| x == c).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::{contains_words, tokens};
    use crate::TurnKind;

    const COMMITTED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/continuity-150.jsonl"
    );

    fn opts(seed: u64) -> GenerateOptions {
        GenerateOptions {
            seed,
            conversations: 150,
            min_turns: 7,
            max_turns: 11,
        }
    }

    fn committed() -> Dataset {
        Dataset::load(std::path::Path::new(COMMITTED)).unwrap()
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let a = generate(&opts(42)).to_jsonl();
        assert_eq!(a, generate(&opts(42)).to_jsonl());
        assert_ne!(a, generate(&opts(43)).to_jsonl());
    }

    #[test]
    fn committed_file_is_the_seed_42_generation() {
        let on_disk = std::fs::read_to_string(COMMITTED).unwrap();
        assert!(
            on_disk == generate(&opts(42)).to_jsonl(),
            "datasets/continuity-150.jsonl is stale: regenerate it with \
             `cargo run -- generate --seed 42 --out datasets/continuity-150.jsonl`"
        );
    }

    #[test]
    fn committed_dataset_shape() {
        let d = committed();
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
        let d = committed();
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
        for c in &committed().conversations {
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
        for c in &committed().conversations {
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
        for c in &committed().conversations {
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
        let d = committed();
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
                    Compose::Word(shape) => {
                        shapes.entry(shape.name).or_insert((shape, 0)).1 += share
                    }
                    Compose::Code(digits) => {
                        *by_digits.entry(digits as usize).or_default() += share
                    }
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
}
