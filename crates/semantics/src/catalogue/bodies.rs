//! The cases an independent failover suite found with `stream: false`:
//! a 200 whose plain body is half a JSON object (complete at the HTTP
//! level), and a plain body that stalls after its headers. Both must fail
//! over: the broken or stalled body is an attempt that failed, as a
//! malformed chunk or a stall is in a stream. An answer that stops early
//! and says so (`finish_reason: length`, streamed as `--stream` says) must
//! reach the client saying so. Beside them, the usage a
//! client gets after a stream was continued from the fallback: it must
//! count what the client received, not only the fallback's part.

use super::build::{case, primary};
use super::secs;
use super::CUT_AT;
use crate::case::{Case, Check, CheckId as Id, Ideal, Rule, Streaming, ANSWER_WORDS};
use crate::timing::Timing;
use cb_faults::{Act, End, Script};

/// `broken-200`, `body-stall`, `finish-length`, `continuation-usage`.
pub(super) fn bodies(t: &Timing) -> Vec<Case> {
    vec![
        Case {
            streaming: Streaming::Never,
            ..case(
                "broken-200",
                "answers 200 with half a JSON object as its body, complete at the HTTP level (never streamed)".into(),
                "fail over: the fallback's answer (the broken 200 is a failed attempt)",
                primary(Script::always(Act::shaped(|s| s.end = End::HalfBody))),
                Ideal::Answer,
                vec![Check::required(Id::FailedOver, Rule::FailedOver)],
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Never,
            ..case(
                "body-stall",
                format!(
                    "answers 200 with headers and half the body at once, then is silent for {}, then breaks off (never streamed)",
                    secs(t.stall_silence)
                ),
                "fail over inside the bound: the fallback's answer, without waiting for the stalled body to end",
                primary(Script::always(Act::shaped(|s| {
                    s.end = End::BodyStall {
                        silent: t.stall_silence,
                    };
                }))),
                Ideal::Answer,
                vec![
                    Check::required(Id::FailedOver, Rule::FailedOver),
                    Check::required(Id::StallBounded, Rule::WallAtMost(t.stall_wall_bound)),
                ],
                t.stall_bound,
            )
        },
        Case {
            // The answer is cut, and says so: the case is about whether
            // the client can still tell, not about the cut itself.
            contracts_judged_elsewhere: &["truncated"],
            ..case(
                "finish-length",
                format!(
                    "the answer stops after {CUT_AT} of {ANSWER_WORDS} words with finish_reason length (the request set no max_tokens); otherwise complete"
                ),
                "the partial answer with its finish_reason length kept, so the client can tell (or the whole answer from the fallback); never relabelled stop or dropped",
                primary(Script::always(Act::shaped(|s| s.end = End::LengthAfter(CUT_AT)))),
                Ideal::WholeOrMarked,
                Vec::new(),
                t.default_bound,
            )
        },
        Case {
            streaming: Streaming::Always,
            ..case(
                "continuation-usage",
                format!(
                    "the stream dies after {CUT_AT} of {ANSWER_WORDS} chunks, no terminator; the fallback answers"
                ),
                "the whole answer, and a usage block whose completion tokens count what the client received (both parts of a continuation, not only the fallback's)",
                primary(Script::always(Act::shaped(|s| s.end = End::CutAfter(CUT_AT)))),
                Ideal::Answer,
                vec![Check::required(
                    Id::UsageMatchesAnswer,
                    Rule::UsageMatchesAnswer,
                )],
                t.default_bound,
            )
        },
    ]
}
