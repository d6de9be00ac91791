//! Recognising which conversation a request belongs to from its content.

use crate::dataset::Dataset;
use std::collections::HashMap;

/// First user message -> (conversation index, id, turns).
#[derive(Debug, Clone, Default)]
pub struct ConversationIndex {
    by_first_message: HashMap<String, (usize, String, usize)>,
}

impl ConversationIndex {
    /// Indexes a dataset.
    pub fn new(dataset: &Dataset) -> Self {
        let by_first_message = dataset
            .conversations
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    c.first_user_message().to_string(),
                    (i, c.id.clone(), c.n_turns()),
                )
            })
            .collect();
        ConversationIndex { by_first_message }
    }

    /// The conversation whose first user message is `first`: (index, id, turns).
    pub fn lookup(&self, first: &str) -> Option<(usize, &str, usize)> {
        self.by_first_message
            .get(first)
            .map(|(i, id, n)| (*i, id.as_str(), *n))
    }
}
