//! The streaming cases: a slow first token, a stream cut, stalled (silent,
//! then aborted, or kept warm with keep-alive comments), ended cleanly
//! too early, ended by an error event before or after its first text, or
//! malformed, one without `[DONE]`, and a cut primary whose
//! fallback
//! rejects an assistant prefill. They always stream, whatever `--stream`
//! says.

use super::build::{case, primary};
use super::errors::status_error;
use super::secs;
use super::{CUT_AT, ERROR_AT, MALFORMED_AT, STALL_AT};
use crate::case::{Case, Check, CheckId as Id, Ideal, Rule, Streaming, ANSWER_WORDS};
use crate::timing::Timing;
use cb_faults::{Act, CaseScript, End, ErrorKind, ErrorSpec, Script, When};
use std::time::Duration;

/// The gap between two keep-alive comments of `stream-keepalive`: a third
/// of the reference proxies' stall limit, so a timer that every line
/// restarts never runs out.
fn keepalive_every(t: &Timing) -> Duration {
    t.builtin_stall_timeout / 3
}

/// How long `stream-keepalive` sends comments before it closes: halfway
/// between the wall bound and the hang cut, so a gateway that waits for
/// the close is past the wall bound yet ends inside the case.
fn keepalive_for(t: &Timing) -> Duration {
    (t.stall_wall_bound + t.stall_bound) / 2
}

/// The streaming cases.
pub(super) fn streams(t: &Timing) -> Vec<Case> {
    let prefill_rejected = Act::Error(ErrorSpec::new(
        400,
        ErrorKind::InvalidRequest,
        "This model does not support assistant message prefill: the conversation must end with a user message (simulated 400).",
    ));
    vec![
        Case {
            streaming: Streaming::Always,
            contracts_judged_elsewhere: &["ttft"],
            ..case(
                "slow-first-token",
                format!("headers at once, first token after {}", secs(t.slow_first_token)),
                "answered; failing over on a time-to-first-token limit is the mature behaviour",
                primary(Script::always(Act::shaped(|s| {
                    s.first_token_after = Some(t.slow_first_token);
                }))),
                Ideal::Answer,
                vec![Check::advisory(
                    Id::TtftFailover,
                    Rule::WallAtMost(t.ttft_failover_bound),
                )],
                t.slow_first_token_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "stream-cut",
                format!("the stream dies after {CUT_AT} of {ANSWER_WORDS} chunks, no terminator"),
                "the whole answer (a failover or a continuation without duplicated or missing text) or a clear error; never a truncated answer as complete",
                primary(Script::always(Act::shaped(|s| s.end = End::CutAfter(CUT_AT)))),
                Ideal::Answer,
                Vec::new(),
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            alive_after: true,
            ..case(
                "stream-stall",
                format!(
                    "after {STALL_AT} chunks the stream goes silent for {}, then the connection is aborted",
                    secs(t.stall_silence)
                ),
                "the stall detected inside the bound, then the whole answer or a clean error; healthy afterwards",
                primary(Script::always(Act::shaped(|s| {
                    s.end = End::StallAfter {
                        tokens: STALL_AT,
                        silent: t.stall_silence,
                    };
                }))),
                Ideal::Answer,
                vec![
                    Check::required(Id::StallBounded, Rule::WallAtMost(t.stall_wall_bound)),
                    Check::required(Id::AliveAfter, Rule::AliveAfter),
                ],
                t.stall_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "stream-truncated",
                format!(
                    "the stream ends cleanly after {CUT_AT} of {ANSWER_WORDS} chunks: no finish_reason, no data: [DONE]"
                ),
                "the whole answer (a failover or a continuation) or a clear error; never the truncated answer as complete (to the official SDKs a clean end is the end of the answer)",
                primary(Script::always(Act::shaped(|s| s.end = End::TruncatedAfter(CUT_AT)))),
                Ideal::Answer,
                Vec::new(),
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "stream-error-first",
                "the stream opens (headers, role chunk), then an error event (overloaded_error) before any text, then ends".into(),
                "fail over: the fallback's whole answer (nothing was shown yet); or a clean error; never an empty or partial answer as complete",
                primary(Script::always(Act::shaped(|s| s.end = End::ErrorAfter(0)))),
                Ideal::Answer,
                vec![Check::advisory(Id::FailedOver, Rule::FailedOver)],
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "stream-error-midway",
                format!(
                    "after {ERROR_AT} of {ANSWER_WORDS} chunks the stream sends an error event (overloaded_error), then ends"
                ),
                "the whole answer (a continuation or a restart from the fallback, no text duplicated or lost) or a clean error; never the partial answer as complete",
                primary(Script::always(Act::shaped(|s| s.end = End::ErrorAfter(ERROR_AT)))),
                Ideal::Answer,
                Vec::new(),
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "fallback-stream-error",
                format!(
                    "503 on every primary attempt; the fallback's stream sends {ERROR_AT} of {ANSWER_WORDS} chunks, then an error event (overloaded_error) in its own dialect (--fallback-dialect), then ends"
                ),
                "a clean error (nothing is left to fail over to: the stream cut or ended with an error); never the fallback's partial answer as complete",
                CaseScript {
                    primary: Script::always(Act::Error(status_error(503))),
                    fallback: Script::always(Act::shaped(|s| s.end = End::ErrorAfter(ERROR_AT))),
                    clock: String::new(),
                },
                Ideal::CleanError,
                vec![Check::required(Id::FailedOver, Rule::FailedOver)],
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            alive_after: true,
            ..case(
                "stream-keepalive",
                format!(
                    "after {STALL_AT} chunks the stream sends only `: ping` comments, one every {}, for {}, then closes",
                    secs(keepalive_every(t)),
                    secs(keepalive_for(t))
                ),
                "the stall detected inside the bound although comments keep the connection busy, then the whole answer or a clean error; healthy afterwards",
                primary(Script::always(Act::shaped(|s| {
                    s.end = End::KeepAliveAfter {
                        tokens: STALL_AT,
                        every: keepalive_every(t),
                        silent: keepalive_for(t),
                    };
                }))),
                Ideal::Answer,
                vec![
                    Check::required(Id::StallBounded, Rule::WallAtMost(t.stall_wall_bound)),
                    Check::required(Id::AliveAfter, Rule::AliveAfter),
                ],
                t.stall_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            alive_after: true,
            ..case(
                "malformed-chunk",
                format!("one event that is not JSON after {MALFORMED_AT} chunks; the stream otherwise completes"),
                "the whole answer, or a clean error; nothing partial as complete; healthy afterwards",
                primary(Script::always(Act::shaped(|s| {
                    s.malformed_after = Some(MALFORMED_AT);
                }))),
                Ideal::Answer,
                vec![Check::required(Id::AliveAfter, Rule::AliveAfter)],
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "no-done",
                "a complete stream, ended at the HTTP level, without data: [DONE]".into(),
                "finalised promptly, with usage",
                primary(Script::always(Act::shaped(|s| s.end = End::NoDone))),
                Ideal::Answer,
                vec![
                    Check::required(Id::PromptFinalise, Rule::WallAtMost(t.no_done_bound)),
                    Check::advisory(Id::UsageReported, Rule::UsagePresent),
                ],
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "prefill-rejected",
                format!(
                    "the primary's stream dies after {CUT_AT} chunks; the fallback rejects a request ending in an assistant message with a 400"
                ),
                "the whole answer (no prefill to this fallback, or a clean restart) or a clean error; never the fallback's prefill 400 as the final error",
                CaseScript {
                    primary: Script::always(Act::shaped(|s| s.end = End::CutAfter(CUT_AT))),
                    fallback: Script::when(When::EndsWithAssistant, prefill_rejected, Act::answer()),
                    clock: "prefill-rejected".into(),
                },
                Ideal::Answer,
                vec![Check::required(Id::NoPrefillMasking, Rule::NoPrefillMasking)],
                t.default_bound,
            )
        },
    ]
}
