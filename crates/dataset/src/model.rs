//! The simulated model: answers only from the messages it received.
//!
//! A statement counts wherever the client put it: in a user message, a
//! system message or a tool result (rich datasets state the anchor in the
//! last two in some conversations).
//!
//! It knows the shared grammar in [`crate::lexicon`], never the
//! dataset: a probe is answered with the value the user stated earlier *in
//! the received messages*, in the user's own words, or with a refusal that
//! starts with "I don't know" when the statement is not there. It never
//! guesses, and it ignores third-person mentions (distractors) and assistant
//! messages. Everything else gets a deterministic, plausible reply that never
//! repeats a value from earlier messages; a request for an answer "in
//! exactly N words" gets N words.
//!
//! It continues a prefill: a request whose last message is an assistant
//! message that begins the answer it would give is answered with the rest
//! of that answer, so a gateway that splices a broken stream onto a
//! continuation can be checked for duplicated or missing text.

use crate::{filler, lexicon};
use cb_wire::openai::ChatMessage;
use std::borrow::Cow;

/// Reply when the request carries no user message at all.
const NO_USER_MESSAGE: &str = "Hello! What can I help you with today?";

/// Most words an answer "in exactly N words" gets.
const MAX_SIZED_WORDS: usize = 2000;

/// The reply to `messages`; after an assistant prefill that begins it, the
/// rest of it.
pub fn reply(messages: &[ChatMessage]) -> String {
    match messages.split_last() {
        Some((last, earlier)) if last.role == "assistant" => {
            let full = fresh_reply(earlier);
            let prefill = last.text_cow();
            match full.strip_prefix(prefill.as_ref()) {
                Some(rest) => rest.to_string(),
                // A prefill that is not the start of the answer: the whole
                // answer, as a model that ignored it would give.
                None => full,
            }
        }
        _ => fresh_reply(messages),
    }
}

/// The number of words a message asks for ("... in exactly 60 words").
fn words_asked(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let rest = &lower[lower.find("in exactly ")? + "in exactly ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: usize = digits.parse().ok()?;
    rest[digits.len()..]
        .starts_with(" words")
        .then_some(n)
        .filter(|n| (1..=MAX_SIZED_WORDS).contains(n))
}

/// `n` words of plain prose, chosen by `text`.
fn sized_reply(text: &str, n: usize) -> String {
    let start = filler::GENERIC_REPLIES
        .iter()
        .position(|r| *r == lexicon::pick(filler::GENERIC_REPLIES, text, 5))
        .unwrap_or(0);
    let words: Vec<&str> = filler::GENERIC_REPLIES
        .iter()
        .cycle()
        .skip(start)
        .flat_map(|r| r.split_whitespace())
        .take(n)
        .collect();
    words.join(" ")
}

/// The reply to `messages`, from the start.
fn fresh_reply(messages: &[ChatMessage]) -> String {
    let Some(last_at) = messages.iter().rposition(|m| m.role == "user") else {
        return NO_USER_MESSAGE.to_string();
    };
    let last_text = messages[last_at].text_cow();
    let last: &str = &last_text;
    // Where the user may have stated something: their earlier messages,
    // and what the client put in system messages and tool results.
    let earlier: Vec<Cow<'_, str>> = messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i != last_at && matches!(m.role.as_str(), "user" | "system" | "tool"))
        .map(|(_, m)| m.text_cow())
        .collect();

    let prepared = lexicon::Prepared::new(last);
    if let Some(subject) = lexicon::probed_subject_in(&prepared) {
        // The most recent first-person statement wins, as in a real chat.
        return earlier
            .iter()
            .rev()
            .find_map(|m| subject.stated_value(m))
            .map(|value| subject.answer_with(&value))
            .unwrap_or_else(|| subject.refusal(last));
    }
    if let Some((subject, _)) = lexicon::stated_subject_in(&prepared) {
        return subject.acknowledgement(last);
    }
    if let Some(answer) = filler::reply_in(last) {
        return answer.to_string();
    }
    if let Some(answer) = lexicon::distractor_reply_in(&prepared) {
        return answer.to_string();
    }
    if let Some(n) = words_asked(last) {
        return sized_reply(last, n);
    }
    lexicon::pick(filler::GENERIC_REPLIES, last, 3).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::client_messages;
    use crate::{Conversation, Dataset, TurnKind};

    const SYSTEM: &str = "You are a helpful assistant.";

    /// The request for turn `upto` (from 0) as a client sends it, with the
    /// scripted replies, and turn `drop` (before `upto`) left out.
    fn history(c: &Conversation, upto: usize, drop: Option<usize>) -> Vec<ChatMessage> {
        let mut c = c.clone();
        let upto = match drop {
            Some(turn) => {
                c.turns.remove(turn);
                upto - 1
            }
            None => upto,
        };
        client_messages(&c, SYSTEM, upto, |k| {
            c.turns[k].assistant.as_deref().unwrap_or("")
        })
    }

    fn contains_any(text: &str, values: &[String]) -> bool {
        let lower = text.to_lowercase();
        values.iter().any(|v| lower.contains(&v.to_lowercase()))
    }

    #[test]
    fn answers_every_probe_from_full_history() {
        for c in &Dataset::builtin_default().conversations {
            let answer = reply(&history(c, c.n_turns() - 1, None));
            assert!(
                contains_any(&answer, &c.anchor.variants),
                "{}: {answer:?} lacks {:?}",
                c.id,
                c.anchor.value
            );
            assert!(!answer.starts_with("I don't know"));
        }
    }

    #[test]
    fn refuses_when_only_the_probe_arrives() {
        for c in &Dataset::builtin_default().conversations {
            let messages = vec![
                ChatMessage::new("system", SYSTEM),
                ChatMessage::new("user", c.probe()),
            ];
            let answer = reply(&messages);
            assert!(answer.starts_with("I don't know"), "{}: {answer:?}", c.id);
            assert!(!contains_any(&answer, &c.anchor.variants));
        }
    }

    #[test]
    fn never_answers_with_a_distractor_when_the_anchor_is_missing() {
        let dataset = Dataset::builtin_default();
        let mut checked = 0;
        for c in &dataset.conversations {
            let answer = reply(&history(c, c.n_turns() - 1, Some(0)));
            assert!(answer.starts_with("I don't know"), "{}: {answer:?}", c.id);
            for d in c.distractors() {
                assert!(
                    !answer.contains(d),
                    "{}: answered with distractor {d}",
                    c.id
                );
                checked += 1;
            }
        }
        assert!(checked > 0);
    }

    #[test]
    fn live_replies_match_the_scripted_ones_and_never_leak_the_anchor() {
        for c in &Dataset::builtin_default().conversations {
            for (i, t) in c.turns.iter().enumerate() {
                if t.kind == TurnKind::Probe {
                    continue;
                }
                let live = reply(&history(c, i, None));
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
    }

    #[test]
    fn reads_content_parts_and_the_latest_statement() {
        let parts = ChatMessage {
            role: "user".into(),
            content: serde_json::json!([{"type": "text", "text": "My sister's name is Oriane."}]),
            tool_calls: None,
            tool_call_id: None,
        };
        let messages = vec![
            parts,
            ChatMessage::new("assistant", "Noted."),
            ChatMessage::new("user", "Actually, my sister's name is Ysolde."),
            ChatMessage::new("user", "What's my sister's name?"),
        ];
        assert_eq!(reply(&messages), "Your sister is called Ysolde.");
    }

    #[test]
    fn ignores_assistant_messages_and_third_person_mentions() {
        let messages = vec![
            ChatMessage::new("assistant", "My sister's name is Oriane."),
            ChatMessage::new("user", "My neighbour's youngest is called Maelis, and their football keeps landing in our garden. How do I bring it up politely?"),
            ChatMessage::new("user", "What's my sister's name?"),
        ];
        let answer = reply(&messages);
        assert!(answer.starts_with("I don't know"), "{answer}");
        assert!(!answer.contains("Oriane") && !answer.contains("Maelis"));
    }

    #[test]
    fn answers_in_the_words_asked_and_continues_a_prefill() {
        let ask = |text: &str| vec![ChatMessage::new("user", text)];
        let long = reply(&ask("Case x. Please reply in exactly 60 words."));
        assert_eq!(long.split(' ').count(), 60, "{long}");
        assert_ne!(
            long,
            reply(&ask("Case y. Please reply in exactly 60 words."))
        );
        assert_eq!(
            reply(&ask("Reply in exactly 3 words")).split(' ').count(),
            3
        );
        assert!(!reply(&ask("in exactly 0 words")).is_empty());

        // The first 40 words as a prefill: the model gives the other 20.
        let mut messages = ask("Case x. Please reply in exactly 60 words.");
        let words: Vec<&str> = long.split_inclusive(' ').collect();
        let prefill: String = words[..40].concat();
        messages.push(ChatMessage::new("assistant", &prefill));
        let rest = reply(&messages);
        assert_eq!(format!("{prefill}{rest}"), long);
        // A prefill that is not the start of the answer gets all of it.
        messages.last_mut().unwrap().content = "Something else ".into();
        assert_eq!(reply(&messages), long);
    }

    #[test]
    fn is_deterministic_and_handles_empty_input() {
        let m = vec![ChatMessage::new("user", "Tell me something about clouds.")];
        assert_eq!(reply(&m), reply(&m));
        assert!(!reply(&m).is_empty());
        assert_eq!(reply(&[]), NO_USER_MESSAGE);
    }
}
