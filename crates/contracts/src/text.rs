//! Text helpers the contracts share: blank checks, sentence segments, the
//! prose of a reply without its code, and letter counts weighted by script.

use std::borrow::Cow;
use std::collections::BTreeSet;

/// Whether `c` shows nothing: whitespace (`White_Space`), a Unicode format
/// character (general category Cf: soft hyphen, bidirectional marks,
/// zero-width characters, word joiner, byte-order mark, tags) other than
/// the prepended concatenation marks (`U+0600`, `U+06DD`, ...: they draw a
/// sign), another default-ignorable code point (the combining grapheme
/// joiner, variation selectors, the Hangul fillers `U+115F` `U+1160`
/// `U+3164` `U+FFA0`), or the blank Braille pattern `U+2800`. The one
/// predicate of invisibility: [`is_blank`], `empty` and `junk_prefix` use it.
pub fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(c as u32,
            0x00AD                  // soft hyphen
            | 0x034F                // combining grapheme joiner
            | 0x061C                // Arabic letter mark
            | 0x115F | 0x1160       // Hangul choseong and jungseong fillers
            | 0x17B4 | 0x17B5       // Khmer inherent vowels
            | 0x180B..=0x180F       // Mongolian variation selectors, vowel separator
            | 0x200B..=0x200F       // zero-width space, joiners, LRM, RLM
            | 0x202A..=0x202E       // bidirectional embeddings and overrides
            | 0x2060..=0x206F       // word joiner, invisible operators, isolates
            | 0x2800                // Braille pattern blank
            | 0x3164                // Hangul filler
            | 0xFE00..=0xFE0F       // variation selectors
            | 0xFEFF                // byte-order mark
            | 0xFFA0                // half-width Hangul filler
            | 0xFFF0..=0xFFFB       // unassigned specials, interlinear annotation
            | 0x13430..=0x1343F     // Egyptian hieroglyph format controls
            | 0x1BCA0..=0x1BCA3     // shorthand format controls
            | 0x1D173..=0x1D17A     // musical symbol format controls
            | 0xE0000..=0xE0FFF // tags, variation selectors supplement
        )
}

/// Whether `text` holds at least one character a reader can see (one that
/// is not [`is_invisible`]).
pub fn has_visible(text: &str) -> bool {
    text.chars().any(|c| !is_invisible(c))
}

/// True when `text` holds nothing but invisible characters
/// ([`is_invisible`]), whitespace included.
pub fn is_blank(text: &str) -> bool {
    !has_visible(text)
}

/// True for Han ideographs, kana and Hangul: one such character carries
/// about as much as a short word, so it weighs more in letter counts.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // hiragana, katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFF9F // half-width katakana
    )
}

/// True for hiragana and katakana, which only Japanese uses.
pub fn is_kana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0xFF66..=0xFF9F)
}

/// Letters in `text`, a CJK character counting as three (about one word).
pub fn weighted_letters(text: &str) -> usize {
    text.chars()
        .filter(|c| c.is_alphabetic())
        .map(|c| if is_cjk(c) { 3 } else { 1 })
        .sum()
}

/// Sentence terminators that end a segment when followed by whitespace
/// (`؟` is the Arabic question mark).
const TERMINATORS: [char; 4] = ['.', '!', '?', '؟'];
/// Terminators that end a segment on their own: the full-width ones and
/// the Devanagari danda and double danda.
const CJK_TERMINATORS: [char; 5] = ['。', '！', '？', '।', '॥'];

/// Splits `text` into sentence-like segments: at line breaks, after `.`,
/// `!`, `?` or `؟` followed by whitespace, and after `。！？` and `। ॥`.
/// Segments are trimmed; empty ones are dropped.
pub fn segments(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = c == '\n'
            || CJK_TERMINATORS.contains(&c)
            || (TERMINATORS.contains(&c) && next.is_none_or(char::is_whitespace));
        let end = ends.then_some(i + c.len_utf8());
        if let Some(end) = end {
            push_trimmed(&mut out, &text[start..end]);
            start = end;
        }
    }
    push_trimmed(&mut out, &text[start..]);
    out
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s);
    }
}

/// The prose of a reply: fenced code blocks, inline code and URLs removed
/// (they are in no natural language), everything else kept.
pub fn prose(text: &str) -> Cow<'_, str> {
    if !text.contains('`') && !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            out.push('\n');
            continue;
        }
        if in_fence {
            continue;
        }
        let mut in_code = false;
        for (i, part) in line.split('`').enumerate() {
            if i > 0 {
                in_code = !in_code;
            }
            if !in_code {
                let kept: Vec<&str> = part.split(' ').filter(|w| !w.contains("://")).collect();
                out.push_str(&kept.join(" "));
            }
        }
        out.push('\n');
    }
    Cow::Owned(out)
}

/// Proper names in `texts`: words of two letters or more written with a
/// capital inside a sentence (not its first word), as a user writes the
/// name of a person or a place.
pub fn proper_names<S: AsRef<str>>(texts: &[S]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for text in texts {
        let mut sentence_start = true;
        for (word, boundary_before) in words(text.as_ref()) {
            sentence_start |= boundary_before;
            let capital = word.chars().next().is_some_and(char::is_uppercase);
            if capital && !sentence_start && word.chars().count() >= 2 {
                names.insert(word.to_owned());
            }
            sentence_start = false;
        }
    }
    names
}

/// `text` with every whole word in `names` blanked out, so that a name the
/// user wrote and the reply repeats is not taken as evidence of the
/// reply's language.
pub fn without_names<'a>(text: &'a str, names: &BTreeSet<String>) -> Cow<'a, str> {
    if names.is_empty() || !words(text).any(|(w, _)| names.contains(w)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (word, _) in words(text) {
        if names.contains(word) {
            // `word` is a subslice of `text`: its offset is exact.
            let start = word.as_ptr() as usize - text.as_ptr() as usize;
            out.push_str(&text[rest..start]);
            out.push(' ');
            rest = start + word.len();
        }
    }
    out.push_str(&text[rest..]);
    Cow::Owned(out)
}

/// `text` with every all-caps Latin run of two letters or more blanked
/// (`ALTER SUBSCRIPTION`, `USB`, the `OVERRIDING` of `使用OVERRIDING`):
/// SQL keywords, constants and acronyms are in no natural language. A run
/// that touches a lowercase ASCII letter (`OpenPGP`) is part of a word and
/// kept.
pub fn without_all_caps(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_uppercase() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_uppercase() {
                i += 1;
            }
            let before = start > 0 && bytes[start - 1].is_ascii_lowercase();
            let after = i < bytes.len() && bytes[i].is_ascii_lowercase();
            if i - start >= 2 && !before && !after {
                runs.push((start, i));
            }
        } else {
            i += 1;
        }
    }
    if runs.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (start, end) in runs {
        // ASCII bytes: both ends are char boundaries.
        out.push_str(&text[rest..start]);
        out.push(' ');
        rest = end;
    }
    out.push_str(&text[rest..]);
    Cow::Owned(out)
}

/// The words of `text` (runs of letters), each with whether a sentence
/// boundary (`.`, `!`, `?`, a line break, a colon or a quotation mark)
/// came between it and the word before.
fn words(text: &str) -> impl Iterator<Item = (&str, bool)> + '_ {
    let mut boundary = false;
    let mut start: Option<usize> = None;
    let mut chars = text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')));
    std::iter::from_fn(move || {
        for (i, c) in chars.by_ref() {
            if c.is_alphabetic() {
                start.get_or_insert(i);
                continue;
            }
            let found = start
                .take()
                .map(|s| (&text[s..i], std::mem::take(&mut boundary)));
            if matches!(
                c,
                '.' | '!' | '?' | '\n' | ':' | '"' | '\u{201C}' | '\u{201D}' | '\u{3002}'
            ) {
                boundary = true;
            }
            if found.is_some() {
                return found;
            }
        }
        None
    })
}

/// Folds `text` for pattern matching: lower case, straight apostrophes,
/// and the spellings that vary without changing a word: in Arabic, alef
/// with hamza or madda (`أ إ آ`) as bare alef, and the short-vowel marks
/// and tatweel dropped; in Devanagari, the nukta dropped (`ज़` as `ज`) and
/// candrabindu as anusvara (`ँ` as `ं`).
pub fn fold(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\u{2019}' | '\u{2018}' => Some('\''),
            '\u{0623}' | '\u{0625}' | '\u{0622}' => Some('\u{0627}'),
            '\u{064B}'..='\u{0652}' | '\u{0640}' | '\u{093C}' => None,
            '\u{0901}' => Some('\u{0902}'),
            c => Some(c),
        })
        .collect::<String>()
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_written_inside_a_sentence_are_blanked_where_repeated() {
        let names = proper_names(&["I grew up in Blemiliwych. Then we moved to Leeds with Ana."]);
        assert!(names.contains("Blemiliwych") && names.contains("Leeds") && names.contains("Ana"));
        assert!(!names.contains("I") && !names.contains("Then"));
        assert_eq!(
            without_names("You grew up in Blemiliwych.", &names),
            "You grew up in  ."
        );
        let untouched = "You grew up by the sea.";
        assert!(matches!(without_names(untouched, &names), Cow::Borrowed(_)));
    }

    #[test]
    fn blank_includes_invisible_characters() {
        assert!(is_blank(""));
        assert!(is_blank(" \n\t"));
        assert!(is_blank("\u{200B}\u{FEFF}"));
        // Every invisible character, not a list of four.
        for blank in [
            "\u{200E}",
            "\u{00AD}\u{2060}",
            "\u{3164}\u{2800}",
            "\u{E0041}",
        ] {
            assert!(is_blank(blank), "{blank:?}");
        }
        assert!(!is_blank("\u{0600}") && !is_blank("\u{200E}a"));
        assert!(!is_blank(" a "));
        assert!(!is_blank("."));
    }

    #[test]
    fn segments_split_sentences_lines_and_cjk() {
        assert_eq!(
            segments("One. Two! Three? 3.5 stays.\nFour"),
            vec!["One.", "Two!", "Three?", "3.5 stays.", "Four"]
        );
        assert_eq!(
            segments("まず試して。次に比べる。"),
            vec!["まず試して。", "次に比べる。"]
        );
        assert!(segments("  \n ").is_empty());
        assert_eq!(
            segments("यह अच्छा है। और यह भी॥ كيف حالك؟ بخير."),
            vec!["यह अच्छा है।", "और यह भी॥", "كيف حالك؟", "بخير."]
        );
    }

    #[test]
    fn prose_drops_code_and_urls() {
        let t = "Use this:\n```python\nitems.reverse()\n```\nThen `x` works, see https://example.com now.";
        let p = prose(t);
        assert!(!p.contains("reverse") && !p.contains("example") && !p.contains('x'));
        assert!(p.contains("Use this:") && p.contains("works, see"));
        assert!(matches!(prose("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn fold_evens_out_hamza_vowel_marks_and_nukta() {
        assert_eq!(fold("لا أستطيع"), fold("لا استطيع"));
        assert_eq!(fold("عذرًا"), fold("عذرا"));
        assert_eq!(fold("माफ़ कीजिए"), fold("माफ कीजिए"));
        assert_eq!(fold("पाऊँगा"), fold("पाऊंगा"));
        assert_eq!(fold("I\u{2019}M"), "i'm");
    }

    #[test]
    fn cjk_letters_weigh_more() {
        assert_eq!(weighted_letters("ab c1"), 3);
        assert_eq!(weighted_letters("日本語"), 9);
        assert!(is_kana('の') && !is_kana('日'));
    }
}
