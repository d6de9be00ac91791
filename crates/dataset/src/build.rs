//! One conversation from its anchor: the anchor turn, filler turns (some
//! with a distractor), and a probe no other conversation of the dataset
//! uses.

use super::filler::{self, TOPICS};
use super::generate::{GenerateError, Source, MAX_DRAWS};
use super::lexicon::{self, Subject, DISTRACTOR, VALUE};
use super::pools::Drawn;
use super::taken::Taken;
use super::{probes, Anchor, Conversation, Turn, TurnKind};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

/// One conversation: anchor turn, filler (some with distractors), probe.
/// The probe is one of the subject's curated wordings; the caller makes it
/// unique.
pub(super) fn build_conversation(
    id: String,
    subject: &'static Subject,
    drawn: Drawn,
    n_turns: usize,
    rng: &mut ChaCha8Rng,
    source: &Source,
    taken: &Taken,
) -> Conversation {
    let choose =
        |pool: &[&'static str], rng: &mut ChaCha8Rng| pool[rng.random_range(0..pool.len())];
    let join = |parts: &[&str]| {
        parts
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    };

    // Turn 1: the anchor.
    let statement = lexicon::render(choose(subject.statements, rng), VALUE, &drawn.written);
    let user = join(&[
        choose(filler::ANCHOR_OPENERS, rng),
        &statement,
        choose(filler::ANCHOR_CLOSERS, rng),
    ]);
    let mut turns = Vec::with_capacity(n_turns);
    turns.push(Turn {
        kind: TurnKind::Anchor,
        assistant: Some(subject.acknowledgement(&user).into()),
        user: user.into(),
        distractor: None,
        tool: None,
        asks: None,
    });

    // Middle turns: which carry a distractor, and which filler pairs the rest use.
    let middle = n_turns - 2;
    let n_distractors = if middle >= 4 && rng.random_bool(0.4) {
        2
    } else {
        1
    }
    .min(middle);
    let mut positions: Vec<usize> = (0..middle).collect();
    positions.shuffle(rng);
    let distractor_positions = &positions[..n_distractors];
    let mut templates: Vec<usize> = (0..subject.distractors.len()).collect();
    templates.shuffle(rng);
    let mut pairs: Vec<(&str, &str)> = filler::all_pairs().collect();
    pairs.shuffle(rng);
    let mut pairs = pairs.into_iter();
    let mut used_distractors: Vec<String> = vec![drawn.value.clone()];
    let mut used_openers: Vec<&str> = Vec::new();

    for slot in 0..middle {
        let nth = distractor_positions.iter().position(|&p| p == slot);
        let distractor = nth.and_then(|k| {
            source
                .distractor(subject, rng, taken, &used_distractors)
                .map(|d| (k, d))
        });
        let turn = match distractor {
            Some((k, d)) => {
                let (template, reply) = subject.distractors[templates[k % templates.len()]];
                used_distractors.push(d.value.clone());
                Turn {
                    kind: TurnKind::Filler,
                    user: lexicon::render(template, DISTRACTOR, &d.written).into(),
                    assistant: Some((*reply).into()),
                    distractor: Some(d.written),
                    tool: None,
                    asks: None,
                }
            }
            None => {
                let (question, reply) = pairs.next().unwrap_or(TOPICS[0].pairs[0]);
                // The same opener twice in one conversation reads oddly.
                let mut opener = choose(filler::FILLER_OPENERS, rng);
                if used_openers.contains(&opener) {
                    opener = "";
                } else if !opener.is_empty() {
                    used_openers.push(opener);
                }
                Turn {
                    kind: TurnKind::Filler,
                    user: join(&[opener, question]).into(),
                    assistant: Some((*reply).into()),
                    distractor: None,
                    tool: None,
                    asks: None,
                }
            }
        };
        turns.push(turn);
    }

    // The probe.
    turns.push(Turn {
        kind: TurnKind::Probe,
        user: join(&[
            choose(filler::PROBE_OPENERS, rng),
            choose(subject.probes, rng),
        ])
        .into(),
        assistant: None,
        distractor: None,
        tool: None,
        asks: None,
    });

    Conversation {
        id,
        anchor: Anchor {
            category: subject.category,
            subject: subject.subject.to_string(),
            value: drawn.value,
            variants: drawn.variants,
        },
        turns,
        anchor_place: crate::AnchorPlace::User,
        system: Vec::new(),
    }
}

/// Rewords a probe that an earlier conversation already uses, with another
/// curated opener and question of the same subject, so that every probe is
/// unique: an upstream that receives a lone probe (a gateway that dropped the
/// history) can still tell which conversation it belongs to. The fourteen
/// wordings of a subject always suffice within a curated dataset.
pub(super) fn make_probe_unique(
    conversation: &mut Conversation,
    subject: &'static Subject,
    used: &mut HashSet<String>,
    seed: u64,
    i: usize,
) {
    let Some(probe) = conversation.turns.last_mut() else {
        return;
    };
    if used.insert(probe.user.to_string()) {
        return;
    }
    let mut wordings: Vec<String> = filler::PROBE_OPENERS
        .iter()
        .flat_map(|opener| {
            subject.probes.iter().map(move |question| {
                [*opener, *question]
                    .iter()
                    .filter(|p| !p.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .collect();
    wordings.shuffle(&mut cb_base::seed::rng(
        seed,
        "dataset-probe-wording",
        i as u64,
    ));
    if let Some(free) = wordings.into_iter().find(|w| !used.contains(w)) {
        used.insert(free.clone());
        probe.user = free.into();
    }
}

/// Replaces the probe with a composed wording ([`probes::compose`]) that no
/// earlier conversation uses.
///
/// # Errors
/// [`GenerateError::Exhausted`] when [`MAX_DRAWS`] draws find no free
/// wording (the wordings are far more than any subject needs).
pub(super) fn compose_unique_probe(
    conversation: &mut Conversation,
    subject: &'static Subject,
    used: &mut HashSet<String>,
    seed: u64,
    i: usize,
) -> Result<(), GenerateError> {
    let mut rng = cb_base::seed::rng(seed, "dataset-composed-probe", i as u64);
    let exhausted = GenerateError::Exhausted {
        subject: subject.key,
        what: "probe wording",
    };
    let Some(probe) = conversation.turns.last_mut() else {
        return Err(exhausted);
    };
    for _ in 0..MAX_DRAWS {
        let question = subject.probes[rng.random_range(0..subject.probes.len())];
        let wording = probes::compose(question, &mut rng);
        if !used.contains(&wording) {
            used.insert(wording.clone());
            probe.user = wording.into();
            return Ok(());
        }
    }
    Err(exhausted)
}
