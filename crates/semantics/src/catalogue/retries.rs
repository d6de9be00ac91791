//! The retry cases: a `429` with `Retry-After`, with its wait only in a
//! reset header (requests or tokens), only in the body's JSON or only in
//! its message, and without any, a `500` once, a
//! `503` that persists, a reset before the headers and a route that never
//! answers. They check what the decision tree does not rule on: whether
//! the primary is retried, how soon, and how often.

use super::build::{case, primary};
use super::errors::{rate_limited, status_error};
use super::secs;
use crate::case::{Case, Check, CheckId as Id, Ideal, Rule};
use crate::timing::Timing;
use cb_faults::{Act, HoldEnd, Script, WaitIn, When};

/// A case whose first primary attempt is a 429 stating its wait `where`
/// (`Retry-After`, a reset header, the body), as a provider's limiter
/// answers: another 429 to every attempt inside the window, an answer
/// after it. No second primary attempt may come before the wait, and a
/// system that retried inside it must not drop the primary for it.
fn stated_429(t: &Timing, id: &'static str, place: WaitIn) -> Case {
    let (stated, passes) = match place {
        WaitIn::RetryAfter => (
            format!("Retry-After {}", secs(t.retry_after)),
            "answered; no second primary attempt before Retry-After (retrying after it is the mature behaviour, failing over at once is partial)",
        ),
        WaitIn::ResetRequests => (
            format!(
                "only x-ratelimit-reset-requests: {} (no Retry-After)",
                secs(t.retry_after)
            ),
            "answered; no second primary attempt before the reset header's wait (a client that reads only Retry-After retries inside the window)",
        ),
        WaitIn::ResetTokens => (
            format!(
                "only x-ratelimit-reset-tokens: {} (the token window; no Retry-After)",
                secs(t.retry_after)
            ),
            "answered; no second primary attempt before the token window resets (a client that reads only Retry-After or the requests header retries inside it)",
        ),
        WaitIn::BodyField => (
            format!(
                "the wait only in the body's JSON (error.retry_after: {}, no header)",
                t.retry_after.as_secs()
            ),
            "answered; no second primary attempt before the wait error.retry_after states (a client that reads only Retry-After retries inside the window)",
        ),
        WaitIn::BodyText => (
            format!(
                "the wait only in the error's message (\"Please retry after {}\", no header, no field)",
                secs(t.retry_after)
            ),
            "answered; no second primary attempt before the wait the message states (a client that reads only headers or fields retries inside the window)",
        ),
    };
    let window = t.retry_after.saturating_sub(t.retry_after_slack);
    let limited = Act::Error(rate_limited(Some(t.retry_after)).wait_stated_in(place));
    case(
        id,
        format!("429 with {stated} to the first attempt and every attempt inside the window, answers after it"),
        passes,
        primary(Script {
            rules: vec![
                (When::AttemptAtMost(1), limited.clone()),
                (When::WithinClock(window), limited),
            ],
            otherwise: Act::answer(),
        }),
        Ideal::Answer,
        vec![
            Check::required(Id::RetryAfterHonoured, Rule::FirstGapAtLeast(window)),
            Check::required(Id::NotDroppedInWindow, Rule::KeptThroughWindow(window)),
            Check::advisory(Id::RetriedSameRoute, Rule::PrimaryAtLeast(2)),
        ],
        t.default_bound,
    )
}

/// `429-retry-after`, `429-reset-header`, `429-reset-tokens`,
/// `429-retry-in-body`, `429-retry-in-message`,
/// `429-persistent`, `500-once`, `503-persistent`, `reset-before-headers`,
/// `no-response`.
pub(super) fn retries(t: &Timing) -> Vec<Case> {
    let no_response_bound = t.no_response_budget + (t.no_response_hold - t.no_response_budget) / 2;
    vec![
        stated_429(t, "429-retry-after", WaitIn::RetryAfter),
        stated_429(t, "429-reset-header", WaitIn::ResetRequests),
        stated_429(t, "429-reset-tokens", WaitIn::ResetTokens),
        stated_429(t, "429-retry-in-body", WaitIn::BodyField),
        stated_429(t, "429-retry-in-message", WaitIn::BodyText),
        case(
            "429-persistent",
            "429 without Retry-After on every attempt".into(),
            "at most 4 primary attempts in the first 3 s and 6 in all, then an answer from the fallback or a clean error",
            primary(Script::always(Act::Error(rate_limited(None)))),
            Ideal::Answer,
            vec![
                Check::required(
                    Id::NoHammer,
                    Rule::PrimaryWithin {
                        window: t.hammer_window,
                        max: 4,
                    },
                ),
                Check::required(Id::BoundedAttempts, Rule::PrimaryAtMost(6)),
            ],
            t.default_bound,
        ),
        case(
            "500-once",
            "first attempt 500, later attempts answer".into(),
            "answered; retrying the primary once is the mature behaviour, failing over at once is partial",
            primary(Script::first(
                1,
                Act::Error(status_error(500)),
                Act::answer(),
            )),
            Ideal::Answer,
            vec![Check::advisory(Id::RetriedSameRoute, Rule::PrimaryAtLeast(2))],
            t.default_bound,
        ),
        case(
            "503-persistent",
            "503 on every attempt".into(),
            "answered by the fallback, at most 6 primary attempts",
            primary(Script::always(Act::Error(status_error(503)))),
            Ideal::Answer,
            vec![Check::required(Id::BoundedAttempts, Rule::PrimaryAtMost(6))],
            t.default_bound,
        ),
        case(
            "reset-before-headers",
            "first attempt: the connection is reset (TCP RST) before any byte; later attempts answer".into(),
            "answered (a retry or a failover)",
            primary(Script::first(1, Act::Reset, Act::answer())),
            Ideal::Answer,
            Vec::new(),
            t.default_bound,
        ),
        case(
            "no-response",
            format!(
                "accepts the request and never answers (closes after {})",
                secs(t.no_response_hold)
            ),
            "the call ends inside the budget; failing over after the first timeout is the mature behaviour, retrying the silent route is noted",
            primary(Script::always(Act::Hold {
                hold: t.no_response_hold,
                then: HoldEnd::Close,
            })),
            Ideal::Answer,
            vec![
                Check::required(Id::WithinBudget, Rule::WallAtMost(t.no_response_budget)),
                Check::advisory(Id::SilentRouteNotRetried, Rule::PrimaryAtMost(1)),
            ],
            no_response_bound,
        ),
    ]
}
