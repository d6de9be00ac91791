//! `junk_prefix`: the reply begins with punctuation or a token fragment the
//! prompt does not call for. One host of a model did this in 19 of 20
//! replies while 14 others did it in 0 of 49: a tokenizer or template bug
//! on a route, invisible to uptime monitoring.
//!
//! Checked on the start of the reply, leading whitespace ignored, in order:
//!
//! 1. A chat-template or special token (`<|im_start|>`, `<|assistant|>`,
//!    `</s>`, `[INST]`, `<start_of_turn>`, `</think>`, ...), or a bare role
//!    label line (`assistant`): fail, unless the user's message contains it.
//! 2. An invisible character (byte-order mark, zero-width space), or a
//!    garbled prefix: a first word that opens with mojibake (a byte-order
//!    mark read as Windows-1252, `ï»¿`, or a word whose UTF-8 was read so,
//!    `Ù…Ø±Ø­Ø¨Ù‹Ø§`) while the rest of the reply has words and no
//!    mojibake: fail. A reply garbled throughout is left to `language`.
//! 3. Stray punctuation: `,` `.` `;` `:` `!` `?` `)` `]` `}` and their
//!    full-width forms, `、` `。` `」` `』` `】` `》`, spaced (`. The`) or
//!    glued (`.The`, `、あなた`), at the start or inside the Markdown that
//!    opens the reply (`**.Your**`, `# .Your`): fail. A dot that starts a
//!    name (`.NET`, `.env`) is fine by the rule in `junk_prefix/shapes.rs`
//!    (ASCII token with an inner capital, digit or code punctuation, or a
//!    lowercase non-English word); a dot before a lowercase English word
//!    (`.profile`) is undetermined; `...` and `…` are undetermined. After a
//!    byte-order mark the rest is judged too and its junk named.
//! 4. A lone `*` or `**` whose emphasis is not closed in the first
//!    paragraph: fail. A roleplay action (`*smiles*`), bold (`**Yes.**`) or a
//!    bullet (`* item`) is fine.
//! 5. A word fragment: the reply starts with a lowercase letter. A suffix
//!    fragment glued to a capitalised word or a word of another script
//!    (`ingYour`, `'sThe`, `tionÉ`, `tionあなた`; not an acronym,
//!    `lyNASA`) fails, as does one inside the opening Markdown
//!    (`**ing Your**`, `**lyA**`). Fine when
//!    the prompt asks for a continuation, a list, a format or lowercase, when
//!    the user wrote that very word, when the word is an identifier (an
//!    inner capital, a digit or code punctuation: `iPhone`, `e.g.`), a
//!    surname's particle before a capitalised word (one of `van von de da
//!    di du del della der den ter ten le la dos das zu`: `van Gogh`,
//!    `de Gaulle`), or a command the reply also shows as code,
//!    opening an inline span or a fenced line (`npm install` over
//!    `` `npm install left-pad` ``), or a command by its shape (a known
//!    tool or an executable-shaped non-English word before a flag, a path
//!    or a subcommand: `kubectl get pods`, `ls -la`, `xargs の`; the rule
//!    and lists are in `junk_prefix/shapes.rs`). A leading `'s` is fine before a word
//!    that ends in `s` and is no English word by the lexicon of `detect.rs`
//!    (the Dutch genitive article: `'s ochtends`, `'s avonds`; `'s always`
//!    is a clipped `it's`). Fail
//!    when the first word is a known suffix fragment (`ing`, `tion`, `'s`)
//!    or when a later sentence starts with a capital (so the text does use
//!    capitals); undetermined otherwise (an all-lowercase style).
//!
//! Prompts that end mid-sentence make stray punctuation and fragments
//! undetermined rather than failures. Structured-output requests are left
//! to `schema`, empty replies to `empty`.
//!
//! Blind spots: a name that starts with a suffix and a capital (`edX`)
//! reads as a glued fragment; fragments in scripts without case (Japanese, Chinese); the
//! Dutch genitive before a word English also has (`'s winters`); a
//! clipped word that is still a word with a capital (`Ello` for `Hello`);
//! junk in the middle or at the end of a reply.

mod shapes;

use super::prompt::{self, Continuation};
use super::text::{is_blank, segments};
use super::{requested_format, Contract, ContractInput, ContractName, Outcome};
use shapes::DotStart;

/// Chat-template and special tokens that never belong in a reply.
pub const TEMPLATE_TOKENS: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|begin_of_text|>",
    "<|assistant|>",
    "<|user|>",
    "<|system|>",
    "<|end|>",
    "<|eos|>",
    "<｜Assistant｜>",
    "<｜end▁of▁sentence｜>",
    "</s>",
    "<s>",
    "<eos>",
    "<bos>",
    "<pad>",
    "<unk>",
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "<</SYS>>",
    "<start_of_turn>",
    "<end_of_turn>",
    "</think>",
    "<|channel|>",
    "<|message|>",
    "<|return|>",
];

/// Role labels a broken template leaves on a line of their own.
const ROLE_LABELS: &[&str] = &["assistant", "model", "gpt", "bot", "ai"];

/// Punctuation that cannot open a reply.
const STRAY: &[char] = &[
    ',', '.', ';', ':', '!', '?', ')', ']', '}', '、', '。', '，', '．', '；', '：', '！', '？',
    '）', '」', '』', '】', '》', '〉', '］', '｝',
];

/// Invisible characters that should never open a reply.
const INVISIBLE: &[char] = &['\u{FEFF}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}'];

/// Word endings that are never a word of their own at the start of a reply.
const SUFFIX_FRAGMENTS: &[&str] = &[
    "ing", "ed", "tion", "sion", "ment", "ness", "ly", "ity", "ous", "ive", "able", "ible", "'s",
    "'re", "'ll", "'ve", "'m", "'d", "n't",
];

/// The `junk_prefix` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct JunkPrefix;

impl Contract for JunkPrefix {
    fn name(&self) -> ContractName {
        ContractName::JunkPrefix
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        if is_blank(input.text) || requested_format(input.request).is_some() {
            return None;
        }
        Some(judge(input))
    }
}

fn judge(input: &ContractInput<'_>) -> Outcome {
    let text = input.text.trim_start_matches(|c: char| c.is_whitespace());
    if let Some(first) = text.chars().next().filter(|c| INVISIBLE.contains(c)) {
        // Judge what follows too, so junk after a byte-order mark is named.
        let rest = text.trim_start_matches(|c: char| INVISIBLE.contains(&c) || c.is_whitespace());
        let after = match judge_visible(input, rest) {
            Outcome::Fail { reason } => format!(", then: {reason}"),
            _ => String::new(),
        };
        return Outcome::fail(format!(
            "the reply starts with the invisible character U+{:04X}{after}",
            first as u32
        ));
    }
    judge_visible(input, text)
}

/// The checks after the invisible characters, on `text` (the reply from its
/// first visible character).
fn judge_visible(input: &ContractInput<'_>, text: &str) -> Outcome {
    let request = input.request;
    if let Some(word) = mojibake_prefix(text) {
        return Outcome::fail(format!(
            "the reply starts with the mojibake {word:?} and the rest is clean: its first bytes were decoded with the wrong encoding"
        ));
    }
    if let Some(token) = TEMPLATE_TOKENS.iter().find(|t| text.starts_with(**t)) {
        if prompt::user_mentions(request, token) {
            return Outcome::Pass;
        }
        return Outcome::fail(format!("the reply starts with the template token {token}"));
    }
    if let Some(generic) = generic_special_token(text) {
        if !prompt::user_mentions(request, generic) {
            return Outcome::fail(format!("the reply starts with the special token {generic}"));
        }
    }
    let first_line = text.lines().next().unwrap_or("").trim();
    if ROLE_LABELS.contains(&first_line) && text.lines().nth(1).is_some() {
        return Outcome::fail(format!(
            "the reply starts with the role label {first_line:?} left by the chat template"
        ));
    }
    let continuation = prompt::continuation(request);
    let Some(first) = text.chars().next() else {
        return Outcome::Pass;
    };
    if let Some(inner) = markdown_inner(text) {
        if let Some(out) = junk_in_markdown(input, inner, continuation) {
            return out;
        }
    }
    if first == '*' {
        return asterisk(text);
    }
    if first == '…' && continuation != Continuation::Asked {
        return Outcome::undetermined("the reply starts with an ellipsis");
    }
    if STRAY.contains(&first) {
        return punctuation(text, first, continuation);
    }
    if first.is_lowercase() || text.starts_with('\'') {
        return fragment(input, text, continuation);
    }
    Outcome::Pass
}

/// The first word, when it opens with a mis-decoded UTF-8 lead byte and
/// holds mojibake while the rest of the reply holds none (a garbled prefix;
/// a reply garbled throughout is the `language` contract's).
fn mojibake_prefix(text: &str) -> Option<&str> {
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let opens = word
        .chars()
        .next()
        .is_some_and(super::mojibake::is_lead_reading);
    let clean_rest = rest.chars().any(char::is_alphabetic) && super::mojibake::find(rest).is_none();
    (opens && clean_rest && super::mojibake::find(word).is_some()).then_some(word)
}

/// The text inside the Markdown that opens `text`: after a heading's `#`s
/// and up to three emphasis markers (`**.Your**` gives `.Your**`); `None`
/// when nothing opens it.
fn markdown_inner(text: &str) -> Option<&str> {
    let hashes = text.len() - text.trim_start_matches('#').len();
    let after_heading = if (1..=6).contains(&hashes) && text[hashes..].starts_with([' ', '\t']) {
        text[hashes..].trim_start_matches([' ', '\t'])
    } else {
        text
    };
    let markers = after_heading.len() - after_heading.trim_start_matches(['*', '_']).len();
    let inner = &after_heading[markers.min(3)..];
    (inner.len() < text.len()).then_some(inner)
}

/// Junk right inside the Markdown that opens the reply (`inner`, after
/// the markers): stray punctuation, a template token, a suffix fragment
/// spaced or glued. `None` when there is none, so the usual checks run.
fn junk_in_markdown(
    input: &ContractInput<'_>,
    inner: &str,
    continuation: Continuation,
) -> Option<Outcome> {
    let first = inner.chars().next()?;
    if STRAY.contains(&first) {
        let out = punctuation(inner, first, continuation);
        return (out != Outcome::Pass).then_some(out);
    }
    let token = TEMPLATE_TOKENS
        .iter()
        .copied()
        .find(|t| inner.starts_with(*t))
        .or_else(|| generic_special_token(inner));
    if let Some(token) = token.filter(|t| !prompt::user_mentions(input.request, t)) {
        return Some(Outcome::fail(format!(
            "the reply's opening Markdown starts with the template token {token}"
        )));
    }
    let word = inner
        .split(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_end_matches(|c: char| !c.is_alphanumeric());
    let fragment = SUFFIX_FRAGMENTS.contains(&word) || glued_fragment(word).is_some();
    (fragment && continuation != Continuation::Asked).then(|| {
        Outcome::fail(format!(
            "the reply's opening Markdown starts with the word fragment {word:?}"
        ))
    })
}

/// `ingYour`, `'sThe`, `tionあなた`: a suffix fragment glued to a
/// capitalised word or to a word in a script without Latin letters.
fn glued_fragment(word: &str) -> Option<&'static str> {
    let fragment = SUFFIX_FRAGMENTS
        .iter()
        .copied()
        .filter(|f| word.starts_with(*f))
        .max_by_key(|f| f.len())?;
    let remainder = &word[fragment.len()..];
    let next = remainder.chars().next()?;
    // `ingThe`, `tionÉ`, `'sC'est`; not an acronym (`lyNASA`).
    let acronym = remainder.chars().filter(|c| c.is_uppercase()).count() > 1;
    let capitalised = next.is_uppercase() && !acronym;
    let foreign = next.is_alphabetic() && !next.is_ascii() && !is_latin(next);
    (capitalised || foreign).then_some(fragment)
}

/// A letter of the Latin script (ASCII or Latin-1/Extended).
fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
        || ('\u{00C0}'..='\u{024F}').contains(&c)
        || ('\u{1E00}'..='\u{1EFF}').contains(&c)
}

/// A `<|...|>` or `<｜...｜>` token not in the list.
fn generic_special_token(text: &str) -> Option<&str> {
    for (open, close) in [("<|", "|>"), ("<｜", "｜>")] {
        if let Some(rest) = text.strip_prefix(open) {
            let end = rest.find(close)?;
            if end <= 40 && !rest[..end].contains(char::is_whitespace) {
                return Some(&text[..open.len() + end + close.len()]);
            }
        }
    }
    None
}

fn asterisk(text: &str) -> Outcome {
    let paragraph = text.split("\n\n").next().unwrap_or(text);
    let after = &paragraph[1..];
    if after.starts_with([' ', '\t']) || text.starts_with("***") || text.starts_with("* ") {
        return Outcome::Pass; // bullet or horizontal rule
    }
    let (marker, body) = match after.strip_prefix('*') {
        Some(body) => ("**", body),
        None => ("*", after),
    };
    if body.starts_with(char::is_whitespace) {
        return Outcome::Pass;
    }
    let closed = body.match_indices(marker).any(|(i, _)| {
        body[..i]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
    });
    if closed {
        Outcome::Pass
    } else {
        Outcome::fail(format!(
            "the reply starts with {marker} that is never closed, which breaks Markdown emphasis"
        ))
    }
}

fn punctuation(text: &str, first: char, continuation: Continuation) -> Outcome {
    if continuation == Continuation::Asked {
        return Outcome::Pass;
    }
    if text.starts_with("..") {
        return Outcome::undetermined("the reply starts with an ellipsis");
    }
    if first == '.' && text[1..].starts_with(|c: char| c.is_alphanumeric()) {
        match shapes::dot_start(&text[1..]) {
            DotStart::Name => return Outcome::Pass, // .NET, .env, .gitignore
            DotStart::Unsure if continuation != Continuation::Asked => {
                return Outcome::undetermined(
                    "the reply starts with a dot before a lowercase English word: a dotfile's name or a stray dot",
                );
            }
            _ => {}
        }
    }
    if continuation == Continuation::Possible {
        return Outcome::undetermined(format!(
            "the reply starts with {first:?}, and the user's message ends mid-sentence"
        ));
    }
    Outcome::fail(format!("the reply starts with a stray {first:?}"))
}

fn fragment(input: &ContractInput<'_>, text: &str, continuation: Continuation) -> Outcome {
    let request = input.request;
    let word: &str = text
        .split(|c: char| c.is_whitespace())
        .next()
        .unwrap_or("")
        .trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    if let Some(fragment) = glued_fragment(word) {
        if continuation != Continuation::Asked {
            return Outcome::fail(format!(
                "the reply starts with the word fragment {fragment:?} glued to {:?}",
                &word[fragment.len()..]
            ));
        }
    }
    if text.starts_with('\'') {
        // 's, 're, n't: contraction fragments; 'quoted' words are fine.
        let lower = word.to_lowercase();
        let next = text[word.len()..].split_whitespace().next().unwrap_or("");
        let dutch = lower == "'s" && is_dutch_genitive(next);
        if !SUFFIX_FRAGMENTS.contains(&lower.as_str()) || dutch {
            return Outcome::Pass;
        }
        if continuation == Continuation::Asked {
            return Outcome::Pass;
        }
        return Outcome::fail(format!("the reply starts with the word fragment {word:?}"));
    }
    if continuation == Continuation::Asked
        || prompt::user_wrote_word(request, word)
        || looks_like_identifier(word)
        || is_name_particle(word, text)
        || shown_as_code(word, text)
        || shapes::opens_with_command(text)
    {
        return Outcome::Pass;
    }
    if continuation == Continuation::Possible {
        return Outcome::undetermined(format!(
            "the reply starts with the lowercase word {word:?}, and the user's message ends mid-sentence"
        ));
    }
    if SUFFIX_FRAGMENTS.contains(&word) {
        return Outcome::fail(format!("the reply starts with the word fragment {word:?}"));
    }
    if prompt::asks_for_format(request) {
        return Outcome::Pass;
    }
    let last = prompt::last_user(request);
    let user_lowercase =
        last.chars().any(char::is_lowercase) && !last.chars().any(char::is_uppercase);
    let capitalised_later = !user_lowercase
        && segments(text).iter().skip(1).any(|s| {
            s.chars()
                .find(|c| c.is_alphabetic())
                .is_some_and(char::is_uppercase)
        });
    if capitalised_later {
        Outcome::fail(format!(
            "the reply starts with the lowercase fragment {word:?} although its other sentences start with a capital"
        ))
    } else {
        Outcome::undetermined(format!(
            "the reply starts with the lowercase word {word:?}, and nothing shows that the reply or the user writes with capitals"
        ))
    }
}

/// `'s ochtends`, `'s avonds`: the Dutch genitive article before a word
/// that ends in `s` and is no English word (`'s always` and `'s Squats`
/// are a clipped `it's` and a broken start).
fn is_dutch_genitive(next: &str) -> bool {
    let next = next
        .trim_end_matches(|c: char| !c.is_alphabetic())
        .to_lowercase();
    next.len() > 2 && next.ends_with('s') && !crate::detect::is_english_word(&next)
}

/// The particles of European surnames, written lowercase before the name.
const NAME_PARTICLES: &[&str] = &[
    "van", "von", "de", "da", "di", "du", "del", "della", "der", "den", "ter", "ten", "le", "la",
    "dos", "das", "zu",
];

/// `van Gogh`, `de Gaulle`, `von Trier`, `da Vinci`: a surname's particle
/// right before a capitalised word.
fn is_name_particle(word: &str, text: &str) -> bool {
    let mut words = text.split_whitespace();
    words.next() == Some(word)
        && NAME_PARTICLES.contains(&word)
        && words
            .next()
            .is_some_and(|next| next.starts_with(char::is_uppercase))
}

/// `npm install left-pad` over a code block that runs it: a command the
/// reply also shows as code (inline or fenced), where it opens the code.
fn shown_as_code(word: &str, text: &str) -> bool {
    let opens = |code: &str| code.split_whitespace().next() == Some(word);
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence && opens(line) {
            return true;
        }
        if !in_fence && line.split('`').skip(1).step_by(2).any(opens) {
            return true;
        }
    }
    false
}

/// `iPhone`, `eBay`, `x86`, `node_modules`, `user@example.com`: a word with
/// an inner capital, a digit or code punctuation is a name or an identifier.
fn looks_like_identifier(word: &str) -> bool {
    word.chars().skip(1).any(char::is_uppercase)
        || word.chars().any(|c| {
            c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | '@' | '(' | '=' | '<' | '-' | ':')
        })
}

#[cfg(test)]
mod tests;
