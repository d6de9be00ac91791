//! `empty`: the message is empty or holds only whitespace (invisible
//! characters such as a zero-width space count as whitespace). A gateway
//! that turns a provider's empty completion into a 200 hands the user
//! nothing; the other content contracts do not apply to such a reply, so
//! it is counted here and only here.
//!
//! Blind spot: a reply of a single meaningless character (`.`) is not
//! empty; `junk_prefix` may catch it.

use super::text::is_blank;
use super::{Contract, ContractInput, ContractName, Outcome};

/// The `empty` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct Empty;

impl Contract for Empty {
    fn name(&self) -> ContractName {
        ContractName::Empty
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        Some(if input.text.is_empty() {
            Outcome::fail("the reply is empty")
        } else if is_blank(input.text) {
            Outcome::fail(format!(
                "the reply is only whitespace ({} characters)",
                input.text.chars().count()
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
}
