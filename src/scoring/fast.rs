//! The fast-path scorer.

use super::Scored;
use crate::dataset::{Conversation, Dataset};

/// Every anchor of a dataset, for recognising context bleed.
#[derive(Debug, Clone, Default)]
pub struct AnchorIndex {}

impl AnchorIndex {
    /// Indexes a dataset.
    pub fn new(_dataset: &Dataset) -> Self {
        AnchorIndex {}
    }
}

/// Scores `answer` (None when the request failed) for `conversation`.
pub fn score_fast(
    _conversation: &Conversation,
    _answer: Option<&str>,
    _index: &AnchorIndex,
) -> Scored {
    todo!()
}
