//! One type for every secret the harness handles (gateway header values,
//! the judge's API key), so that a secret cannot reach a report, a log line
//! or an error message by accident, and one redaction set that catches the
//! secret when a system under test echoes it back.
//!
//! [`Secret`]'s `Debug` and `Display` print `[redacted]`; the value is
//! reachable only through [`Secret::expose`], which the code that puts it on
//! the socket calls, and [`Secret::header_value`], which marks the header as
//! sensitive for the HTTP stack.
//!
//! A hostile gateway can still send the value back (in an error body, an
//! answer, a preflight reply, a `Location`), and then it is ordinary text.
//! So [`Secret::new`] also registers the value in a process-wide redaction
//! set, and [`redact`] replaces every registered value in a text by
//! `[redacted]`. The driver's client redacts what it reads before it keeps
//! or cuts it (so an excerpt never holds half a secret), the report manager
//! redacts every file it writes, and every line the commands print goes
//! through `secret::println!` and
//! `secret::eprintln!` here, which also escape a peer's control
//! characters for the terminal ([`for_terminal`]).
//!
//! Besides the value itself, the set holds the forms an echo commonly
//! takes: JSON-escaped (a value with `"` or `\` inside a JSON string), CSV
//! quoted (`"` doubled), and, for `Scheme token` values such as
//! `Bearer sk-...`, the token alone. Values (and forms) shorter than
//! [`MIN_REDACTED_CHARS`] are not registered: replacing a two-character
//! value would rewrite unrelated text everywhere (a header `X-Debug: 1`
//! would blank every digit 1 of a report), and a value that short is not a
//! credential that redaction could keep secret anyway.

use aho_corasick::{AhoCorasick, MatchKind};
use std::borrow::Cow;
use std::fmt;
use std::io::Write as _;
use std::sync::{Arc, RwLock};

/// What every redacted value prints as.
pub const REDACTED: &str = "[redacted]";

/// Shortest value (in characters) the redaction set registers; see the
/// module documentation for why shorter ones are left alone.
pub const MIN_REDACTED_CHARS: usize = 6;

/// A secret value. Cloning keeps it a secret; there is no `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value and registers it (and its echo forms) for [`redact`].
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        register(&value);
        Secret(value)
    }

    /// The value itself: only for the code that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The value as an HTTP header value marked sensitive (never logged by
    /// the HTTP stack), or `None` when it is not a valid header value (a
    /// control character, a line break).
    pub fn header_value(&self) -> Option<http::HeaderValue> {
        let mut value = http::HeaderValue::from_str(&self.0).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// Whether the value is empty (after trimming).
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// The registered values and the automaton that finds them all in one pass.
struct Registry {
    needles: Vec<String>,
    finder: Option<Arc<AhoCorasick>>,
}

static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    needles: Vec::new(),
    finder: None,
});

/// The forms of `value` an echo may take, each at least
/// [`MIN_REDACTED_CHARS`] long.
fn echo_forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_string()];
    // Inside a JSON string: `"`, `\` and control characters escaped.
    if let Ok(json) = serde_json::to_string(value) {
        forms.push(json[1..json.len() - 1].to_string());
    }
    // Inside a quoted CSV field: `"` doubled.
    forms.push(value.replace('"', "\"\""));
    // `Bearer sk-...`: a gateway may echo only the token.
    if let Some((scheme, token)) = value.trim().split_once(' ') {
        if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic()) {
            forms.push(token.trim().to_string());
        }
    }
    forms.retain(|f| f.chars().count() >= MIN_REDACTED_CHARS);
    forms.sort();
    forms.dedup();
    forms
}

/// Adds `value`'s echo forms to the process-wide redaction set.
fn register(value: &str) {
    let forms = echo_forms(value);
    if forms.is_empty() {
        return;
    }
    let mut registry = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    let before = registry.needles.len();
    for form in forms {
        if !registry.needles.contains(&form) {
            registry.needles.push(form);
        }
    }
    if registry.needles.len() == before {
        return;
    }
    // Leftmost-longest: `Bearer sk-x` wins over `sk-x` where both match.
    registry.finder = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&registry.needles)
        .ok()
        .map(Arc::new);
}

/// The automaton over every registered value, if any is registered.
fn finder() -> Option<Arc<AhoCorasick>> {
    REGISTRY
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .finder
        .clone()
}

/// `text` with every registered secret (in every echo form) replaced by
/// `[redacted]`; borrowed, without a copy, when it holds none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Some(finder) = finder() else {
        return Cow::Borrowed(text);
    };
    if !finder.is_match(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    finder.replace_all_with(text, &mut out, |_, _, dst| {
        dst.push_str(REDACTED);
        true
    });
    Cow::Owned(out)
}

/// [`redact`] for an owned string, reusing it when it holds no secret.
pub fn redact_owned(text: String) -> String {
    match redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(redacted) => redacted,
    }
}

/// [`redact`] over bytes (a file about to be written): every registered
/// value's bytes replaced, the rest untouched.
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Some(finder) = finder() else {
        return Cow::Borrowed(bytes);
    };
    if !finder.is_match(bytes) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    finder.replace_all_with_bytes(bytes, &mut out, |_, _, dst| {
        dst.extend_from_slice(REDACTED.as_bytes());
        true
    });
    Cow::Owned(out)
}

/// `text` as the terminal is given it: redacted, then every control
/// character but the line break and the tab escaped
/// ([`crate::escape::printed`]), since what is printed can quote what a
/// peer sent (an error body with an escape sequence that clears the
/// screen, a model name with a carriage return). Every print of this
/// module goes through it.
pub fn for_terminal(text: &str) -> String {
    crate::escape::printed(&redact(text))
}

/// Writes `args` and a line break to stdout, as [`for_terminal`] makes
/// it. A closed stdout (a pipe whose reader went away) is ignored rather
/// than a panic. Called by `secret::println!`.
pub fn print_line(args: fmt::Arguments<'_>) {
    let text = fmt::format(args);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", for_terminal(&text));
}

/// Writes `args` to stdout without a line break, as [`for_terminal`]
/// makes it. Called by `secret::print!`.
pub fn print_text(args: fmt::Arguments<'_>) {
    let text = fmt::format(args);
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", for_terminal(&text));
    let _ = out.flush();
}

/// Writes `args` and a line break to stderr, as [`for_terminal`] makes
/// it. Called by `secret::eprintln!`.
pub fn eprint_line(args: fmt::Arguments<'_>) {
    let text = fmt::format(args);
    let _ = writeln!(std::io::stderr().lock(), "{}", for_terminal(&text));
}

/// `println!` whose output goes through [`for_terminal`] (redacted, then
/// escaped for the terminal).
#[doc(hidden)]
#[macro_export]
macro_rules! __redacted_println {
    ($($arg:tt)*) => {
        $crate::secret::print_line(::std::format_args!($($arg)*))
    };
}

/// `print!` whose output goes through [`for_terminal`] (redacted, then
/// escaped for the terminal).
#[doc(hidden)]
#[macro_export]
macro_rules! __redacted_print {
    ($($arg:tt)*) => {
        $crate::secret::print_text(::std::format_args!($($arg)*))
    };
}

/// `eprintln!` whose output goes through [`for_terminal`] (redacted, then
/// escaped for the terminal).
#[doc(hidden)]
#[macro_export]
macro_rules! __redacted_eprintln {
    ($($arg:tt)*) => {
        $crate::secret::eprint_line(::std::format_args!($($arg)*))
    };
}

pub use crate::__redacted_eprintln as eprintln;
pub use crate::__redacted_print as print;
pub use crate::__redacted_println as println;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_redact() {
        let s = Secret::new("Bearer sk-planted-value");
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{:?}", Some(s.clone())), "Some([redacted])");
        assert_eq!(s.expose(), "Bearer sk-planted-value");
    }

    #[test]
    fn header_values_are_sensitive_and_checked() {
        let value = Secret::new("Bearer x").header_value().unwrap();
        assert!(value.is_sensitive());
        assert!(Secret::new("a\r\nInjected: 1").header_value().is_none());
    }

    #[test]
    fn the_terminal_gets_a_peer_s_text_redacted_and_without_control_characters() {
        let _s = Secret::new("Bearer sk-terminal-7Zq");
        // A secret split by an escape sequence is not the secret; one
        // whole beside escape sequences is redacted first.
        let printed = for_terminal(
            "model \u{1b}[2J\u{1b}[31mok\u{1b}[0m\r\u{8}\u{7}\tkey Bearer sk-terminal-7Zq\nnext line",
        );
        assert_eq!(
            printed,
            "model \\u{1b}[2J\\u{1b}[31mok\\u{1b}[0m\\u{d}\\u{8}\\u{7}\tkey [redacted]\nnext line"
        );
        // The tool's own text passes as it is, line breaks and all.
        let own = "system     events  CPR\nhistory    10/10   100.00 % (10/10)\n";
        assert_eq!(for_terminal(own), own);
    }

    #[test]
    fn an_echoed_value_is_redacted_in_every_form() {
        let _s = Secret::new("Bearer sk-echo-\"quoted\"-1");
        let echoed = "auth was Bearer sk-echo-\"quoted\"-1, ok";
        assert_eq!(redact(echoed), "auth was [redacted], ok");
        // The token alone, JSON-escaped, and CSV-quoted.
        assert_eq!(redact("token sk-echo-\"quoted\"-1"), "token [redacted]");
        let json = serde_json::json!({"h": "Bearer sk-echo-\"quoted\"-1"}).to_string();
        assert_eq!(redact(&json), r#"{"h":"[redacted]"}"#);
        assert_eq!(
            redact("\"Bearer sk-echo-\"\"quoted\"\"-1\""),
            "\"[redacted]\""
        );
        assert_eq!(
            redact_bytes(b"x Bearer sk-echo-\"quoted\"-1 y").as_ref(),
            b"x [redacted] y"
        );
        assert_eq!(redact_owned(echoed.to_string()), "auth was [redacted], ok");
    }

    #[test]
    fn text_without_a_secret_is_not_copied() {
        let _s = Secret::new("sk-never-in-this-text");
        assert!(matches!(redact("plain text"), Cow::Borrowed(_)));
        assert!(matches!(redact_bytes(b"plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn short_values_are_not_registered() {
        // A negative control: a one-character header value must not blank
        // every such character of a report.
        let _s = Secret::new("1");
        let _t = Secret::new("yes");
        assert_eq!(redact("run 1 of 1: yes"), "run 1 of 1: yes");
        assert_eq!(echo_forms("abcde"), Vec::<String>::new());
        assert_eq!(echo_forms("Bearer abc"), ["Bearer abc"]);
    }
}
