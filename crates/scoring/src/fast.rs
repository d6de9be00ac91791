//! The fast-path scorer: decides from the text alone what it safely can, and
//! leaves the rest `undetermined` for a judge.
//!
//! It must never decide wrongly, so every conclusion needs positive evidence:
//! `preserved` needs the expected value (or a strong spelling of it) and no
//! sign of doubt or negation anywhere in the answer; `lost` needs another
//! conversation's anchor (context bleed), a refusal, or a distractor named
//! instead of the anchor, with nothing that may be the anchor in a form the
//! matcher cannot confirm. Everything else is `undetermined`.

use super::normalize::{spellings, tokens};
use super::{Scored, Verdict, VerdictMethod};
use cb_base::fingerprint::{Fingerprint, FingerprintMap};
use cb_dataset::{Conversation, Dataset};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Anchor values shorter than this many characters (after normalisation) are
/// not used to detect context bleed: "17" or "Jo" occur in ordinary text.
const MIN_BLEED_CHARS: usize = 3;

use cb_dataset::lexicon::{HEDGES, NEGATIONS};

/// Phrases that say the assistant does not have the fact.
const REFUSALS: &[&str] = &[
    "i do not know",
    "i dont know",
    "i dunno",
    "no idea",
    "do not have that information",
    "do not have this information",
    "do not have any information",
    "do not have information",
    "do not have access",
    "dont have that information",
    "have no information",
    "have no record",
    "no record of",
    "you have not told",
    "you havent told",
    "you have not mentioned",
    "you have not said",
    "you have not shared",
    "you have not provided",
    "you did not tell",
    "you did not mention",
    "you did not say",
    "you did not share",
    "you did not provide",
    "you never told",
    "you never mentioned",
    "you never said",
    "you never shared",
    "not mentioned",
    "i do not recall",
    "i can not recall",
    "i dont recall",
    "i do not remember",
    "i can not remember",
    "i dont remember",
    "unable to recall",
    "unable to remember",
    "no way of knowing",
    "no way to know",
    "i can not know",
    "do not have memory",
    "no memory of",
];

/// Every anchor of a dataset, for recognising context bleed: each strong
/// spelling looked up by its whole word sequence, so that checking an
/// answer costs a few hash lookups per word whatever the dataset's size
/// (bucketing by first word made every "the" of an answer walk a sixth of
/// all anchors, since every date has a spelling starting with it).
///
/// Spellings and first words are kept as fingerprints
/// ([`cb_base::fingerprint`]), not as text: at 100,000 conversations the
/// copies were most of the index.
#[derive(Debug, Clone, Default)]
pub struct AnchorIndex {
    /// Per strong spelling of one conversation only (the usual case), that
    /// conversation, as an index into `ids`.
    owner: FingerprintMap<u32>,
    /// Per strong spelling of several conversations, all of them in dataset
    /// order (such a spelling is not in `owner`).
    owners: FingerprintMap<Vec<u32>>,
    /// Per first word of a spelling, the word counts of the spellings that
    /// start with it: bit `n - 1` for `n` words. Most words of an answer
    /// start none, and cost one lookup.
    lengths: FingerprintMap<u64>,
    /// The same for spellings of more than 64 words, ascending (none in a
    /// generated dataset).
    long: FingerprintMap<Vec<usize>>,
    /// The id of each conversation with a spelling indexed.
    ids: Vec<Box<str>>,
    /// Spellings indexed (one per conversation and spelling).
    count: usize,
}

/// Word counts a [`AnchorIndex::lengths`] mask holds.
const MASK_WORDS: usize = 64;

impl AnchorIndex {
    /// Indexes the anchor value and variants (with their date and number
    /// spellings) of every conversation. Values shorter than three
    /// characters are left out: they occur in ordinary text.
    ///
    /// # Panics
    /// With more than `u32::MAX` conversations.
    pub fn new(dataset: &Dataset) -> Self {
        let mut index = AnchorIndex::default();
        for conversation in &dataset.conversations {
            let anchor = &conversation.anchor;
            let chars: usize = tokens(&anchor.value)
                .iter()
                .map(|w| w.chars().count())
                .sum();
            if chars < MIN_BLEED_CHARS {
                continue;
            }
            let owner = u32::try_from(index.ids.len()).expect("at most u32::MAX conversations");
            index.ids.push(conversation.id.as_str().into());
            let forms = std::iter::once(anchor.value.as_str())
                .chain(anchor.variants.iter().map(String::as_str));
            for phrase in spellings(forms).strong {
                debug_assert!(phrase.iter().all(|w| !w.contains(' ')), "{phrase:?}");
                index.add_length(Fingerprint::of(&phrase[0]), phrase.len());
                let key = Fingerprint::of_words(phrase.iter().map(String::as_str));
                if let Some(owners) = index.owners.get_mut(&key) {
                    owners.push(owner);
                } else if let Some(first) = index.owner.remove(&key) {
                    index.owners.insert(key, vec![first, owner]);
                } else {
                    index.owner.insert(key, owner);
                }
                index.count += 1;
            }
        }
        index.owner.shrink_to_fit();
        index.owners.shrink_to_fit();
        index.lengths.shrink_to_fit();
        index.long.shrink_to_fit();
        index.ids.shrink_to_fit();
        index
    }

    /// Notes that a spelling of `words` words starts with the word whose
    /// fingerprint is `first`.
    fn add_length(&mut self, first: Fingerprint, words: usize) {
        if (1..=MASK_WORDS).contains(&words) {
            *self.lengths.entry(first).or_default() |= 1 << (words - 1);
        } else {
            let lengths = self.long.entry(first).or_default();
            if let Err(at) = lengths.binary_search(&words) {
                lengths.insert(at, words);
            }
        }
    }

    /// Number of indexed spellings.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Every indexed spelling that starts at `words[start]`: its length and
    /// the conversations it belongs to (see [`AnchorIndex::id`]), shortest
    /// first.
    fn at(&self, words: &[String], start: usize) -> Vec<(usize, &[u32])> {
        let left = words.len() - start;
        let first = Fingerprint::of(&words[start]);
        let mask = self.lengths.get(&first).copied().unwrap_or(0);
        let long = self.long.get(&first).map_or(&[][..], Vec::as_slice);
        if mask == 0 && long.is_empty() {
            return Vec::new();
        }
        // The set bits of the mask, lowest first, then the long ones.
        let lengths = std::iter::successors((mask != 0).then_some(mask), |m| {
            let rest = m & (m - 1);
            (rest != 0).then_some(rest)
        })
        .map(|m| m.trailing_zeros() as usize + 1)
        .chain(long.iter().copied());
        let mut found = Vec::new();
        for len in lengths.take_while(|&len| len <= left) {
            let key = Fingerprint::of_words(words[start..start + len].iter().map(String::as_str));
            if let Some(owner) = self.owner.get(&key) {
                found.push((len, std::slice::from_ref(owner)));
            } else if let Some(owners) = self.owners.get(&key) {
                found.push((len, owners.as_slice()));
            }
        }
        found
    }

    /// The id of the conversation `owner` of [`AnchorIndex::at`].
    fn id(&self, owner: u32) -> &str {
        &self.ids[owner as usize]
    }
}

/// What a stretch of the answer matched.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A strong spelling of this conversation's anchor.
    Anchor,
    /// A weak spelling of this conversation's anchor.
    MaybeAnchor,
    /// One of this conversation's distractors.
    Distractor(String),
    /// Another conversation's anchor (context bleed).
    Foreign(String),
    /// Another conversation's anchor that also occurs in this conversation's
    /// own history, so naming it is no evidence of bleed.
    Neutral,
}

#[derive(Debug, Clone)]
struct Hit {
    start: usize,
    len: usize,
    kind: Kind,
}

fn scored(verdict: Verdict, reason: impl Into<String>, bleed_from: Vec<String>) -> Scored {
    Scored {
        verdict,
        method: VerdictMethod::FastPath,
        reason: reason.into(),
        bleed_from,
    }
}

/// [`REFUSALS`] as normalised words, tokenised once.
fn refusal_phrases() -> &'static [Vec<String>] {
    static PHRASES: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    PHRASES.get_or_init(|| REFUSALS.iter().map(|p| tokens(p)).collect())
}

fn contains_phrase(haystack: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && haystack.windows(phrase.len()).any(|w| w == phrase)
}

/// Ids of the other conversations whose anchor `answer` contains (and that
/// do not occur in this conversation's own history): context bleed, which
/// can show on any turn, not only the probe.
pub fn bleed_in(conversation: &Conversation, answer: &str, index: &AnchorIndex) -> Vec<String> {
    let words = tokens(answer);
    // No other conversation's anchor phrase, no bleed: skip the hits.
    if !has_foreign_phrase(conversation, &words, index) {
        return Vec::new();
    }
    let ids: BTreeSet<String> = find_hits(conversation, &words, index)
        .into_iter()
        .filter_map(|h| match h.kind {
            Kind::Foreign(id) => Some(id),
            _ => None,
        })
        .collect();
    ids.into_iter().collect()
}

/// Scores `answer` (None when the request failed) for `conversation`.
///
/// - no answer, or only whitespace: `error`;
/// - another conversation's anchor in the answer (and not in this
///   conversation's own history): `lost`, with `bleed_from` naming them,
///   whether or not the right value also appears;
/// - the expected value, with no distractor, refusal, negation, hedge or
///   question mark anywhere in the answer: `preserved`;
/// - no trace of the expected value (not even a date without its year or a
///   numeric date that could be read two ways) and either a distractor named
///   without negation or a refusal: `lost`;
/// - anything else: `undetermined`.
pub fn score_fast(
    conversation: &Conversation,
    answer: Option<&str>,
    index: &AnchorIndex,
) -> Scored {
    let Some(answer) = answer.filter(|a| !a.trim().is_empty()) else {
        return scored(Verdict::Error, "no answer text", Vec::new());
    };
    let words = tokens(answer);
    if words.is_empty() {
        return scored(Verdict::Undetermined, "answer has no words", Vec::new());
    }

    let hits = find_hits(conversation, &words, index);
    let bleed: BTreeSet<String> = hits
        .iter()
        .filter_map(|h| match &h.kind {
            Kind::Foreign(id) => Some(id.clone()),
            _ => None,
        })
        .collect();
    if !bleed.is_empty() {
        let ids: Vec<String> = bleed.into_iter().collect();
        return scored(
            Verdict::Lost,
            format!(
                "context bleed: answer contains the anchor of {}",
                ids.join(", ")
            ),
            ids,
        );
    }

    let anchor = hits.iter().any(|h| h.kind == Kind::Anchor);
    let maybe_anchor = hits.iter().any(|h| h.kind == Kind::MaybeAnchor);
    let distractor = hits.iter().find_map(|h| match &h.kind {
        Kind::Distractor(d) => Some(d.clone()),
        _ => None,
    });
    let refusal = refusal_phrases().iter().any(|p| contains_phrase(&words, p));
    let negation = words.iter().any(|w| NEGATIONS.contains(&w.as_str()));
    let hedge = words.iter().any(|w| HEDGES.contains(&w.as_str()));
    let question = answer.contains(['?', '？', '¿']);
    let value = &conversation.anchor.value;

    if anchor {
        if let Some(d) = distractor {
            return scored(
                Verdict::Undetermined,
                format!("answer names both the expected value {value:?} and the distractor {d:?}"),
                Vec::new(),
            );
        }
        if refusal || negation || hedge || question {
            return scored(
                Verdict::Undetermined,
                format!("answer names the expected value {value:?} but negates, hedges or asks"),
                Vec::new(),
            );
        }
        return scored(
            Verdict::Preserved,
            format!("answer names the expected value {value:?}"),
            Vec::new(),
        );
    }
    if maybe_anchor {
        return scored(
            Verdict::Undetermined,
            format!("answer may name {value:?} in a partial or ambiguous form"),
            Vec::new(),
        );
    }
    if let Some(d) = distractor {
        if !negation {
            return scored(
                Verdict::Lost,
                format!("answer names the distractor {d:?} instead of {value:?}"),
                Vec::new(),
            );
        }
    }
    if refusal {
        return scored(
            Verdict::Lost,
            format!("answer says it does not have the fact ({value:?} expected)"),
            Vec::new(),
        );
    }
    scored(
        Verdict::Undetermined,
        format!("answer does not contain {value:?} in a recognised form"),
        Vec::new(),
    )
}

/// Whether `words` hold another conversation's anchor phrase.
fn has_foreign_phrase(conversation: &Conversation, words: &[String], index: &AnchorIndex) -> bool {
    (0..words.len()).any(|start| {
        index
            .at(words, start)
            .iter()
            .any(|(_, owners)| owners.iter().any(|&o| index.id(o) != conversation.id))
    })
}

/// Every match of an anchor, weak anchor, distractor or foreign anchor in
/// `words`, without matches that lie inside a longer one ("2031" inside
/// "14 march 2031").
fn find_hits(conversation: &Conversation, words: &[String], index: &AnchorIndex) -> Vec<Hit> {
    let anchor = &conversation.anchor;
    let own = spellings(
        std::iter::once(anchor.value.as_str()).chain(anchor.variants.iter().map(String::as_str)),
    );
    let mut hits = Vec::new();
    let add = |phrase: &[String], kind: Kind, hits: &mut Vec<Hit>| {
        for start in super::normalize::find_phrase(words, phrase) {
            hits.push(Hit {
                start,
                len: phrase.len(),
                kind: kind.clone(),
            });
        }
    };
    for p in &own.strong {
        add(p, Kind::Anchor, &mut hits);
    }
    for p in &own.weak {
        add(p, Kind::MaybeAnchor, &mut hits);
    }
    for d in conversation.distractors() {
        for p in spellings([d]).strong {
            if !own.strong.contains(&p) {
                add(&p, Kind::Distractor(d.to_string()), &mut hits);
            }
        }
    }

    // The conversation's own text, turns separated by a word no tokenizer
    // output can equal, so phrases do not match across turns. Tokenised only
    // when a foreign anchor turns up: most answers carry none, and the
    // history is the longest text the scorer reads.
    let mut history: Option<Vec<String>> = None;
    let history_of = |conversation: &Conversation| {
        let mut history: Vec<String> = Vec::new();
        for turn in &conversation.turns {
            for text in [
                Some(&*turn.user),
                turn.assistant.as_deref(),
                turn.distractor.as_deref(),
            ]
            .into_iter()
            .flatten()
            {
                history.extend(tokens(text));
                history.push("\u{0}".into());
            }
        }
        history
    };
    for start in 0..words.len() {
        for (len, owners) in index.at(words, start) {
            for owner in owners
                .iter()
                .map(|&o| index.id(o))
                .filter(|&id| id != conversation.id)
            {
                let history = history.get_or_insert_with(|| history_of(conversation));
                let kind = if contains_phrase(history, &words[start..start + len]) {
                    Kind::Neutral
                } else {
                    Kind::Foreign(owner.to_string())
                };
                hits.push(Hit { start, len, kind });
            }
        }
    }

    let inside_longer = |h: &Hit| {
        hits.iter()
            .any(|g| g.len > h.len && g.start <= h.start && h.start + h.len <= g.start + g.len)
    };
    hits.iter().filter(|h| !inside_longer(h)).cloned().collect()
}

#[cfg(test)]
mod tests;
