//! Producing an answer on the wire: the responder's answer, degraded or
//! shaped as the plan or a case script says (late, with reasoning text,
//! with a malformed event, without `data: [DONE]`, cut or stalled), framed
//! as JSON or paced server-sent events. The one path every answer of an
//! upstream takes, faulted or not. A stream whose text no degradation needs
//! whole is relayed live ([`super::relay`]) when the responder offers its
//! answer as it arrives (a real provider's stream); otherwise the whole
//! answer is framed.

use super::attempt::AttemptGuard;
use super::identify::Identity;
use super::latency::JitterKey;
use super::relay::{self, LiveShape};
use super::render::{json_response, stream_frames, REASONING_TEXT};
use super::responder::{Answer, Call};
use super::wire::{self, Tail};
use super::UpstreamContext;
use axum::response::Response;
use cb_dialect::frames::{Framer, Whole};
use cb_dialect::Dialect;
use cb_faults::degrade::{Degradation, Degraded};
use cb_faults::{End, Role, Shape};
use cb_wire::openai::{ChatRequest, Envelope};
use std::time::Duration;

/// What the attempt log's `answered_by` says of the simulated model.
pub const SIMULATED_MODEL: &str = "simulated";

/// Who is being answered: the request and where it came from.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// What every upstream shares.
    pub ctx: &'a UpstreamContext,
    /// The system the upstream belongs to.
    pub system: &'a str,
    /// Primary or fallback.
    pub role: Role,
    /// The request as received.
    pub request: &'a ChatRequest,
    /// The conversation and turn it was recognised as.
    pub who: &'a Identity,
    /// The run it belongs to ([`UpstreamContext::run_of`] on arrival).
    pub run: u32,
    /// Its attempt number.
    pub attempt: u32,
    /// Approximate input tokens.
    pub input_tokens: u32,
    /// The dialect the request came in, which the answer is rendered in.
    pub dialect: Dialect,
    /// Gemini's `streamGenerateContent` without `alt=sse`: the stream is
    /// answered as one JSON array of chunks.
    pub json_array: bool,
}

/// Answers `asked` with the responder's answer, `degraded` and `shaped`.
pub async fn answer(
    asked: Asked<'_>,
    guard: AttemptGuard,
    shape: &Shape,
    degraded: Option<Degraded>,
) -> Response {
    let Asked {
        ctx,
        system,
        role,
        request,
        who,
        run,
        attempt,
        input_tokens,
        dialect,
        json_array,
    } = asked;
    let key = JitterKey {
        system,
        role,
        conversation: &who.id,
        turn: who.turn,
        attempt,
    };
    let call = Call {
        request,
        key,
        input_tokens,
    };
    let id = format!(
        "chatcmpl-sim-{system}-{}-{}-{}-{attempt}",
        role.as_str(),
        who.id,
        who.turn,
    );
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let include_usage = request
        .stream_options
        .as_ref()
        .is_some_and(|o| o.include_usage);
    // A stream whose text no degradation needs whole is relayed live when
    // the responder can (a real provider's stream).
    let text_degraded = degraded.is_some_and(|d| matches!(d.degradation, Degradation::Text(_)));
    if request.stream && !json_array && !text_degraded {
        if let Some(live) = ctx.responder.respond_live(call) {
            let live = match live.await {
                Ok(live) => live,
                Err(spec) => return wire::provider_error(guard, &spec, dialect),
            };
            let slow_by = match degraded.map(|d| d.degradation) {
                Some(Degradation::SlowFirstToken { delay }) => delay,
                _ => Duration::ZERO,
            };
            let late = slow_by
                + shape.delay.unwrap_or_default()
                + shape.first_token_after.unwrap_or_default();
            let envelope = Envelope {
                id: &id,
                model: &live.model,
                created,
            };
            let framer = Framer::new(dialect, envelope, input_tokens, include_usage);
            return relay::relay(
                framer,
                guard,
                LiveShape::of(shape, late),
                live,
                input_tokens,
            );
        }
    }
    let mut guard = guard;
    let mut answer = match ctx.responder.respond(call).await {
        Ok(answer) => answer,
        Err(spec) => return wire::provider_error(guard, &spec, dialect),
    };
    let slow_by = degraded.and_then(|d| wire::degrade(&mut answer, d));
    match shape.end {
        End::LengthAfter(words) => {
            wire::cut_to_words(&mut answer, words);
            answer.finish_reason = "length".to_string();
        }
        End::TruncatedAfter(words) if !request.stream => wire::cut_to_words(&mut answer, words),
        _ => {}
    }
    // When the harness is the client (it knows what the client sent and
    // keeps what it received, in turns.csv), the attempt's row keeps the
    // answer where it says what turns.csv does not: a real provider's, one
    // a degradation changed, one on a faulted turn (which upstream answered
    // what is the finding there) and one the wire does not send whole. A
    // plain simulated answer elsewhere is what the client got, and keeping
    // it on every row would cost a run of 10,000 conversations some 40 MB.
    // Serving another client (`upstreams`), every answer is kept.
    let faulted_turn = who.conversation.is_some_and(|i| {
        [Role::Primary, Role::Fallback]
            .into_iter()
            .any(|r| ctx.plan.action(run, i, who.turn as usize, r).is_some())
    });
    ctx.log.note_billed(
        super::log::AttemptOf {
            turn: super::log::TurnKey {
                run,
                system,
                role,
                conversation: &who.id,
                turn: who.turn,
            },
            attempt,
        },
        billed(&answer, shape.end, request.stream && !json_array),
    );
    let telling = ctx.clients.is_none()
        || answer.model.is_some()
        || degraded.is_some()
        || faulted_turn
        || !matches!(shape.end, End::Complete);
    guard.set_answer(
        if telling { &answer.text } else { "" },
        answer.model.as_deref().unwrap_or(SIMULATED_MODEL),
    );
    // A real provider's answer names the model that gave it; the
    // simulated model echoes the id asked for.
    let envelope = Envelope {
        id: &id,
        model: answer.model.as_deref().unwrap_or(&request.model),
        created,
    };
    let reasoning = shape.reasoning.then_some(REASONING_TEXT);
    // How much later than normal the content comes.
    let late = slow_by.unwrap_or_default()
        + shape.delay.unwrap_or_default()
        + if request.stream {
            shape.first_token_after.unwrap_or_default()
        } else {
            Duration::ZERO
        };
    // The answer's own prompt count labels the frames that carry one
    // (Anthropic's `message_start`, Gemini's partial usage).
    let mut framer = Framer::new(dialect, envelope, answer.usage.prompt_tokens, include_usage);
    if !request.stream || json_array {
        wire::pause(answer.ttft + late + answer.output_time(answer.usage.completion_tokens)).await;
        guard.finish(Some(200));
        let whole = Whole {
            text: &answer.text,
            finish_reason: &answer.finish_reason,
            usage: answer.usage,
            reasoning,
        };
        let body = framer.whole(whole, json_array);
        return match shape.end {
            End::CutAfter(_) => wire::cut_json(&body),
            End::HalfBody => wire::half_json(&body),
            End::BodyStall { silent } => wire::stalled_json(&body, silent),
            End::Complete
            | End::NoDone
            | End::StallAfter { .. }
            | End::KeepAliveAfter { .. }
            | End::TruncatedAfter(_)
            | End::LengthAfter(_) => json_response(200, body),
            End::ErrorAfter(_) => json_response(
                200,
                cb_dialect::frames::error_body(
                    dialect,
                    529,
                    wire::IN_BAND_ERROR,
                    "overloaded_error",
                    None,
                )
                .to_string(),
            ),
        };
    }
    wire::pause(answer.ttft).await;
    let mut frames = stream_frames(&mut framer, &answer);
    let mut first_content = 1;
    // Reasoning text is an OpenAI-dialect field (`reasoning_content`).
    if let Some(frame) = reasoning.and_then(|text| framer.reasoning(text)) {
        frames.insert(1, (Duration::ZERO, frame));
        first_content += 1;
    }
    // Headers and the opening frame at once; everything after it late.
    for (due, _) in frames.iter_mut().skip(1) {
        *due += late;
    }
    let tail = match shape.end {
        // `LengthAfter` cut the text above: the stream of what is left is
        // complete.
        End::Complete | End::LengthAfter(_) => Tail::Complete,
        End::NoDone => {
            frames.pop();
            Tail::Complete
        }
        End::CutAfter(chunks) => {
            frames.truncate(first_content + chunks);
            Tail::Cut
        }
        End::StallAfter { tokens, silent } => {
            frames.truncate(first_content + tokens);
            Tail::StallThenCut(silent)
        }
        End::TruncatedAfter(chunks) => {
            frames.truncate(first_content + chunks);
            Tail::Complete
        }
        End::ErrorAfter(chunks) => {
            frames.truncate(first_content + chunks);
            let due = frames.last().map_or(late, |(d, _)| *d);
            frames.push((due, framer.error(wire::IN_BAND_ERROR)));
            Tail::Complete
        }
        End::KeepAliveAfter {
            tokens,
            every,
            silent,
        } => {
            frames.truncate(first_content + tokens);
            Tail::KeepAlive {
                every,
                left: silent,
            }
        }
        End::HalfBody => {
            frames.truncate(first_content + 1);
            Tail::CloseAfter(Duration::ZERO)
        }
        End::BodyStall { silent } => {
            frames.truncate(first_content);
            Tail::StallThenCut(silent)
        }
    };
    if let Some(after) = shape.malformed_after {
        let at = (first_content + after).min(frames.len());
        let due = frames.get(at.saturating_sub(1)).map_or(late, |(d, _)| *d);
        frames.insert(at, (due, framer.malformed().to_string()));
    }
    wire::paced_stream(frames, guard, tail)
}

/// What the upstream bills for `answer` ended as `end`: its prompt, and
/// the tokens of the text it sent (a stream cut, stalled or broken by an
/// error after n words bills those n; a plain body bills its whole text,
/// except one replaced by an error, which bills none). What a gateway's
/// `usage` is held to.
pub fn billed(answer: &Answer, end: End, stream: bool) -> cb_wire::openai::Usage {
    let words = |n: usize| -> u32 {
        let sent: String = answer.text.split_inclusive(' ').take(n).collect();
        cb_wire::openai::approx_tokens(&sent)
    };
    let completion = match end {
        End::ErrorAfter(_) if !stream => 0,
        End::CutAfter(n) | End::TruncatedAfter(n) | End::ErrorAfter(n) if stream => words(n),
        End::StallAfter { tokens, .. } | End::KeepAliveAfter { tokens, .. } if stream => {
            words(tokens)
        }
        End::HalfBody if stream => words(1),
        End::BodyStall { .. } if stream => 0,
        _ => answer.usage.completion_tokens,
    };
    cb_wire::openai::Usage::new(answer.usage.prompt_tokens, completion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_wire::openai::Usage;

    /// The bill follows what was sent: the words a stream got out before
    /// it was cut, stalled or broken by an error; a plain body's whole
    /// text, none when an error replaced it.
    #[test]
    fn an_upstream_bills_the_text_it_sent() {
        let answer = Answer {
            text: "one two three four five six seven eight".into(),
            finish_reason: "stop".into(),
            usage: Usage::new(12, 10),
            ttft: Duration::ZERO,
            tokens_per_second: 10.0,
            model: None,
        };
        let three = cb_wire::openai::approx_tokens("one two three ");
        assert_eq!(billed(&answer, End::Complete, true), Usage::new(12, 10));
        assert_eq!(
            billed(&answer, End::CutAfter(3), true),
            Usage::new(12, three)
        );
        assert_eq!(
            billed(&answer, End::ErrorAfter(3), true),
            Usage::new(12, three)
        );
        assert_eq!(
            billed(
                &answer,
                End::StallAfter {
                    tokens: 3,
                    silent: Duration::from_secs(1)
                },
                true
            ),
            Usage::new(12, three)
        );
        assert_eq!(billed(&answer, End::CutAfter(3), false), Usage::new(12, 10));
        assert_eq!(
            billed(&answer, End::ErrorAfter(3), false),
            Usage::new(12, 0)
        );
        assert_eq!(
            billed(
                &answer,
                End::BodyStall {
                    silent: Duration::from_secs(1)
                },
                true
            ),
            Usage::new(12, 0)
        );
    }
}
