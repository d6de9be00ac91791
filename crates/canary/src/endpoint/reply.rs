//! What a simulated route says, decided from the request alone: a minimal
//! instance of the requested schema for structured output, an in-character
//! English reply to the roleplay probe, otherwise three phrasebook
//! sentences in the language of the user's message (one of the language
//! probe's prompts, or detected). Then the route's own
//! degradation, drawn from the request's generator and applied with the
//! shared transforms of `cb_degrade`.

use super::routes::Behaviour;
use crate::probe::{is_roleplay, language_prompt};
use cb_contracts::{detect_language, requested_format, Language, RequestedFormat};
use cb_degrade::{self as degrade, phrasebook, Completion, DegradationKind, Drift};
use cb_wire::openai::ChatRequest;
use rand::seq::SliceRandom;
use rand::Rng;

/// In-character lines of the roleplay reply; the first always opens it.
const ROLEPLAY_LINES: &[&str] = &[
    "Good evening to you, and come in out of that rain!",
    "We have a warm room at the top of the stairs, and the fire in it is already lit.",
    "There is a pot of lamb stew on the hearth and fresh bread baked this morning.",
    "Hang your wet cloak by the door and I will bring you a bowl right away.",
    "The room is yours for three silver coins, with breakfast in the morning.",
];

/// Sentences in a text reply.
const SENTENCES: usize = 3;

/// The kind of request, as the content shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Structured output (`response_format`).
    Structured,
    /// The roleplay probe.
    Roleplay,
    /// Any other text request (the language probe).
    Text,
}

/// What `request` asks for.
pub fn asked(request: &ChatRequest) -> Asked {
    if requested_format(request).is_some() {
        Asked::Structured
    } else if is_roleplay(request) {
        Asked::Roleplay
    } else {
        Asked::Text
    }
}

/// The clean reply to `request`.
pub fn clean(request: &ChatRequest, rng: &mut impl Rng) -> Completion {
    match requested_format(request) {
        Some(RequestedFormat::JsonSchema(schema)) => {
            return Completion::stop(degrade::instance_for_schema(&schema).to_string())
        }
        Some(RequestedFormat::JsonObject) => {
            return Completion::stop(r#"{"answer": "ok"}"#.to_string())
        }
        None => {}
    }
    if is_roleplay(request) {
        let mut rest: Vec<&str> = ROLEPLAY_LINES[1..].to_vec();
        rest.shuffle(rng);
        let mut lines = vec![ROLEPLAY_LINES[0]];
        lines.extend(rest.into_iter().take(SENTENCES - 1));
        return Completion::stop(lines.join(" "));
    }
    let last = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.text())
        .unwrap_or_default();
    // The canary's own language prompts are recognised by their text (cheap);
    // anything else by the language it is written in.
    let language = Language::ALL
        .into_iter()
        .find(|l| language_prompt(*l) == last)
        .or_else(|| detect_language(&last, &Language::ALL))
        .unwrap_or(Language::En);
    let mut pool: Vec<&str> = phrasebook::sentences(language).to_vec();
    pool.shuffle(rng);
    let separator = if matches!(language, Language::Ja | Language::Zh) {
        ""
    } else {
        " "
    };
    Completion::stop(
        pool.into_iter()
            .take(SENTENCES)
            .collect::<Vec<_>>()
            .join(separator),
    )
}

/// `reply` as the route's `behaviour` degrades it, drawing from `rng`
/// whether it does this time (`session`: decided by the request's session
/// instead, on a sticky route). Behaviours that are not about the text
/// (slow, flaky, down), and a draw that spares this reply, leave it clean.
pub fn degrade(
    behaviour: Behaviour,
    asked: Asked,
    reply: Completion,
    session: Option<bool>,
    rng: &mut impl Rng,
) -> Completion {
    let kind = match (behaviour, asked) {
        (Behaviour::JunkPrefix { rate }, Asked::Roleplay | Asked::Text)
            if hit(rng, rate, session) =>
        {
            DegradationKind::JunkPrefix { style: None }
        }
        (Behaviour::LanguageMix { rate }, Asked::Text) if hit(rng, rate, session) => {
            DegradationKind::LanguageDrift {
                drift: Some(Drift::Mix),
                to: None,
            }
        }
        (Behaviour::SchemaBreak { rate }, Asked::Structured) if hit(rng, rate, session) => {
            DegradationKind::SchemaBreak { style: None }
        }
        (Behaviour::Filters, Asked::Roleplay) => {
            let pool = phrasebook::refusals(Language::En);
            return Completion {
                text: pool[rng.random_range(0..pool.len())].to_string(),
                finish_reason: "content_filter".into(),
            };
        }
        _ => return reply,
    };
    degrade::apply(kind, reply, rng)
}

/// Whether this reply is degraded: drawn at `rate`, unless the session
/// decides (a sticky route). The draw is made either way, so that the
/// reply's other draws are the same for a sticky and a per-reply route.
fn hit(rng: &mut impl Rng, rate: f64, session: Option<bool>) -> bool {
    let drawn = rng.random_bool(rate.clamp(0.0, 1.0));
    session.unwrap_or(drawn)
}
