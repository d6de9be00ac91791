//! The seeded dataset generator.
//!
//! Categories and conversation lengths are balanced (an evenly filled list,
//! shuffled with a seeded generator); anchor values are unique across the
//! dataset and never hide inside one another or inside ordinary lexicon text,
//! so an answer that contains another conversation's anchor is recognisable
//! as context bleed. Every random choice goes through [`crate::seed::rng`].

use super::filler::{self, TOPICS};
use super::lexicon::{self, contains_words, tokens, Subject, DISTRACTOR, VALUE};
use super::pools::{Drawn, Pool};
use super::{subjects, Anchor, Category, Conversation, Dataset, Turn, TurnKind};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

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

/// List entries of every subject kept back from anchors so that distractors
/// can be drawn from them.
const DISTRACTOR_RESERVE: usize = 2;

/// How many fresh values to try before giving up on one draw.
const MAX_DRAWS: usize = 10_000;

/// Why generator options were rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenerateError {
    /// `--conversations` was 0.
    #[error("--conversations must be at least 1")]
    NoConversations,
    /// `--conversations` exceeds what the value pools can make unique.
    #[error(
        "--conversations {requested} is more than the {max} conversations whose anchors can be \
         kept unique; use --conversations {max} or fewer"
    )]
    TooManyConversations {
        /// What was asked for.
        requested: usize,
        /// The most the lexicon supports.
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
}

impl GenerateOptions {
    /// Checks the options; [`generate`] requires options that pass.
    ///
    /// # Errors
    /// The first problem found, naming the flag to change.
    pub fn validate(&self) -> Result<(), GenerateError> {
        if self.conversations == 0 {
            return Err(GenerateError::NoConversations);
        }
        let max = max_conversations();
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

/// The most conversations whose anchors the value pools can keep unique while
/// leaving values over for distractors.
pub fn max_conversations() -> usize {
    Category::ALL
        .iter()
        .map(|&c| {
            let subs = subjects::of_category(c);
            let per_subject = subs
                .iter()
                .filter_map(|s| s.pool.capacity())
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

/// Values already taken, for collision checks.
#[derive(Default)]
struct Taken {
    /// Every variant of every anchor, lower-cased.
    anchors: Vec<String>,
    /// Token sequences of every fixed lexicon sentence.
    lexicon: Vec<Vec<String>>,
}

impl Taken {
    fn new() -> Self {
        Taken {
            anchors: Vec::new(),
            lexicon: lexicon::fixed_texts().iter().map(|t| tokens(t)).collect(),
        }
    }

    /// True when no variant of `drawn` overlaps an anchor variant as plain
    /// text, either way round (stricter than whole words, so that even a
    /// naive substring scorer cannot mistake one anchor for another: no "163"
    /// beside "180163", no "202" beside "2027"), and none occurs as whole
    /// words in lexicon text.
    fn is_free(&self, drawn: &Drawn) -> bool {
        drawn.variants.iter().all(|v| {
            let lower = v.to_lowercase();
            let tv = tokens(v);
            !tv.is_empty()
                && self
                    .anchors
                    .iter()
                    .all(|a| !a.contains(&lower) && !lower.contains(a.as_str()))
                && self.lexicon.iter().all(|t| !contains_words(t, &tv))
        })
    }

    fn take(&mut self, drawn: &Drawn) {
        self.anchors
            .extend(drawn.variants.iter().map(|v| v.to_lowercase()));
    }
}

/// Draws a free value of `subject`. List pools are walked in the order
/// `order` (a seeded permutation), skipping entries in `skip`; generated
/// pools draw until a free value appears.
fn draw_free(
    subject: &Subject,
    rng: &mut ChaCha8Rng,
    order: &[usize],
    taken: &Taken,
    also_not: &[String],
) -> Option<Drawn> {
    let fresh = |d: &Drawn| taken.is_free(d) && !also_not.contains(&d.value);
    match subject.pool {
        Pool::List(_) => order
            .iter()
            .map(|&i| subject.pool.draw(rng, i))
            .find(|d| fresh(d)),
        _ => (0..MAX_DRAWS)
            .map(|_| subject.pool.draw(rng, 0))
            .find(|d| fresh(d)),
    }
}

/// Generates a dataset.
///
/// # Panics
/// If `opts` fails [`GenerateOptions::validate`]; the command line validates
/// first.
pub fn generate(opts: &GenerateOptions) -> Dataset {
    if let Err(e) = opts.validate() {
        panic!("invalid generator options: {e}");
    }
    let seed = opts.seed;
    let n = opts.conversations;

    let categories = balanced(
        &Category::ALL,
        n,
        &mut crate::seed::rng(seed, "dataset-categories", 0),
    );
    let lengths: Vec<usize> = balanced(
        &(opts.min_turns..=opts.max_turns).collect::<Vec<_>>(),
        n,
        &mut crate::seed::rng(seed, "dataset-lengths", 0),
    );

    // Subjects: balanced within each category.
    let mut subject_queues: Vec<Vec<&'static Subject>> = Category::ALL
        .iter()
        .enumerate()
        .map(|(ci, &c)| {
            let count = categories.iter().filter(|&&x| x == c).count();
            let mut q = balanced(
                &subjects::of_category(c),
                count,
                &mut crate::seed::rng(seed, "dataset-subjects", ci as u64),
            );
            q.reverse();
            q
        })
        .collect();

    // A seeded walk order through every list pool, per subject.
    let orders: Vec<Vec<usize>> = lexicon::SUBJECTS
        .iter()
        .enumerate()
        .map(|(si, s)| {
            let mut order: Vec<usize> = (0..s.pool.capacity().unwrap_or(0)).collect();
            order.shuffle(&mut crate::seed::rng(seed, "dataset-pool-order", si as u64));
            order
        })
        .collect();
    let subject_index = |s: &Subject| {
        lexicon::SUBJECTS
            .iter()
            .position(|x| x.key == s.key)
            .unwrap_or(0)
    };

    // Anchors first, for every conversation, so that distractors can avoid
    // every anchor of the dataset.
    let mut taken = Taken::new();
    let mut anchors: Vec<(&'static Subject, Drawn)> = Vec::with_capacity(n);
    for (i, &c) in categories.iter().enumerate() {
        let ci = Category::ALL.iter().position(|&x| x == c).unwrap_or(0);
        let subject = subject_queues[ci]
            .pop()
            .expect("one queued subject per conversation of the category");
        let mut rng = crate::seed::rng(seed, "dataset-anchor", i as u64);
        let drawn = draw_free(
            subject,
            &mut rng,
            &orders[subject_index(subject)],
            &taken,
            &[],
        )
        .expect("validate() keeps the number of anchors within the pools");
        taken.take(&drawn);
        anchors.push((subject, drawn));
    }

    let width = n.to_string().len().max(3);
    let mut used_probes = std::collections::HashSet::new();
    let mut conversations = Vec::with_capacity(n);
    for (i, (subject, drawn)) in anchors.into_iter().enumerate() {
        let mut rng = crate::seed::rng(seed, "dataset-conversation", i as u64);
        let order = &orders[subject_index(subject)];
        let mut conversation = build_conversation(
            format!("c{:0width$}", i + 1),
            subject,
            drawn,
            lengths[i],
            &mut rng,
            order,
            &taken,
        );
        make_probe_unique(&mut conversation, subject, &mut used_probes, seed, i);
        conversations.push(conversation);
    }
    Dataset { conversations }
}

/// Rewords a probe that an earlier conversation already uses, with another
/// opener and question of the same subject, so that every probe is unique: an
/// upstream that receives a lone probe (a gateway that dropped the history)
/// can still tell which conversation it belongs to. Leaves it as is when every
/// wording is taken (only possible far beyond the default size).
fn make_probe_unique(
    conversation: &mut Conversation,
    subject: &'static Subject,
    used: &mut std::collections::HashSet<String>,
    seed: u64,
    i: usize,
) {
    let Some(probe) = conversation.turns.last_mut() else {
        return;
    };
    if used.insert(probe.user.clone()) {
        return;
    }
    let mut wordings: Vec<String> = filler::PROBE_OPENERS
        .iter()
        .flat_map(|opener| {
            subject.probes.iter().map(move |question| {
                [*opener, *question]
                    .iter()
                    .filter(|p| !p.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .collect();
    wordings.shuffle(&mut crate::seed::rng(
        seed,
        "dataset-probe-wording",
        i as u64,
    ));
    if let Some(free) = wordings.into_iter().find(|w| !used.contains(w)) {
        used.insert(free.clone());
        probe.user = free;
    }
}

/// One conversation: anchor turn, filler (some with distractors), probe.
fn build_conversation(
    id: String,
    subject: &'static Subject,
    drawn: Drawn,
    n_turns: usize,
    rng: &mut ChaCha8Rng,
    order: &[usize],
    taken: &Taken,
) -> Conversation {
    let choose =
        |pool: &[&'static str], rng: &mut ChaCha8Rng| pool[rng.random_range(0..pool.len())];
    let join = |parts: &[&str]| {
        parts
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    };

    // Turn 1: the anchor.
    let statement = lexicon::render(choose(subject.statements, rng), VALUE, &drawn.written);
    let user = join(&[
        choose(filler::ANCHOR_OPENERS, rng),
        &statement,
        choose(filler::ANCHOR_CLOSERS, rng),
    ]);
    let mut turns = vec![Turn {
        kind: TurnKind::Anchor,
        assistant: Some(subject.acknowledgement(&user)),
        user,
        distractor: None,
    }];

    // Middle turns: which carry a distractor, and which filler pairs the rest use.
    let middle = n_turns - 2;
    let n_distractors = if middle >= 4 && rng.random_bool(0.4) {
        2
    } else {
        1
    }
    .min(middle);
    let mut positions: Vec<usize> = (0..middle).collect();
    positions.shuffle(rng);
    let distractor_positions = &positions[..n_distractors];
    let mut templates: Vec<usize> = (0..subject.distractors.len()).collect();
    templates.shuffle(rng);
    let mut pairs: Vec<(&str, &str)> = filler::all_pairs().collect();
    pairs.shuffle(rng);
    let mut pairs = pairs.into_iter();
    let mut used_distractors: Vec<String> = vec![drawn.value.clone()];
    let mut used_openers: Vec<&str> = Vec::new();

    for slot in 0..middle {
        let nth = distractor_positions.iter().position(|&p| p == slot);
        let distractor = nth.and_then(|k| {
            let mut walk = order.to_vec();
            walk.shuffle(rng);
            draw_free(subject, rng, &walk, taken, &used_distractors).map(|d| (k, d))
        });
        let turn = match distractor {
            Some((k, mut d)) => {
                // Other people's quantities read best in digits.
                if subject.pool == Pool::Quantity {
                    d.written = d.value.clone();
                }
                let (template, reply) = subject.distractors[templates[k % templates.len()]];
                used_distractors.push(d.value.clone());
                Turn {
                    kind: TurnKind::Filler,
                    user: lexicon::render(template, DISTRACTOR, &d.written),
                    assistant: Some(reply.to_string()),
                    distractor: Some(d.written),
                }
            }
            None => {
                let (question, reply) = pairs.next().unwrap_or(TOPICS[0].pairs[0]);
                // The same opener twice in one conversation reads oddly.
                let mut opener = choose(filler::FILLER_OPENERS, rng);
                if used_openers.contains(&opener) {
                    opener = "";
                } else if !opener.is_empty() {
                    used_openers.push(opener);
                }
                Turn {
                    kind: TurnKind::Filler,
                    user: join(&[opener, question]),
                    assistant: Some(reply.to_string()),
                    distractor: None,
                }
            }
        };
        turns.push(turn);
    }

    // The probe.
    turns.push(Turn {
        kind: TurnKind::Probe,
        user: join(&[
            choose(filler::PROBE_OPENERS, rng),
            choose(subject.probes, rng),
        ]),
        assistant: None,
        distractor: None,
    });

    Conversation {
        id,
        anchor: Anchor {
            category: subject.category,
            subject: subject.subject.to_string(),
            value: drawn.value,
            variants: drawn.variants,
        },
        turns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::lexicon::tokens;
    use std::collections::HashSet;

    const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/continuity-150.jsonl");

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
        assert!(matches!(
            bad(7, 11, 100_000),
            Err(GenerateError::TooManyConversations { .. })
        ));
        assert!(bad(7, 11, 150).is_ok());
    }

    #[test]
    fn the_largest_allowed_dataset_generates() {
        let max = max_conversations();
        assert!(max >= 150);
        let d = generate(&GenerateOptions {
            seed: 9,
            conversations: max,
            min_turns: 7,
            max_turns: 11,
        });
        let unique: HashSet<String> = d
            .conversations
            .iter()
            .map(|c| c.anchor.value.to_lowercase())
            .collect();
        assert_eq!(unique.len(), max);
    }
}
