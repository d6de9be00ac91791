//! Recognising which conversation and turn a request belongs to, from its
//! content alone.
//!
//! The first user message names the conversation (first messages are unique
//! in a dataset) and the number of user messages is the turn. A request whose
//! only user message is a conversation's probe is that conversation's final
//! turn sent without its history, as a gateway that drops history sends it;
//! probes are unique in a generated dataset so that such an attempt is still
//! attributed. A probe shared by several conversations attributes nothing.

use crate::dataset::Dataset;
use std::collections::HashMap;

/// (conversation index, id, number of turns).
type Entry = (usize, String, usize);

/// What the index recognised in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recognised<'a> {
    /// Index of the conversation in the dataset.
    pub index: usize,
    /// Its id.
    pub id: &'a str,
    /// The turn the request is for, from 1.
    pub turn: usize,
}

/// First user message (and lone probe) -> conversation.
#[derive(Debug, Clone, Default)]
pub struct ConversationIndex {
    by_first_message: HashMap<String, Entry>,
    /// `None` when several conversations share the probe.
    by_probe: HashMap<String, Option<Entry>>,
}

impl ConversationIndex {
    /// Indexes a dataset.
    pub fn new(dataset: &Dataset) -> Self {
        let mut index = ConversationIndex::default();
        for (i, c) in dataset.conversations.iter().enumerate() {
            let entry = (i, c.id.clone(), c.n_turns());
            index
                .by_first_message
                .insert(c.first_user_message().to_string(), entry.clone());
            index
                .by_probe
                .entry(c.probe().to_string())
                .and_modify(|e| *e = None)
                .or_insert(Some(entry));
        }
        index
    }

    /// The conversation whose first user message is `first`: (index, id, turns).
    pub fn lookup(&self, first: &str) -> Option<(usize, &str, usize)> {
        self.by_first_message
            .get(first)
            .map(|(i, id, n)| (*i, id.as_str(), *n))
    }

    /// Recognises a request from its first user message and its number of
    /// user messages.
    pub fn recognise(&self, first_user: &str, user_messages: usize) -> Option<Recognised<'_>> {
        if let Some((index, id, _)) = self.by_first_message.get(first_user) {
            return Some(Recognised {
                index: *index,
                id,
                turn: user_messages,
            });
        }
        match self.by_probe.get(first_user) {
            Some(Some((index, id, n))) if user_messages == 1 => Some(Recognised {
                index: *index,
                id,
                turn: *n,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> Dataset {
        Dataset::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/datasets/continuity-150.jsonl"
        )))
        .unwrap()
    }

    #[test]
    fn recognises_turns_from_content() {
        let d = committed();
        let index = ConversationIndex::new(&d);
        let c = &d.conversations[7];
        let r = index.recognise(c.first_user_message(), 3).unwrap();
        assert_eq!((r.index, r.id, r.turn), (7, c.id.as_str(), 3));
        assert_eq!(index.recognise("an unrelated message", 1), None);
    }

    #[test]
    fn a_lone_probe_is_the_final_turn_without_history() {
        let d = committed();
        let index = ConversationIndex::new(&d);
        for (i, c) in d.conversations.iter().enumerate() {
            let r = index
                .recognise(c.probe(), 1)
                .expect("probes are unique in the committed dataset");
            assert_eq!((r.index, r.turn), (i, c.n_turns()));
            // With more user messages the probe is not the first one, so
            // it is not a lone probe.
            assert_eq!(index.recognise(c.probe(), 2), None);
        }
    }

    #[test]
    fn a_shared_probe_attributes_nothing() {
        let mut d = committed();
        let probe = d.conversations[0].probe().to_string();
        let last = d.conversations[1].turns.len() - 1;
        d.conversations[1].turns[last].user = probe.clone();
        let index = ConversationIndex::new(&d);
        assert_eq!(index.recognise(&probe, 1), None);
    }
}
