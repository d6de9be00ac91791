//! The cooldown cases: a primary that answers 429 to everything for a long
//! span (time stuck behind it, requests lost), every target rate limited
//! at once (what the client gets, and whether it learns when to come
//! back), and a target re-cooled while it cools (its deadline must move). Both are sequences across the span and after it, sent
//! after `flap`: they leave the most cooldown state behind.

use super::build::{case, primary};
use super::errors::rate_limited;
use super::secs;
use crate::case::{Case, Check, CheckId as Id, Ideal, Rule, Shape};
use crate::timing::Timing;
use cb_faults::{Act, CaseScript, Script, When};

/// The flap's sequence: requests across the span and after it.
fn across_the_span(t: &Timing) -> Shape {
    Shape::Sequence {
        count: t.flap_requests,
        interval: t.flap_interval,
    }
}

/// A 429 with `Retry-After` for the first `flap_outage` of the case's
/// clock, then an answer.
fn limited_for_the_span(t: &Timing) -> Script {
    Script::when(
        When::WithinClock(t.flap_outage),
        Act::Error(rate_limited(Some(t.retry_after))),
        Act::answer(),
    )
}

/// `recooled`: the first request is held for one `Retry-After` and then
/// answered 429 with a wait three times as long; the second, sent a
/// quarter of that later, gets a 429 with the short wait at once. A
/// gateway that cooled the primary on the second must move its deadline
/// when the first one's longer wait arrives.
fn recooled(t: &Timing) -> Case {
    let short = t.retry_after;
    let long = short * 3;
    let interval = short / 4;
    let count = u32::try_from((short + long + short).as_millis() / interval.as_millis().max(1))
        .unwrap_or(20)
        + 1;
    let late = Act::LateError {
        after: short,
        error: rate_limited(Some(long)),
    };
    let script = Script {
        rules: vec![
            (When::WithinClock(interval / 2), late),
            (
                When::WithinClock(short + long),
                Act::Error(rate_limited(Some(short))),
            ),
        ],
        otherwise: Act::answer(),
    };
    Case {
        shape: Shape::Sequence { count, interval },
        ..case(
            "recooled",
            format!(
                "request 1 is held {} then answered 429 with Retry-After {}; every other request until {} gets 429 with Retry-After {} at once; then healthy; {count} requests, one every {}",
                secs(short),
                secs(long),
                secs(short + long),
                secs(short),
                secs(interval)
            ),
            "every request answered; a system that cools the primary down moves its deadline when the longer wait arrives (no primary attempt before it ends)",
            primary(script),
            Ideal::Answer,
            vec![
                Check::required(Id::ServedDuringOutage, Rule::ServedDuringOutage(short + long)),
                Check::required(
                    Id::DeadlineMoved,
                    Rule::RecoolHonoured {
                        cooling_from: interval,
                        recooled_at: short,
                        until: short + long - t.retry_after_slack,
                    },
                ),
            ],
            t.flap_request_bound,
        )
    }
}

/// `429-stuck`, `all-cooling` and `recooled`.
pub(super) fn cooldowns(t: &Timing) -> Vec<Case> {
    let stuck_bound = t.retry_after * 2 + t.retry_after_slack;
    // The last 429 asked for `retry_after`: a cooldown that honours it
    // and one more wait is over by then.
    let back_within = t.retry_after * 2;
    vec![
        Case {
            shape: across_the_span(t),
            ..case(
                "429-stuck",
                format!(
                    "429 with Retry-After {} to every request for the first {}, then healthy; {} requests, one every {}",
                    secs(t.retry_after),
                    secs(t.flap_outage),
                    t.flap_requests,
                    secs(t.flap_interval)
                ),
                "every request answered (the fallback during the span), none waiting long behind the rate-limited primary, back on the primary within the bound after it",
                primary(limited_for_the_span(t)),
                Ideal::Answer,
                super::lasting::outage_checks(
                    t,
                    vec![Check::advisory(
                        Id::NotStuck,
                        Rule::AnsweredWithinDuring {
                            outage: t.flap_outage,
                            bound: stuck_bound,
                        },
                    )],
                ),
                t.flap_request_bound,
            )
        },
        Case {
            shape: across_the_span(t),
            ..case(
                "all-cooling",
                format!(
                    "both upstreams answer 429 with Retry-After {} to every request for the first {}, then answer; {} requests, one every {}",
                    secs(t.retry_after),
                    secs(t.flap_outage),
                    t.flap_requests,
                    secs(t.flap_interval)
                ),
                "during the span a clean error that says when to come back (a stated wait), answered again within the bound after it",
                CaseScript {
                    primary: limited_for_the_span(t),
                    fallback: limited_for_the_span(t),
                    clock: String::new(),
                },
                Ideal::AnsweredAfter(t.flap_outage + back_within),
                vec![
                    Check::advisory(Id::WaitStated, Rule::WaitStatedDuring(t.flap_outage)),
                    Check::required(
                        Id::BackAfterCooldown,
                        Rule::AnsweredAfter {
                            outage: t.flap_outage,
                            within: back_within,
                        },
                    ),
                ],
                t.flap_request_bound,
            )
        },
        recooled(t),
    ]
}
