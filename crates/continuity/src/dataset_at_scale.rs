//! Tests over whole generated datasets, curated and composed: the invariants
//! every run relies on, and the end-to-end contract between the generator,
//! the simulated model and the fast-path scorer, checked on every
//! conversation of a large composed dataset (20,000 in a release build, a
//! smaller one in a debug build).
//!
//! The overlap checks here deliberately use a different method (a sorted
//! list of suffixes) from the generator's index, so that a bug in one is not
//! hidden by the same bug in the other.

use cb_dataset::lexicon::{self, tokens};
use cb_dataset::{Category, Conversation, Dataset, GenerateOptions, Mode, TurnKind};
use cb_scoring::{score_fast, AnchorIndex, Verdict};
use cb_upstream::model;
use cb_upstream::ConversationIndex;
use cb_wire::openai::ChatMessage;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Conversations of the large composed dataset.
#[cfg(not(debug_assertions))]
const LARGE: usize = 20_000;
/// Conversations of the large composed dataset (debug builds are ~20x slower).
#[cfg(debug_assertions)]
const LARGE: usize = 1_500;

const SYSTEM: &str = "You are a helpful assistant.";

fn committed() -> Dataset {
    Dataset::builtin_default()
}

fn composed(seed: u64, n: usize) -> Dataset {
    composed_with_turns(seed, n, 7, 11)
}

fn composed_with_turns(seed: u64, n: usize, min_turns: usize, max_turns: usize) -> Dataset {
    cb_dataset::generate_in(
        &GenerateOptions {
            seed,
            conversations: n,
            min_turns,
            max_turns,
        },
        Mode::Composed,
    )
    .unwrap()
}

/// Every suffix of every text, sorted, with the conversation it belongs to:
/// a text occurs inside another exactly when it is a prefix of one of the
/// other's suffixes.
struct Suffixes<'a> {
    sorted: Vec<(&'a str, usize)>,
}

impl<'a> Suffixes<'a> {
    fn new(texts: &'a [(String, usize)]) -> Self {
        let mut sorted: Vec<(&str, usize)> = texts
            .iter()
            .flat_map(|(t, owner)| t.char_indices().map(move |(i, _)| (&t[i..], *owner)))
            .collect();
        sorted.sort_unstable();
        Suffixes { sorted }
    }

    /// Owners other than `owner` of a text that contains `needle`.
    fn other_owner(&self, needle: &str, owner: usize) -> Option<usize> {
        let start = self.sorted.partition_point(|(s, _)| *s < needle);
        self.sorted[start..]
            .iter()
            .take_while(|(s, _)| s.starts_with(needle))
            .map(|&(_, o)| o)
            .find(|&o| o != owner)
    }
}

fn lower_variants(d: &Dataset) -> Vec<(String, usize)> {
    d.conversations
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.anchor.variants.iter().map(move |v| (v.to_lowercase(), i)))
        .collect()
}

/// The invariants of a generated dataset.
fn check_invariants(d: &Dataset, min_turns: usize, max_turns: usize) {
    let n = d.conversations.len();
    let stats = d.stats();

    // Balanced categories and lengths.
    for (c, count) in &stats.per_category {
        assert!(
            count.abs_diff(n / Category::ALL.len()) <= 1,
            "{c:?}: {count}"
        );
    }
    let lengths = max_turns - min_turns + 1;
    assert_eq!(stats.turn_histogram.len(), lengths.min(n));
    for (turns, count) in &stats.turn_histogram {
        assert!((min_turns..=max_turns).contains(turns));
        assert!(count.abs_diff(n / lengths) <= 1, "{turns} turns: {count}");
    }
    // Subjects balanced within their category.
    let mut per_subject: BTreeMap<(Category, &str), usize> = BTreeMap::new();
    for c in &d.conversations {
        *per_subject
            .entry((c.anchor.category, c.anchor.subject.as_str()))
            .or_default() += 1;
    }
    for c in Category::ALL {
        let counts: Vec<usize> = per_subject
            .iter()
            .filter(|((cat, _), _)| *cat == c)
            .map(|(_, n)| *n)
            .collect();
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(hi - lo <= 1, "{c:?}: {counts:?}");
    }

    // Unique first messages and probes; a lone probe names its conversation.
    let firsts: HashSet<&str> = d
        .conversations
        .iter()
        .map(|c| c.first_user_message())
        .collect();
    assert_eq!(firsts.len(), n, "first user messages are unique");
    let probes: HashSet<&str> = d.conversations.iter().map(|c| c.probe()).collect();
    assert_eq!(probes.len(), n, "probes are unique");
    let index = ConversationIndex::of_dataset(d);
    for (i, c) in d.conversations.iter().enumerate() {
        let r = index
            .recognise(c.probe(), 1)
            .expect("a lone probe is attributed");
        assert_eq!((r.index, r.turn), (i, c.n_turns()));
    }

    // Anchors: unique, and no spelling inside another conversation's, as
    // plain text; distractors overlap no anchor either way round.
    let anchors = lower_variants(d);
    let suffixes = Suffixes::new(&anchors);
    for (v, owner) in &anchors {
        assert_eq!(
            suffixes.other_owner(v, *owner),
            None,
            "{v:?} is inside another anchor"
        );
    }
    let distractors: Vec<(String, usize)> = d
        .conversations
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.distractors().map(move |x| (x.to_lowercase(), i)))
        .collect();
    let distractor_suffixes = Suffixes::new(&distractors);
    for (x, _) in &distractors {
        assert_eq!(
            suffixes.other_owner(x, usize::MAX),
            None,
            "distractor {x:?} in an anchor"
        );
    }
    for (v, _) in &anchors {
        assert_eq!(
            distractor_suffixes.other_owner(v, usize::MAX),
            None,
            "anchor {v:?} inside a distractor"
        );
    }

    // Values never are lexicon words; probes and filler never give them away.
    let lexicon_words: HashSet<String> = lexicon::fixed_texts()
        .iter()
        .flat_map(|t| tokens(t))
        .collect();
    for c in &d.conversations {
        let variants: Vec<Vec<String>> = c.anchor.variants.iter().map(|v| tokens(v)).collect();
        for v in &variants {
            if let [word] = v.as_slice() {
                assert!(
                    !lexicon_words.contains(word),
                    "{}: {word} is a lexicon word",
                    c.id
                );
            }
        }
        assert!(c.anchor.variants.contains(&c.anchor.value), "{}", c.id);
        assert!(c.distractors().count() >= 1, "{}", c.id);
        for t in &c.turns[1..] {
            let words = tokens(&t.user);
            for v in &variants {
                assert!(
                    !lexicon::contains_words(&words, v),
                    "{}: {:?}",
                    c.id,
                    t.user
                );
            }
            if let Some(x) = &t.distractor {
                assert!(t.user.contains(x.as_str()), "{}", c.id);
                assert!(!c.anchor.variants.contains(x), "{}", c.id);
            } else {
                assert!(
                    !t.user.chars().any(|ch| ch.is_ascii_digit()),
                    "{}: {}",
                    c.id,
                    t.user
                );
            }
        }
    }
}

/// System prompt, every turn before `upto` with its scripted reply (but
/// `drop`), then turn `upto`'s user message.
fn history(c: &Conversation, upto: usize, drop: Option<usize>) -> Vec<ChatMessage> {
    let mut m = vec![ChatMessage::new("system", SYSTEM)];
    for (i, t) in c.turns[..upto].iter().enumerate() {
        if Some(i) == drop {
            continue;
        }
        m.push(ChatMessage::new("user", &t.user));
        m.push(ChatMessage::new(
            "assistant",
            t.assistant.as_deref().unwrap_or(""),
        ));
    }
    m.push(ChatMessage::new("user", &c.turns[upto].user));
    m
}

fn contains_any(text: &str, values: &[String]) -> bool {
    let lower = text.to_lowercase();
    values.iter().any(|v| lower.contains(&v.to_lowercase()))
}

/// The simulated model answers every probe from the full history and
/// refuses without it; the scorer calls the first `preserved` and the
/// refusal `lost`; filler replies are the scripted ones and never leak the
/// anchor.
fn check_model_and_scorer(d: &Dataset) {
    let index = AnchorIndex::new(d);
    // The scorer dominates; spread the conversations over the cores.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = d.conversations.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for part in d.conversations.chunks(chunk) {
            let index = &index;
            scope.spawn(move || part.iter().for_each(|c| check_conversation(c, index)));
        }
    });
}

fn check_conversation(c: &Conversation, index: &AnchorIndex) {
    let last = c.n_turns() - 1;
    let answer = model::reply(&history(c, last, None));
    assert!(
        contains_any(&answer, &c.anchor.variants),
        "{}: {answer:?}",
        c.id
    );
    let s = score_fast(c, Some(&answer), index);
    assert_eq!(s.verdict, Verdict::Preserved, "{}: {answer:?}: {s:?}", c.id);

    let lone = vec![
        ChatMessage::new("system", SYSTEM),
        ChatMessage::new("user", c.probe()),
    ];
    let refusal = model::reply(&lone);
    assert!(refusal.starts_with("I don't know"), "{}: {refusal:?}", c.id);
    let s = score_fast(c, Some(&refusal), index);
    assert_eq!(s.verdict, Verdict::Lost, "{}: {refusal:?}: {s:?}", c.id);
    assert!(s.bleed_from.is_empty(), "{}: {s:?}", c.id);

    // Without the anchor turn, distractors never stand in for it.
    let without = model::reply(&history(c, last, Some(0)));
    assert!(without.starts_with("I don't know"), "{}: {without:?}", c.id);
    assert!(c.distractors().all(|x| !without.contains(x)), "{}", c.id);

    for (i, t) in c.turns[..last].iter().enumerate() {
        let live = model::reply(&history(c, i, None));
        assert_eq!(
            Some(live.as_str()),
            t.assistant.as_deref(),
            "{} turn {}",
            c.id,
            i + 1
        );
        assert!(
            !contains_any(&live, &c.anchor.variants),
            "{} turn {}",
            c.id,
            i + 1
        );
    }
}

#[test]
fn the_committed_dataset_keeps_every_invariant() {
    let d = committed();
    check_invariants(&d, 7, 11);
    check_model_and_scorer(&d);
}

#[test]
fn a_large_composed_dataset_keeps_every_invariant() {
    check_invariants(&composed(42, LARGE), 7, 11);
}

#[test]
fn model_and_scorer_agree_on_every_conversation_of_a_large_composed_dataset() {
    check_model_and_scorer(&composed(7, LARGE));
}

#[test]
fn the_shortest_and_longest_conversations_keep_every_invariant() {
    let (min, max) = (
        cb_dataset::generate::MIN_TURNS,
        cb_dataset::generate::MAX_TURNS,
    );
    let d = composed_with_turns(3, 2 * (max - min + 1), min, max);
    check_invariants(&d, min, max);
    check_model_and_scorer(&d);
}

#[test]
fn composed_values_are_plain_ascii_and_never_guessable_defaults() {
    let d = composed(5, 600);
    let mut kinds: HashMap<Category, usize> = HashMap::new();
    for c in &d.conversations {
        *kinds.entry(c.anchor.category).or_default() += 1;
        for v in &c.anchor.variants {
            assert!(v.is_ascii(), "{v}");
        }
        let v = &c.anchor.value;
        if v.bytes().all(|b| b.is_ascii_digit()) {
            assert!(v.len() >= 6, "{}: {v}", c.id);
        }
        for t in &c.turns {
            if t.kind == TurnKind::Probe {
                assert!(t.user.ends_with('?'), "{}", t.user);
            }
        }
    }
    assert_eq!(kinds.len(), Category::ALL.len());
}

#[test]
fn composed_generation_is_deterministic_and_seeded() {
    let a = composed(11, 400).to_jsonl();
    assert_eq!(a, composed(11, 400).to_jsonl());
    assert_ne!(a, composed(12, 400).to_jsonl());
}
