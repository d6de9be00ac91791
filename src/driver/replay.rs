//! Replaying one conversation through one system, turn by turn.
//!
//! Live replay sends every turn; each request carries the full history so far,
//! including the replies the system actually returned. Fast-forward sends only
//! the final turn, with the dataset's scripted replies as history. A turn
//! without a usable answer ends the conversation there: a chat user whose
//! message failed does not carry on as if it had been answered.
//!
//! Each record keeps the whole answer, as the client read it (bounded by
//! `--max-response-bytes`, redacted), with its length in characters: the
//! collector scores the whole text; turns.csv is written with the answer
//! cut at [`crate::record::ANSWER_BOUND`], and the collector may cut it in
//! memory ([`TurnRecord::bound_answer`]) once scoring is done.

use super::DriverOptions;
use crate::config::Replay;
use crate::dataset::Conversation;
use crate::openai::{ChatMessage, ChatRequest};
use crate::record::TurnRecord;
use crate::systems::{send, SendOptions, Target};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The error of a request abandoned by Ctrl-C.
pub const INTERRUPTED: &str = "interrupted (Ctrl-C) before the answer arrived";

/// Replays `conversation` through `target` and returns one record per request
/// sent, and whether `cancel` cut it short (a request in flight when it fires
/// is abandoned and recorded with the error "interrupted"). `run_start` is the
/// epoch of `sent_at_ms`.
pub async fn replay_conversation(
    client: &reqwest::Client,
    target: &Target,
    conversation: &Conversation,
    run: u32,
    options: &DriverOptions,
    run_start: Instant,
    cancel: &CancellationToken,
) -> (Vec<TurnRecord>, bool) {
    let n = conversation.n_turns();
    let mut messages = vec![ChatMessage::new("system", &options.system_prompt)];
    let first_sent = match options.replay {
        Replay::Live => 0,
        Replay::FastForward => {
            for turn in &conversation.turns[..n - 1] {
                messages.push(ChatMessage::new("user", &turn.user));
                messages.push(ChatMessage::new(
                    "assistant",
                    turn.assistant.as_deref().unwrap_or_default(),
                ));
            }
            n - 1
        }
    };
    let send_options = SendOptions {
        deadline: options.request_timeout,
        max_response_bytes: options.max_response_bytes,
    };
    let mut records = Vec::with_capacity(n - first_sent);
    for (index, turn) in conversation.turns.iter().enumerate().skip(first_sent) {
        messages.push(ChatMessage::new("user", &turn.user));
        let request = ChatRequest {
            model: options.model.clone(),
            messages: messages.clone(),
            stream: options.stream,
            stream_options: None,
            extra: serde_json::Map::new(),
        };
        if cancel.is_cancelled() {
            return (records, true);
        }
        let sent_at_ms = run_start.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let exchange = tokio::select! {
            exchange = send(client, target, &request, send_options) => Some(exchange),
            () = cancel.cancelled() => None,
        };
        let Some(reply) = exchange else {
            records.push(TurnRecord {
                run,
                system: target.name.clone(),
                conversation: conversation.id.clone(),
                turn: (index + 1) as u32,
                turns: n as u32,
                is_final: index + 1 == n,
                messages_sent: request.messages.len() as u32,
                sent_at_ms,
                status: None,
                latency_ms: started.elapsed().as_secs_f64() * 1000.0,
                answer: String::new(),
                answer_chars: 0,
                error: Some(INTERRUPTED.to_string()),
                bleed_from: String::new(),
            });
            return (records, true);
        };
        let usable = reply.answer.is_some();
        let answer = reply.answer.unwrap_or_default();
        messages.push(ChatMessage::new("assistant", &answer));
        records.push(TurnRecord {
            run,
            system: target.name.clone(),
            conversation: conversation.id.clone(),
            turn: (index + 1) as u32,
            turns: n as u32,
            is_final: index + 1 == n,
            messages_sent: request.messages.len() as u32,
            sent_at_ms,
            status: reply.status,
            latency_ms: reply.latency_ms,
            answer_chars: answer.chars().count() as u64,
            answer,
            error: reply.error,
            bleed_from: String::new(),
        });
        if !usable {
            break;
        }
    }
    (records, false)
}
