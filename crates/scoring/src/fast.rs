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
use cb_dataset::{Conversation, Dataset};
use std::collections::{BTreeSet, HashMap};

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

/// Every anchor of a dataset, for recognising context bleed.
#[derive(Debug, Clone, Default)]
pub struct AnchorIndex {
    /// Strong spellings of every anchor, with the conversation they belong to.
    phrases: Vec<(Vec<String>, String)>,
    /// Indices into `phrases` by first word.
    by_first: HashMap<String, Vec<usize>>,
}

impl AnchorIndex {
    /// Indexes the anchor value and variants (with their date and number
    /// spellings) of every conversation. Values shorter than three
    /// characters are left out: they occur in ordinary text.
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
            let forms = std::iter::once(anchor.value.as_str())
                .chain(anchor.variants.iter().map(String::as_str));
            for phrase in spellings(forms).strong {
                let i = index.phrases.len();
                index.by_first.entry(phrase[0].clone()).or_default().push(i);
                index.phrases.push((phrase, conversation.id.clone()));
            }
        }
        index
    }

    /// Number of indexed spellings.
    pub fn len(&self) -> usize {
        self.phrases.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty()
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

fn phrase_tokens(list: &[&str]) -> Vec<Vec<String>> {
    list.iter().map(|p| tokens(p)).collect()
}

fn contains_phrase(haystack: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && haystack.windows(phrase.len()).any(|w| w == phrase)
}

/// Ids of the other conversations whose anchor `answer` contains (and that
/// do not occur in this conversation's own history): context bleed, which
/// can show on any turn, not only the probe.
pub fn bleed_in(conversation: &Conversation, answer: &str, index: &AnchorIndex) -> Vec<String> {
    let words = tokens(answer);
    // Most answers hold no other conversation's anchor: without one there
    // is no bleed, and the hits (the own anchor's and the distractors'
    // spellings, the history's words) need not be built.
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
    let refusal = phrase_tokens(REFUSALS)
        .iter()
        .any(|p| contains_phrase(&words, p));
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

/// Every match of an anchor, weak anchor, distractor or foreign anchor in
/// `words`, without matches that lie inside a longer one ("2031" inside
/// "14 march 2031").
/// Whether `words` hold a phrase of another conversation's anchor: the
/// only source of a [`Kind::Foreign`] hit in [`find_hits`].
fn has_foreign_phrase(conversation: &Conversation, words: &[String], index: &AnchorIndex) -> bool {
    words.iter().enumerate().any(|(start, word)| {
        index.by_first.get(word).is_some_and(|candidates| {
            candidates.iter().any(|&i| {
                let (phrase, owner) = &index.phrases[i];
                *owner != conversation.id && words[start..].starts_with(phrase)
            })
        })
    })
}

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
    // output can equal, so phrases do not match across turns.
    let mut history: Vec<String> = Vec::new();
    for turn in &conversation.turns {
        for text in [
            Some(turn.user.as_str()),
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
    for (start, word) in words.iter().enumerate() {
        let Some(candidates) = index.by_first.get(word) else {
            continue;
        };
        for &i in candidates {
            let (phrase, owner) = &index.phrases[i];
            if *owner == conversation.id || !words[start..].starts_with(phrase) {
                continue;
            }
            let kind = if contains_phrase(&history, phrase) {
                Kind::Neutral
            } else {
                Kind::Foreign(owner.clone())
            };
            hits.push(Hit {
                start,
                len: phrase.len(),
                kind,
            });
        }
    }

    let inside_longer = |h: &Hit| {
        hits.iter()
            .any(|g| g.len > h.len && g.start <= h.start && h.start + h.len <= g.start + g.len)
    };
    hits.iter().filter(|h| !inside_longer(h)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_dataset::{Anchor, Category, Turn, TurnKind};
    use cb_testkit::conversation as kit;

    fn conv(
        id: &str,
        category: Category,
        value: &str,
        variants: &[&str],
        distractor: Option<&str>,
    ) -> Conversation {
        let mut all: Vec<String> = vec![value.to_string()];
        all.extend(variants.iter().map(|v| v.to_string()));
        let anchor = Anchor {
            category,
            subject: "the thing".into(),
            value: value.into(),
            variants: all,
        };
        let filler = match distractor {
            Some(d) => format!("Unrelated, but my colleague mentioned {d} today."),
            None => "How do I descale a kettle?".into(),
        };
        kit::conversation(
            id,
            anchor,
            vec![
                kit::turn(
                    TurnKind::Anchor,
                    format!("Please remember: the thing is {value}."),
                    Some("Noted."),
                ),
                Turn {
                    distractor: distractor.map(String::from),
                    ..kit::turn(
                        TurnKind::Filler,
                        filler,
                        Some("Use vinegar and rinse well."),
                    )
                },
                kit::turn(TurnKind::Probe, "What was the thing again?", None),
            ],
        )
    }

    fn dataset() -> Dataset {
        Dataset {
            conversations: vec![
                conv("c001", Category::PersonName, "Oriane", &[], Some("Maya")),
                conv(
                    "c002",
                    Category::Date,
                    "2031-03-14",
                    &["14 March 2031", "March 14, 2031"],
                    Some("9 May 2031"),
                ),
                conv(
                    "c003",
                    Category::Number,
                    "48",
                    &["forty-eight"],
                    Some("three hundred and twelve"),
                ),
                conv("c004", Category::PersonName, "Ann", &[], None),
                conv("c005", Category::Number, "4817", &[], None),
                conv("c006", Category::Place, "Tromsø", &[], Some("Bergen")),
                conv("c007", Category::InventedWord, "Vellinor", &[], None),
                conv("c008", Category::Number, "17", &[], None),
                conv("c009", Category::Number, "2031", &[], None),
                conv(
                    "c010",
                    Category::Date,
                    "2031-03-04",
                    &["4 March 2031"],
                    None,
                ),
            ],
        }
    }

    fn score(id: &str, answer: &str) -> Scored {
        let ds = dataset();
        let index = AnchorIndex::new(&ds);
        let c = ds.conversations.iter().find(|c| c.id == id).unwrap();
        score_fast(c, Some(answer), &index)
    }

    fn verdict(id: &str, answer: &str) -> Verdict {
        let s = score(id, answer);
        assert_eq!(s.method, VerdictMethod::FastPath);
        s.verdict
    }

    use Verdict::{Error, Lost, Preserved, Undetermined};

    #[test]
    fn exact_value_is_preserved() {
        let s = score("c001", "Your sister is called Oriane.");
        assert_eq!(s.verdict, Preserved, "{s:?}");
        assert!(s.bleed_from.is_empty());
        assert_eq!(
            verdict("c001", "Oriane's birthday is coming up, you said."),
            Preserved
        );
    }

    #[test]
    fn unrelated_answer_is_undetermined() {
        assert_eq!(
            verdict("c001", "Your sister is called Orianne."),
            Undetermined
        );
        assert_eq!(verdict("c001", "Let me help you with that."), Undetermined);
    }

    #[test]
    fn case_and_nfkc() {
        assert_eq!(verdict("c001", "ORIANE"), Preserved);
        assert_eq!(verdict("c005", "The locker code is ４８１７."), Preserved);
        assert_eq!(verdict("c005", "The locker code is 4,817."), Preserved);
        assert_eq!(verdict("c006", "You grew up in TROMSØ."), Preserved);
        assert_eq!(verdict("c005", "The locker code is 4818."), Undetermined);
    }

    #[test]
    fn whole_words_only() {
        assert_eq!(verdict("c008", "You have 17 plants."), Preserved);
        assert_eq!(verdict("c008", "That was back in 2017."), Undetermined);
        assert_eq!(verdict("c004", "Your friend is Ann."), Preserved);
        assert_eq!(verdict("c004", "Your friend is Annabel."), Undetermined);
    }

    #[test]
    fn dataset_variants_and_date_formats() {
        for answer in [
            "The recital is on 14 March 2031.",
            "The recital is on March 14, 2031.",
            "It is 2031-03-14.",
            "It's on the 14th of March, 2031.",
            "It's on 14/03/2031.",
            "It's on 03/14/2031.",
            "Friday, Mar 14 2031.",
        ] {
            assert_eq!(verdict("c002", answer), Preserved, "{answer}");
        }
        // Without the year, or numerically ambiguous: not confirmed.
        assert_eq!(verdict("c002", "The recital is on 14 March."), Undetermined);
        assert_eq!(verdict("c010", "It's on 04/03/2031."), Undetermined);
        assert_eq!(verdict("c010", "It's on 4 March 2031."), Preserved);
        // A different date is not a match.
        assert_eq!(verdict("c002", "It is on 15 March 2031."), Undetermined);
    }

    #[test]
    fn numbers_in_words() {
        assert_eq!(verdict("c003", "You need forty-eight chairs."), Preserved);
        assert_eq!(verdict("c003", "You need forty eight chairs."), Preserved);
        assert_eq!(verdict("c003", "You need 48 chairs."), Preserved);
        assert_eq!(verdict("c005", "It is four eight one seven."), Preserved);
        assert_eq!(
            verdict("c005", "Four thousand eight hundred and seventeen."),
            Preserved
        );
        assert_eq!(verdict("c003", "You need forty chairs."), Undetermined);
    }

    #[test]
    fn another_conversations_anchor_is_bleed() {
        let s = score("c001", "Your boat is called Vellinor.");
        assert_eq!(s.verdict, Lost);
        assert_eq!(s.bleed_from, vec!["c007".to_string()]);
        // Even with the right value present.
        let s = score("c001", "Oriane. Also, your boat Vellinor and code 4817.");
        assert_eq!(s.verdict, Lost);
        assert_eq!(s.bleed_from, vec!["c005".to_string(), "c007".to_string()]);
    }

    #[test]
    fn no_bleed_without_a_foreign_anchor() {
        // "2031" is c009's anchor but here it is part of c002's own date.
        let s = score("c002", "The recital is on 14 March 2031.");
        assert_eq!(s.verdict, Preserved);
        assert!(s.bleed_from.is_empty());
        // Short anchors ("17") are not bleed evidence.
        assert_eq!(
            score("c001", "Oriane turns 17 soon.").bleed_from,
            Vec::<String>::new()
        );
        // A foreign value that occurs in this conversation's own history.
        let mut ds = dataset();
        ds.conversations[0].turns[1].user = "We watched Vellinor, a film.".into();
        let index = AnchorIndex::new(&ds);
        let s = score_fast(&ds.conversations[0], Some("You watched Vellinor."), &index);
        assert_eq!(s.verdict, Undetermined, "{s:?}");
        assert!(s.bleed_from.is_empty());
    }

    #[test]
    fn refusals_are_lost() {
        for answer in [
            "I don't know what your sister is called.",
            "I do not know.",
            "You haven't told me her name.",
            "I don't have that information.",
            "I don't recall you mentioning that.",
            "I’m afraid I have no idea.",
        ] {
            let s = score("c001", answer);
            assert_eq!(s.verdict, Lost, "{answer}: {s:?}");
        }
        // A refusal next to something that may be the date is not decided.
        assert_eq!(
            verdict("c002", "I don't know the year, only 14 March."),
            Undetermined
        );
    }

    #[test]
    fn distractor_instead_of_anchor_is_lost() {
        assert_eq!(verdict("c001", "Your sister is called Maya."), Lost);
        assert_eq!(verdict("c001", "Maybe Maya."), Lost);
        assert_eq!(verdict("c002", "The recital is on 9 May 2031."), Lost);
        // The distractor in another spelling than the history used.
        assert_eq!(verdict("c002", "The recital is on May 9th, 2031."), Lost);
        assert_eq!(verdict("c003", "You need 312 chairs."), Lost);
        assert_eq!(verdict("c006", "You grew up in Bergen."), Lost);
        // Negated distractor, or both values: not decided.
        assert_eq!(verdict("c001", "It is not Maya."), Undetermined);
        assert_eq!(verdict("c001", "Oriane, not Maya."), Undetermined);
        assert_eq!(
            verdict("c001", "Your sister is Oriane and your colleague is Maya."),
            Undetermined
        );
    }

    #[test]
    fn hedges_and_negations_are_undetermined() {
        for answer in [
            "I don't know, maybe Oriane?",
            "It is not Oriane.",
            "I'm not sure. It's Oriane.",
            "Oriane?",
            "I think it's Oriane.",
            "Oriane or Orianne.",
        ] {
            assert_eq!(verdict("c001", answer), Undetermined, "{answer}");
        }
        assert_eq!(verdict("c001", "I'm not sure."), Undetermined);
    }

    #[test]
    fn empty_answers_are_errors() {
        let ds = dataset();
        let index = AnchorIndex::new(&ds);
        let c = &ds.conversations[0];
        for answer in [None, Some(""), Some("  \n\t")] {
            let s = score_fast(c, answer, &index);
            assert_eq!(s.verdict, Error);
            assert_eq!(s.method, VerdictMethod::FastPath);
        }
        assert_eq!(score_fast(c, Some("..."), &index).verdict, Undetermined);
    }

    #[test]
    fn index_leaves_out_short_values() {
        let ds = dataset();
        let index = AnchorIndex::new(&ds);
        assert!(!index.is_empty());
        assert!(index
            .phrases
            .iter()
            .all(|(_, id)| id != "c003" && id != "c008"));
        assert!(index.phrases.iter().any(|(_, id)| id == "c004"));
    }
}
