//! Recognising which conversation and turn a request belongs to, from its
//! content alone.
//!
//! The first user message names the conversation (first messages are unique
//! in a dataset) and the last user message places the turn: the turn whose
//! message it is, when the entry lists its turns, so that a request whose
//! history a gateway cut (a trimmed window, turns dropped after a
//! failover) is still placed at the client's turn and gets that turn's
//! fault; otherwise the number of user messages is the turn. A request whose
//! only user message is a conversation's probe is that conversation's final
//! turn sent without its history, as a gateway that drops history sends it;
//! probes are unique in a generated dataset so that such an attempt is still
//! attributed. A probe shared by several conversations attributes nothing.
//! In a conversation with later probes ([`cb_dataset::later`]), a request
//! whose first user message is gone (a message sent alone, a window
//! trimmed from the front) is placed by a fingerprint of its last user
//! message, when that text belongs to one turn of the dataset only.
//!
//! The index is built from plain entries (id, first user message, probe,
//! turns), so any suite can make its requests recognisable without a
//! dataset.

use cb_base::fingerprint::{Fingerprint, FingerprintMap};
use cb_dataset::Dataset;
use cb_wire::openai::ChatRequest;

/// One conversation the upstreams should recognise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry<'a> {
    /// Its id, as attempts are logged under.
    pub id: &'a str,
    /// Its first user message.
    pub first_user_message: &'a str,
    /// Its final user message (the probe).
    pub probe: &'a str,
    /// Its number of turns.
    pub turns: usize,
    /// Its turns, to place a request by its last user message; empty when
    /// unknown (the count of user messages is the turn).
    pub script: &'a [cb_dataset::Turn],
}

/// The entries of every conversation of a dataset, in order.
pub fn dataset_entries(dataset: &Dataset) -> impl Iterator<Item = IndexEntry<'_>> {
    dataset.conversations.iter().map(|c| IndexEntry {
        id: &c.id,
        first_user_message: c.first_user_message(),
        probe: c.probe(),
        turns: c.n_turns(),
        script: &c.turns,
    })
}

/// A short fingerprint of a user message, to place a turn of a known
/// conversation by its text (4 bytes a turn, whatever the dataset's size).
fn fingerprint(text: &str) -> u32 {
    Fingerprint::of(text).short()
}

/// What the upstreams need of one conversation: its id and its number of
/// turns.
#[derive(Debug, Clone)]
struct Known {
    id: Box<str>,
    turns: u32,
}

/// What the index recognised in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recognised<'a> {
    /// Index of the conversation among the entries.
    pub index: usize,
    /// Its id.
    pub id: &'a str,
    /// The turn the request is for, from 1.
    pub turn: usize,
}

/// First user message (and lone probe) -> conversation.
///
/// Texts are kept as fingerprints ([`cb_base::fingerprint`]), not copies:
/// the index costs about 150 bytes a conversation instead of a copy of
/// each first message and probe (and about 35 bytes more a turn in a
/// conversation with later probes, whose every message is indexed).
#[derive(Debug, Clone, Default)]
pub struct ConversationIndex {
    /// Per conversation index, its id and number of turns.
    known: Vec<Known>,
    /// The fingerprint of a first user message -> conversation index.
    by_first_message: FingerprintMap<u32>,
    /// The fingerprint of a probe -> conversation index; `None` when
    /// several conversations share the probe.
    by_probe: FingerprintMap<Option<u32>>,
    /// Per conversation index, the fingerprints of its turns' user
    /// messages, in order (empty when the entry listed none).
    turn_prints: Vec<Box<[u32]>>,
    /// A lone user message of a conversation with later probes, by the
    /// fingerprint of its text: (conversation index, turn); `None` when
    /// several turns share it.
    by_lone: FingerprintMap<Option<(u32, u32)>>,
}

impl ConversationIndex {
    /// Indexes `entries`; the k-th entry is conversation index k.
    ///
    /// # Panics
    /// With more than `u32::MAX` + 1 entries, or an entry of more than
    /// `u32::MAX` turns.
    pub fn new<'a>(entries: impl IntoIterator<Item = IndexEntry<'a>>) -> Self {
        let mut index = ConversationIndex::default();
        for (i, e) in entries.into_iter().enumerate() {
            let at = u32::try_from(i).expect("at most u32::MAX conversations");
            let turns = u32::try_from(e.turns).expect("at most u32::MAX turns");
            index.known.push(Known {
                id: e.id.into(),
                turns,
            });
            index
                .by_first_message
                .insert(Fingerprint::of(e.first_user_message), at);
            index
                .by_probe
                .entry(Fingerprint::of(e.probe))
                .and_modify(|e| *e = None)
                .or_insert(Some(at));
            index
                .turn_prints
                .push(e.script.iter().map(|t| fingerprint(&t.user)).collect());
            let later = e
                .script
                .iter()
                .rev()
                .skip(1)
                .any(|t| t.kind == cb_dataset::TurnKind::Probe);
            if later {
                for (k, t) in (1..).zip(e.script) {
                    index
                        .by_lone
                        .entry(Fingerprint::of(&t.user))
                        .and_modify(|e| *e = None)
                        .or_insert(Some((at, k)));
                }
            }
        }
        index.known.shrink_to_fit();
        index.turn_prints.shrink_to_fit();
        index
    }

    /// The recognised conversation `at`, at `turn`.
    fn recognised(&self, at: u32, turn: usize) -> Recognised<'_> {
        Recognised {
            index: at as usize,
            id: &self.known[at as usize].id,
            turn,
        }
    }

    /// The turn (from 1) of conversation `index` whose user message is
    /// `last`: the one nearest `counted` (the count of user messages) when
    /// the text repeats; `counted` when the conversation's turns are not
    /// known or none has this text.
    fn place(&self, index: usize, last: Option<&str>, counted: usize) -> usize {
        let (Some(prints), Some(last)) = (self.turn_prints.get(index), last) else {
            return counted;
        };
        let print = fingerprint(last);
        prints
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == print)
            .map(|(k, _)| k + 1)
            .min_by_key(|k| k.abs_diff(counted))
            .unwrap_or(counted)
    }

    /// Number of conversations indexed.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no conversation is indexed.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// Indexes every conversation of `dataset`.
    pub fn of_dataset(dataset: &Dataset) -> Self {
        Self::new(dataset_entries(dataset))
    }

    /// The conversation whose first user message is `first`: (index, id, turns).
    pub fn lookup(&self, first: &str) -> Option<(usize, &str, usize)> {
        let at = *self.by_first_message.get(&Fingerprint::of(first))?;
        let known = &self.known[at as usize];
        Some((at as usize, &known.id, known.turns as usize))
    }

    /// Recognises a request from its first user message and its number of
    /// user messages.
    pub fn recognise(&self, first_user: &str, user_messages: usize) -> Option<Recognised<'_>> {
        self.recognise_at(first_user, None, user_messages)
    }

    /// [`ConversationIndex::recognise`], placing the turn by the last user
    /// message `last` when the conversation's turns are known.
    pub fn recognise_at(
        &self,
        first_user: &str,
        last: Option<&str>,
        user_messages: usize,
    ) -> Option<Recognised<'_>> {
        let first = Fingerprint::of(first_user);
        if let Some(&at) = self.by_first_message.get(&first) {
            let turn = self.place(at as usize, last, user_messages);
            return Some(self.recognised(at, turn));
        }
        if user_messages == 1 {
            if let Some(Some(at)) = self.by_probe.get(&first) {
                let turns = self.known[*at as usize].turns as usize;
                return Some(self.recognised(*at, turns));
            }
        }
        // The first message is gone (a lone message, a window trimmed from
        // the front): a conversation with later probes is still placed by
        // its last user message.
        let last = last.unwrap_or(first_user);
        let (at, turn) = (*self.by_lone.get(&Fingerprint::of(last))?)?;
        Some(self.recognised(at, turn as usize))
    }

    /// Who sent a body its dialect refused: the user messages read
    /// leniently from an OpenAI or Anthropic `messages` list or a Gemini
    /// `contents` list (a message's text, or its text blocks or parts
    /// joined; one holding only tool results or function responses is not a
    /// user turn), recognised as [`ConversationIndex::identify`] does.
    pub fn identify_raw(&self, body: &[u8]) -> Identity {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let list = value
            .get("messages")
            .or_else(|| value.get("contents"))
            .and_then(|l| l.as_array());
        let texts: Vec<String> = list
            .into_iter()
            .flatten()
            .filter(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))
            .filter_map(|m| {
                let content = m.get("content").or_else(|| m.get("parts"))?;
                if let Some(text) = content.as_str() {
                    return Some(text.to_string());
                }
                let parts: Vec<&str> = content
                    .as_array()?
                    .iter()
                    .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                    .collect();
                (!parts.is_empty()).then(|| parts.concat())
            })
            .collect();
        let first = texts.first().map(String::as_str);
        let last = texts.last().map(String::as_str);
        self.identity(first, last, texts.len())
    }

    /// The identity of a request whose user messages are `count`, the
    /// first and the last of them as given.
    fn identity(&self, first: Option<&str>, last: Option<&str>, count: usize) -> Identity {
        match first.and_then(|f| self.recognise_at(f, last, count)) {
            Some(r) => Identity {
                conversation: Some(r.index),
                id: r.id.to_string(),
                turn: r.turn as u32,
            },
            None => Identity {
                conversation: None,
                id: String::new(),
                turn: count as u32,
            },
        }
    }

    /// Who is asking: the conversation and turn of `request`, recognised
    /// from its content. An unrecognised request keeps its count of user
    /// messages as its turn.
    pub fn identify(&self, request: &ChatRequest) -> Identity {
        let turn = request.messages.iter().filter(|m| m.role == "user").count();
        let mut users = request.messages.iter().filter(|m| m.role == "user");
        let first = users.next().map(|m| m.text_cow());
        let last = users.next_back().map(|m| m.text_cow());
        let last = last.as_deref().or(first.as_deref());
        self.identity(first.as_deref(), last, turn)
    }
}

/// The conversation and turn a request was recognised as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// Index of the conversation, if recognised.
    pub conversation: Option<usize>,
    /// Its id (empty when unrecognised).
    pub id: String,
    /// The turn, from 1.
    pub turn: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> Dataset {
        Dataset::builtin_default()
    }

    #[test]
    fn recognises_turns_from_content() {
        let d = committed();
        let index = ConversationIndex::of_dataset(&d);
        let c = &d.conversations[7];
        let r = index.recognise(c.first_user_message(), 3).unwrap();
        assert_eq!((r.index, r.id, r.turn), (7, c.id.as_str(), 3));
        assert_eq!(index.recognise("an unrelated message", 1), None);
    }

    #[test]
    fn a_request_whose_history_was_cut_is_placed_at_its_last_user_message() {
        let d = committed();
        let index = ConversationIndex::of_dataset(&d);
        let c = &d.conversations[3];
        let user = |k: usize| cb_wire::openai::ChatMessage::new("user", &c.turns[k].user);
        // Turns 1, 2 and 6 of the client's turn 6: turns 3 to 5 dropped.
        let request = ChatRequest {
            model: String::new(),
            messages: vec![user(0), user(1), user(5)],
            stream: false,
            stream_options: None,
            extra: serde_json::Map::new(),
        };
        let who = index.identify(&request);
        assert_eq!((who.conversation, who.turn), (Some(3), 6));
        // A last message the conversation does not have: the count.
        let mut other = request.clone();
        other.messages[2] = cb_wire::openai::ChatMessage::new("user", "something else");
        assert_eq!(index.identify(&other).turn, 3);
        // An index without the turns counts, as before.
        let bare = ConversationIndex::new([IndexEntry {
            script: &[],
            ..dataset_entries(&d).nth(3).unwrap()
        }]);
        assert_eq!(bare.identify(&request).turn, 3);
    }

    #[test]
    fn a_lone_message_of_a_conversation_with_later_probes_is_placed() {
        let d = Dataset::parse(
            cb_dataset::BUILTIN_DATASETS[2].text,
            std::path::Path::new(cb_dataset::OUTAGE_DATASET),
        )
        .unwrap();
        let index = ConversationIndex::of_dataset(&d);
        for (i, c) in d.conversations.iter().enumerate().take(20) {
            for turn in [3, 4, 5, 6] {
                let r = index.recognise(&c.turns[turn - 1].user, 1).unwrap();
                assert_eq!((r.index, r.id, r.turn), (i, c.id.as_str(), turn));
            }
        }
        // The default dataset's fillers repeat across conversations and
        // place nothing.
        let plain = ConversationIndex::of_dataset(&committed());
        let c = &committed().conversations[0];
        assert_eq!(plain.recognise(&c.turns[1].user, 1), None);
    }

    #[test]
    fn a_refused_body_is_still_placed_in_any_dialect() {
        let d = committed();
        let index = ConversationIndex::of_dataset(&d);
        let c = &d.conversations[5];
        let (first, third) = (&c.turns[0].user, &c.turns[2].user);
        let anthropic = serde_json::json!({"messages": [
            {"role": "user", "content": first},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "bad:id", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "bad:id", "content": "x"}]},
            {"role": "user", "content": [{"type": "text", "text": third}]},
        ]});
        let gemini = serde_json::json!({"contents": [
            {"role": "user", "parts": [{"text": first}]},
            {"role": "user", "parts": [{"text": third}]},
        ]});
        for body in [anthropic, gemini] {
            let who = index.identify_raw(body.to_string().as_bytes());
            assert_eq!((who.conversation, who.turn), (Some(5), 3), "{body}");
        }
        let nobody = index.identify_raw(b"not json");
        assert_eq!((nobody.conversation, nobody.turn), (None, 0));
    }

    #[test]
    fn a_lone_probe_is_the_final_turn_without_history() {
        let d = committed();
        let index = ConversationIndex::of_dataset(&d);
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
        d.conversations[1].turns[last].user = probe.as_str().into();
        let index = ConversationIndex::of_dataset(&d);
        assert_eq!(index.recognise(&probe, 1), None);
    }
}
