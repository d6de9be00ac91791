//! `junk_prefix`: puts punctuation, a template token or a word fragment
//! before a clean reply, the way a broken tokenizer or chat template on one
//! host does.

use super::Completion;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Which junk to put before the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JunkStyle {
    /// A stray `,` `.` `;` `、` `。` `」` or `)`.
    StrayPunctuation,
    /// An opening `*` that is never closed.
    LoneAsterisk,
    /// A chat-template token (`<|im_start|>assistant`, `</s>`, `[INST]`, ...).
    TemplateToken,
    /// A suffix fragment of a previous token (`ing `, `tion `, `'s `).
    WordFragment,
    /// The first letters of the first word lost (`Hello!` becomes `ello!`).
    ClippedWord,
}

impl JunkStyle {
    /// Every style, in a fixed order.
    pub const ALL: [JunkStyle; 5] = [
        JunkStyle::StrayPunctuation,
        JunkStyle::LoneAsterisk,
        JunkStyle::TemplateToken,
        JunkStyle::WordFragment,
        JunkStyle::ClippedWord,
    ];
}

const PUNCTUATION: &[&str] = &[", ", ". ", "; ", "、", "。", "」", ") "];
const TOKENS: &[&str] = &[
    "<|im_start|>assistant\n",
    "<|assistant|>",
    "</s> ",
    "[INST] ",
    "<|eot_id|>",
    "<start_of_turn>model\n",
];
const FRAGMENTS: &[&str] = &["ing ", "tion ", "'s ", "ly "];

fn pick<'a>(pool: &[&'a str], rng: &mut impl Rng) -> &'a str {
    pool[rng.random_range(0..pool.len())]
}

/// Puts junk of `style` (drawn when `None`) before the text. A style that
/// would not show on this text falls back to stray punctuation: an
/// asterisk when the first paragraph already holds one, a clipped word
/// when the first word is too short or no later sentence starts with a
/// capital to show the clipping.
pub fn apply(style: Option<JunkStyle>, reply: Completion, rng: &mut impl Rng) -> Completion {
    let style = style.unwrap_or_else(|| JunkStyle::ALL[rng.random_range(0..JunkStyle::ALL.len())]);
    let text = reply.text.trim_start();
    let degraded = match style {
        JunkStyle::LoneAsterisk if !text.split("\n\n").next().unwrap_or("").contains('*') => {
            format!("*{text}")
        }
        JunkStyle::TemplateToken => format!("{}{text}", pick(TOKENS, rng)),
        JunkStyle::WordFragment => format!("{}{text}", pick(FRAGMENTS, rng)),
        JunkStyle::ClippedWord => match clip(text, rng) {
            Some(clipped) => clipped,
            None => format!("{}{text}", pick(PUNCTUATION, rng)),
        },
        _ => format!("{}{text}", pick(PUNCTUATION, rng)),
    };
    Completion {
        text: degraded,
        ..reply
    }
}

/// `text` with the first one or two letters of its first word removed,
/// when that shows: the word starts with a capital, keeps at least two
/// letters, and a later sentence starts with a capital.
fn clip(text: &str, rng: &mut impl Rng) -> Option<String> {
    let word_len = text.chars().take_while(|c| c.is_alphabetic()).count();
    let first = text.chars().next()?;
    let later_capital = text
        .split(['.', '!', '?'])
        .skip(1)
        .any(|s| s.starts_with(' ') && s.trim_start().starts_with(char::is_uppercase));
    if !first.is_uppercase() || word_len < 4 || !later_capital {
        return None;
    }
    let drop = rng.random_range(1..=2);
    let at = text.char_indices().nth(drop).map(|(i, _)| i)?;
    Some(text[at..].to_string())
}
