//! One share of a run, for splitting it across machines (`--shard K/N`):
//! which conversations shard K of N replays. An existing scheduler (a
//! Kubernetes Indexed Job) starts the shards; `report merge` joins their
//! directories.
//!
//! The selection is **every N-th conversation by index**: shard K replays
//! the conversations whose index `i` in the dataset has `i mod N = K`, K
//! from 0 to N-1 (as `$JOB_COMPLETION_INDEX` counts). Interleaving, rather
//! than a contiguous block, spreads the dataset's categories and lengths
//! evenly over the shards, so every shard takes about as long.
//!
//! A shard changes only which conversations are sent. Every shard reads
//! the whole dataset and derives the fault plan, the upstreams'
//! recognition of conversations and the bleed index from all of it, with
//! the master seed: conversation `i` gets the fault, the verdict and the
//! anchors a single run would give it, whatever the shard.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Most shards a run may be split into.
pub const MAX_SHARDS: u32 = 100_000;

/// Shard `index` of `count` (from 0); [`Shard::WHOLE`] is the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// This shard, from 0 to `count - 1`.
    pub index: u32,
    /// How many shards the run is split into, at least 1.
    pub count: u32,
}

/// Why a `--shard` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `K/N` with two whole numbers.
    #[error("--shard expects K/N with K from 0 to N-1, e.g. 0/4 (got {0:?})")]
    Syntax(String),
    /// `N` of 0 or above [`MAX_SHARDS`].
    #[error("--shard {index}/{count}: the count N must be between 1 and {MAX_SHARDS}")]
    Count {
        /// K.
        index: u32,
        /// N.
        count: u32,
    },
    /// `K` not below `N`.
    #[error(
        "--shard {index}/{count}: K counts from 0, so it must be below N (the last shard of {count} is {last}/{count}; \
         a Kubernetes Indexed Job's $JOB_COMPLETION_INDEX counts the same way)"
    )]
    Index {
        /// K.
        index: u32,
        /// N.
        count: u32,
        /// N - 1.
        last: u32,
    },
}

impl Shard {
    /// The whole run: one shard of one.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`.
    ///
    /// # Errors
    /// When `count` is 0 or above [`MAX_SHARDS`], or `index` is not below it.
    pub fn new(index: u32, count: u32) -> Result<Self, ShardError> {
        if count == 0 || count > MAX_SHARDS {
            return Err(ShardError::Count { index, count });
        }
        if index >= count {
            return Err(ShardError::Index {
                index,
                count,
                last: count - 1,
            });
        }
        Ok(Shard { index, count })
    }

    /// Whether this is the whole run (`0/1`).
    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// Whether conversation index `conversation` is this shard's.
    pub fn includes(self, conversation: usize) -> bool {
        conversation % self.count as usize == self.index as usize
    }

    /// The shard a conversation index belongs to, among `count`.
    pub fn of(conversation: usize, count: u32) -> u32 {
        // The remainder is below `count`, a u32.
        u32::try_from(conversation % count.max(1) as usize).unwrap_or(0)
    }

    /// The conversation indices of this shard in a dataset of
    /// `conversations`, ascending.
    pub fn conversations(self, conversations: usize) -> impl Iterator<Item = usize> {
        (self.index as usize..conversations).step_by(self.count as usize)
    }

    /// How many conversations of a dataset of `conversations` are this
    /// shard's.
    pub fn len(self, conversations: usize) -> usize {
        conversations
            .saturating_sub(self.index as usize)
            .div_ceil(self.count as usize)
    }

    /// Whether this shard has no conversation of a dataset of
    /// `conversations`.
    pub fn is_empty(self, conversations: usize) -> bool {
        self.len(conversations) == 0
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || ShardError::Syntax(s.to_string());
        let (k, n) = s.trim().split_once('/').ok_or_else(syntax)?;
        let number = |x: &str| {
            let x = x.trim();
            if x.is_empty() || !x.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            x.parse::<u32>().map_err(|_| syntax())
        };
        Shard::new(number(k)?, number(n)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_of_n_parses_from_zero_and_refuses_what_is_not_a_shard() {
        assert_eq!("0/4".parse::<Shard>(), Ok(Shard { index: 0, count: 4 }));
        assert_eq!(" 3/4 ".parse::<Shard>().unwrap().to_string(), "3/4");
        assert!(matches!(
            "4/4".parse::<Shard>(),
            Err(ShardError::Index { last: 3, .. })
        ));
        assert!("4/4"
            .parse::<Shard>()
            .unwrap_err()
            .to_string()
            .contains("3/4"));
        assert!(matches!(
            "0/0".parse::<Shard>(),
            Err(ShardError::Count { .. })
        ));
        for bad in ["", "1", "1/", "/4", "-1/4", "a/b", "1/4/5", "+1/4", "1.0/4"] {
            assert!(
                matches!(bad.parse::<Shard>(), Err(ShardError::Syntax(_))),
                "{bad:?}"
            );
        }
        assert!("0/100001".parse::<Shard>().is_err());
    }

    #[test]
    fn every_conversation_is_in_exactly_one_shard_every_n_th_by_index() {
        for n in 1..=7u32 {
            for conversations in [0usize, 1, 5, 13, 150] {
                let mut seen = vec![0u32; conversations];
                for k in 0..n {
                    let shard = Shard::new(k, n).unwrap();
                    let mine: Vec<usize> = shard.conversations(conversations).collect();
                    assert_eq!(
                        mine.len(),
                        shard.len(conversations),
                        "{shard} of {conversations}"
                    );
                    for i in mine {
                        assert!(shard.includes(i));
                        assert_eq!(Shard::of(i, n), k);
                        seen[i] += 1;
                    }
                }
                assert!(
                    seen.iter().all(|s| *s == 1),
                    "n {n}, {conversations}: {seen:?}"
                );
            }
        }
        let shard = Shard::new(1, 4).unwrap();
        assert_eq!(shard.conversations(10).collect::<Vec<_>>(), [1, 5, 9]);
        assert!(Shard::new(5, 6).unwrap().is_empty(5));
        assert!(Shard::WHOLE.is_whole() && Shard::WHOLE.includes(12_345));
    }
}
