//! Executing a case script's decision on the wire: a reset, a held
//! connection, an error status, or an answer shaped as the script says.
//! The decision itself is [`cb_faults::Script::act`], pure; this file
//! only carries it out and notes what the request carried and what was
//! done ([`AttemptDetail`]) for the checks that read the attempt log.

use super::answer::{answer, Asked};
use super::attempt::AttemptGuard;
use super::listen::Socket;
use super::log::AttemptDetail;
use super::wire;
use axum::response::Response;
use cb_faults::script::{ends_with_assistant, thinking_disabled};
use cb_faults::{Act, CaseScript, End, Facts, HoldEnd, Shape};

/// What the script decides for `asked`, carried out.
pub async fn execute(
    script: &CaseScript,
    asked: Asked<'_>,
    guard: AttemptGuard,
    socket: Option<&Socket>,
) -> Response {
    let facts = Facts {
        attempt: asked.attempt,
        since_start: asked.ctx.since_clock(asked.system, &script.clock),
        request: asked.request,
    };
    let act = script.of(asked.role).act(&facts);
    asked.ctx.log.note_detail(AttemptDetail {
        run: asked.run,
        system: asked.system.to_string(),
        role: asked.role,
        conversation: asked.who.id.clone(),
        turn: asked.who.turn,
        attempt: asked.attempt,
        prefill: ends_with_assistant(asked.request),
        max_tokens: asked.request.extra.get("max_tokens").cloned(),
        thinking_disabled: thinking_disabled(asked.request),
        act: describe(&act),
        reasoning: matches!(&act, Act::Answer(shape) if shape.reasoning),
        billed: None,
    });
    match act {
        Act::Error(spec) => wire::error(guard, &spec, asked.dialect),
        Act::Hold {
            hold,
            then: HoldEnd::GatewayTimeout,
        } => wire::hold(guard, hold, asked.dialect).await,
        Act::Hold {
            hold,
            then: HoldEnd::Close,
        } => wire::hold_then_close(guard, hold).await,
        Act::Reset => wire::reset(guard, socket),
        Act::LateError { after, error } => {
            // The script's silence before its error; the client may give up first.
            tokio::time::sleep(after).await;
            wire::error(guard, &error, asked.dialect)
        }
        Act::Answer(shape) => {
            let mut guard = guard;
            if shape != Shape::default() {
                guard.set_action(match shape.end {
                    End::CutAfter(_)
                    | End::StallAfter { .. }
                    | End::KeepAliveAfter { .. }
                    | End::TruncatedAfter(_)
                    | End::ErrorAfter(_)
                    | End::HalfBody
                    | End::BodyStall { .. } => cb_base::record::AttemptAction::BodyCut,
                    End::Complete | End::NoDone | End::LengthAfter(_) => {
                        cb_base::record::AttemptAction::Ok
                    }
                });
            }
            answer(asked, guard, &shape, None).await
        }
    }
}

/// An act in words, as the attempt details keep it.
pub fn describe(act: &Act) -> String {
    let secs = |d: std::time::Duration| humantime::format_duration(d).to_string();
    match act {
        Act::Error(spec) => format!("error {}", spec.status),
        Act::Hold { hold, then } => format!(
            "held {} then {}",
            secs(*hold),
            match then {
                HoldEnd::GatewayTimeout => "504",
                HoldEnd::Close => "closed",
            }
        ),
        Act::Reset => "reset before headers".to_string(),
        Act::LateError { after, error } => format!("error {} after {}", error.status, secs(*after)),
        Act::Answer(shape) => {
            let mut parts = vec!["answer".to_string()];
            if let Some(d) = shape.delay {
                parts.push(format!("{} late", secs(d)));
            }
            if let Some(d) = shape.first_token_after {
                parts.push(format!("first token after {}", secs(d)));
            }
            if shape.reasoning {
                parts.push("with reasoning".to_string());
            }
            if let Some(k) = shape.malformed_after {
                parts.push(format!("a malformed event after {k} chunks"));
            }
            match shape.end {
                End::Complete => {}
                End::NoDone => parts.push("no [DONE]".to_string()),
                End::CutAfter(k) => parts.push(format!("cut after {k} chunks")),
                End::StallAfter { tokens, silent } => parts.push(format!(
                    "silent {} after {tokens} chunks, then aborted",
                    secs(silent)
                )),
                End::TruncatedAfter(k) => parts.push(format!(
                    "ended cleanly after {k} chunks, no finish, no [DONE]"
                )),
                End::LengthAfter(k) => parts.push(format!("finish_reason length after {k} words")),
                End::ErrorAfter(k) => parts.push(format!("an error event after {k} chunks")),
                End::KeepAliveAfter {
                    tokens,
                    every,
                    silent,
                } => parts.push(format!(
                    "only `: ping` every {} for {} after {tokens} chunks, then closed",
                    secs(every),
                    secs(silent)
                )),
                End::HalfBody => parts.push("the body ends cleanly halfway".to_string()),
                End::BodyStall { silent } => parts.push(format!(
                    "half the body, then silent {}, then broken off",
                    secs(silent)
                )),
            }
            parts.join(", ")
        }
    }
}
