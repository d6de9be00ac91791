//! Summary statistics of a dataset, printed by `generate` so that a reader
//! can see the balance of categories and lengths at a glance.

use super::{Category, Conversation, Dataset};
use std::collections::BTreeMap;
use std::fmt;

/// Counts that describe a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetStats {
    /// Number of conversations.
    pub conversations: usize,
    /// Conversations per anchor category, in [`Category::ALL`] order.
    pub per_category: Vec<(Category, usize)>,
    /// Conversations per number of turns, ascending.
    pub turn_histogram: BTreeMap<usize, usize>,
    /// Filler turns that mention a distractor.
    pub distractors: usize,
}

impl Dataset {
    /// The statistics of this dataset.
    pub fn stats(&self) -> DatasetStats {
        let mut stats = DatasetStats::empty();
        for c in &self.conversations {
            stats.add(c);
        }
        stats
    }
}

impl DatasetStats {
    /// The statistics of no conversation, to [`DatasetStats::add`] to.
    pub fn empty() -> Self {
        DatasetStats {
            conversations: 0,
            per_category: Category::ALL.iter().map(|&c| (c, 0)).collect(),
            turn_histogram: BTreeMap::new(),
            distractors: 0,
        }
    }

    /// Counts one more conversation (as it is written, for a dataset never
    /// held whole).
    pub fn add(&mut self, c: &Conversation) {
        self.conversations += 1;
        if let Some((_, n)) = self
            .per_category
            .iter_mut()
            .find(|(cat, _)| *cat == c.anchor.category)
        {
            *n += 1;
        }
        *self.turn_histogram.entry(c.n_turns()).or_insert(0) += 1;
        self.distractors += c.distractors().count();
    }
}

impl fmt::Display for DatasetStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "conversations: {}", self.conversations)?;
        writeln!(f, "per category:")?;
        for (c, n) in &self.per_category {
            writeln!(f, "  {:<14} {n:>4}", c.as_str())?;
        }
        writeln!(f, "turns per conversation:")?;
        let widest = self
            .turn_histogram
            .values()
            .copied()
            .max()
            .unwrap_or(1)
            .max(1);
        for (turns, n) in &self.turn_histogram {
            let bar = "#".repeat((n * 40).div_ceil(widest));
            writeln!(f, "  {turns:>3} turns {n:>4}  {bar}")?;
        }
        write!(f, "distractor turns: {}", self.distractors)
    }
}
