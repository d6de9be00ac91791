//! `junk_prefix`: puts punctuation, a template token or a word fragment
//! before a clean reply, the way a broken tokenizer or chat template on one
//! host does, in every shape a host produces it ([`JunkShape`]: spaced,
//! glued to the first word, after a byte-order mark, inside the bold that
//! opens the reply). The lists here are the generator's own, not the
//! contract's: the positive controls test the detector, not its mirror.

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

/// Where the junk sits relative to the reply, as real hosts produce it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JunkShape {
    /// The junk, a space, then the reply (`. Your sister`, `</s> Your`).
    Spaced,
    /// The junk glued to the first word (`.Your sister`, `、あなた`).
    Glued,
    /// A byte-order mark, then the glued junk (`\u{FEFF}.Your`).
    AfterBom,
    /// The junk inside the bold that opens the reply (`**.Your** sister`).
    InMarkdown,
}

impl JunkShape {
    /// Every shape, in a fixed order.
    pub const ALL: [JunkShape; 4] = [
        JunkShape::Spaced,
        JunkShape::Glued,
        JunkShape::AfterBom,
        JunkShape::InMarkdown,
    ];
}

/// Why `style` has no `shape`, or `None` when a host can produce it: a
/// spaced asterisk is a bullet, an asterisk inside bold is Markdown, a
/// clipped word has no separator and reads as lowercase emphasis in bold.
pub fn not_applicable(style: JunkStyle, shape: JunkShape) -> Option<&'static str> {
    match (style, shape) {
        (JunkStyle::LoneAsterisk, JunkShape::Spaced) => Some("`* Your` is a Markdown bullet"),
        (JunkStyle::LoneAsterisk, JunkShape::InMarkdown) => {
            Some("an asterisk inside bold is the bold's own marker")
        }
        (JunkStyle::ClippedWord, JunkShape::Spaced) => Some("a clipped word has no separator"),
        (JunkStyle::ClippedWord, JunkShape::InMarkdown) => {
            Some("a clipped word in bold reads as lowercase emphasis (`*smiles*`)")
        }
        _ => None,
    }
}

/// Stray punctuation, one character each: the generator's own list, wider
/// than the reply-opening cases a detector is built around.
const PUNCTUATION: &[&str] = &[
    ",", ".", ";", ":", "!", "?", ")", "]", "}", "、", "。", "」", "，", "．", "』", "》",
];
const TOKENS: &[&str] = &[
    "<|im_start|>assistant\n",
    "<|assistant|>",
    "</s>",
    "[INST]",
    "<|eot_id|>",
    "<start_of_turn>model\n",
];
const FRAGMENTS: &[&str] = &["ing", "tion", "'s", "ly"];

fn pick<'a>(pool: &[&'a str], rng: &mut impl Rng) -> &'a str {
    pool[rng.random_range(0..pool.len())]
}

/// Puts junk of `style` (drawn when `None`) before the text, in a shape
/// drawn among those a host produces for the style. A style that would
/// not show on this text falls back to stray punctuation: an asterisk
/// when the first paragraph already holds one, a clipped word when the
/// first word is too short or no later sentence starts with a capital to
/// show the clipping.
pub fn apply(style: Option<JunkStyle>, reply: Completion, rng: &mut impl Rng) -> Completion {
    let style = style.unwrap_or_else(|| JunkStyle::ALL[rng.random_range(0..JunkStyle::ALL.len())]);
    let shapes: Vec<JunkShape> = JunkShape::ALL
        .into_iter()
        .filter(|s| not_applicable(style, *s).is_none())
        .collect();
    let shape = shapes[rng.random_range(0..shapes.len())];
    match apply_shaped(style, shape, &reply.text, rng) {
        Some(text) => Completion { text, ..reply },
        None => {
            let text = apply_shaped(JunkStyle::StrayPunctuation, shape, &reply.text, rng)
                .or_else(|| {
                    apply_shaped(
                        JunkStyle::StrayPunctuation,
                        JunkShape::Glued,
                        &reply.text,
                        rng,
                    )
                })
                .unwrap_or_else(|| reply.text.clone());
            Completion { text, ..reply }
        }
    }
}

/// `text` with junk of `style` in `shape`, or `None` when the pair does
/// not apply ([`not_applicable`]) or the text cannot show it (an asterisk
/// already in the first paragraph, a word too short to clip, no first
/// word to put in bold).
pub fn apply_shaped(
    style: JunkStyle,
    shape: JunkShape,
    text: &str,
    rng: &mut impl Rng,
) -> Option<String> {
    if not_applicable(style, shape).is_some() {
        return None;
    }
    let text = text.trim_start();
    let junk = match style {
        JunkStyle::LoneAsterisk => {
            if text.split("\n\n").next().unwrap_or("").contains('*') {
                return None;
            }
            "*"
        }
        JunkStyle::TemplateToken => pick(TOKENS, rng),
        JunkStyle::WordFragment => pick(FRAGMENTS, rng),
        JunkStyle::StrayPunctuation => pick(PUNCTUATION, rng),
        JunkStyle::ClippedWord => {
            let clipped = clip(text, rng)?;
            return Some(match shape {
                JunkShape::AfterBom => format!("\u{FEFF}{clipped}"),
                _ => clipped,
            });
        }
    };
    let glued = junk.trim_end();
    Some(match shape {
        JunkShape::Spaced => format!("{glued} {text}"),
        JunkShape::Glued => format!("{glued}{text}"),
        JunkShape::AfterBom => format!("\u{FEFF}{glued}{text}"),
        JunkShape::InMarkdown => {
            let (word, rest) = first_word(text)?;
            format!("**{glued}{word}**{rest}")
        }
    })
}

/// The reply's first word and the rest: up to the first whitespace, at
/// most six characters in a script written without spaces; `None` when
/// the word already holds Markdown.
fn first_word(text: &str) -> Option<(&str, &str)> {
    let end = text
        .char_indices()
        .enumerate()
        .find(|(n, (_, c))| c.is_whitespace() || (*n >= 6 && !c.is_ascii()))
        .map_or(text.len(), |(_, (i, _))| i);
    let word = &text[..end];
    (!word.is_empty() && !word.contains(['*', '_', '`'])).then_some((word, &text[end..]))
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
