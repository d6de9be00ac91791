//! Replaying one conversation through one system, turn by turn.
//!
//! Live replay sends every turn; each request carries the full history so far,
//! including the replies the system actually returned. Fast-forward sends only
//! the final turn, with the dataset's scripted replies as history. A turn
//! without a usable answer ends the conversation there: a chat user whose
//! message failed does not carry on as if it had been answered.
//!
//! In Responses mode (`--api responses`, live replay only) each request
//! carries only the turn's new input (the conversation's system messages
//! first on turn 1, the user's message, its tool call and result) and the
//! `id` of the previous turn's response as `previous_response_id`, as an
//! application using that API sends it; the system keeps the history.
//!
//! Each record keeps the whole answer, as the client read it (bounded by
//! `--max-response-bytes`, redacted), with its length in characters: the
//! collector scores the whole text; turns.csv is written with the answer
//! cut at [`cb_base::record::ANSWER_BOUND`], and the collector may cut it in
//! memory ([`TurnRecord::bound_answer`]) once scoring is done.

use crate::spec::Replay;
use crate::DriverOptions;
use cb_base::record::TurnRecord;
use cb_client::{send_body_to, Api, DriverClient, SendOptions, Target};
use cb_dataset::Conversation;
use cb_wire::openai::{ChatMessage, ChatRequest};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The error of a request abandoned by Ctrl-C.
pub const INTERRUPTED: &str = "interrupted (Ctrl-C) before the answer arrived";

/// The index of the first turn sent: every turn in live replay, the final
/// one in fast-forward.
pub fn first_sent(replay: Replay, n_turns: usize) -> usize {
    match replay {
        Replay::Live => 0,
        Replay::FastForward => n_turns.saturating_sub(1),
    }
}

/// The messages of the request for turn `index` (from 0), as
/// [`cb_dataset::messages::client_messages`] lays them out: the system
/// prompt (and the conversation's system messages), every earlier turn
/// (with its tool call and result) with the reply the system gave (`sent`, the
/// records of the turns sent so far, in order) or, for turns fast-forward
/// skips, the dataset's scripted reply, then the turn's user message. The
/// replay and anything that re-checks an answer later build the request
/// the same way.
pub fn request_messages(
    conversation: &Conversation,
    system_prompt: &str,
    replay: Replay,
    sent: &[TurnRecord],
    index: usize,
) -> Vec<ChatMessage> {
    let skipped = first_sent(replay, conversation.n_turns());
    cb_dataset::messages::client_messages(conversation, system_prompt, index, |k| {
        if k < skipped {
            conversation
                .turns
                .get(k)
                .and_then(|t| t.assistant.as_deref())
                .unwrap_or_default()
        } else {
            sent.get(k - skipped).map_or("", |r| r.answer.as_str())
        }
    })
}

/// The Responses input items of turn `index` (from 0): on the first turn
/// the conversation's own system messages, then the user's message, its
/// tool call and the call's result.
pub fn turn_input(conversation: &Conversation, index: usize) -> Vec<serde_json::Value> {
    let mut messages = Vec::new();
    if index == 0 {
        messages.extend(
            conversation
                .system
                .iter()
                .map(|s| ChatMessage::new("system", s)),
        );
    }
    if let Some(turn) = conversation.turns.get(index) {
        messages.push(ChatMessage::new("user", &turn.user));
        if let Some(tool) = &turn.tool {
            messages.push(cb_dataset::messages::tool_call_message(tool));
            messages.push(cb_dataset::messages::tool_result_message(tool));
        }
    }
    cb_wire::responses::input_items(&messages)
}

/// Replays `conversation` through `target` and returns one record per request
/// sent, and whether `cancel` cut it short (a request in flight when it fires
/// is abandoned and recorded with the error "interrupted"). `run_start` is the
/// epoch of `sent_at_ms`.
pub async fn replay_conversation(
    client: &DriverClient,
    target: &Target,
    conversation: &Conversation,
    run: u32,
    options: &DriverOptions,
    run_start: Instant,
    cancel: &CancellationToken,
) -> (Vec<TurnRecord>, bool) {
    let n = conversation.n_turns();
    let first_sent = first_sent(options.replay, n);
    let send_options = SendOptions {
        deadline: options.request_timeout,
        max_response_bytes: options.max_response_bytes,
    };
    let mut records = Vec::with_capacity(n - first_sent);
    // Responses mode: the id the next request continues from.
    let mut previous: Option<String> = None;
    for index in first_sent..n {
        if cancel.is_cancelled() {
            return (records, true);
        }
        // Room for the request's sockets and buffers; the wait is not the
        // system's latency, so the clock starts after it. The request is
        // built only once there is room: thousands of conversations waiting
        // must not each hold their next request.
        let pass = tokio::select! {
            pass = options.gate.enter() => pass,
            () = cancel.cancelled() => return (records, true),
        };
        // Serialized, then dropped: what stays in flight is the bytes.
        let (body, messages_sent) = match options.api {
            Api::Chat => {
                let request = ChatRequest {
                    model: target.model(&options.model).to_string(),
                    messages: request_messages(
                        conversation,
                        &options.system_prompt,
                        options.replay,
                        &records,
                        index,
                    ),
                    stream: options.stream,
                    stream_options: None,
                    extra: serde_json::Map::new(),
                };
                let sent = request.messages.len() as u32;
                (serde_json::to_vec(&request).unwrap_or_default(), sent)
            }
            Api::Responses => {
                let input = turn_input(conversation, index);
                let sent = input.len() as u32;
                let request = cb_wire::responses::request_body(
                    target.model(&options.model),
                    &options.system_prompt,
                    input,
                    previous.as_deref(),
                );
                (serde_json::to_vec(&request).unwrap_or_default(), sent)
            }
        };
        let sent_at_ms = run_start.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let exchange = tokio::select! {
            exchange = send_body_to(client, target, options.api, body, options.stream, send_options) => Some(exchange),
            () = cancel.cancelled() => None,
        };
        drop(pass);
        let Some(mut reply) = exchange else {
            records.push(TurnRecord {
                run,
                system: target.name.clone(),
                conversation: conversation.id.clone(),
                turn: (index + 1) as u32,
                turns: n as u32,
                is_final: index + 1 == n,
                messages_sent,
                sent_at_ms,
                status: None,
                latency_ms: started.elapsed().as_secs_f64() * 1000.0,
                answer: String::new(),
                answer_chars: 0,
                error: Some(INTERRUPTED.to_string()),
                ..TurnRecord::default()
            });
            return (records, true);
        };
        reply.read_as(options.client);
        let usable = reply.answer.is_some();
        previous = reply.response_id;
        let answer = reply.answer.unwrap_or_default();
        records.push(TurnRecord {
            run,
            system: target.name.clone(),
            conversation: conversation.id.clone(),
            turn: (index + 1) as u32,
            turns: n as u32,
            is_final: index + 1 == n,
            messages_sent,
            sent_at_ms,
            status: reply.status,
            latency_ms: reply.latency_ms,
            answer_chars: answer.chars().count() as u64,
            answer,
            error: reply.error,
            ttfb_ms: reply.ttfb_ms,
            ttft_ms: reply.ttft_ms,
            finish_reason: reply.finish_reason,
            ..TurnRecord::default()
        });
        if !usable {
            break;
        }
    }
    (records, false)
}
