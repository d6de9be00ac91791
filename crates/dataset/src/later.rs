//! Probes past the fault: conversations that ask more than once, so that
//! what happens *after* a failover is scored, not only the faulted turn.
//!
//! [`add_later_probes`] inserts four turns into a generated conversation
//! (which keeps every turn it had, the final probe last):
//!
//! - turn 3: a probe of the anchor (the first turn an outage from turn 3
//!   faults, so the failover event asks for the anchor at once);
//! - turn 4: a second fact, a code of seven digits, stated by the user, or
//!   (in rich conversations, every other one) found in the result of a tool
//!   call, the kind of turn the fallback serves during an outage;
//! - turn 5: a probe of that fact, still inside an outage of turns 3 to 5:
//!   answerable only if the fallback is sent its own earlier turns;
//! - turn 6: the same question in other words, the first turn after that
//!   outage: answerable only if the turns the fallback served are still in
//!   the history the primary gets.
//!
//! Each inserted message names the conversation ("chat c001"), so that an
//! upstream sent one of them alone (a gateway that dropped the history)
//! still knows whose it is.
//!
//! The second fact's code has seven digits, a length no anchor code has
//! (curated codes have 5, 6 or 8, composed ones 6 or 8), so it can never be
//! read as another conversation's anchor (context bleed). Its subject is a
//! code subject other than the anchor's, so the simulated model never
//! confuses the two.
//!
//! The tool call that carries the second fact has an id in the shape some
//! providers give (`functions.read_note:4`): valid for OpenAI, refused by
//! Anthropic's `^[a-zA-Z0-9_-]+$`, so a gateway that passes ids through to
//! an Anthropic fallback untranslated is refused there.

use super::pools::{draw_code, Pool};
use super::subjects::{Subject, SUBJECTS};
use super::{lexicon, model, Anchor, Category, Conversation, ToolExchange, Turn, TurnKind};
use rand::seq::IndexedRandom;

/// Digits of the second fact's code (no anchor code has this many).
const FACT_DIGITS: u32 = 7;

/// The turn (from 1) of the probe of the anchor inserted by
/// [`add_later_probes`].
pub const ANCHOR_PROBE_TURN: usize = 3;

/// The turn (from 1) that states the second fact.
pub const FACT_TURN: usize = 4;

/// The turn (from 1) of the probe of the second fact inside the outage.
pub const FACT_PROBE_TURN: usize = 5;

/// The turn (from 1) of the probe of the second fact after the outage.
pub const FACT_RECHECK_TURN: usize = 6;

/// Fewest turns a conversation needs before the insertion: the anchor, two
/// fillers and the probe.
pub const MIN_TURNS: usize = 4;

/// What the second fact is about: a code subject other than `anchor`'s.
fn fact_subject(anchor: &Anchor) -> Option<&'static Subject> {
    SUBJECTS.iter().find(|s| {
        s.category == Category::Number
            && matches!(s.pool, Some(Pool::Code(_)))
            && s.subject != anchor.subject
    })
}

/// The subject the anchor was stated with.
fn anchor_subject(anchor: &Anchor) -> Option<&'static Subject> {
    SUBJECTS
        .iter()
        .find(|s| s.category == anchor.category && s.subject == anchor.subject)
}

/// `c` (the `i`-th conversation of a dataset generated with `seed`) with a
/// probe of its anchor at turn 3, a second fact at turn 4 and probes of
/// that fact at turns 5 and 6; the second fact sits in a tool result when
/// `tool`.
/// A conversation shorter than [`MIN_TURNS`], or whose anchor's subject is
/// unknown, is returned as it was.
pub fn add_later_probes(mut c: Conversation, seed: u64, i: usize, tool: bool) -> Conversation {
    if c.n_turns() < MIN_TURNS {
        return c;
    }
    let (Some(asked), Some(subject)) = (anchor_subject(&c.anchor), fact_subject(&c.anchor)) else {
        return c;
    };
    let mut rng = cb_base::seed::rng(seed, "dataset-later", i as u64);
    let drawn = draw_code(&mut rng, FACT_DIGITS);
    let template = subject.statements.choose(&mut rng).copied().unwrap_or("");
    let statement = lexicon::render(template, lexicon::VALUE, &drawn.written);
    let fact = Anchor {
        category: subject.category,
        subject: subject.subject.to_string(),
        value: drawn.value.clone(),
        variants: drawn.variants.clone(),
    };
    // A wording of the anchor's question other than the final probe's.
    let final_probe = c.probe().to_string();
    let anchor_question = asked
        .probes
        .iter()
        .find(|p| !final_probe.contains(*p))
        .or_else(|| asked.probes.first())
        .copied()
        .unwrap_or_default();
    let fact_question = subject.probes.choose(&mut rng).copied().unwrap_or_default();
    let fact_recheck = subject
        .probes
        .iter()
        .find(|p| **p != fact_question)
        .copied()
        .unwrap_or(fact_question);
    let id = c.id.clone();

    let stated = if tool {
        Turn {
            kind: TurnKind::Filler,
            user: format!(
                "Could you open the note I just saved for chat {id} and keep it in mind?"
            )
            .into(),
            assistant: None,
            distractor: None,
            tool: Some(Box::new(ToolExchange {
                id: format!("functions.read_note:{FACT_TURN}"),
                name: "read_note".into(),
                arguments: "{\"title\": \"latest\"}".into(),
                result: format!("Note \"latest\", written by the user: {statement}"),
            })),
            asks: None,
        }
    } else {
        Turn {
            kind: TurnKind::Filler,
            user: format!("One more thing to keep in mind for chat {id}. {statement}").into(),
            assistant: None,
            distractor: None,
            tool: None,
            asks: None,
        }
    };
    let probe = |user: String, asks: Option<Box<Anchor>>| Turn {
        kind: TurnKind::Probe,
        user: user.into(),
        assistant: None,
        distractor: None,
        tool: None,
        asks,
    };
    c.turns.insert(
        ANCHOR_PROBE_TURN - 1,
        probe(
            format!("Quick check on chat {id} before we go on. {anchor_question}"),
            None,
        ),
    );
    c.turns.insert(FACT_TURN - 1, stated);
    c.turns.insert(
        FACT_PROBE_TURN - 1,
        probe(
            format!("Back to that note in chat {id} for a moment. {fact_question}"),
            Some(Box::new(fact.clone())),
        ),
    );
    c.turns.insert(
        FACT_RECHECK_TURN - 1,
        probe(
            format!("Sorry, one more time for chat {id}: {fact_recheck}"),
            Some(Box::new(fact)),
        ),
    );
    // The scripted replies of the new turns: what the model answers from
    // the history so far.
    for at in [
        ANCHOR_PROBE_TURN,
        FACT_TURN,
        FACT_PROBE_TURN,
        FACT_RECHECK_TURN,
    ] {
        let messages = super::messages::client_messages(&c, "", at - 1, |k| {
            c.turns[k].assistant.as_deref().unwrap_or_default()
        });
        c.turns[at - 1].assistant = Some(model::reply(&messages).into());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::client_messages;
    use crate::{generate, GenerateOptions, Mode};

    fn later(conversations: usize, mode: Mode, tool: bool) -> Vec<Conversation> {
        let opts = GenerateOptions {
            seed: cb_base::seed::DEFAULT_SEED,
            conversations,
            min_turns: 7,
            max_turns: 11,
        };
        crate::generate_in(&opts, mode)
            .unwrap()
            .conversations
            .into_iter()
            .enumerate()
            .map(|(i, c)| add_later_probes(c, opts.seed, i, tool && i % 2 == 1))
            .collect()
    }

    /// The model's answer to turn `at` (from 1) with turns `drop` (from
    /// 1) left out of the history.
    fn answer(c: &Conversation, at: usize, drop: &[usize]) -> String {
        let mut kept = c.clone();
        let mut at = at;
        for turn in drop.iter().rev() {
            kept.turns.remove(turn - 1);
            at -= 1;
        }
        let messages = client_messages(&kept, "Be brief.", at - 1, |k| {
            kept.turns[k].assistant.as_deref().unwrap_or_default()
        });
        model::reply(&messages)
    }

    fn names(text: &str, fact: &Anchor) -> bool {
        fact.variants.iter().any(|v| text.contains(v.as_str()))
    }

    #[test]
    fn every_probe_is_answered_from_the_history_and_only_from_it() {
        for mode in [Mode::Curated, Mode::Composed] {
            for c in later(60, mode, true) {
                let probes = c.probes().collect::<Vec<_>>();
                assert_eq!(
                    probes.iter().map(|(turn, _)| *turn).collect::<Vec<_>>(),
                    vec![
                        ANCHOR_PROBE_TURN,
                        FACT_PROBE_TURN,
                        FACT_RECHECK_TURN,
                        c.n_turns()
                    ],
                    "{}",
                    c.id
                );
                for (turn, fact) in probes {
                    assert!(names(&answer(&c, turn, &[]), fact), "{} turn {turn}", c.id);
                }
                // Losing the turn that stated the second fact (what the
                // fallback served during an outage) loses only its probes.
                let fact = c.turns[FACT_PROBE_TURN - 1].asks.as_deref().unwrap();
                for probe in [FACT_PROBE_TURN, FACT_RECHECK_TURN] {
                    let lost = answer(&c, probe, &[FACT_TURN]);
                    assert!(lost.starts_with("I don't know"), "{}: {lost}", c.id);
                    assert!(!names(&lost, fact));
                }
                assert!(names(&answer(&c, c.n_turns(), &[FACT_TURN]), &c.anchor));
                // The second fact is never another conversation's anchor.
                assert_eq!(fact.value.len(), FACT_DIGITS as usize);
                assert_ne!(fact.subject, c.anchor.subject);
            }
        }
    }

    #[test]
    fn rich_conversations_state_the_fact_in_a_tool_result_with_a_foreign_id() {
        let all = later(20, Mode::Curated, true);
        let tools: Vec<&ToolExchange> = all
            .iter()
            .filter_map(|c| c.turns[FACT_TURN - 1].tool.as_deref())
            .collect();
        assert_eq!(tools.len(), 10);
        for t in tools {
            assert!(t.id.contains('.') && t.id.contains(':'), "{}", t.id);
        }
        // The same seed gives the same conversations.
        assert_eq!(all, later(20, Mode::Curated, true));
    }

    #[test]
    fn committed_file_is_the_seed_42_rich_generation_with_later_probes() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../datasets/continuity-outage-150.jsonl"
        );
        let opts = GenerateOptions {
            seed: cb_base::seed::DEFAULT_SEED,
            conversations: 150,
            min_turns: 7,
            max_turns: 11,
        };
        let fresh = crate::Dataset {
            conversations: crate::rich::enrich(generate(&opts), opts.seed)
                .conversations
                .into_iter()
                .enumerate()
                .map(|(i, c)| add_later_probes(c, opts.seed, i, i % 2 == 1))
                .collect(),
        };
        assert!(
            std::fs::read_to_string(path).unwrap() == fresh.to_jsonl(),
            "regenerate with `generate --rich --later-probes --out {path} --force`"
        );
        assert!(fresh
            .conversations
            .iter()
            .all(Conversation::has_later_probes));
    }

    #[test]
    fn a_conversation_too_short_is_left_as_it_was() {
        let opts = GenerateOptions {
            seed: 7,
            conversations: 3,
            min_turns: 3,
            max_turns: 3,
        };
        for (i, c) in generate(&opts).conversations.into_iter().enumerate() {
            assert_eq!(add_later_probes(c.clone(), 7, i, false), c);
        }
    }
}
