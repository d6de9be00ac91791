//! Degradation transforms: pure, seeded functions that turn a clean reply
//! into one that answers 200 and still fails the user, so that the
//! simulated upstream can trip each answer contract on the wire.
//!
//! [`apply`] takes a [`DegradationKind`], the clean [`Completion`] and a
//! generator (from `cb_base::seed::rng`, never the clock), and returns the
//! degraded completion. Each kind trips exactly its contract
//! (`cb_contracts`) on a clean reply to a prompt that ends with
//! punctuation, which the tests check: `junk_prefix`, `language_drift`
//! (`language`), `schema_break` (`schema`, on structured-output replies),
//! `refusal`, `empty`, `truncated` (text cut short and `finish_reason:
//! "length"`). A slow first token is a timing fault and lives with the wire
//! faults, not here.
//!
//! [`instance_for_schema`] writes a minimal JSON instance of a schema, so
//! that the simulated model can answer structured-output requests;
//! [`phrasebook`] (the contracts' phrasebook) holds the sentences
//! `language_drift` and a multilingual responder draw from.

mod drift;
mod instance;
mod junk;
pub use cb_contracts::phrasebook;
mod schema_break;

pub use drift::Drift;
pub use instance::instance_for_schema;
pub use junk::{
    apply_shaped as junk_shaped, not_applicable as junk_shape_not_applicable, JunkShape, JunkStyle,
};
pub use schema_break::SchemaBreakStyle;

use cb_contracts::{detect_language, Language};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// A reply as the simulated model produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// The assistant text.
    pub text: String,
    /// The finish reason (`stop`, `length`, ...).
    pub finish_reason: String,
}

impl Completion {
    /// A completion of `text` that finished normally (`stop`).
    pub fn stop(text: impl Into<String>) -> Self {
        Completion {
            text: text.into(),
            finish_reason: "stop".into(),
        }
    }
}

/// How to degrade a reply. Serde writes it with a `kind` tag in snake case
/// (`{"kind": "junk_prefix", "style": "template_token"}`); an omitted style
/// is drawn from the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DegradationKind {
    /// Punctuation, a template token or a word fragment before the text.
    JunkPrefix {
        /// Which junk; drawn when `None`.
        #[serde(default)]
        style: Option<JunkStyle>,
    },
    /// The reply switches to, or mixes in, a neighbouring language.
    LanguageDrift {
        /// Switch or mix; drawn when `None`.
        #[serde(default)]
        drift: Option<Drift>,
        /// The language to drift into; the reply's neighbour when `None`
        /// (pt and es, it to es, nl and de, ...).
        #[serde(default)]
        to: Option<Language>,
    },
    /// Structured output that breaks its schema.
    SchemaBreak {
        /// Which break; drawn when `None`.
        #[serde(default)]
        style: Option<SchemaBreakStyle>,
    },
    /// A policy refusal in the reply's language instead of the answer.
    Refusal,
    /// An empty or whitespace-only message.
    Empty,
    /// The text cut short, with `finish_reason: "length"`.
    Truncated,
}

impl DegradationKind {
    /// The contract this kind trips, by its snake-case name.
    pub fn contract(self) -> cb_contracts::ContractName {
        use cb_contracts::ContractName;
        match self {
            DegradationKind::JunkPrefix { .. } => ContractName::JunkPrefix,
            DegradationKind::LanguageDrift { .. } => ContractName::Language,
            DegradationKind::SchemaBreak { .. } => ContractName::Schema,
            DegradationKind::Refusal => ContractName::Refusal,
            DegradationKind::Empty => ContractName::Empty,
            DegradationKind::Truncated => ContractName::Truncated,
        }
    }
}

/// Degrades `reply` as `kind` says, drawing every choice from `rng`.
pub fn apply(kind: DegradationKind, reply: Completion, rng: &mut impl Rng) -> Completion {
    match kind {
        DegradationKind::JunkPrefix { style } => junk::apply(style, reply, rng),
        DegradationKind::LanguageDrift { drift, to } => drift::apply(drift, to, reply, rng),
        DegradationKind::SchemaBreak { style } => schema_break::apply(style, reply, rng),
        DegradationKind::Refusal => {
            let pool = cb_contracts::phrasebook::refusals(language_of(&reply.text));
            Completion {
                text: pool[rng.random_range(0..pool.len())].to_string(),
                ..reply
            }
        }
        DegradationKind::Empty => Completion {
            text: ["", " ", "\n\n"][rng.random_range(0..3)].to_string(),
            ..reply
        },
        DegradationKind::Truncated => truncate(reply, rng),
    }
}

/// The language `text` is written in, English when it cannot be told.
fn language_of(text: &str) -> Language {
    detect_language(text, &Language::ALL).unwrap_or(Language::En)
}

/// Cuts the text at a word boundary between 40 % and 70 % of its length
/// (at a character for text without spaces), keeping at least one word,
/// and marks it `length`.
fn truncate(reply: Completion, rng: &mut impl Rng) -> Completion {
    let chars: Vec<(usize, char)> = reply.text.char_indices().collect();
    let n = chars.len();
    let mut text = reply.text.clone();
    if n >= 4 {
        let target = rng.random_range(n * 2 / 5..=n * 7 / 10).max(1);
        let spaces = reply.text.contains(' ');
        let cut = if spaces {
            // the last space at or before the target that keeps a word
            chars[..target]
                .iter()
                .rev()
                .find(|(i, c)| *c == ' ' && *i > 0)
                .map(|(i, _)| *i)
        } else {
            chars.get(target).map(|(i, _)| *i)
        };
        if let Some(cut) = cut {
            text = reply.text[..cut].trim_end().to_string();
        }
    }
    Completion {
        text,
        finish_reason: "length".into(),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_junk;
