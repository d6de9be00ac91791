//! Every answer of a run checked against the answer contracts, after the
//! replay (so that this text work never competes with the systems under
//! test while they are timed): each turn's request is rebuilt exactly as it
//! was sent, and the outcome of every contract that applied is written into
//! the turn's `contracts` (typed: each contract that applied, its outcome).

use super::collect::Collected;
use cb_contracts::{checks, ContractInput, Contracts, Language};
use cb_dataset::Dataset;
use cb_driver::replay::{first_sent, request_messages};
use cb_driver::Replay;
use cb_wire::openai::ChatRequest;
use std::sync::OnceLock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How the run's requests were made, to rebuild them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sent<'a> {
    /// The system prompt.
    pub system_prompt: &'a str,
    /// Live or fast-forward.
    pub replay: Replay,
    /// Whether answers were streamed.
    pub stream: bool,
    /// The model asked for.
    pub model: &'a str,
}

/// Checks every answered turn (a 2xx with an answer) of every conversation,
/// on every core (each conversation is checked alone, so the outcome does
/// not depend on how they are shared out); stops early, leaving later turns
/// unchecked, when `cancel` fires.
pub(super) fn check_answers(
    collected: &mut [Collected],
    dataset: &Dataset,
    contracts: &Contracts,
    sent: Sent<'_>,
    cancel: &CancellationToken,
) {
    // A conversation's language, decided once whatever the number of
    // systems and runs that answered it.
    let languages: Vec<OnceLock<Option<Language>>> = (0..dataset.conversations.len())
        .map(|_| OnceLock::new())
        .collect();
    super::collect::on_every_core(collected, |part| {
        check_part(part, dataset, contracts, sent, &languages, cancel);
    });
}

/// [`check_answers`] on one share of the conversations.
fn check_part(
    collected: &mut [Collected],
    dataset: &Dataset,
    contracts: &Contracts,
    sent: Sent<'_>,
    languages: &[OnceLock<Option<Language>>],
    cancel: &CancellationToken,
) {
    for c in collected {
        if cancel.is_cancelled() {
            return;
        }
        let conversation = &dataset.conversations[c.outcome.conversation];
        // The conversation's language, decided once from all its user
        // messages: the first turns alone are too short to tell.
        let language = *languages[c.outcome.conversation].get_or_init(|| {
            let all_users: Vec<&str> = conversation.turns.iter().map(|t| &*t.user).collect();
            contracts.conversation_language(&all_users)
        });
        let skipped = first_sent(sent.replay, conversation.n_turns());
        for i in 0..c.outcome.turns.len() {
            let record = &c.outcome.turns[i];
            let answered =
                record.error.is_none() && record.status.is_some_and(|s| (200..300).contains(&s));
            if !answered {
                continue;
            }
            let request = ChatRequest {
                model: sent.model.to_string(),
                messages: request_messages(
                    conversation,
                    sent.system_prompt,
                    sent.replay,
                    &c.outcome.turns[..i],
                    skipped + i,
                ),
                stream: sent.stream,
                stream_options: None,
                extra: serde_json::Map::new(),
            };
            let ms = |v: Option<f64>| v.map(|ms| Duration::from_secs_f64(ms / 1000.0));
            let input = ContractInput {
                request: &request,
                expected_language: language,
                status: record.status.unwrap_or(200),
                stream: sent.stream,
                text: &record.answer,
                finish_reason: record.finish_reason.as_deref(),
                ttft: ms(record.ttft_ms),
                ttfb: ms(record.ttfb_ms),
            };
            c.outcome.turns[i].contracts = checks(&contracts.check(&input));
        }
    }
}
