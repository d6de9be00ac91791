//! What the user wrote in their own words, apart from what they pasted.
//! A user who writes in Italian and pastes an English log, stack trace,
//! e-mail or `git status` (fenced as code or not) is still writing in
//! Italian: the pasted block must not decide the conversation's language,
//! or the correct Italian reply fails as a switch to Italian.
//!
//! The rule: the conversation's language is detected from the user's own
//! words, the user messages without their code fences, inline code, URLs
//! and pasted lines. A line is pasted when it is (trimmed):
//! - quoted (`>`), an e-mail header (`From:`, `To:`, `Cc:`, `Subject:`,
//!   `Date:`, `Sent:`, `Reply-To:`) or an attribution (`... wrote:`);
//! - log-like: a date or a time among its first three tokens (`Mar 01
//!   12:05:02`), a `[bracketed]` first field, or it
//!   holds a log level in capitals (`ERROR`, `WARN`, `INFO`, `DEBUG`,
//!   `TRACE`, `FATAL`, `CRITICAL`), or opens with a tool's lowercase
//!   prefix (`error:`, `fatal:`, `warning:`, `hint:`, `note:`, `npm ERR!`,
//!   `error[E0308]:`);
//! - a stack trace: `at pkg.Class.method(File.java:12)`, `File "x.py",
//!   line 3`, `Traceback (most recent call last):`, `Caused by:`, a
//!   `SomeError:` or `pkg.SomeException:` opening, `panicked at`;
//! - command input or output: a shell prompt (`$ `, `% `, `# `, `> `,
//!   `PS C:\>`, `>>> `, `user@host:~$`), git's report lines (`On branch`,
//!   `Changes not staged`, `modified:`, `new file:`, `deleted:`,
//!   `Untracked files:`, `(use "git ...`, `nothing to commit`), a
//!   permission string (`drwxr-xr-x`), or a line indented by a tab or four
//!   spaces;
//! - code: it ends with `;`, `{` or `}`, or holds `()`, `) {`, ` = `,
//!   `==`, `=>`, `->`, `::`, `['` or `("`;
//! - a path or dominated by code punctuation: its first token is a path
//!   (`/`, `./`, `~/`, `C:\`), or a fifth or more of its visible
//!   characters (two at least) are code punctuation (`{}[]()<>=;_/\|$#@*&`;
//!   not the quotes, apostrophes and colons of prose), or fewer than half
//!   of them are letters.
//!
//! A line between two pasted lines of the same paragraph is pasted too
//! (the plain lines of a log).
//!
//! Within the lines left, two marks of a paste are taken out too:
//! - a quote: an opening mark (`"`, `'`, `“`, `‘`, `„`, `‚`, `«`, `»`,
//!   `‹`, `「`, `『`) followed by something other than a space, up to the
//!   first mark that closes it (`"`, `'`, `”`, `’`, `“`, `‘`, `»`, `«`,
//!   `›`, `」`, `』`) on the same line, preceded by something other than a
//!   space, with at least one letter between them. `'`, `‘` and `’` are
//!   also apostrophes: between two letters or digits both CJK or neither
//!   (`m'a`, `Let's`, `l'homme`, `Let’s`) they neither open nor close, an
//!   opening one does not follow such a letter (`'s avonds`, `users'`),
//!   and a closing one may touch a word of another script (`'Tell
//!   me'라는`). The quotes go only when at least [`MIN_OWN_LETTERS`]
//!   letters (weighted, a CJK character three) of the user's own are left;
//!   otherwise the message keeps them. They go whatever their language (a
//!   quote in the user's own language leaves the guess to the rest).
//! - what a colon introduces in another language: after a colon (`:`
//!   followed by a space or a line break, or a full-width `：`), the
//!   sentences are pasted when the first of them ([`MIN_SEGMENT_LETTERS`]
//!   letters or more) is reliably in a language `Y` and the clause before
//!   the colon (from its sentence's start on that line, without its
//!   code-like tokens such as `ModuleNotFoundError`, [`MIN_OWN_LETTERS`]
//!   letters or more, all in one script: `Pythonで` is no clause) is in
//!   another language `X` (top guess at
//!   [`SEGMENT_CONFIDENCE`] or more), each at least [`FOREIGN_RATIO`] times
//!   as likely as the other's language (a sentence the English-first path
//!   of `detect.rs` takes counts as English). The paste runs on over the
//!   next sentences, across lines, to the last one whose top guess is `Y`
//!   at [`SEGMENT_CONFIDENCE`] or more, and stops at the first whose top
//!   guess is another language at that confidence (`Erklär es mir bitte.`
//!   after the English ends it); sentences too short or unsure to tell
//!   between two in `Y` go with it.
//!
//! The user's own words then decide the conversation's language (in
//! `language.rs`): a message whose own words are in `X` around an English
//! quote or paste is an `X` conversation, and an English reply to it is a
//! switch; an English message quoting French stays English. Once a quote
//! or a colon paste is taken out, [`MIN_OWN_LETTERS`] letters of the
//! user's own are enough to guess from (not the 20 a message needs
//! otherwise). When nothing is left of the user's own words, the whole
//! text may still guess the language, but only weakly: a weak guess
//! confirms a reply and fails none, with one exception. A reply reliably
//! in the language of what was taken out of the last user message (itself
//! reliably detected) fails as a switch when that message's own words put
//! another language first, at
//! [`WEAK_CONFIDENCE`](crate::detect::WEAK_CONFIDENCE) or more and at
//! least [`FOREIGN_RATIO`] times as likely as the taken-out one (`O que
//! quer dizer '...'?` with an English reply).
//!
//! Second rule, in `language.rs`: a reply in a language the user wrote a
//! sentence in (of their own words, reliably detected) never fails as a
//! switch, whatever the conversation's language was guessed to be.
//!
//! Blind spots: a pasted English sentence with no mark of a paste (plain
//! prose copied from a web page, set apart by nothing but a line break or
//! a question mark: `Czy powinienem aplikować? We are looking for...`)
//! counts as the user's own words, and so does a paste after a colon whose
//! clause is too short or unsure (`Hinweis: ...`) or a quote that leaves
//! fewer than [`MIN_OWN_LETTERS`] letters; a quote the user meant as their
//! own words (a title, a phrase they use) is not counted, and a message of
//! a few own words around it is then guessed from those few; a colon
//! sentence in the user's own language that lingua reads as another
//! language can be taken for a paste (both guesses must be clear, by
//! [`FOREIGN_RATIO`], for it to be); a user's own line that opens with a
//! date or a path counts as pasted.

use crate::detect::{
    FOREIGN_RATIO, MIN_MASKED_LETTERS, MIN_SEGMENT_LETTERS, RELIABLE_CONFIDENCE, SEGMENT_CONFIDENCE,
};
use crate::script::{self, is_code_like};
use crate::text::{is_cjk, segments, weighted_letters};
use crate::Language;
use std::borrow::Cow;
use std::ops::Range;

/// E-mail headers that open a pasted message's lines.
const HEADERS: &[&str] = &[
    "from:",
    "to:",
    "cc:",
    "bcc:",
    "subject:",
    "date:",
    "sent:",
    "reply-to:",
];

/// Log levels, written in capitals by loggers.
const LEVELS: &[&str] = &[
    "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "TRACE", "FATAL", "CRITICAL", "SEVERE",
];

/// Lowercase prefixes of tool output and git's report lines.
const OUTPUT_PREFIXES: &[&str] = &[
    "error:",
    "error[",
    "fatal:",
    "warning:",
    "hint:",
    "note:",
    "npm err!",
    "npm warn",
    "caused by:",
    "traceback (most recent call last)",
    "on branch ",
    "your branch ",
    "changes not staged",
    "changes to be committed",
    "untracked files:",
    "modified:",
    "new file:",
    "deleted:",
    "renamed:",
    "(use \"git",
    "nothing to commit",
    "no changes added",
    "ps c:\\",
    ">>> ",
    "$ ",
    "% ",
    "# ",
];

/// Characters that mark code rather than prose.
const CODE_PUNCTUATION: &[char] = &[
    '{', '}', '[', ']', '(', ')', '<', '>', '=', ';', '_', '/', '\\', '|', '$', '#', '@', '*', '&',
];

/// `text` (already without code fences) with its pasted lines removed, by
/// the rule in the module's doc. Borrowed when nothing was pasted.
pub fn own_words(text: &str) -> Cow<'_, str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut pasted: Vec<bool> = lines.iter().map(|l| is_pasted(l)).collect();
    if !pasted.iter().any(|p| *p) {
        return Cow::Borrowed(text);
    }
    // A plain line between two pasted lines of one paragraph is pasted.
    for i in 1..lines.len().saturating_sub(1) {
        if pasted[i] || lines[i].trim().is_empty() {
            continue;
        }
        let before = (0..i)
            .rev()
            .take_while(|&j| !lines[j].trim().is_empty())
            .any(|j| pasted[j]);
        let after = (i + 1..lines.len())
            .take_while(|&j| !lines[j].trim().is_empty())
            .any(|j| pasted[j]);
        if before && after {
            pasted[i] = true;
        }
    }
    let mut out = String::with_capacity(text.len());
    for (line, p) in lines.iter().zip(&pasted) {
        if !p {
            out.push_str(line);
        }
        out.push('\n');
    }
    Cow::Owned(out)
}

/// Quote marks: an opening mark and the marks that close it.
const QUOTES: &[(char, &[char])] = &[
    ('"', &['"']),
    ('\'', &['\'']),
    ('“', &['”']),
    ('‘', &['’']),
    ('„', &['“', '”']),
    ('‚', &['‘', '’']),
    ('«', &['»']),
    ('»', &['«']),
    ('‹', &['›']),
    ('「', &['」']),
    ('『', &['』']),
];

/// Quote marks that also write an apostrophe (`m'a`, `Let's`, `Let’s`).
const APOSTROPHES: &[char] = &['\'', '’', '‘'];

/// The user's own words need this many letters (weighted, see
/// `text::weighted_letters`) besides a quote or a paste a colon introduces
/// for the quote or the paste to be taken out.
pub const MIN_OWN_LETTERS: usize = MIN_MASKED_LETTERS;

/// Whether a mark between `prev` and `next` is an apostrophe inside a word:
/// a letter or digit on both sides, both CJK or neither (`m'a`, `Let's`,
/// but not the closing mark of `'Tell me'라는`).
fn inside_word(prev: Option<char>, next: Option<char>) -> bool {
    matches!((prev, next), (Some(p), Some(n))
        if p.is_alphanumeric() && n.is_alphanumeric() && is_cjk(p) == is_cjk(n))
}

/// Whether `mark` between `prev` and `next` may open a quote: something
/// other than a space follows it, and an apostrophe-like mark does not
/// follow a letter of the word it would open.
fn opens(mark: char, prev: Option<char>, next: Option<char>) -> bool {
    let Some(n) = next.filter(|n| !n.is_whitespace()) else {
        return false;
    };
    !APOSTROPHES.contains(&mark)
        || prev.is_none_or(|p| !p.is_alphanumeric() || is_cjk(p) != is_cjk(n))
}

/// Whether `mark` between `prev` and `next` may close a quote: something
/// other than a space precedes it, and an apostrophe-like mark is not
/// inside a word.
fn closes(mark: char, prev: Option<char>, next: Option<char>) -> bool {
    prev.is_some_and(|p| !p.is_whitespace())
        && !(APOSTROPHES.contains(&mark) && inside_word(prev, next))
}

/// The quoted spans of `text`, marks included, as byte ranges: an opening
/// mark (see [`QUOTES`]) and the first closing mark after it on the same
/// line, with at least one letter between them. An apostrophe inside a word
/// (`m'a`, `Let's`, `l'homme`) neither opens nor closes a quote.
pub fn quoted_spans(text: &str) -> Vec<Range<usize>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let before = |k: usize| k.checked_sub(1).and_then(at);
    let mut spans = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let (start, mark) = chars[k];
        let closing = QUOTES
            .iter()
            .find(|(open, _)| *open == mark)
            .map(|(_, close)| *close)
            .filter(|_| opens(mark, before(k), at(k + 1)));
        let Some(closing) = closing else {
            k += 1;
            continue;
        };
        let end = (k + 1..chars.len())
            .take_while(|&j| chars[j].1 != '\n')
            .find(|&j| closing.contains(&chars[j].1) && closes(chars[j].1, before(j), at(j + 1)));
        match end {
            Some(j) => {
                let stop = chars[j].0 + chars[j].1.len_utf8();
                if weighted_letters(&text[start..stop]) > 0 {
                    spans.push(start..stop);
                }
                k = j + 1;
            }
            None => k += 1,
        }
    }
    spans
}

/// `text` with its quoted spans (see [`quoted_spans`]) taken out, when at
/// least [`MIN_OWN_LETTERS`] letters of it are left, and what was taken
/// out (empty when nothing was: `text` quotes nothing, or too little of it
/// is left without its quotes).
pub fn without_quotes(text: &str) -> (Cow<'_, str>, String) {
    let spans = quoted_spans(text);
    if spans.is_empty() {
        return (Cow::Borrowed(text), String::new());
    }
    let (rest, taken) = cut(text, &spans);
    if weighted_letters(&rest) < MIN_OWN_LETTERS {
        return (Cow::Borrowed(text), String::new());
    }
    (Cow::Owned(rest), taken)
}

/// `text` without `spans` (in order, not overlapping), each replaced by a
/// space, and the spans' text, one a line.
fn cut(text: &str, spans: &[Range<usize>]) -> (String, String) {
    let mut out = String::with_capacity(text.len());
    let mut taken = String::new();
    let mut from = 0;
    for span in spans {
        out.push_str(&text[from..span.start]);
        out.push(' ');
        taken.push_str(&text[span.clone()]);
        taken.push('\n');
        from = span.end;
    }
    out.push_str(&text[from..]);
    (out, taken)
}

/// The byte offset of `part`, a slice of `text`, in `text`.
fn offset(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// The top language of `values` (highest first) and its confidence.
fn top(values: &[(Language, f64)]) -> Option<(Language, f64)> {
    values.first().copied()
}

/// The confidence of `language` among `values`, 0 when it is not there.
pub fn confidence_of(values: &[(Language, f64)], language: Language) -> f64 {
    values
        .iter()
        .find(|(l, _)| *l == language)
        .map_or(0.0, |&(_, c)| c)
}

/// `text` without what a colon introduces in another language: the
/// sentences after a colon (`:` or `：` followed by a space or a line
/// break; `：` followed by anything) are pasted when the first of them is
/// reliably in a language `Y` (its top guess at the reliable confidence,
/// [`MIN_SEGMENT_LETTERS`] letters or more) and the clause before the
/// colon (from the sentence's start, [`MIN_OWN_LETTERS`] letters or more)
/// is in another language `X` (its top guess at [`SEGMENT_CONFIDENCE`] or
/// more), each at least [`FOREIGN_RATIO`] times as likely as the other's
/// language. The paste runs on over the next sentences while they are in
/// `Y`, through sentences too short to tell when one in `Y` follows, and
/// stops at the last one in `Y`. `confidences` gives each language's
/// confidence for a text, highest first. Returns what is left and what was
/// taken out (empty when nothing was).
pub fn without_colon_paste<'a>(
    text: &'a str,
    confidences: &dyn Fn(&str) -> Vec<(Language, f64)>,
) -> (Cow<'a, str>, String) {
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut from = 0;
    while let Some(colon) = next_colon(text, from) {
        from = colon.end;
        let Some(intro) = plain_clause(clause_before(&text[..colon.start])) else {
            continue;
        };
        let intro = intro.as_str();
        let after = &text[colon.end..];
        let sentences = segments(after);
        let Some(first) = sentences.first() else {
            continue;
        };
        if weighted_letters(first) < MIN_SEGMENT_LETTERS {
            continue;
        }
        let pasted = confidences(first);
        let own = confidences(intro);
        let (Some((y, cy)), Some((x, cx))) = (top(&pasted), top(&own)) else {
            continue;
        };
        if x == y
            || cy < RELIABLE_CONFIDENCE
            || cx < SEGMENT_CONFIDENCE
            || cy < FOREIGN_RATIO * confidence_of(&pasted, x)
            || cx < FOREIGN_RATIO * confidence_of(&own, y)
        {
            continue;
        }
        let mut last = first;
        for sentence in &sentences[1..] {
            match top(&confidences(sentence)) {
                Some((l, c)) if c >= SEGMENT_CONFIDENCE && l == y => last = sentence,
                Some((_, c)) if c >= SEGMENT_CONFIDENCE => break,
                _ => {}
            }
        }
        let end = colon.end + offset(after, last) + last.len();
        spans.push(colon.end..end);
        from = end;
    }
    if spans.is_empty() {
        return (Cow::Borrowed(text), String::new());
    }
    let (rest, taken) = cut(text, &spans);
    (Cow::Owned(rest), taken)
}

/// The next colon that may introduce a paste at or after byte `from`: `:`
/// followed by whitespace or the end, or a full-width `：`.
fn next_colon(text: &str, from: usize) -> Option<Range<usize>> {
    let mut chars = text[from..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if c == '：' || (c == ':' && next.is_none_or(char::is_whitespace)) {
            return Some(from + i..from + i + c.len_utf8());
        }
    }
    None
}

/// `clause` without its code-like tokens (`ModuleNotFoundError`,
/// `utf8`, `a.b`; see `script.rs`), when what is left holds at least
/// [`MIN_OWN_LETTERS`] letters, all in one script.
fn plain_clause(clause: &str) -> Option<String> {
    let words: Vec<&str> = clause
        .split_whitespace()
        .filter(|w| !is_code_like(w))
        .collect();
    let plain = words.join(" ");
    let mut scripts = plain.chars().filter(|c| c.is_alphabetic()).map(script::of);
    let first = scripts.next()?;
    (weighted_letters(&plain) >= MIN_OWN_LETTERS && scripts.all(|s| s == first)).then_some(plain)
}

/// The clause `head` ends with: from its last line break or sentence end.
fn clause_before(head: &str) -> &str {
    let line = head.rsplit('\n').next().unwrap_or(head);
    segments(line).last().copied().unwrap_or("")
}

/// Whether one line is pasted, by the rule in the module's doc.
pub fn is_pasted(line: &str) -> bool {
    if line.starts_with('\t') || line.starts_with("    ") {
        return !line.trim().is_empty();
    }
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    let lower = t.to_lowercase();
    if t.starts_with('>')
        || HEADERS.iter().any(|h| lower.starts_with(h))
        || lower.ends_with("wrote:")
        || OUTPUT_PREFIXES.iter().any(|p| lower.starts_with(p))
    {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("");
    if t.split_whitespace().take(3).any(opens_with_stamp)
        || first.starts_with('[')
        || first.starts_with(['/', '~'])
        || first.starts_with("./")
        || first.contains(":\\")
        || is_permission_string(first)
        || is_prompt(first)
    {
        return true;
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    if words
        .iter()
        .any(|w| LEVELS.contains(&w.trim_matches(|c: char| !c.is_alphanumeric())))
    {
        return true;
    }
    if is_stack_frame(t, &words) {
        return true;
    }
    if t.ends_with([';', '{', '}'])
        || ["()", ") {", " = ", "==", "=>", "->", "::", "['", "(\""]
            .iter()
            .any(|m| t.contains(m))
    {
        return true;
    }
    let visible = t.chars().filter(|c| !c.is_whitespace()).count();
    let code = t.chars().filter(|c| CODE_PUNCTUATION.contains(c)).count();
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    (code >= 2 && 5 * code >= visible) || 2 * letters < visible
}

/// `2024-03-01`, `12:04:55`, `2024/03/01`: a date or a time.
fn opens_with_stamp(token: &str) -> bool {
    let digits: String = token.chars().take(10).collect();
    let shape: String = digits
        .chars()
        .map(|c| if c.is_ascii_digit() { 'd' } else { c })
        .collect();
    shape.starts_with("dddd-dd-dd")
        || shape.starts_with("dddd/dd/dd")
        || shape.starts_with("dd:dd:dd")
        || shape.starts_with("d:dd:dd")
}

/// `drwxr-xr-x`, `-rw-r--r--`.
fn is_permission_string(token: &str) -> bool {
    token.len() == 10 && token.chars().all(|c| "drwxsStT-l".contains(c)) && token.contains('-')
}

/// `user@host:~$`, `C:\>`, `PS>`.
fn is_prompt(token: &str) -> bool {
    (token.contains('@') && (token.ends_with('$') || token.ends_with('#')))
        || token.ends_with(":\\>")
        || token == "PS>"
}

/// A line of a stack trace: `at a.B.c(File.java:12)`, `File "x.py", line 3`,
/// `TypeError: x is undefined`, `java.lang.NullPointerException`,
/// `thread 'main' panicked at`.
fn is_stack_frame(line: &str, words: &[&str]) -> bool {
    let first = words.first().copied().unwrap_or("");
    (first == "at"
        && words
            .get(1)
            .is_some_and(|w| w.contains(['.', '(', '/', ':'])))
        || (first == "File" && line.contains("\", line "))
        || line.contains("panicked at")
        || error_name(first)
}

/// `TypeError:`, `ValueError:`, `java.lang.NullPointerException:`,
/// `KeyError`: a CamelCase name ending in `Error` or `Exception`.
fn error_name(token: &str) -> bool {
    let name = token.trim_end_matches(':');
    let last = name.rsplit('.').next().unwrap_or(name);
    (last.ends_with("Error") || last.ends_with("Exception"))
        && last.len() > "Error".len()
        && last.starts_with(|c: char| c.is_ascii_uppercase())
        && last.is_ascii()
}

#[cfg(test)]
mod tests;
