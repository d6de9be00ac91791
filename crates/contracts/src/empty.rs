//! `empty`: the message holds no visible character. A gateway that turns a
//! provider's empty completion into a 200 hands the user nothing; the other
//! content contracts do not apply to such a reply, so it is counted here
//! and only here.
//!
//! The rule: a reply is empty when every character in it is invisible by
//! [`text::is_invisible`](crate::text::is_invisible), the one predicate the
//! contracts share (`text::is_blank`, and so `schema` and `language`, use
//! it too): whitespace (`White_Space`), a Unicode format character
//! (general category Cf: soft hyphen, bidirectional marks, zero-width
//! characters, word joiner, byte-order mark, tags) other than the
//! prepended concatenation marks (`U+0600`, `U+06DD`, ...: they draw a
//! sign), any other default-ignorable code point (variation selectors,
//! the Hangul fillers `U+115F` `U+1160` `U+3164` `U+FFA0`), or the blank
//! Braille pattern `U+2800`. It is a class, not a list of the characters
//! seen so far: a reply with no character a reader can see fails.
//!
//! Blind spot: a reply of a single meaningless character (`.`) is not
//! empty; `junk_prefix` may catch it.

use super::text::has_visible;
use super::{Contract, ContractInput, ContractName, Outcome};

/// The `empty` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct Empty;

impl Contract for Empty {
    fn name(&self) -> ContractName {
        ContractName::Empty
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        let text = input.text;
        Some(if text.is_empty() {
            Outcome::fail("the reply is empty")
        } else if text.chars().all(char::is_whitespace) {
            Outcome::fail(format!(
                "the reply is only whitespace ({} characters)",
                text.chars().count()
            ))
        } else if !has_visible(text) {
            let mut shown: Vec<String> = Vec::new();
            for c in text.chars().filter(|c| !c.is_whitespace()) {
                let code = format!("U+{:04X}", c as u32);
                if !shown.contains(&code) && shown.len() < 4 {
                    shown.push(code);
                }
            }
            Outcome::fail(format!(
                "the reply holds no visible character: {} characters of whitespace and invisible characters ({})",
                text.chars().count(),
                shown.join(", ")
            ))
        } else {
            Outcome::Pass
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::input;

    #[test]
    fn empty_and_whitespace_fail_text_passes() {
        assert!(Empty.check(&input("", "Hi?")).unwrap().is_fail());
        assert!(Empty.check(&input(" \n\u{200B}", "Hi?")).unwrap().is_fail());
        assert_eq!(Empty.check(&input("0", "Hi?")), Some(Outcome::Pass));
    }

    #[test]
    fn replies_of_only_invisible_characters_fail_and_are_named() {
        for reply in [
            "\u{200E}",
            "\u{200F}",
            "\u{00AD}",
            "\u{3164}",
            "\u{115F}",
            "\u{1160}",
            "\u{FFA0}",
            "\u{2800}",
            "\u{2060}",
            "\u{180E}",
            "\u{FEFF}\n\u{00A0}\u{3000}",
            "\u{202B}\u{2066}\u{FE0F}\u{E0041}",
        ] {
            let out = Empty.check(&input(reply, "Hi?")).unwrap();
            assert!(out.is_fail(), "{reply:?}: {out}");
            let first = reply.chars().find(|c| !c.is_whitespace()).unwrap();
            let code = format!("U+{:04X}", first as u32);
            assert!(out.reason().unwrap().contains(&code), "{out}");
        }
    }

    #[test]
    fn one_visible_character_beside_invisible_ones_passes() {
        // Negative controls: a visible sign among invisible characters,
        // including the prepended concatenation mark, which draws one.
        for reply in [
            "\u{200E}.",
            "\u{3164}ㅋ",
            "\u{2800}⠁",
            "\u{00AD}a\u{00AD}",
            "\u{0600}",
            "\u{200F}نعم",
        ] {
            assert_eq!(
                Empty.check(&input(reply, "Hi?")),
                Some(Outcome::Pass),
                "{reply:?}"
            );
        }
    }
}
