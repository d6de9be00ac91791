//! The seeded dataset generator.

use super::Dataset;

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

/// Generates a dataset.
pub fn generate(_opts: &GenerateOptions) -> Dataset {
    todo!()
}
