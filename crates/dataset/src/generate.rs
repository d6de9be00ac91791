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
use super::{subjects, Category, Conversation, Dataset};
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
    /// `--later-probes` with conversations too short to carry them.
    #[error(
        "--later-probes needs --min-turns {min} or more (anchor, two filler turns, probe); got {got}"
    )]
    TooShortForLaterProbes {
        /// `--min-turns`.
        got: usize,
        /// The fewest turns later probes need.
        min: usize,
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
    let mut conversations = Vec::with_capacity(opts.conversations);
    generate_each(opts, mode, |c| {
        conversations.push(c);
        Ok::<(), GenerateError>(())
    })?;
    Ok(Dataset { conversations })
}

/// Generates the dataset of [`generate_in`] one conversation at a time,
/// handing each to `each` in order as soon as it is built (the command
/// writes it at once, so a dataset of 100,000 conversations is never held
/// whole). Only the anchors of every conversation are held, so that
/// distractors and probes can avoid them. An error of `each` stops it.
///
/// # Errors
/// As [`try_generate`], or `each`'s error.
pub fn generate_each<E: From<GenerateError>>(
    opts: &GenerateOptions,
    mode: Mode,
    mut each: impl FnMut(Conversation) -> Result<(), E>,
) -> Result<(), E> {
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
        each(conversation)?;
    }
    Ok(())
}

/// Position of `c` in [`Category::ALL`].
fn category_index(c: Category) -> usize {
    Category::ALL.iter().position(|&x| x == c).unwrap_or(0)
}

#[cfg(test)]
mod tests;
