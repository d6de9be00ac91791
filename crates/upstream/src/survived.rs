//! What of the client's request reached an upstream, and the fallback's
//! context window.
//!
//! The harness knows what the client sent for each turn (the dataset and
//! the system prompt, [`ClientView`]); an upstream that recognises a
//! request compares what it received with that
//! ([`cb_dialect::survival()`]) and notes the result beside the attempt
//! ([`super::log::SurvivalRow`]), whatever dialect it was called in. A
//! fault profile's `[fallback] context_tokens` makes the fallback refuse a
//! request above its window with the dialect's own 400.

use super::identify::Identity;
use super::log::{RejectionRow, SurvivalRow};
use super::UpstreamContext;
use cb_dataset::{messages, Dataset};
use cb_dialect::{anthropic, gemini, Dialect, Rejection};
use cb_faults::{ErrorKind, ErrorSpec, Role};
use cb_wire::openai::ChatMessage;
use std::sync::Arc;

/// What the client sends, as the harness knows it: the conversations and
/// the system prompt the driver puts first.
#[derive(Debug, Clone)]
pub struct ClientView {
    /// The conversations, in the order of the conversation index.
    pub dataset: Arc<Dataset>,
    /// The driver's system prompt.
    pub system_prompt: String,
}

/// Notes what survived of turn `who` of the client's request in
/// `received` (the messages as the upstream read them), when the context
/// knows the client, `who` is a recognised conversation and the upstream is
/// a fallback: what reached the fallback is what the report shows, and a
/// row per primary attempt (most of a run's requests) would cost memory and
/// time for nothing read.
pub fn note(
    ctx: &UpstreamContext,
    system: &str,
    role: Role,
    who: &Identity,
    attempt: u32,
    dialect: Dialect,
    received: &[ChatMessage],
) {
    let (Some(view), Some(i)) = (ctx.clients.as_ref(), who.conversation) else {
        return;
    };
    if role != Role::Fallback {
        return;
    }
    let Some(conversation) = view.dataset.conversations.get(i) else {
        return;
    };
    let sent = messages::client_request(conversation, &view.system_prompt, who.turn);
    let survival = cb_dialect::survival(&sent, received);
    let anchor = messages::anchor_message(conversation, &sent.messages).is_none_or(|at| {
        let one = cb_wire::openai::ChatRequest {
            messages: sent.messages.get(at).cloned().into_iter().collect(),
            ..sent.clone()
        };
        cb_dialect::survival(&one, received).complete()
    });
    ctx.log.note_survival(SurvivalRow {
        run: ctx.run_of(who),
        system: system.to_string(),
        role,
        conversation: who.id.clone(),
        turn: who.turn,
        attempt,
        dialect,
        survival,
        anchor,
    });
}

/// Notes a request `dialect`'s validation refused.
pub fn note_rejection(
    ctx: &UpstreamContext,
    system: &str,
    role: Role,
    dialect: Dialect,
    rejection: &Rejection,
) {
    ctx.log.note_rejection(RejectionRow {
        run: ctx.current_run(),
        system: system.to_string(),
        role,
        dialect,
        message: rejection.message.clone(),
    });
}

/// The 400 a fallback with a context window of `window` tokens sends a
/// request of `tokens`, in `dialect`'s words.
pub fn context_error(tokens: u32, window: u32, dialect: Dialect) -> ErrorSpec {
    let message = match dialect {
        Dialect::Openai => format!(
            "This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."
        ),
        Dialect::Anthropic => anthropic::context_too_long(tokens.into(), window.into()).message,
        Dialect::Gemini => gemini::context_too_long(tokens.into(), window.into()).message,
    };
    ErrorSpec::new(400, ErrorKind::ContextLength, message)
}

/// The 400 of a request above the fallback's context window, when the
/// profile gives it one and the request is larger.
pub fn squeezed(
    ctx: &UpstreamContext,
    role: Role,
    input_tokens: u32,
    dialect: Dialect,
) -> Option<ErrorSpec> {
    let window = ctx.plan.profile()?.fallback_context_tokens?;
    (role == Role::Fallback && input_tokens > window)
        .then(|| context_error(input_tokens, window, dialect))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_errors_speak_each_dialect() {
        let e = context_error(900, 500, Dialect::Openai);
        assert_eq!(e.status, 400);
        assert_eq!(e.kind.openai().1, Some("context_length_exceeded"));
        assert!(context_error(900, 500, Dialect::Anthropic)
            .message
            .starts_with("prompt is too long"));
        assert!(context_error(900, 500, Dialect::Gemini)
            .message
            .contains("exceeds the maximum number of tokens"));
    }
}
