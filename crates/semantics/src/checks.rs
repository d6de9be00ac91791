//! Each check of a case, measured: one pure function from what a case's
//! requests produced (the client's view and the upstreams' attempts) to a
//! value against a bound. Nothing here does I/O; the verdict that combines
//! the checks is [`super::verdict`].

use super::case::{Case, Check, CheckId, Rule, Severity};
use super::health::HealthView;
use super::observe::Sent;
use cb_faults::Role;
use serde::Serialize;
use std::time::Duration;

/// What a case produced for one system.
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    /// The case.
    pub case: &'a Case,
    /// Its requests, in the order they were sent (one, or a sequence).
    pub requests: &'a [Sent],
    /// The healthy request sent before it, when it has one after it.
    pub before: Option<&'a Sent>,
    /// The healthy request sent after it, if the case has one.
    pub after: Option<&'a Sent>,
    /// The health probes, for `fallback-health`.
    pub health: Option<&'a HealthView>,
}

impl Outcome<'_> {
    /// The last request (the one a single-request case judges).
    fn last(&self) -> Option<&Sent> {
        self.requests.last()
    }
}

/// One check, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// Its name.
    pub check: CheckId,
    /// How it counts.
    pub severity: Severity,
    /// Whether the measured value is within the bound (false when the
    /// check did not apply).
    pub passed: bool,
    /// Whether what the check measures happened at all: a check on an
    /// answer when none came, on the fallback when it was not called, on
    /// the request after the case when none was sent. One that did not
    /// apply is neither held nor broken, never a failure; `value` says
    /// why.
    pub applicable: bool,
    /// What was measured.
    pub value: String,
    /// The bound it is held to.
    pub bound: String,
}

impl CheckResult {
    /// Whether it applied and was broken: what a verdict counts.
    pub fn broken(&self) -> bool {
        self.applicable && !self.passed
    }
}

/// Measures `check` on `outcome`.
pub fn measure(check: &Check, outcome: &Outcome<'_>) -> CheckResult {
    let (passed, value, bound) = rule(&check.rule, outcome);
    match not_applicable(&check.rule, outcome) {
        Some(why) => CheckResult {
            check: check.id,
            severity: check.severity,
            passed: false,
            applicable: false,
            value: format!("not applicable: {why}"),
            bound,
        },
        None => CheckResult {
            check: check.id,
            severity: check.severity,
            passed,
            applicable: true,
            value,
            bound,
        },
    }
}

/// Why `rule` cannot apply to `o`, when what it measures did not happen:
/// usage or a model name with no answer to read them from, what the
/// fallback received when it was not called (what it answered, when it
/// did not answer), the contracts with no answer,
/// the request after the case or the health route when the harness did
/// not get to send them. Whether the answer or the failover should have
/// happened is another check's to say (`delivered`, `failed_over`).
fn not_applicable(rule: &Rule, o: &Outcome<'_>) -> Option<&'static str> {
    let last = o.last()?;
    let answered = last.client.answered;
    let fallback = last.count(Role::Fallback);
    match rule {
        Rule::UsageMatchesAnswer | Rule::UsagePresent if !answered => {
            Some("no answer to read usage from")
        }
        Rule::ReportsFallbackModel
        | Rule::FallbackModel(_)
        | Rule::MaxTokensAtFallback
        | Rule::ThinkingOffAtFallback
            if fallback == 0 =>
        {
            Some("the fallback was not called")
        }
        Rule::ReportsFallbackModel if !answered => Some("no answer to read the model from"),
        Rule::ThinkingOffAtFallback
            if !last
                .at(Role::Fallback)
                .any(|a| a.status.is_some_and(|s| (200..300).contains(&s))) =>
        {
            Some("the fallback did not answer")
        }
        Rule::ContractsKept if !o.requests.iter().any(|s| s.client.answered) => {
            Some("no answer to check")
        }
        Rule::AliveAfter if o.after.is_none() => Some("no request was sent after the case"),
        Rule::WaitStatedDuring(outage)
            if during(o.requests, *outage).all(|s| s.client.answered) =>
        {
            Some("no request failed during the outage")
        }
        Rule::RecoolHonoured { cooling_from, .. }
            if !longer_wait_received(o.requests, *cooling_from) =>
        {
            Some("the longer wait never reached the system: no primary attempt of request 1 got its held 429")
        }
        Rule::RecoolHonoured {
            cooling_from,
            recooled_at,
            ..
        } if !cooled(o.requests, *cooling_from, *recooled_at) => {
            Some("the system keeps no cooldown: every request sent while the primary was cooling tried it")
        }
        Rule::HealthExposed if o.health.is_none() => Some("the health route was not probed"),
        Rule::KeptThroughWindow(window) if window_split(last, *window).0 == 0 => {
            Some("the primary was not retried inside its window")
        }
        Rule::KeptThroughWindow(window)
            if last.client.hung
                && window_split(last, *window).1 == 0
                && !last.served_by_primary() =>
        {
            Some("the bound cut the request before the primary was tried after its window")
        }
        _ => None,
    }
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn ms(v: f64) -> String {
    format!("{:.1} s", v / 1000.0)
}

/// The primary's retries of `sent` (attempts after its first) that came
/// inside `window` of the request's send, when the limiter's clock
/// started, and those that came after it.
fn window_split(sent: &Sent, window: Duration) -> (usize, usize) {
    let end = window.as_secs_f64() * 1000.0;
    let retries: Vec<f64> = sent.at(Role::Primary).skip(1).map(|a| a.at_ms).collect();
    let inside = retries.iter().filter(|at| **at < end).count();
    (inside, retries.len() - inside)
}

/// `1 retry`, `2 retries`.
fn retries_in_words(n: usize) -> String {
    format!("{n} {}", if n == 1 { "retry" } else { "retries" })
}

/// Whether the client got the whole answer.
fn healthy(sent: &Sent) -> bool {
    sent.client.answered && sent.client.complete
}

/// What the client got, in words.
pub fn got(sent: &Sent) -> String {
    let c = &sent.client;
    match (c.status, &c.error, c.answered) {
        (_, _, true) if c.complete => {
            format!("HTTP {} with the whole answer", c.status.unwrap_or(200))
        }
        (_, _, true) => format!(
            "HTTP {} with {} of the answer's {} characters",
            c.status.unwrap_or(200),
            c.answer_chars,
            c.expected_chars
        ),
        (_, _, false) if c.hung => format!("no answer within the bound ({})", ms(c.latency_ms)),
        (Some(s), Some(e), false) if (200..300).contains(&s) => format!("HTTP {s}, then {e}"),
        (Some(s), _, false) => format!("HTTP {s}"),
        (None, Some(e), false) => e.clone(),
        (None, None, false) => "nothing".to_string(),
    }
}

/// The count of attempts of `role` in words, with their pattern when
/// they came in bursts: `primary 3 x 2 layers = 6 attempts`.
pub fn multiplication(sent: &Sent, role: Role) -> String {
    let mut runs: Vec<u32> = Vec::new();
    let mut previous = None;
    for a in &sent.attempts {
        if a.role == role {
            match (previous, runs.last_mut()) {
                (Some(r), Some(last)) if r == role => *last += 1,
                _ => runs.push(1),
            }
        }
        previous = Some(a.role);
    }
    let total: u32 = runs.iter().sum();
    let name = role.as_str();
    match runs.as_slice() {
        [] => format!("{name} 0 attempts"),
        [one] => format!("{name} {one} attempt{}", if *one == 1 { "" } else { "s" }),
        [first, rest @ ..] if rest.iter().all(|r| r == first) => {
            format!("{name} {first} x {} layers = {total} attempts", runs.len())
        }
        _ => format!(
            "{name} {total} attempts in {} bursts ({})",
            runs.len(),
            runs.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" + ")
        ),
    }
}

/// `(passed, value, bound)` of `rule` on `o`.
fn rule(rule: &Rule, o: &Outcome<'_>) -> (bool, String, String) {
    let Some(last) = o.last() else {
        return (false, "no request was sent".into(), String::new());
    };
    let primary = last.count(Role::Primary);
    let fallback = last.count(Role::Fallback);
    let primaries: Vec<f64> = last.at(Role::Primary).map(|a| a.at_ms).collect();
    match rule {
        Rule::NoHang => {
            let worst = o
                .requests
                .iter()
                .map(|s| s.client.latency_ms)
                .fold(0.0, f64::max);
            (
                o.requests.iter().all(|s| !s.client.hung),
                format!("longest request {}", ms(worst)),
                format!("each request ends within {}", secs(o.case.bound)),
            )
        }
        Rule::NoTruncatedSuccess => {
            let bad = o
                .requests
                .iter()
                .find(|s| {
                    // An honest part is not presented as complete, where
                    // the case accepts one.
                    let honest = o.case.ideal == crate::case::Ideal::WholeOrMarked
                        && s.client.marked_partial;
                    s.client.answered && !s.client.complete && !honest
                });
            (
                bad.is_none(),
                bad.map_or_else(|| got(last), got),
                match o.case.ideal {
                    crate::case::Ideal::WholeOrMarked => {
                        "an answer is the whole answer, its beginning marked finish_reason length, or not given"
                    }
                    _ => "an answer is the whole answer, or not given",
                }
                .into(),
            )
        }
        Rule::ContractsKept => {
            let broken: Vec<String> = o
                .requests
                .iter()
                .flat_map(|s| &s.client.contract_violations)
                .filter(|v| {
                    !o.case
                        .contracts_judged_elsewhere
                        .iter()
                        .any(|c| v.starts_with(&format!("{c}:")))
                })
                .cloned()
                .collect();
            (
                broken.is_empty(),
                if broken.is_empty() {
                    "none broken".into()
                } else {
                    broken.join("; ")
                },
                "no answer contract broken".into(),
            )
        }
        Rule::Delivered => (
            last.client.answered && fallback == 0,
            format!("{}; fallback attempts {fallback}", got(last)),
            "the primary's answer, 0 fallback attempts".into(),
        ),
        Rule::NoFailover => (
            fallback == 0,
            format!("{fallback} fallback attempts"),
            "0 fallback attempts".into(),
        ),
        Rule::PassedThrough(status) => (
            last.client.status == Some(*status),
            got(last),
            format!("HTTP {status}"),
        ),
        Rule::FailedOver => (
            fallback >= 1,
            format!("{fallback} fallback attempts"),
            "at least 1 fallback attempt".into(),
        ),
        Rule::FirstGapAtLeast(d) => match primaries.as_slice() {
            [first, second, ..] => (
                second - first >= d.as_secs_f64() * 1000.0,
                format!(
                    "second primary attempt {} after the first",
                    ms(second - first)
                ),
                format!("no second primary attempt before {}", secs(*d)),
            ),
            _ => (
                true,
                "no second primary attempt".into(),
                format!("no second primary attempt before {}", secs(*d)),
            ),
        },
        Rule::PrimaryAtLeast(n) => (
            primary >= *n,
            format!("{primary} primary attempts"),
            format!("at least {n}"),
        ),
        Rule::PrimaryAtMost(n) => (
            primary <= *n,
            format!("{primary} primary attempts"),
            format!("at most {n}"),
        ),
        Rule::PrimaryWithin { window, max } => {
            let first = primaries.first().copied().unwrap_or(0.0);
            let within = primaries
                .iter()
                .filter(|at| **at - first <= window.as_secs_f64() * 1000.0)
                .count() as u32;
            (
                within <= *max,
                format!("{within} primary attempts in the first {}", secs(*window)),
                format!("at most {max} in {}", secs(*window)),
            )
        }
        Rule::WallAtMost(d) => (
            last.client.latency_ms <= d.as_secs_f64() * 1000.0,
            format!("{} wall time", ms(last.client.latency_ms)),
            format!("at most {}", secs(*d)),
        ),
        Rule::AliveAfter => match (o.before, o.after) {
            (Some(before), Some(after))
                if !healthy(after) && !healthy(before) =>
            {
                (
                    true,
                    format!(
                        "{} after the case, and {} before it: the system fails this request whatever the case \
                         did, so it is not held against the case",
                        got(after),
                        got(before)
                    ),
                    "a healthy request after the case gets the whole answer".into(),
                )
            }
            (_, Some(after)) => (
                healthy(after),
                got(after),
                "a healthy request after the case gets the whole answer".into(),
            ),
            (_, None) => (false, "no request after the case".into(), String::new()),
        },
        Rule::UsageMatchesAnswer => {
            let c = &last.client;
            let matches = c.answered
                && c
                    .completion_tokens
                    .is_some_and(|n| n.abs_diff(c.answer_tokens) <= 1);
            (
                matches,
                match (c.answered, c.completion_tokens) {
                    (false, _) => "no answer".to_string(),
                    (true, None) => "no usage.completion_tokens".to_string(),
                    (true, Some(n)) => format!(
                        "usage says {n} completion tokens for {} received",
                        c.answer_tokens
                    ),
                },
                format!("{} completion tokens (+-1)", c.answer_tokens),
            )
        }
        Rule::UsagePresent => (
            last.client.usage,
            if last.client.usage {
                "usage present"
            } else {
                "no usage"
            }
            .into(),
            "a usage block".into(),
        ),
        Rule::ModelAnswered(model) => {
            let answered = last
                .attempts
                .iter()
                .any(|a| a.model == *model && a.status.is_some_and(|s| (200..300).contains(&s)));
            (
                answered,
                if answered {
                    format!("{model} answered")
                } else {
                    format!("no attempt with {model} was answered")
                },
                format!("a route to {model}"),
            )
        }
        Rule::ReasonPropagated(code) => {
            let named = last
                .client
                .error
                .as_deref()
                .is_some_and(|e| e.contains(code));
            (
                last.client.status == Some(400) && named,
                got(last),
                format!("HTTP 400 naming {code}"),
            )
        }
        Rule::NoPrefillMasking => {
            let rejected = last
                .at(Role::Fallback)
                .any(|a| a.prefill && a.status == Some(400));
            let masked = !last.client.answered && rejected;
            (
                !masked,
                if rejected {
                    format!(
                        "the fallback rejected a prefill; the client got {}",
                        got(last)
                    )
                } else {
                    format!("no prefill rejected; the client got {}", got(last))
                },
                "the fallback's prefill 400 is not the final result".into(),
            )
        }
        Rule::ServedDuringOutage(outage) => {
            let during: Vec<&Sent> = during(o.requests, *outage).collect();
            let served = during.iter().filter(|s| s.client.answered).count();
            (
                !during.is_empty() && served == during.len(),
                format!(
                    "{served} of {} requests answered during the outage",
                    during.len()
                ),
                "every one".into(),
            )
        }
        Rule::AnsweredWithinDuring { outage, bound } => {
            let during: Vec<&Sent> = during(o.requests, *outage).collect();
            let limit = bound.as_secs_f64() * 1000.0;
            let slow = during
                .iter()
                .filter(|s| !s.client.answered || s.client.latency_ms > limit)
                .count();
            let longest = during
                .iter()
                .map(|s| s.client.latency_ms)
                .fold(0.0, f64::max);
            (
                !during.is_empty() && slow == 0,
                format!(
                    "{slow} of {} requests during the outage unanswered or longer than the bound; the longest took {}",
                    during.len(),
                    ms(longest)
                ),
                format!("each answered within {}", secs(*bound)),
            )
        }
        Rule::WaitStatedDuring(outage) => {
            let failed: Vec<&Sent> = during(o.requests, *outage)
                .filter(|s| !s.client.answered)
                .collect();
            let stated = failed
                .iter()
                .filter(|s| s.client.stated_wait_ms.is_some())
                .count();
            (
                stated == failed.len(),
                format!(
                    "{stated} of {} errors during the outage stated a wait",
                    failed.len()
                ),
                "every one (Retry-After, retry-after-ms, a reset header or the body)".into(),
            )
        }
        Rule::RecoolHonoured {
            recooled_at, until, ..
        } => {
            // From shortly after the longer wait reached the system: the
            // requests in flight then may already have passed the primary.
            let from = recooled_at.as_secs_f64() * 1000.0 + 100.0;
            let to = until.as_secs_f64() * 1000.0;
            let inside: Vec<f64> = o
                .requests
                .iter()
                .flat_map(|s| s.at(Role::Primary).map(move |a| s.sent_ms + a.at_ms))
                .filter(|at| (from..to).contains(at))
                .collect();
            (
                inside.is_empty(),
                match inside.first() {
                    None => "no primary attempt inside the longer wait".to_string(),
                    Some(first) => format!(
                        "{} primary attempts inside the longer wait, the first at {} (the first, shorter deadline kept)",
                        inside.len(),
                        ms(*first)
                    ),
                },
                format!("none from {} to {}", ms(from), ms(to)),
            )
        }
        Rule::KeptThroughWindow(window) => {
            let (inside, after) = window_split(last, *window);
            // A retry the limiter let through kept the primary too.
            let answered = last.served_by_primary();
            (
                after > 0 || answered,
                if answered {
                    format!(
                        "{} inside the window, the primary answered",
                        retries_in_words(inside)
                    )
                } else if after > 0 {
                    format!(
                        "{} inside the window, then {} after it",
                        retries_in_words(inside),
                        retries_in_words(after)
                    )
                } else {
                    format!(
                        "{} inside the window, then no primary attempt after it ({}): dropped while its window ran",
                        retries_in_words(inside),
                        got(last)
                    )
                },
                format!(
                    "a primary retried inside its {} window is tried again after it",
                    secs(*window)
                ),
            )
        }
        Rule::AnsweredAfter { outage, within } => {
            // To the millisecond: a request scheduled at the instant
            // counts, whatever the float's last digit.
            let from = (*outage + *within).as_secs_f64() * 1000.0 - 1.0;
            let after: Vec<&Sent> = o.requests.iter().filter(|s| s.sent_ms >= from).collect();
            let answered = after.iter().filter(|s| s.client.answered).count();
            (
                !after.is_empty() && answered == after.len(),
                format!(
                    "{answered} of {} requests sent {} or more after the outage answered",
                    after.len(),
                    secs(*within)
                ),
                "every one".into(),
            )
        }
        Rule::RecoveredWithin { outage, within } => {
            let end = outage.as_secs_f64() * 1000.0;
            let after: Vec<&Sent> = o.requests.iter().filter(|s| s.sent_ms >= end).collect();
            let back = (0..after.len()).find(|&i| after[i..].iter().all(|s| s.served_by_primary()));
            match back.map(|i| after[i].sent_ms - end) {
                Some(late) => (
                    late <= within.as_secs_f64() * 1000.0,
                    format!(
                        "on the primary from the request sent {} after the outage",
                        ms(late)
                    ),
                    format!("within {}", secs(*within)),
                ),
                None => (
                    false,
                    format!(
                        "{} of {} requests after the outage served by the primary, the last not",
                        after.iter().filter(|s| s.served_by_primary()).count(),
                        after.len()
                    ),
                    format!("back on the primary within {}", secs(*within)),
                ),
            }
        }
        Rule::ProbeDiscipline(outage) => {
            let during: Vec<&Sent> = during(o.requests, *outage).collect();
            let probes: u32 = during.iter().map(|s| s.count(Role::Primary)).sum();
            (
                true,
                format!(
                    "{probes} primary attempts for {} requests during the outage",
                    during.len()
                ),
                "recorded".into(),
            )
        }
        Rule::ReportsFallbackModel => {
            let sent_model = last.at(Role::Fallback).last().map(|a| a.model.clone());
            // Every model the response names (a plain body's, each a
            // stream's chunks name), not only the first chunk's: the last
            // must be the fallback's (a provider's prefix allowed), and an
            // earlier one an upstream's whose text may have reached the
            // client (`honesty::relayable_models`).
            let named = crate::honesty::named_models(last);
            // The fallback attempt whose answer the client got: the last it
            // answered that the system did not walk away from.
            let answering = last.attempts.iter().rev().find(|a| {
                a.role == Role::Fallback
                    && !a.gave_up
                    && a.status.is_some_and(|s| (200..300).contains(&s))
            });
            let relayable = answering.map(|a| crate::honesty::relayable_models(last, a)).unwrap_or_default();
            match sent_model {
                // A response that names no model fails: the check asks that
                // it report the one that answered (honesty's `model`
                // family leaves it unjudged instead).
                Some(model) => (
                    named.last().is_some_and(|m| {
                        crate::honesty::names(m, answering.map_or(model.as_str(), |a| &a.model))
                    })
                        && named.iter().all(|m| relayable.iter().any(|r| crate::honesty::names(m, r))),
                    format!(
                        "the response names {}; the fallback received {model}",
                        if named.is_empty() { "no model".to_string() } else { named.join(", then ") }
                    ),
                    "the model id the fallback received".into(),
                ),
                None => (
                    false,
                    "the fallback was not called".into(),
                    "the model id the fallback received".into(),
                ),
            }
        }
        Rule::AttemptsPerUpstream(max) => (
            primary <= *max && fallback <= *max,
            format!(
                "{}, {}",
                multiplication(last, Role::Primary),
                multiplication(last, Role::Fallback)
            ),
            format!("at most {max} attempts per upstream"),
        ),
        Rule::GaveUpWithin(d) => (
            !last.client.hung && last.client.latency_ms <= d.as_secs_f64() * 1000.0,
            format!("{} after {}", got(last), ms(last.client.latency_ms)),
            format!("a definitive answer within {}", secs(*d)),
        ),
        Rule::FallbackModel(model) => {
            let models: Vec<&str> = last.at(Role::Fallback).map(|a| a.model.as_str()).collect();
            (
                !models.is_empty() && models.iter().all(|m| m == model),
                if models.is_empty() {
                    "the fallback was not called".into()
                } else {
                    format!("the fallback received {}", models.join(", "))
                },
                format!("{model} on every fallback attempt"),
            )
        }
        Rule::MaxTokensAtFallback => {
            let value = last.at(Role::Fallback).find_map(|a| a.max_tokens.clone());
            (
                value.is_some(),
                value.map_or_else(
                    || {
                        if fallback == 0 {
                            "the fallback was not called".into()
                        } else {
                            "no max_tokens reached the fallback".into()
                        }
                    },
                    |v| format!("max_tokens {v} reached the fallback"),
                ),
                "max_tokens at the fallback".into(),
            )
        }
        Rule::ThinkingOffAtFallback => {
            let answering = last
                .at(Role::Fallback)
                .filter(|a| a.status.is_some_and(|s| (200..300).contains(&s)))
                .last();
            match answering {
                Some(a) => (
                    a.thinking_disabled && !a.reasoning,
                    if a.reasoning {
                        "the fallback returned reasoning text (thinking not switched off)".into()
                    } else {
                        "enable_thinking: false reached the fallback".into()
                    },
                    "enable_thinking: false at the fallback".into(),
                ),
                None => (
                    false,
                    "the fallback did not answer".into(),
                    "enable_thinking: false at the fallback".into(),
                ),
            }
        }
        Rule::FasterRoute(d) => {
            let by_fallback = last
                .at(Role::Fallback)
                .any(|a| a.status.is_some_and(|s| (200..300).contains(&s)));
            (
                last.client.answered
                    && by_fallback
                    && last.client.latency_ms <= d.as_secs_f64() * 1000.0,
                format!(
                    "answered by the {} after {}",
                    if by_fallback { "fallback" } else { "primary" },
                    ms(last.client.latency_ms)
                ),
                format!("the fallback's answer within {}", secs(*d)),
            )
        }
        Rule::HealthExposed => match o.health {
            Some(h) => (
                h.exposed_by.is_some(),
                h.summary(),
                "a health route reports the fallback's failure".into(),
            ),
            None => (false, "not probed".into(), String::new()),
        },
    }
}

/// Whether a request sent from shortly after `from` until `to` skipped the
/// primary (the system cooled it down).
fn cooled(requests: &[Sent], from: Duration, to: Duration) -> bool {
    let (from, to) = (
        from.as_secs_f64() * 1000.0 + 50.0,
        to.as_secs_f64() * 1000.0 - 50.0,
    );
    requests
        .iter()
        .filter(|s| (from..to).contains(&s.sent_ms))
        .any(|s| s.count(Role::Primary) == 0)
}

/// Whether a primary attempt of the first request that arrived while the
/// primary held its answers (the first half of `cooling_from`, when the
/// case's script holds the late 429) got its status: the longer wait
/// reached the system.
fn longer_wait_received(requests: &[Sent], cooling_from: Duration) -> bool {
    let held_until = cooling_from.as_secs_f64() * 1000.0 / 2.0;
    requests.first().is_some_and(|s| {
        s.at(Role::Primary)
            .any(|a| s.sent_ms + a.at_ms < held_until && a.status.is_some())
    })
}

/// The requests sent during the first `outage` of the case.
fn during(requests: &[Sent], outage: Duration) -> impl Iterator<Item = &Sent> {
    let end = outage.as_secs_f64() * 1000.0;
    requests.iter().filter(move |s| s.sent_ms < end)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::observe::{AttemptView, ClientView};
    use super::*;

    /// One answered attempt at `at_ms` with `status`: the base the
    /// semantics tests adjust.
    pub(crate) fn attempt(role: Role, at_ms: f64, status: u16) -> AttemptView {
        AttemptView {
            role,
            attempt: 1,
            at_ms,
            status: Some(status),
            action: cb_base::record::AttemptAction::Ok,
            act: "answer".into(),
            model: "m".into(),
            params: Vec::new(),
            prefill: false,
            max_tokens: None,
            thinking_disabled: false,
            reasoning: false,
            gave_up: false,
            duration_ms: 1.0,
            billed: None,
        }
    }

    /// `check` of `case` measured on `requests` alone (no request around
    /// the case, no health probe).
    fn measure_alone(case: &Case, check: &Check, requests: &[Sent]) -> CheckResult {
        measure(
            check,
            &Outcome {
                case,
                requests,
                before: None,
                after: None,
                health: None,
            },
        )
    }

    pub(crate) fn sent(attempts: Vec<AttemptView>, answered: bool) -> Sent {
        Sent {
            conversation: "c".into(),
            sent_ms: 0.0,
            client: ClientView {
                status: Some(if answered { 200 } else { 503 }),
                error: (!answered).then(|| "HTTP 503: down".into()),
                answered,
                complete: answered,
                marked_partial: false,
                answer_chars: 10,
                expected_chars: 10,
                finish_reason: None,
                model: None,
                usage: false,
                completion_tokens: None,
                prompt_tokens: None,
                models: Vec::new(),
                routing: Vec::new(),
                stated_wait_ms: None,
                headers_ms: None,
                answer_tokens: 0,
                latency_ms: 100.0,
                hung: false,
                contract_violations: Vec::new(),
            },
            attempts,
            params_sent: Vec::new(),
        }
    }

    #[test]
    fn stacked_retries_are_spelled_out() {
        let p = |at| attempt(Role::Primary, at, 503);
        let f = |at| attempt(Role::Fallback, at, 503);
        let stacked = sent(
            vec![
                p(0.0),
                p(1.0),
                p(2.0),
                f(3.0),
                p(4.0),
                p(5.0),
                p(6.0),
                f(7.0),
            ],
            false,
        );
        assert_eq!(
            multiplication(&stacked, Role::Primary),
            "primary 3 x 2 layers = 6 attempts"
        );
        assert_eq!(
            multiplication(&stacked, Role::Fallback),
            "fallback 1 x 2 layers = 2 attempts"
        );
        let uneven = sent(vec![p(0.0), f(1.0), p(2.0), p(3.0)], false);
        assert_eq!(
            multiplication(&uneven, Role::Primary),
            "primary 3 attempts in 2 bursts (1 + 2)"
        );
        assert_eq!(
            multiplication(&uneven, Role::Fallback),
            "fallback 1 attempt"
        );
    }

    /// Every case of the catalogue, streamed and not, against a system
    /// that gave no answer, in the two shapes a real one does (the primary
    /// failed and the fallback was never called; both failed): every check
    /// whose subject is absent says so the same way (not applicable, with
    /// its reason), and none of them is counted in the verdict.
    #[test]
    fn a_system_with_no_answer_is_scored_alike_by_every_check_family() {
        use crate::catalogue::catalogue;
        use crate::timing::{GiveUpBounds, Timing};
        let answer_family = |rule: &Rule| {
            matches!(
                rule,
                Rule::UsageMatchesAnswer
                    | Rule::UsagePresent
                    | Rule::ContractsKept
                    | Rule::ReportsFallbackModel
            )
        };
        let fallback_family = |rule: &Rule| {
            matches!(
                rule,
                Rule::ReportsFallbackModel
                    | Rule::FallbackModel(_)
                    | Rule::MaxTokensAtFallback
                    | Rule::ThinkingOffAtFallback
            )
        };
        let only_primary = vec![sent(vec![attempt(Role::Primary, 0.0, 503)], false)];
        let both = vec![sent(
            vec![
                attempt(Role::Primary, 0.0, 503),
                attempt(Role::Fallback, 1.0, 503),
            ],
            false,
        )];
        let mut measured = 0;
        for stream in [false, true] {
            for case in catalogue(&Timing::fast(), &GiveUpBounds::default(), stream) {
                for (shape, requests) in [("primary only", &only_primary), ("both", &both)] {
                    let outcome = Outcome {
                        case: &case,
                        requests,
                        before: None,
                        after: None,
                        health: None,
                    };
                    let results: Vec<CheckResult> =
                        case.checks.iter().map(|c| measure(c, &outcome)).collect();
                    for (check, result) in case.checks.iter().zip(&results) {
                        let absent = answer_family(&check.rule)
                            || (shape == "primary only" && fallback_family(&check.rule))
                            || matches!(
                                check.rule,
                                Rule::AliveAfter
                                    | Rule::HealthExposed
                                    | Rule::ThinkingOffAtFallback
                                    | Rule::RecoolHonoured { .. }
                                    | Rule::KeptThroughWindow(_)
                            );
                        if absent {
                            measured += 1;
                            assert!(
                                !result.applicable
                                    && !result.passed
                                    && !result.broken()
                                    && result.value.starts_with("not applicable: "),
                                "{} {shape} {:?}: {result:?}",
                                case.id,
                                check.id
                            );
                        } else {
                            assert!(result.applicable, "{} {shape}: {result:?}", case.id);
                        }
                    }
                    let judged = crate::verdict::judge(&outcome, &results);
                    // A check that did not apply has no say: the verdict
                    // and its reason are those of the checks that did.
                    let applied: Vec<CheckResult> =
                        results.iter().filter(|r| r.applicable).cloned().collect();
                    let without = crate::verdict::judge(&outcome, &applied);
                    assert_eq!(
                        (judged.verdict, &judged.reason),
                        (without.verdict, &without.reason),
                        "{} {shape}",
                        case.id
                    );
                    // Where an answer was the ideal, no answer is never a
                    // pass.
                    if case.ideal != crate::case::Ideal::CleanError {
                        assert_ne!(judged.verdict, crate::verdict::Verdict::Pass, "{}", case.id);
                    }
                    for result in results.iter().filter(|r| !r.applicable) {
                        let name = result.check.name();
                        assert!(
                            !judged.reason.contains(&format!("{name}: ")),
                            "{} {shape}: a check that did not apply is in the verdict: {}",
                            case.id,
                            judged.reason
                        );
                    }
                }
            }
        }
        assert!(measured > 40, "{measured} checks without their subject");
    }

    /// `not_dropped_in_window` on the stated-wait cases: a retry inside the
    /// window followed by the fallback's answer, or by an error, drops the
    /// primary; one followed by an attempt after the window keeps it; no
    /// retry inside the window (waiting it out, failing over at once) is
    /// not judged.
    #[test]
    fn a_primary_dropped_while_its_window_ran_is_counted() {
        use crate::catalogue::catalogue;
        use crate::timing::{GiveUpBounds, Timing};
        let timing = Timing::fast();
        let cases = catalogue(&timing, &GiveUpBounds::default(), false);
        let window = timing.retry_after - timing.retry_after_slack;
        let inside = window.as_secs_f64() * 1000.0 - 10.0;
        let after = window.as_secs_f64() * 1000.0 + 10.0;
        let mut judged = 0;
        for case in cases.iter().filter(|c| c.id.starts_with("429-r")) {
            let check = case
                .checks
                .iter()
                .find(|c| c.id == CheckId::NotDroppedInWindow)
                .expect("every stated-wait case counts a drop");
            let measured = |requests: &[Sent]| measure_alone(case, check, requests);
            let first = attempt(Role::Primary, 5.0, 429);
            // Retried at once (glued to the first), then the fallback.
            let to_fallback = [sent(
                vec![
                    first.clone(),
                    attempt(Role::Primary, 5.0, 429),
                    attempt(Role::Fallback, 6.0, 200),
                ],
                true,
            )];
            let r = measured(&to_fallback);
            assert!(r.broken() && r.value.contains("dropped"), "{r:?}");
            // Retried just inside the window, then a clean error.
            let to_error = [sent(
                vec![first.clone(), attempt(Role::Primary, inside, 429)],
                false,
            )];
            assert!(measured(&to_error).broken(), "{}", case.id);
            // Cut at the bound before any attempt after the window: not
            // dropped, not kept; not judged.
            let mut cut = sent(
                vec![first.clone(), attempt(Role::Primary, 100.0, 429)],
                false,
            );
            cut.client.hung = true;
            let r = measured(&[cut]);
            assert!(!r.applicable && r.value.contains("cut"), "{r:?}");
            // The window's end, to the millisecond: inside below it, after at it.
            let edge = window.as_secs_f64() * 1000.0;
            let r = measured(&[sent(
                vec![first.clone(), attempt(Role::Primary, edge - 0.5, 429)],
                false,
            )]);
            assert!(r.broken() && r.value.starts_with("1 retry inside"), "{r:?}");
            let r = measured(&[sent(
                vec![first.clone(), attempt(Role::Primary, edge, 200)],
                true,
            )]);
            assert!(!r.applicable, "{r:?}");
            // A retry inside the window that the primary answered: kept.
            let through = [sent(
                vec![first.clone(), attempt(Role::Primary, 100.0, 200)],
                true,
            )];
            let r = measured(&through);
            assert!(r.applicable && r.passed, "{r:?}");
            // Retried inside, and again after the window: kept.
            let kept = [sent(
                vec![
                    first.clone(),
                    attempt(Role::Primary, 100.0, 429),
                    attempt(Role::Primary, after, 200),
                ],
                true,
            )];
            let r = measured(&kept);
            assert!(r.applicable && r.passed, "{r:?}");
            // Waited the window out, or failed over at once: not judged.
            for shape in [
                vec![first.clone(), attempt(Role::Primary, after, 200)],
                vec![first.clone(), attempt(Role::Fallback, 6.0, 200)],
            ] {
                let r = measured(&[sent(shape, true)]);
                assert!(!r.applicable && !r.broken(), "{r:?}");
            }
            judged += 1;
        }
        assert_eq!(judged, 5);
    }

    /// The cooldown checks apply only where what they measure happened: a
    /// wait stated by errors needs an error, a moved deadline needs the
    /// longer wait to have reached the system.
    #[test]
    fn cooldown_checks_without_their_event_are_not_applicable() {
        use crate::catalogue::catalogue;
        use crate::timing::{GiveUpBounds, Timing};
        let cases = catalogue(&Timing::fast(), &GiveUpBounds::default(), false);
        let find = |id: &str, wanted: fn(&Rule) -> bool| {
            let case = cases.iter().find(|c| c.id == id).expect("in the catalogue");
            let check = case
                .checks
                .iter()
                .find(|c| wanted(&c.rule))
                .unwrap()
                .clone();
            (case, check)
        };
        let measured = measure_alone;
        // Every request answered during the outage: no error to state a wait.
        let (cooling, stated) = find("all-cooling", |r| matches!(r, Rule::WaitStatedDuring(_)));
        let answered = [sent(vec![attempt(Role::Fallback, 0.0, 200)], true)];
        let result = measured(cooling, &stated, &answered);
        assert!(!result.applicable, "{result:?}");
        // An error that states none: applicable, and failed.
        let failed = [sent(vec![attempt(Role::Primary, 0.0, 429)], false)];
        let result = measured(cooling, &stated, &failed);
        assert!(result.applicable && !result.passed, "{result:?}");
        // The system walked away from request 1's held primary attempt:
        // the longer wait never reached it.
        let (recooled, moved) = find("recooled", |r| matches!(r, Rule::RecoolHonoured { .. }));
        let mut left = attempt(Role::Primary, 0.0, 429);
        left.gave_up = true;
        left.status = None;
        let mut requests = vec![sent(vec![left, attempt(Role::Fallback, 1.0, 200)], true)];
        for i in 1..6 {
            let mut s = sent(vec![attempt(Role::Fallback, 0.0, 200)], true);
            s.sent_ms = f64::from(i) * 400.0;
            requests.push(s);
        }
        let result = measured(recooled, &moved, &requests);
        assert!(
            !result.applicable && result.value.contains("never reached"),
            "{result:?}"
        );
        // A retry of request 1 inside the held window got the 429: judged.
        let mut retried = requests.clone();
        retried[0]
            .attempts
            .insert(1, attempt(Role::Primary, 50.0, 429));
        let result = measured(recooled, &moved, &retried);
        assert!(result.applicable, "{result:?}");
        // Walked away from after its 429 had come: the wait reached it.
        requests[0].attempts[0].status = Some(429);
        let result = measured(recooled, &moved, &requests);
        assert!(result.applicable, "{result:?}");
        // The same, with request 1's 429 received: the cooldown is judged.
        requests[0].attempts[0] = attempt(Role::Primary, 0.0, 429);
        let result = measured(recooled, &moved, &requests);
        assert!(result.applicable, "{result:?}");
    }
}
