//! One source file read as far as the module graph needs: the paths it
//! names from the crate root, and what of it is test code. A small lexer,
//! not a parser: comments go, string and character literals are emptied,
//! and what remains is read as words and punctuation.

use std::collections::BTreeSet;

/// What one file says, test code left out.
#[derive(Debug, Default, PartialEq)]
pub struct Scan {
    /// First segments of the paths it names from `crate` (or `$crate`).
    pub refs: BTreeSet<String>,
    /// First segments of the `super::` paths that climb to the root.
    pub super_refs: BTreeSet<String>,
    /// Its out-of-line `#[cfg(test)] mod x;` declarations.
    pub test_modules: Vec<String>,
    /// It opens with `#![cfg(test)]`.
    pub test_file: bool,
}

/// A token of code, comments and literals gone.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// An identifier, keyword or number.
    Word(String),
    /// Any other character.
    Punct(char),
}

/// Scans the text of a file whose module sits at `depth` below the root.
pub fn scan(text: &str, depth: usize) -> Scan {
    let tokens = tokens(&strip(text));
    let mut out = Scan::default();
    let is = |i: usize, p: char| tokens.get(i) == Some(&Token::Punct(p));
    let word = |i: usize| match tokens.get(i) {
        Some(Token::Word(w)) => Some(w.as_str()),
        _ => None,
    };
    let path_sep = |i: usize| is(i, ':') && is(i + 1, ':');
    // `#[cfg(test)]` at i (or `#![cfg(test)]` when `inner`): the index
    // after it.
    let cfg_test = |i: usize, inner: bool| {
        let mut j = i;
        if !is(j, '#') {
            return None;
        }
        j += 1;
        if inner {
            if !is(j, '!') {
                return None;
            }
            j += 1;
        }
        (is(j, '[')
            && word(j + 1) == Some("cfg")
            && is(j + 2, '(')
            && word(j + 3) == Some("test")
            && is(j + 4, ')')
            && is(j + 5, ']'))
        .then_some(j + 6)
    };
    if cfg_test(0, true).is_some() {
        out.test_file = true;
        return out;
    }
    // Braces open around here: `true` for a module's.
    let mut braces: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(after) = cfg_test(i, false) {
            let item = skip_attributes_and_visibility(&tokens, after);
            if word(item) == Some("mod") && is(item + 2, ';') {
                if let Some(name) = word(item + 1) {
                    out.test_modules.push(name.to_string());
                }
            }
            i = skip_item(&tokens, item);
            continue;
        }
        match &tokens[i] {
            Token::Punct('{') => braces.push(i >= 2 && word(i - 2) == Some("mod")),
            Token::Punct('}') => {
                braces.pop();
            }
            Token::Word(w) if w == "crate" && path_sep(i + 1) => {
                out.refs.extend(targets(&tokens, i + 3));
            }
            Token::Word(w) if w == "super" && !(i >= 2 && path_sep(i - 2)) => {
                let mut climbs = 0;
                let mut j = i;
                while word(j) == Some("super") && path_sep(j + 1) {
                    climbs += 1;
                    j += 3;
                }
                let here = depth + braces.iter().filter(|m| **m).count();
                if climbs > 0 && climbs == here {
                    out.super_refs.extend(targets(&tokens, j));
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The modules a path names at `i`, just after `crate::` (or a root
/// reached through `super::`): `b` of `b::X`, and the first segment of
/// each entry of a `{b::X, c}` group. `self`, `super` and globs name none.
fn targets(tokens: &[Token], i: usize) -> Vec<String> {
    let named = |t: Option<&Token>| match t {
        Some(Token::Word(w)) if w != "self" && w != "super" => Some(w.clone()),
        _ => None,
    };
    if tokens.get(i) != Some(&Token::Punct('{')) {
        return named(tokens.get(i)).into_iter().collect();
    }
    let mut out = Vec::new();
    let mut depth = 0;
    let mut entry_start = true;
    for token in &tokens[i..] {
        match token {
            Token::Punct('{') => {
                depth += 1;
                entry_start = depth == 1;
            }
            Token::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Token::Punct(',') if depth == 1 => entry_start = true,
            t => {
                if entry_start && depth == 1 {
                    out.extend(named(Some(t)));
                }
                entry_start = false;
            }
        }
    }
    out
}

/// Past further attributes (`#[..]`) and a visibility (`pub`, `pub(..)`).
fn skip_attributes_and_visibility(tokens: &[Token], mut i: usize) -> usize {
    loop {
        if tokens.get(i) == Some(&Token::Punct('#'))
            && tokens.get(i + 1) == Some(&Token::Punct('['))
        {
            i = skip_group(tokens, i + 1);
        } else if tokens.get(i) == Some(&Token::Word("pub".into())) {
            i += 1;
            if tokens.get(i) == Some(&Token::Punct('(')) {
                i = skip_group(tokens, i);
            }
        } else {
            return i;
        }
    }
}

/// Past the item at `i`: to its `;`, or to the end of its first `{ .. }`,
/// whichever closes first outside brackets.
fn skip_item(tokens: &[Token], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(token) = tokens.get(i) {
        match token {
            Token::Punct('(' | '[') => depth += 1,
            Token::Punct(')' | ']') => depth = depth.saturating_sub(1),
            Token::Punct(';') if depth == 0 => return i + 1,
            Token::Punct('{') if depth == 0 => return skip_group(tokens, i),
            _ => {}
        }
        i += 1;
    }
    i
}

/// Past the bracketed group that opens at `i` (`(`, `[` or `{`), nested
/// groups included.
fn skip_group(tokens: &[Token], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(token) = tokens.get(i) {
        match token {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Words and punctuation of `code`.
fn tokens(code: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in code.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(Token::Word(std::mem::take(&mut word)));
        }
        if !c.is_whitespace() {
            out.push(Token::Punct(c));
        }
    }
    if !word.is_empty() {
        out.push(Token::Word(word));
    }
    out
}

/// `text` without its comments (line, doc and nested block comments) and
/// with every string and character literal emptied (`""`, `' '`), so that
/// nothing they say reads as code. Lifetimes stay.
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied();
    let ident = |i: usize| at(i).is_some_and(|x| x.is_alphanumeric() || x == '_');
    // The `r` at i starts a raw string unless it ends a word (`br` counts
    // as a prefix, not a word).
    let raw_prefix_follows_a_word = |i: usize| {
        let start = if i > 0 && c[i - 1] == 'b' { i - 1 } else { i };
        start > 0 && ident(start - 1)
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        match (c[i], at(i + 1)) {
            ('/', Some('/')) => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && at(i + 1) == Some('*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && at(i + 1) == Some('/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
            }
            ('"', _) => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            ('r', Some('#' | '"')) if !raw_prefix_follows_a_word(i) => {
                // A raw string r"..", r#".."#, br".." (the `b` went out
                // as a word): as many `#` close it as opened it.
                let mut j = i + 1;
                while at(j) == Some('#') {
                    j += 1;
                }
                if at(j) != Some('"') {
                    // A raw identifier, `r#type`.
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                let hashes = j - i - 1;
                j += 1;
                while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| at(j + k) == Some('#')))
                {
                    j += 1;
                }
                i = j + 1 + hashes;
                out.push_str("\"\"");
            }
            ('\'', Some('\\')) => {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            }
            ('\'', Some(_)) if at(i + 2) == Some('\'') => {
                i += 3;
                out.push_str("' '");
            }
            (x, _) => {
                out.push(x);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_comments_are_not_code() {
        let code = strip(
            "let a = \"crate::x\"; // crate::y\n/* crate::z /* nested */ still */ let b = r#\"crate::w\"#; let c = '\"'; let d: &'static str = \"\\\"\";",
        );
        assert!(!code.contains("crate"), "{code}");
        assert!(code.contains("&'static str"), "{code}");
    }

    #[test]
    fn paths_from_the_root_are_read_in_every_form() {
        let text = "use crate::a::X;\nuse crate::{b::Y, c, self as root};\nfn f() { $crate::d::m!(); super::e::g(); }\npub(crate) fn h() {}\npub(super) fn i() {}\nuse crate::*;\nuse super::*;\n";
        let s = scan(text, 1);
        let refs: Vec<&str> = s.refs.iter().map(String::as_str).collect();
        assert_eq!(refs, ["a", "b", "c", "d"]);
        assert_eq!(s.super_refs.into_iter().collect::<Vec<_>>(), ["e"]);
        // Two levels down, one `super::` stays inside the module.
        assert!(scan("use super::e::X;", 2).super_refs.is_empty());
        let two = scan("use super::super::e::X;", 2);
        assert_eq!(two.super_refs.into_iter().collect::<Vec<_>>(), ["e"]);
        // Inside an inline module, `super::` climbs one level less.
        assert!(scan("mod inner { use super::e::X; }", 1)
            .super_refs
            .is_empty());
    }

    #[test]
    fn test_code_is_left_out() {
        let text = "use crate::a::X;\n#[cfg(test)]\nmod tests { use crate::b::Y; }\n#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod fixture;\n#[cfg(test)]\nuse crate::c;\nfn f() {}\n";
        let s = scan(text, 1);
        assert_eq!(s.refs.into_iter().collect::<Vec<_>>(), ["a"]);
        assert_eq!(s.test_modules, ["fixture"]);
        assert!(scan("#![cfg(test)]\nuse crate::a;", 1).test_file);
    }
}
