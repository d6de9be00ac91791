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
//! (the plain lines of a log). When nothing is left of the user's own
//! words, the whole text may still guess the language, but only weakly (a
//! weak guess confirms a reply, never fails one).
//!
//! Second rule, in `language.rs`: a reply in a language the user wrote a
//! sentence in (of their own words, reliably detected) never fails as a
//! switch, whatever the conversation's language was guessed to be.
//!
//! Blind spots: a pasted English sentence with no mark of a paste (plain
//! prose copied from a web page) counts as the user's own words; a user's
//! own line that opens with a date or a path counts as pasted.

use std::borrow::Cow;

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
