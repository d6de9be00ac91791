//! The catalogue: every case, in the order they are sent to a system. The
//! control first, then the permanent errors, then the transient ones, so
//! a gateway that cools a failing provider down has seen no failure before
//! the cases that must reach the primary; the flap and the expired
//! fallback key come last, as they leave the most state behind.
//!
//! The first fourteen cases keep the meaning they had: what the decision
//! tree ([`classify`](cb_proxy::policy::classify)) says about their primary
//! outcome is a required check. The others check what the tree does not
//! rule on: retries and their spacing, budgets, streams, routing and
//! accounting.
//!
//! One file a family: the status cases, the content filter, the context
//! length, the timeout and the cut are built here; `retries`, `streams`,
//! the plain-body cases and the usage after a continuation (`bodies`),
//! `routing`, the cases that leave state behind (`lasting`) and the
//! cooldowns (`cooldowns`) beside them, all from the builders of `build` and the provider errors of
//! `errors`.

mod bodies;
mod build;
mod cooldowns;
mod errors;
mod lasting;
mod retries;
mod routing;
mod streams;
#[cfg(test)]
mod tests;

pub use errors::status_error;

use super::case::{Case, Check, CheckId as Id, Ideal, Rule, CONTEXT_MODEL};
use super::timing::{GiveUpBounds, Timing};
use build::{case, primary, tree};
use cb_faults::{Act, CaseScript, End, HoldEnd, Script, When};
use errors::{content_filter, context_too_long, rate_limited};
use std::time::Duration;

/// `Retry-After` of the `429` case.
pub const RETRY_AFTER_429: Duration = Duration::from_secs(1);

/// Content chunks `stream-cut` and `prefill-rejected` send before dying.
pub const CUT_AT: usize = 40;

/// Content chunks `stream-stall` sends before going silent.
pub const STALL_AT: usize = 20;

/// Content chunks `stream-error-midway` sends before its error event.
pub const ERROR_AT: usize = 20;

/// Content chunks `malformed-chunk` sends before its broken event.
pub const MALFORMED_AT: usize = 9;

/// Content chunks the `cut` case sends before the body breaks off.
pub const CUT_CASE_AT: usize = 2;

/// A duration as a case's words say it, to the millisecond (`3s 333ms`,
/// not humantime's nanoseconds).
fn secs(d: Duration) -> String {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    humantime::format_duration(Duration::from_millis(ms)).to_string()
}

/// Every case, for `timing` and the user's `give_up` bounds; `stream`
/// says whether the cases that follow `--stream` stream.
pub fn catalogue(timing: &Timing, give_up: &GiveUpBounds, stream: bool) -> Vec<Case> {
    let t = timing;
    let mut cases = vec![
        tree("ok", "answers normally".into(), None, stream, t),
        Case {
            structured: true,
            ..tree(
                "schema",
                "answers normally; the request asks for structured output".into(),
                None,
                stream,
                t,
            )
        },
    ];
    for (status, what) in [
        (400, "400 invalid request"),
        (401, "401 invalid API key"),
        (402, "402 payment required"),
        (403, "403 permission denied"),
    ] {
        let id = id_of(status);
        cases.push(tree(
            id,
            what.into(),
            Some(Act::Error(status_error(status))),
            stream,
            t,
        ));
    }
    cases.push(case(
        "content-filter",
        "400 content_policy_violation on every attempt".into(),
        "the 400 and its reason reach the client; no same-model retry (failing over is recorded, not scored)",
        primary(Script::always(Act::Error(content_filter()))),
        Ideal::CleanError,
        vec![
            Check::required(Id::NoSameModelRetry, Rule::PrimaryAtMost(1)),
            Check::required(
                Id::ReasonPropagated,
                Rule::ReasonPropagated("content_policy_violation"),
            ),
            Check::informational(Id::FallbackAttempted, Rule::FailedOver),
        ],
        t.default_bound,
    ));
    let too_long = Act::Error(context_too_long());
    cases.push(case(
        "context-length",
        format!(
            "400 context_length_exceeded on every attempt, at both upstreams, for every model but {CONTEXT_MODEL}"
        ),
        "no same-model retry; answered by a larger-context model if one is configured, else a clean 400",
        CaseScript {
            primary: Script::when(
                When::ModelIsNot(CONTEXT_MODEL.into()),
                too_long.clone(),
                Act::answer(),
            ),
            fallback: Script::when(
                When::ModelIsNot(CONTEXT_MODEL.into()),
                too_long,
                Act::answer(),
            ),
            clock: "context-length".into(),
        },
        Ideal::Answer,
        vec![
            Check::required(Id::NoSameModelRetry, Rule::PrimaryAtMost(1)),
            Check::informational(Id::ContextRouted, Rule::ModelAnswered(CONTEXT_MODEL)),
        ],
        t.default_bound,
    ));
    let hold = t.default_bound + Duration::from_secs(5);
    for (status, what) in [
        (404, "404 model not found".to_string()),
        (
            429,
            format!(
                "429 rate limited, Retry-After {}, on every attempt",
                secs(RETRY_AFTER_429)
            ),
        ),
        (500, "500 internal error".into()),
        (502, "502 bad gateway".into()),
        (503, "503 unavailable".into()),
        (504, "504 gateway timeout".into()),
    ] {
        let error = if status == 429 {
            rate_limited(Some(RETRY_AFTER_429))
        } else {
            status_error(status)
        };
        cases.push(tree(
            id_of(status),
            what,
            Some(Act::Error(error)),
            stream,
            t,
        ));
    }
    cases.push(tree(
        "timeout",
        format!("holds the connection without a byte for {}", secs(hold)),
        Some(Act::Hold {
            hold,
            then: HoldEnd::GatewayTimeout,
        }),
        stream,
        t,
    ));
    cases.push(tree(
        "cut",
        format!("answers 200, then breaks the body off (a stream after {CUT_CASE_AT} chunks)"),
        Some(Act::shaped(|s| s.end = End::CutAfter(CUT_CASE_AT))),
        stream,
        t,
    ));
    cases.extend(retries::retries(t));
    cases.extend(streams::streams(t));
    cases.extend(bodies::bodies(t));
    cases.extend(routing::routing(t, give_up));
    cases.push(lasting::flap(t));
    cases.extend(cooldowns::cooldowns(t));
    cases.push(lasting::fallback_health(t));
    cases
}

/// The ids of the status cases.
fn id_of(status: u16) -> &'static str {
    match status {
        400 => "400",
        401 => "401",
        402 => "402",
        403 => "403",
        404 => "404",
        429 => "429",
        500 => "500",
        502 => "502",
        503 => "503",
        _ => "504",
    }
}
