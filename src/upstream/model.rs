//! The simulated model: answers only from the messages it received.

use crate::openai::ChatMessage;

/// The reply to `messages`.
pub fn reply(_messages: &[ChatMessage]) -> String {
    String::from("I don't know.")
}
