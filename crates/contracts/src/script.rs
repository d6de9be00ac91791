//! Which script a piece of text is written in, the first and cheapest
//! step of language detection.
//!
//! Two rules keep code out of the vote, so that a Latin identifier, path
//! or URL inside CJK prose does not make it Latin text:
//! - a code-like token does not vote: a run of ASCII letters, digits and
//!   `._/\:-=#@~()` that holds an inner `.`, `_`, `/`, `\`, `::`, `=`, `#`
//!   or `()`, an inner capital after a lower-case letter (`DataFrame`,
//!   `fromIterable`), or letters and digits together (`utf8`, `v2`): an
//!   identifier, a file path, a URL, a version;
//! - text that holds CJK characters (Han, kana, Hangul) and CJK
//!   punctuation (`。，、！？：；「」『』（）《》`) is CJK prose whatever the
//!   length of the Latin words inside it (`用 pip install requests 安装。`):
//!   only CJK writing uses those marks.
//!
//! Otherwise the script with the most letters wins, a CJK character
//! counting three (about one word; see [`super::text::weighted_letters`]).
//! Among CJK characters, Hangul decides Korean when it is at least as
//! common as Han and kana together, and kana decides Japanese.

use super::text::{is_cjk, is_kana};

/// A script the languages the contracts know are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Latin letters (with the Vietnamese extended range).
    Latin,
    /// Cyrillic.
    Cyrillic,
    /// Hangul syllables and jamo.
    Hangul,
    /// Han ideographs and kana: Chinese or Japanese.
    Han,
    /// Arabic.
    Arabic,
    /// Devanagari.
    Devanagari,
}

/// The script of one character, `None` for digits, punctuation, spaces and
/// scripts no known language uses.
pub fn of(c: char) -> Option<Script> {
    let u = c as u32;
    if matches!(u, 0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF) {
        Some(Script::Hangul)
    } else if is_cjk(c) {
        Some(Script::Han)
    } else if !c.is_alphabetic() {
        None
    } else if u < 0x0250 || matches!(u, 0x1E00..=0x1EFF) {
        Some(Script::Latin)
    } else if matches!(u, 0x0400..=0x052F) {
        Some(Script::Cyrillic)
    } else if matches!(u, 0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF)
    {
        Some(Script::Arabic)
    } else if matches!(u, 0x0900..=0x097F | 0xA8E0..=0xA8FF) {
        Some(Script::Devanagari)
    } else {
        None
    }
}

/// Punctuation only CJK writing uses.
const CJK_PUNCTUATION: &str = "。，、！？：；「」『』（）《》";

/// Characters a code-like token is made of.
fn code_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._/\\:-=#@~()".contains(c)
}

/// Whether `token` (a run of [`code_char`]s) is code: see the file's
/// documentation.
pub fn is_code_like(token: &str) -> bool {
    if token.contains("()") {
        return token.chars().any(|c| c.is_ascii_alphabetic());
    }
    let token = token.trim_end_matches(['.', ':', ')', '-']);
    let token = token.trim_start_matches(['(', '-']);
    let letters = token.chars().any(|c| c.is_ascii_alphabetic());
    if !letters {
        return false;
    }
    let inner = |p: &str| {
        token
            .match_indices(p)
            .any(|(i, _)| i > 0 && i + p.len() < token.len())
    };
    let digits = token.chars().any(|c| c.is_ascii_digit());
    let camel = token
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    digits
        || camel
        || ["::", ".", "_", "/", "\\", "=", "#"]
            .iter()
            .any(|p| inner(p))
}

/// Letters per script in `text`, code-like tokens left out.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    latin: usize,
    cyrillic: usize,
    hangul: usize,
    han: usize,
    kana: usize,
    arabic: usize,
    devanagari: usize,
}

fn counts(text: &str) -> Counts {
    let mut n = Counts::default();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_ascii_alphanumeric() {
            let end = rest.find(|c: char| !code_char(c)).unwrap_or(rest.len());
            let token = &rest[..end];
            if !is_code_like(token) {
                n.latin += token.chars().filter(char::is_ascii_alphabetic).count();
            }
            rest = &rest[end..];
            continue;
        }
        match of(c) {
            Some(Script::Latin) => n.latin += 1,
            Some(Script::Cyrillic) => n.cyrillic += 1,
            Some(Script::Hangul) => n.hangul += 1,
            Some(Script::Han) if is_kana(c) => n.kana += 1,
            Some(Script::Han) => n.han += 1,
            Some(Script::Arabic) => n.arabic += 1,
            Some(Script::Devanagari) => n.devanagari += 1,
            None => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    n
}

/// The script most of `text`'s letters are written in, by the rules of
/// the file's documentation; `None` when it has no letter outside code.
pub fn script_vote(text: &str) -> Option<Script> {
    let n = counts(text);
    let cjk = n.hangul + n.han + n.kana;
    let cjk_script = || {
        if n.hangul > 0 && n.hangul >= n.han + n.kana {
            Script::Hangul
        } else {
            Script::Han
        }
    };
    if cjk > 0 && text.chars().any(|c| CJK_PUNCTUATION.contains(c)) {
        return Some(cjk_script());
    }
    let votes = [
        (n.latin, Some(Script::Latin)),
        (n.cyrillic, Some(Script::Cyrillic)),
        (n.arabic, Some(Script::Arabic)),
        (n.devanagari, Some(Script::Devanagari)),
        (3 * cjk, None),
    ];
    // A tie goes to the later entry (CJK over the others, Cyrillic over
    // Latin), as before the scripts were split.
    let (most, script) = votes
        .into_iter()
        .max_by_key(|&(count, _)| count)
        .unwrap_or((0, None));
    if most == 0 {
        return None;
    }
    Some(script.unwrap_or_else(cjk_script))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_like_tokens_are_identifiers_paths_urls_and_versions() {
        for code in [
            "itertools.chain.from_iterable",
            "src/main.rs",
            "C:\\Users",
            "std::io",
            "DataFrame",
            "fromIterable",
            "utf8",
            "v2",
            "example.com",
            "print()",
            "a=b",
            "snake_case",
        ] {
            assert!(is_code_like(code), "{code}");
        }
        for word in [
            "Hello",
            "done.",
            "pip",
            "install",
            "e",
            "NASA",
            "(see",
            "well-known",
        ] {
            assert!(!is_code_like(word), "{word}");
        }
    }

    #[test]
    fn code_does_not_make_cjk_prose_latin() {
        let zh = "可以用 itertools.chain.from_iterable 来做。";
        assert_eq!(script_vote(zh), Some(Script::Han));
        assert_eq!(
            script_vote("用 pip install requests 安装。"),
            Some(Script::Han)
        );
        assert_eq!(
            script_vote("Use itertools.chain for this."),
            Some(Script::Latin)
        );
        // Without CJK punctuation, the longer English text still wins.
        assert_eq!(
            script_vote("The word 你好 means hello, and people say it all day."),
            Some(Script::Latin)
        );
        assert_eq!(script_vote("123 src/main.rs"), None);
    }

    #[test]
    fn each_script_is_recognised() {
        assert_eq!(script_vote("Привет, как дела?"), Some(Script::Cyrillic));
        assert_eq!(script_vote("좋은 질문인데요."), Some(Script::Hangul));
        assert_eq!(script_vote("هذا سؤال جيد."), Some(Script::Arabic));
        assert_eq!(script_vote("यह अच्छा प्रश्न है।"), Some(Script::Devanagari));
        assert_eq!(script_vote("まず試して。"), Some(Script::Han));
        assert_eq!(script_vote("Đây là một câu hỏi hay."), Some(Script::Latin));
    }
}
