//! Mojibake: text that was UTF-8 but was decoded as Windows-1252 or
//! Latin-1 somewhere on the way (`cafÃ©`, `itâ€™s`), or that lost bytes
//! and carries the replacement character U+FFFD.
//!
//! The check looks for the shape such a decoding leaves: a character that
//! is the Latin-1 reading of a UTF-8 lead byte followed by the readings of
//! the continuation bytes that sequence needs. Legitimate text almost never
//! has that shape; the exceptions kept out on purpose are an accented
//! capital followed by a closing quote or guillemet (`„SPASS“`, `«IRMÃ»`).
//!
//! The same shape covers every script the contracts know: Hangul and
//! Devanagari are three-byte sequences (`ì•ˆ`, `à¤¨`), Arabic two-byte
//! (`Ù…Ø`), Vietnamese a mix (`Ä\u{90}á»ƒ`), and a byte-order mark read so
//! is `ï»¿`. One more shape is checked, for the scripts a legacy encoder
//! cannot write: text sent through an encoding without them comes out as
//! question marks, so two or more words made of two or more `?` alone
//! (`???? ??`) are mojibake; a single `??` or `What???` is not.
//!
//! Blind spot: text mis-decoded in another way (Shift-JIS read as UTF-8,
//! double decoding that happens to produce valid words) is not recognised.

/// Characters that a Windows-1252 or Latin-1 decoder produces from a UTF-8
/// continuation byte (0x80..=0xBF).
fn is_continuation(c: char) -> bool {
    matches!(c as u32, 0x80..=0xBF)
        || matches!(
            c,
            '€' | '‚'
                | 'ƒ'
                | '„'
                | '…'
                | '†'
                | '‡'
                | 'ˆ'
                | '‰'
                | 'Š'
                | '‹'
                | 'Œ'
                | 'Ž'
                | '‘'
                | '’'
                | '“'
                | '”'
                | '•'
                | '–'
                | '—'
                | '˜'
                | '™'
                | 'š'
                | '›'
                | 'œ'
                | 'ž'
                | 'Ÿ'
        )
}

/// Typographic punctuation that legitimately follows an accented capital.
fn is_closing_punctuation(c: char) -> bool {
    matches!(c, '«' | '»' | '‘' | '’' | '“' | '”' | '„' | '…' | '–' | '—')
}

/// Whether `c` is the Latin-1 reading of a UTF-8 lead byte (or U+FFFD).
pub fn is_lead_reading(c: char) -> bool {
    c == '\u{FFFD}' || continuation_count(c).is_some()
}

/// How many continuation bytes follow a UTF-8 lead byte read as Latin-1,
/// or `None` when `c` is no such reading.
fn continuation_count(c: char) -> Option<usize> {
    match c as u32 {
        0xC2..=0xDF => Some(1),
        0xE0..=0xEF => Some(2),
        0xF0..=0xF4 => Some(3),
        _ => None,
    }
}

/// Words made only of question marks, at least two long, from which the
/// text counts as having lost its letters to `?`.
const MIN_QUESTION_MARK_WORDS: usize = 2;

/// The first mojibake sequence in `text`, as written, if any.
pub fn find(text: &str) -> Option<String> {
    latin1_reading(text).or_else(|| question_marks(text))
}

/// Two or more words of `?` alone, each at least two long.
fn question_marks(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | ':' | ';'))
        .filter(|w| w.len() >= 2 && w.chars().all(|c| c == '?'))
        .collect();
    (words.len() >= MIN_QUESTION_MARK_WORDS).then(|| words.join(" "))
}

/// A UTF-8 sequence read as Windows-1252 or Latin-1, or U+FFFD.
fn latin1_reading(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\u{FFFD}' {
            return Some(c.to_string());
        }
        let Some(n) = continuation_count(c) else {
            continue;
        };
        let Some(tail) = chars.get(i + 1..i + 1 + n) else {
            continue;
        };
        if !tail.iter().all(|&t| is_continuation(t)) {
            continue;
        }
        if n == 1 && is_closing_punctuation(tail[0]) {
            continue;
        }
        return Some(chars[i..=i + n].iter().collect());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// UTF-8 bytes read as Windows-1252, undefined bytes kept as Latin-1.
    fn mis_decode(s: &str) -> String {
        s.bytes()
            .map(|b| match b {
                0x80 => '€',
                0x84 => '„',
                0x85 => '…',
                0x86 => '†',
                0x87 => '‡',
                0x89 => '‰',
                0x8A => 'Š',
                0x8B => '‹',
                0x8C => 'Œ',
                0x99 => '™',
                0x9C => 'œ',
                0x93 => '“',
                0x94 => '”',
                0x91 => '‘',
                0x92 => '’',
                0x95 => '•',
                0x96 => '–',
                0x97 => '—',
                0x98 => '˜',
                0x9A => 'š',
                0x9B => '›',
                0x9E => 'ž',
                0x9F => 'Ÿ',
                _ => char::from(b),
            })
            .collect()
    }

    #[test]
    fn finds_common_mojibake() {
        assert_eq!(find("The cafÃ© opens at eight.").as_deref(), Some("Ã©"));
        assert_eq!(find("Itâ€™s fine.").as_deref(), Some("â€™"));
        assert_eq!(find("caf\u{FFFD} au lait").as_deref(), Some("\u{FFFD}"));
        assert!(find(&mis_decode("Ä°lkbahar güzel")).is_some());
        assert!(find(&mis_decode("代々木公園")).is_some());
        assert!(find(&mis_decode("Zażółć gęślą jaźń")).is_some());
    }

    #[test]
    fn finds_mojibake_in_hangul_arabic_devanagari_and_vietnamese() {
        for text in [
            "안녕하세요! 무엇을 도와드릴까요?",
            "مرحبًا! كيف يمكنني مساعدتك؟",
            "नमस्ते! बताइए मैं क्या मदद करूँ?",
            "Để bắt đầu, bạn hãy học vài món đơn giản.",
            "\u{FEFF}Halo! Ada yang bisa saya bantu?",
        ] {
            assert_eq!(find(text), None, "{text}");
            let garbled = mis_decode(text);
            assert!(find(&garbled).is_some(), "{garbled}");
        }
        // Sent through an encoding without the script: question marks.
        assert_eq!(
            find("????? ??? ?????? ?").as_deref(),
            Some("????? ??? ??????")
        );
        assert_eq!(find("Really?? I had no idea."), None);
        assert_eq!(find("What??? Why?"), None);
    }

    #[test]
    fn leaves_real_accented_text_alone() {
        for ok in [
            "O café é ótimo, não é? «Já está», disse a irmã.",
            "Er sagte: „Das macht Spaß“ – und ging.",
            "«IRMÃ» em maiúsculas, SÃO PAULO, ÇA VA…",
            "Straße, Größe, Übung; élève, naïve, Ærø, 20 °C, nº 5, 1º lugar.",
            "Zażółć gęślą jaźń. Привет, как дела? 日本語のテキスト。İstanbul'da ılık.",
            "¿Qué tal? ¡Hola! café… «très» “quoted”",
        ] {
            assert_eq!(find(ok), None, "{ok}");
        }
    }
}
