//! `junk_prefix`, the openings no writing convention explains. The rules of
//! `junk_prefix.rs` name the junk that templates, serialisers and tokenizers
//! are known to leave; this module judges the rest by the other side: a
//! reply opens with a letter, a digit, a Markdown or list marker, a
//! dialogue dash, a pictograph, a quote or bracket that closes, or a code
//! opening; what else stands before its first sentence is junk. So a prefix
//! nobody listed (`#$%@!`, `~`, `|`, a NUL byte, `\n` written out, `&nbsp;`,
//! a stray `<br>`, a piece of the JSON envelope) fails without a list of
//! its own.
//!
//! In order; from rule 2 on, not when the prompt asks for a
//! continuation. Each names its own exemption: the user wrote the
//! characters (a backslash for escapes, `&` or `<` for markup, the token
//! itself for symbols and tokens), or made them the topic (markup:
//! `html`, `entity`, `tag`; the wire: `json`, `api`, `stream`, `chunk`,
//! `payload`, ...); a control character, U+FFFD and a legacy code page's
//! garble have none; an escape before a space and a lowercase word is the
//! sentence's subject (`\t inserts a tab`):
//!
//! 1. A control character (C0 other than white space, DEL, C1, an ANSI
//!    escape) or U+FFFD, the mark of bytes that did not decode.
//! 2. An escape written out: `\n`, `\t` or `\r` before anything but a
//!    lowercase ASCII letter (`\nu`, `\theta`, `\rho` are LaTeX), `\"`,
//!    `\uXXXX`, `\xXX`, a URL's `%20` (a digit, then a hex digit).
//! 3. An HTML entity (`&nbsp;`, `&#39;`, `&#x27;`).
//! 4. An HTML tag (or several) before prose that never closes it
//!    (`<p>The…`), a void one (`<br>`, `<br/><br/>`) or a closing one
//!    (`</div>`); not before a space and a
//!    lowercase word, which makes the tag the subject (`<br> breaks a
//!    line`). Then a replacement character or byte-order mark read in a
//!    legacy code page (`ï¿½`, `ďż˝`, `п»ї`), and `Â` before a space (a
//!    no-break space read as Windows-1252).
//! 5. A piece of the wire: a server-sent event's `data:` before `{`,
//!    `[DONE]` or a capital, a JSON member cut out of its braces
//!    (`"content":"The…`), or a JSON object carrying the keys of a chat
//!    API response (`"choices"`, `"delta"`, `"id":"chatcmpl-…`), whole or
//!    cut.
//! 6. Symbols before the first word:
//!    - an opening quote, bracket or backtick (`"`, `«`, `„`, `(`, `[`,
//!      `「`, `¿`; `` ` `` closes with `` ` `` or, GNU-style, `'`) never
//!      closed in the first paragraph; a code fence never closed whose
//!      first line is prose (`` ```The capital is… ``);
//!    - a run of symbols followed by a space and a sentence (a capital or a
//!      letter of a script without case), unless it is a marker of its own
//!      (a bullet, a heading's `#`s, `>`, a dialogue dash, `|` of a table
//!      row, a comment's `//` or `--`, a prompt's `$`, an arrow, a rule, a
//!      check box, a pictograph, an emoticon such as `^^` or `^_^`); a
//!      lowercase word after the space makes the symbol its subject or a
//!      flourish (`^ anchors the match`, `~ hey there!`);
//!    - a run of symbols glued to a capitalised word or a letter of a
//!      script without case: one sign of a convention (`#`, `@`, `-`, `/`,
//!      `\`, `=`, `%`, `&`, `+`, `$`) only before a word that opens
//!      sentences (`#The`, not `#Hashtag`, `-Wall`, `/Users`, `=SUM`) or,
//!      for those that only start ASCII words (`\`, `=`, `%`, `&`, `+`,
//!      `$`), before a letter outside ASCII (`\Столица`), an
//!      emphasis marker (`_`, `__`, `~~`) only when never closed, anything
//!      else (`~The`, `|The`, `#$%@!The`, boxes a font draws for a
//!      missing glyph, `☐☐☐The`) always; a path (`~/Documents`), a pair
//!      on the first line (`$A = \pi r^2$`, `%PATH%`, `|a|b|`), a bullet
//!      (`•Point`, `・項目`), a run of dashes (`——因为`, `—Hola`) and a
//!      casual tilde before a script without case (`〜申し訳`, `~좋아요`)
//!      are fine.
//! 7. A token before the first sentence: a placeholder (`TODO`, `FIXME`,
//!    `TBD`) before a word that opens sentences; a random token (five ASCII
//!    letters and digits or more, digits and lowercase letters each
//!    coming back: `xK9qZ2vLp`, not `SOCKSv5`, `Fe2O3`) before a sentence
//!    in any script; lowercase ASCII letters or
//!    digits glued to a word that opens sentences (`asdfThe`, `0The`,
//!    `0x1fThe`), or a first word of ASCII letters and digits, no English
//!    word (`xyz123`, `0x1f`, `asdf`), followed by a space and a
//!    capitalised word that opens sentences (`xyz123 The capital…`).
//!
//! Blind spots: junk of letters alone before a word that opens no sentence
//! (`qwe Canberra is…`) or before a script without case or spaces
//! (`xx12 عاصمة`, `ㅁㄴㅇㄹ 호주의`, `asdf澳大利亚`: undetermined at best); a
//! capitalised junk word (`Xk9q The…`); symbols the user also wrote.

use super::super::prompt::{self, Continuation};
use super::{is_latin, opens_sentence, shapes, user_ever_wrote};
use crate::{ContractInput, Outcome};

/// Elements of HTML a reply may open with when markup leaks into text.
const HTML_TAGS: &[&str] = &[
    "p",
    "br",
    "hr",
    "wbr",
    "div",
    "span",
    "b",
    "i",
    "u",
    "em",
    "strong",
    "small",
    "font",
    "center",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "html",
    "body",
    "pre",
    "blockquote",
    "table",
    "tr",
    "td",
    "section",
    "article",
    "main",
    "a",
];

/// Tags that never close (`<br>`): before prose they are always a leak.
const VOID_TAGS: &[&str] = &["br", "hr", "wbr"];

/// Keys of a chat API's response body (OpenAI chat and Responses,
/// Anthropic Messages, Gemini): a reply that carries them is the envelope,
/// not the text in it.
const ENVELOPE_KEYS: &[&str] = &[
    "\"delta\"",
    "\"chat.completion",
    "\"finish_reason\"",
    "\"candidates\"",
    "\"content_block",
    "\"message_start\"",
    "\"response.output",
    "\"chatcmpl-",
    "\"role\":\"assistant\"",
    "\"role\": \"assistant\"",
];

/// Words of a user message that make a chat API's envelope the topic.
const ENVELOPE_TOPICS: &[&str] = &[
    "json",
    "api",
    "choices",
    "delta",
    "completion",
    "completions",
    "sse",
    "stream",
    "streamed",
    "streaming",
    "chunk",
    "chunks",
    "payload",
    "raw",
    "event",
    "events",
];

/// Words that make markup the topic: a reply may then open with a tag or
/// an entity it explains.
const MARKUP_TOPICS: &[&str] = &["html", "xml", "entity", "entities", "tag", "tags", "markup"];

/// Placeholders left where text should be (`TODO The capital…`).
const PLACEHOLDERS: &[&str] = &["TODO", "FIXME", "TBD", "XXX", "PLACEHOLDER"];

/// Markers that open a line on their own, before a space: bullets, a
/// heading's `#`s, quotes, dialogue dashes, arrows, comments, prompts,
/// rules, reference marks.
const MARKERS: &[&str] = &[
    "-", "+", "•", "·", "‣", "◦", "▪", "▫", "►", "▶", "→", "⇒", "—", "–", ">", ">>", ">>>", "#",
    "##", "###", "####", "#####", "######", "//", "/*", "--", "$", "%", "=", "---", "***", "___",
    "*", "**", "::", "§", "¶", "†", "‡", "※", "№", "°", "<!--", "->", "=>", "<-", "<=", "<->", "☐",
    "☑", "☒", "□", "■", "\\[", "\\(", "$$", "///", "%%", "==>", "・",
];

/// Markers that may touch the word they mark (`•Point`, `・項目`,
/// `※注意`, Spanish dialogue `—Hola`).
const GLUED_MARKERS: &[&str] = &[
    "•", "・", "※", "＊", "·", "→", "►", "▶", "‣", "◦", "▪", "▫", "—", "–", "⇒", "§", "¶", "†",
    "‡", "№", "°",
];

/// One sign of a convention glued to a word (`#hashtag`, `@name`, `-Wall`,
/// `/Users`, `\frac`, `=SUM`, `%PATH%`, `&mut`, `+Inf`, `$HOME`, a
/// control key `^C`): junk only before a word that opens sentences.
const CONVENTION_SIGNS: &[&str] = &["#", "@", "-", "--", "/", "\\", "=", "%", "&", "+", "$", "^"];

/// Emphasis markers glued to a word: junk only when never closed.
const EMPHASIS: &[&str] = &["_", "__", "~~"];

/// Openers and what may close them.
const PAIRS: &[(char, &str)] = &[
    ('"', "\"”“"),
    ('“', "”\"“"),
    ('„', "“”\""),
    ('«', "»"),
    ('‹', "›"),
    ('»', "«"),
    ('›', "‹"),
    ('‚', "‘’'"),
    ('﴿', "﴾"),
    ('［', "］"),
    ('〔', "〕"),
    ('＜', "＞"),
    ('≪', "≫"),
    ('〖', "〗"),
    ('〘', "〙"),
    ('\'', "'’"),
    ('‘', "’'"),
    ('`', "`'"),
    ('(', ")"),
    ('[', "]"),
    ('「', "」"),
    ('『', "』"),
    ('《', "》"),
    ('【', "】"),
    ('〈', "〉"),
    ('（', "）"),
    ('¿', "?"),
    ('¡', "!"),
];

/// The verdict on the opening of `text` (the reply from its first visible
/// character) by the rules above; `None` when none applies.
pub(super) fn judge(
    input: &ContractInput<'_>,
    text: &str,
    continuation: Continuation,
) -> Option<Outcome> {
    let user_wrote = |s: &str| {
        prompt::user_texts(input.request)
            .iter()
            .any(|t| t.contains(s))
    };
    if let Some(c) = text.chars().next().filter(|c| is_undecoded(*c)) {
        let what = match c {
            '\u{1b}' => "an ANSI escape sequence (U+001B)".to_string(),
            '\u{FFFD}' => "U+FFFD, the mark of bytes that did not decode".to_string(),
            c => format!("the control character U+{:04X}", c as u32),
        };
        return Some(Outcome::fail(format!("the reply starts with {what}")));
    }
    if continuation == Continuation::Asked {
        return None;
    }
    if let Some(escape) =
        written_escape(text).filter(|e| !user_wrote("\\") && !escape_is_subject(text, e))
    {
        return Some(Outcome::fail(format!(
            "the reply starts with the escape {escape} written out: a serialised string was not decoded"
        )));
    }
    let topic = |words: &[&str]| words.iter().any(|w| user_ever_wrote(input.request, w));
    let markup_topic = || user_wrote("<") || user_wrote("&") || topic(MARKUP_TOPICS);
    if let Some(entity) = entity(text) {
        return Some(unless_topic(markup_topic(), || {
            format!("the reply starts with the HTML entity {entity} written out")
        }));
    }
    if let Some(garble) = ["ï¿½", "ďż˝", "п»ї", "ï»¿"]
        .iter()
        .find(|g| text.starts_with(**g))
    {
        return Some(Outcome::fail(format!(
            "the reply starts with {garble:?}: a replacement character or byte-order mark whose UTF-8 was read in a legacy code page"
        )));
    }
    if text.starts_with("Â ") || text.starts_with("Â\u{a0}") {
        return Some(Outcome::fail(
            "the reply starts with \"Â\" before a space: a no-break space whose UTF-8 was read as Windows-1252",
        ));
    }
    if let Some(tag) = leaked_tag(text) {
        return Some(unless_topic(markup_topic(), || {
            format!("the reply starts with the HTML tag {tag} before its text")
        }));
    }
    if let Some(piece) = wire_piece(text) {
        let envelope_topic = user_wrote("data:") || topic(ENVELOPE_TOPICS);
        return Some(unless_topic(envelope_topic, || {
            format!("the reply starts with {piece}: the response's wire format, not its text")
        }));
    }
    if let Some(out) = symbols(text) {
        let token: &str = text.split(char::is_whitespace).next().unwrap_or("");
        return (!user_wrote(token)).then_some(out);
    }
    alphanumeric(text)
        .filter(|token| !user_wrote(token))
        .map(|token| {
            Outcome::fail(format!(
                "the reply starts with {token:?} before its first sentence"
            ))
        })
}

/// A pass when the user made the shape the topic, else a failure for
/// `reason`.
fn unless_topic(topic: bool, reason: impl FnOnce() -> String) -> Outcome {
    if topic {
        Outcome::Pass
    } else {
        Outcome::fail(reason())
    }
}

/// Whether the escapes opening `text` (the first is `first`) are the
/// subject of its sentence: a space and a lowercase word follow them
/// (`\t inserts a tab`, `\r\n on Windows`).
fn escape_is_subject(text: &str, first: &str) -> bool {
    let mut rest = &text[first.len()..];
    while let Some(more) = written_escape(rest) {
        rest = &rest[more.len()..];
    }
    rest.strip_prefix(' ')
        .is_some_and(|r| r.starts_with(char::is_lowercase))
}

/// A control character other than white space, or U+FFFD.
fn is_undecoded(c: char) -> bool {
    (c.is_control() && !c.is_whitespace()) || c == '\u{FFFD}'
}

/// `\n`, `\t`, `\r` (not before a lowercase ASCII letter: `\nu`,
/// `\theta`), `\"`, `\uXXXX`, `\xXX` at the start of `text`.
fn written_escape(text: &str) -> Option<&str> {
    if let Some(code) = text.strip_prefix('%') {
        // A URL's percent escape (`%20`, `%3A`): a digit, then a hex digit.
        let mut chars = code.chars();
        // Glued to a letter (`%20The`): `%20 is…` is its subject, and
        // Turkish writes a percentage so (`%100 doğal`, `%20 KDV`).
        let url = chars.next().is_some_and(|c| c.is_ascii_digit())
            && chars.next().is_some_and(|c| c.is_ascii_hexdigit())
            && chars.next().is_some_and(char::is_alphabetic);
        return url.then(|| &text[..3]);
    }
    let rest = text.strip_prefix('\\')?;
    let hex = |n: usize| {
        rest.get(1..1 + n)
            .is_some_and(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
    };
    let len = match rest.chars().next()? {
        'n' | 't' | 'r' => {
            let after = rest[1..].chars().next();
            if after.is_some_and(|c| c.is_ascii_lowercase()) {
                return None;
            }
            2
        }
        '"' => 2,
        'u' if hex(4) => 6,
        'x' if hex(2) => 4,
        _ => return None,
    };
    Some(&text[..len])
}

/// `&name;`, `&#NNN;` or `&#xHH;` at the start of `text`.
fn entity(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('&')?;
    let end = rest.find(';')?;
    let body = &rest[..end];
    let named = (2..=8).contains(&body.len()) && body.chars().all(|c| c.is_ascii_alphabetic());
    let numeric = body.strip_prefix('#').is_some_and(|n| {
        let digits = n.strip_prefix(['x', 'X']).map_or((n, 10), |h| (h, 16));
        (1..=7).contains(&digits.0.len()) && digits.0.chars().all(|c| c.is_digit(digits.1))
    });
    (named || numeric).then(|| &text[..end + 2])
}

/// An HTML tag opening `text` before prose: a void tag, or one the reply
/// never closes.
fn leaked_tag(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('<')?;
    let end = rest.find('>')?;
    if let Some(name) = rest[..end].strip_prefix('/') {
        // A closing tag closes nothing at the start of a reply.
        let prose = rest[end + 1..]
            .trim_start()
            .starts_with(char::is_alphabetic);
        let known = HTML_TAGS.contains(&name.trim().to_ascii_lowercase().as_str());
        return (known && prose).then(|| &text[..end + 2]);
    }
    let name = rest[..end].trim_end_matches('/').trim_end();
    let lower = name.to_ascii_lowercase();
    if !HTML_TAGS.contains(&lower.as_str()) {
        return None;
    }
    let mut after = rest[end + 1..].trim_start();
    // More tags of the same leak (`<br/><br/>A cloud…`).
    while let Some(more) = after
        .strip_prefix('<')
        .and_then(|r| Some(&r[r.find('>')? + 1..]))
    {
        after = more.trim_start();
    }
    // Prose must follow; a lowercase word after a space makes the tag the
    // sentence's subject (`<br> breaks a line`).
    let spaced = rest[end + 1..].starts_with(' ');
    if !after.starts_with(char::is_alphabetic) || spaced && after.starts_with(char::is_lowercase) {
        return None;
    }
    let closed = text.to_ascii_lowercase().contains(&format!("</{lower}"));
    (VOID_TAGS.contains(&lower.as_str()) || !closed).then(|| &text[..end + 2])
}

/// A server-sent event's `data:` line, or a chat API's JSON envelope, at
/// the start of `text`.
fn wire_piece(text: &str) -> Option<String> {
    if let Some(rest) = text.strip_prefix("data:") {
        let rest = rest.trim_start_matches([' ', '\t']);
        if rest.starts_with('{')
            || rest.starts_with("[DONE]")
            || rest.starts_with(char::is_uppercase)
        {
            return Some("a server-sent event's `data:` line".to_string());
        }
    }
    if let Some(member) = json_member(text) {
        return Some(format!("the JSON member {member}"));
    }
    if !(text.starts_with('{') || text.starts_with("[{")) {
        return None;
    }
    let head: String = text.chars().take(400).collect();
    ENVELOPE_KEYS
        .iter()
        .find(|k| head.contains(**k))
        .map(|k| format!("a chat API's JSON envelope (it carries {k})"))
}

/// `"key":` at the start of `text`: a member of a JSON object cut out of
/// its braces.
fn json_member(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('"')?;
    let end = rest.find('"')?;
    let key = &rest[..end];
    let named =
        (1..=30).contains(&key.len()) && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    // A member: its value is JSON (`"content":"The…`), not prose
    // (`"Hygge": a Danish word`).
    let value = rest[end + 1..]
        .trim_start()
        .strip_prefix(':')
        .map(str::trim_start)
        .is_some_and(|v| {
            v.starts_with(['"', '{', '['])
                || v.starts_with(|c: char| c.is_ascii_digit())
                || ["true", "false", "null"].iter().any(|w| v.starts_with(w))
        });
    (named && value).then(|| &text[..end + 2])
}

/// The verdict on symbols before the first word, `None` when there are
/// none or they follow a convention.
fn symbols(text: &str) -> Option<Outcome> {
    let first = text.chars().next()?;
    if let Some(body) = text.strip_prefix("```") {
        // A fence's info string names a language; prose glued to a fence
        // never closed is junk before the text (a fence before a line of
        // prose is the fence rule's).
        let info = body.lines().next().unwrap_or("");
        let prose = info.split_whitespace().count() >= 3 && !body.contains("```");
        return prose.then(|| {
            Outcome::fail("the reply starts with a code fence glued to its prose, never closed")
        });
    }
    let after_first = &text[first.len_utf8()..];
    let elided = after_first.starts_with(|c: char| c.is_lowercase() || c.is_ascii_digit())
        || after_first.starts_with("Tis")
        || after_first.starts_with("Twas");
    if first == '\'' && elided {
        return None; // `'s`, `'90s`, `'Tis`: an elision, or the fragment rule's
    }
    if let Some(&(_, closers)) = PAIRS.iter().find(|(open, _)| *open == first) {
        let paragraph = text.split("\n\n").next().unwrap_or(text);
        let closed = paragraph[first.len_utf8()..].contains(|c| closers.contains(c));
        return (!closed).then(|| {
            Outcome::fail(format!(
                "the reply starts with {first} that is never closed in its first paragraph"
            ))
        });
    }
    let end = text
        .find(|c: char| c.is_alphanumeric() || c.is_whitespace())
        .unwrap_or(text.len());
    let run = &text[..end];
    if run.is_empty() || run.chars().all(is_pictograph) || shapes::emoticon(text) {
        return None;
    }
    let rest = &text[end..];
    let next = rest.chars().next();
    match next {
        Some(c) if c.is_whitespace() => {
            let after = rest.trim_start();
            let table = run == "|" && text.lines().next().is_some_and(|l| l[1..].contains('|'));
            // Before a sentence: a capital or a letter of a script without
            // case. A lowercase word after a space makes the symbol its
            // subject or a casual flourish (`^ anchors the match`,
            // `~ hey there!`).
            let prose = after.starts_with(|c: char| c.is_alphabetic() && !c.is_lowercase());
            // A run the line repeats (`== Geschichte ==`) or a run of dashes
            // (`—— 鲁迅`) marks its line.
            let repeated = text
                .lines()
                .next()
                .is_some_and(|l| l[run.len()..].contains(run));
            let dashes = run.chars().all(is_dash);
            (prose && !MARKERS.contains(&run) && !table && !repeated && !dashes).then(|| {
                Outcome::fail(format!(
                    "the reply starts with the stray symbols {run:?} before its text"
                ))
            })
        }
        Some(c) if c.is_alphabetic() => glued_symbols(text, run, rest),
        _ => None,
    }
}

/// Symbols glued to the first word (`run`, then `rest`).
fn glued_symbols(text: &str, run: &str, rest: &str) -> Option<Outcome> {
    let token_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let token = &rest[..token_end];
    let path = token.contains(['/', '\\']) || run.ends_with(['/', '\\']) && run.len() > 1;
    let line = rest.lines().next().unwrap_or("");
    let dashes = run.chars().all(is_dash);
    // A list or a dialogue: a later line opens with the same run
    // (`-Hola, ¿cómo estás?` then `-Bien`).
    let listed = text
        .lines()
        .skip(1)
        .any(|l| l.trim_start().starts_with(run));
    if path || line.contains(run) || GLUED_MARKERS.contains(&run) || dashes || listed {
        return None; // a path (~/Documents), a pair (%PATH%, |a|b|, $x$), a bullet, a dash (——因为)
    }
    let word_end = rest
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(rest.len());
    let ends_token = rest[word_end..]
        .chars()
        .next()
        .is_none_or(|c| c.is_whitespace() || ",;:!?".contains(c));
    let first = rest.chars().next()?;
    let capitalised = first.is_uppercase()
        && rest[first.len_utf8()..word_end]
            .chars()
            .all(|c| !c.is_uppercase());
    let caseless = !first.is_uppercase() && !first.is_lowercase();
    let fail = || {
        Some(Outcome::fail(format!(
            "the reply starts with the symbols {run:?} glued to its first word"
        )))
    };
    if CONVENTION_SIGNS.contains(&run) {
        // A LaTeX command, a variable, a formula or an entity is ASCII.
        let ascii_only = ["\\", "%", "&", "$"].contains(&run);
        return if capitalised && ends_token && opens_sentence(rest)
            || ascii_only && !first.is_ascii()
        {
            fail()
        } else {
            None
        };
    }
    if EMPHASIS.contains(&run) {
        let paragraph = text.split("\n\n").next().unwrap_or(text);
        let closed = paragraph[run.len()..].contains(run);
        return if closed || !(capitalised || caseless) {
            None
        } else {
            fail()
        };
    }
    // A tilde of casual writing before a word of a script without case
    // (`〜申し訳`, `~좋아요`, `～还不错`).
    let tildes = run.chars().all(|c| matches!(c, '~' | '〜' | '～'));
    if capitalised || caseless && !tildes || (first.is_uppercase() && !is_latin(first)) {
        return fail();
    }
    None
}

/// A dash of any width.
fn is_dash(c: char) -> bool {
    matches!(c, '—' | '–' | '―' | '‒' | '‐')
}

/// A pictograph or what joins and varies them (emoji, check marks,
/// arrows, stars): a reply may open with one.
fn is_pictograph(c: char) -> bool {
    // Boxes are what a font draws for a character it lacks (tofu):
    // glued to a word they are junk; spaced they are check boxes
    // ([`MARKERS`]).
    !matches!(c, '□' | '☐' | '▯' | '■')
        && matches!(c as u32,
        0x2190..=0x21FF | 0x2300..=0x23FF | 0x2460..=0x24FF | 0x25A0..=0x27BF
        | 0x2900..=0x297F | 0x2B00..=0x2BFF | 0x1F000..=0x1FAFF
        | 0x2200..=0x22FF | 0x203C | 0x2049 | 0x3030 | 0x303D | 0x3297 | 0x3299
        | 0xFE0E | 0xFE0F | 0x200D | 0x20E3 | 0xA9 | 0xAE | 0x2122)
}

/// A token of ASCII letters and digits before the first sentence: glued
/// to a word that opens sentences (`asdfThe`, `0The`), or a first word
/// that is no English word followed by one (`xyz123 The`). `None` when
/// there is none.
fn alphanumeric(text: &str) -> Option<&str> {
    if let Some(placeholder) = PLACEHOLDERS.iter().find(|p| {
        text.strip_prefix(**p)
            .and_then(|r| r.strip_prefix(' '))
            .is_some_and(|r| r.starts_with(char::is_uppercase) && opens_sentence(r))
    }) {
        return Some(placeholder);
    }
    if let Some(random) = random_token(text) {
        return Some(random);
    }
    let lead = text
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .unwrap_or(text.len());
    if lead == 0 {
        return None;
    }
    let (token, rest) = text.split_at(lead);
    if rest.starts_with(|c: char| c.is_uppercase()) {
        let word_end = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        let ends = rest[word_end..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || ",;:!?".contains(c));
        let single_case = rest[..word_end].chars().skip(1).all(|c| !c.is_uppercase());
        // A word of two letters at least: `1A fuse`, `10nA` are units.
        let word = word_end >= 2 && rest[..word_end].chars().count() >= 2;
        return (ends && single_case && word && opens_sentence(rest)).then_some(token);
    }
    let after = rest.strip_prefix(' ')?;
    let digits = token.chars().any(|c| c.is_ascii_digit());
    let letters = token.chars().any(|c| c.is_ascii_alphabetic());
    // Digits with a unit or a version (`9h`, `14h30`, `8am`, `v2`) are no
    // junk; a hex literal (`0x1f`) or letters and digits (`xyz123`) are.
    let letter_count = token.chars().filter(|c| c.is_ascii_alphabetic()).count();
    let junk = if digits {
        letters && (token.starts_with("0x") || letter_count >= 3)
    } else {
        token.len() >= 2 && !crate::detect::is_english_word(token) && !opens_sentence(token)
    };
    let next_opens = after.starts_with(|c: char| c.is_uppercase()) && opens_sentence(after) && {
        let end = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        after[..end].chars().skip(1).all(|c| !c.is_uppercase())
    };
    (junk && next_opens).then_some(token)
}

/// A first word of five ASCII letters and digits or more in which digits
/// and lowercase letters each come back at least twice (`xK9qZ2vLp`,
/// `3f9ZqPw1`, `zq7Yb1`), then a space and a sentence (a capital, a
/// letter of a script without case, `¿`, `¡`): a random token. A name
/// or a formula has one run of digits or of lowercase letters
/// (`SOCKSv5`, `iPhone15`, `MacBookPro16`, `Fe2O3`, `H2SO4`).
fn random_token(text: &str) -> Option<&str> {
    let (token, after) = text.split_once(' ')?;
    let ascii = token.len() >= 5 && token.chars().all(|c| c.is_ascii_alphanumeric());
    let runs = |class: fn(&char) -> bool| {
        let mut count = 0;
        let mut inside = false;
        for c in token.chars() {
            let now = class(&c);
            count += usize::from(now && !inside);
            inside = now;
        }
        count
    };
    let scattered = runs(char::is_ascii_digit) >= 2 && runs(char::is_ascii_lowercase) >= 2;
    // A commit or object hash (`a3f5b2c Fix login bug`).
    let hash = token
        .chars()
        .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
    let sentence = after
        .starts_with(|c: char| (c.is_alphabetic() && !c.is_lowercase()) || c == '¿' || c == '¡');
    (ascii && scattered && !hash && sentence).then_some(token)
}
