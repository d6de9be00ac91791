//! The catalogue: every case, in the order they are sent to a system. The
//! control first, then the permanent errors, then the transient ones, so
//! a gateway that cools a failing provider down has seen no failure before
//! the cases that must reach the primary; the flap and the expired
//! fallback key come last, as they leave the most state behind.
//!
//! The first fourteen cases keep the meaning they had: what the decision
//! tree ([`classify`]) says about their primary outcome is a required
//! check. The others check what the tree does not rule on: retries and
//! their spacing, budgets, streams, routing and accounting.

use super::case::{
    Case, Check, CheckId as Id, Ideal, Rule, Shape, Streaming, ANSWER_WORDS, CONTEXT_MODEL,
};
use super::timing::{GiveUpBounds, Timing};
use cb_systems::FALLBACK_MODEL;
use cb_faults::{Act, CaseScript, End, ErrorKind, ErrorSpec, HoldEnd, Script, When};
use cb_proxy::policy::{classify, Decision, Outcome};
use std::time::Duration;

/// `Retry-After` of the `429` case.
pub const RETRY_AFTER_429: Duration = Duration::from_secs(1);

/// Content chunks `stream-cut` and `prefill-rejected` send before dying.
pub const CUT_AT: usize = 40;

/// Content chunks `stream-stall` sends before going silent.
pub const STALL_AT: usize = 20;

/// Content chunks `malformed-chunk` sends before its broken event.
pub const MALFORMED_AT: usize = 9;

/// Content chunks the `cut` case sends before the body breaks off.
pub const CUT_CASE_AT: usize = 2;

/// Every case, for `timing` and the user's `give_up` bounds; `stream`
/// says whether the cases that follow `--stream` stream.
pub fn catalogue(timing: &Timing, give_up: &GiveUpBounds, stream: bool) -> Vec<Case> {
    let t = timing;
    let secs = |d: Duration| humantime::format_duration(d).to_string();
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
    cases.extend(retries(t));
    cases.extend(streams(t));
    cases.extend(routing(t, give_up));
    cases.push(flap(t));
    cases.push(fallback_health(t));
    cases
}

/// `429-retry-after`, `429-persistent`, `500-once`, `503-persistent`,
/// `reset-before-headers`, `no-response`.
fn retries(t: &Timing) -> Vec<Case> {
    let secs = |d: Duration| humantime::format_duration(d).to_string();
    let no_response_bound = t.no_response_budget + (t.no_response_hold - t.no_response_budget) / 2;
    vec![
        case(
            "429-retry-after",
            format!(
                "first attempt 429 with Retry-After {}, later attempts answer",
                secs(t.retry_after)
            ),
            "answered; no second primary attempt before Retry-After (retrying after it is the mature behaviour, failing over at once is partial)",
            primary(Script::first(
                1,
                Act::Error(rate_limited(Some(t.retry_after))),
                Act::answer(),
            )),
            Ideal::Answer,
            vec![
                Check::required(
                    Id::RetryAfterHonoured,
                    Rule::FirstGapAtLeast(t.retry_after.saturating_sub(t.retry_after_slack)),
                ),
                Check::advisory(Id::RetriedSameRoute, Rule::PrimaryAtLeast(2)),
            ],
            t.default_bound,
        ),
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

/// The streaming cases.
fn streams(t: &Timing) -> Vec<Case> {
    let secs = |d: Duration| humantime::format_duration(d).to_string();
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
                    "after {STALL_AT} chunks the stream goes silent for {}, then closes",
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

/// `accounting`, `model-id-map`, `extra-params`, `slow-reasoning-primary`,
/// `both-fail`.
fn routing(t: &Timing, give_up: &GiveUpBounds) -> Vec<Case> {
    let secs = |d: Duration| humantime::format_duration(d).to_string();
    let down = || Act::Error(status_error(503));
    let max_tokens_required = Act::Error(ErrorSpec::new(
        400,
        ErrorKind::InvalidRequest,
        "max_tokens: Field required (simulated 400, as Anthropic's Messages API answers).",
    ));
    vec![
        case(
            "accounting",
            "503 on every primary attempt; the fallback answers".into(),
            "the response names the fallback's model and carries usage",
            primary(Script::always(down())),
            Ideal::Answer,
            vec![
                Check::required(Id::ReportsFallbackModel, Rule::ReportsFallbackModel),
                Check::advisory(Id::UsageReported, Rule::UsagePresent),
                Check::required(Id::BoundedAttempts, Rule::PrimaryAtMost(6)),
            ],
            t.default_bound,
        ),
        case(
            "model-id-map",
            format!(
                "503 on every primary attempt; the fallback answers 404 to every model id but its own ({FALLBACK_MODEL})"
            ),
            "the fallback receives its own model id",
            CaseScript {
                primary: Script::always(down()),
                fallback: Script::when(
                    When::ModelIsNot(FALLBACK_MODEL.into()),
                    Act::Error(ErrorSpec::new(
                        404,
                        ErrorKind::ModelNotFound,
                        "The model does not exist on this provider (simulated 404).",
                    )),
                    Act::answer(),
                ),
                clock: "model-id-map".into(),
            },
            Ideal::Answer,
            vec![Check::required(Id::FallbackModelId, Rule::FallbackModel(FALLBACK_MODEL))],
            t.default_bound,
        ),
        Case {
            without_max_tokens: true,
            ..case(
                "extra-params",
                "503 on every primary attempt; the fallback answers 400 without max_tokens (as Anthropic does) and returns reasoning text unless enable_thinking: false is sent (as Qwen3 does); the client sends neither".into(),
                "max_tokens reaches the fallback; thinking switched off is the mature behaviour",
                CaseScript {
                    primary: Script::always(down()),
                    fallback: Script {
                        rules: vec![
                            (When::LacksParam("max_tokens".into()), max_tokens_required),
                            (
                                When::ThinkingNotDisabled,
                                Act::shaped(|s| s.reasoning = true),
                            ),
                        ],
                        otherwise: Act::answer(),
                    },
                    clock: "extra-params".into(),
                },
                Ideal::Answer,
                vec![
                    Check::required(Id::MaxTokensSupplied, Rule::MaxTokensAtFallback),
                    Check::advisory(Id::ThinkingOff, Rule::ThinkingOffAtFallback),
                ],
                t.default_bound,
            )
        },
        Case {
            contracts_judged_elsewhere: &["ttft"],
            ..case(
            "slow-reasoning-primary",
            format!(
                "the primary takes {} to answer, as a reasoning model does; the fallback is fast",
                secs(t.slow_primary)
            ),
            "answered; switching to the faster fallback is the mature behaviour",
            primary(Script::always(Act::shaped(|s| s.delay = Some(t.slow_primary)))),
            Ideal::Answer,
            vec![Check::advisory(Id::SwitchedToFaster, Rule::FasterRoute(t.faster_bound))],
            t.slow_primary_bound,
        )},
        case(
            "both-fail",
            "503 on every attempt at both upstreams".into(),
            "a clean error within the attempt and time bounds (--max-attempts-per-upstream, --max-give-up)",
            CaseScript {
                primary: Script::always(down()),
                fallback: Script::always(down()),
                clock: "both-fail".into(),
            },
            Ideal::CleanError,
            vec![
                Check::required(
                    Id::AttemptsBounded,
                    Rule::AttemptsPerUpstream(give_up.max_attempts_per_upstream),
                ),
                Check::required(Id::GaveUpInTime, Rule::GaveUpWithin(give_up.max_give_up)),
            ],
            give_up.max_give_up + t.default_bound,
        ),
    ]
}

/// `flap`: the primary is down for a while, then healthy.
fn flap(t: &Timing) -> Case {
    let secs = |d: Duration| humantime::format_duration(d).to_string();
    Case {
        shape: Shape::Sequence {
            count: t.flap_requests,
            interval: t.flap_interval,
        },
        ..case(
            "flap",
            format!(
                "503 for the first {} after the case starts, then healthy; {} requests, one every {}",
                secs(t.flap_outage),
                t.flap_requests,
                secs(t.flap_interval)
            ),
            "served by the fallback during the outage, back on the primary within the bound after it",
            primary(Script::when(
                When::WithinClock(t.flap_outage),
                Act::Error(status_error(503)),
                Act::answer(),
            )),
            Ideal::Answer,
            vec![
                Check::required(Id::ServedDuringOutage, Rule::ServedDuringOutage(t.flap_outage)),
                Check::required(
                    Id::Recovered,
                    Rule::RecoveredWithin {
                        outage: t.flap_outage,
                        within: t.flap_recovery_bound,
                    },
                ),
                Check::informational(Id::ProbeDiscipline, Rule::ProbeDiscipline(t.flap_outage)),
            ],
            t.flap_request_bound,
        )
    }
}

/// `fallback-health`: the fallback's key has expired.
fn fallback_health(t: &Timing) -> Case {
    Case {
        shape: Shape::Health,
        scored: false,
        ..case(
            "fallback-health",
            "the fallback's key has expired: it answers 401 to everything; the primary then answers 503".into(),
            "the system says so before the fallback is needed (a health endpoint or a start-up check); reported, not scored",
            primary(Script::always(Act::Error(status_error(503)))),
            Ideal::CleanError,
            vec![Check::advisory(Id::HealthExposed, Rule::HealthExposed)],
            t.default_bound,
        )
    }
}

/// A case whose checks are the decision tree's call on the primary's
/// outcome (`act`; `None`: it answers). A stream that breaks off after its
/// first bytes went to the client cannot be failed over cleanly: there the
/// tree has no call, and the universal checks (never a truncated answer
/// presented as complete) decide.
fn tree(id: &'static str, upstream: String, act: Option<Act>, stream: bool, t: &Timing) -> Case {
    let outcome = match &act {
        None => Some(Outcome::Status(200)),
        Some(Act::Error(spec)) => Some(Outcome::Status(spec.status)),
        Some(Act::Hold { .. }) => Some(Outcome::Timeout),
        Some(Act::Reset) => Some(Outcome::ConnectError),
        Some(Act::Answer(_)) if stream => None,
        Some(Act::Answer(_)) => Some(Outcome::BodyError),
    };
    let (ideal, checks, passes) = match outcome.map(classify) {
        Some(Decision::Deliver) => (
            Ideal::Answer,
            vec![Check::required(Id::Delivered, Rule::Delivered)],
            "deliver: the primary's answer, no failover",
        ),
        Some(Decision::PassThrough) => {
            let status = match &act {
                Some(Act::Error(spec)) => spec.status,
                _ => 0,
            };
            (
                Ideal::CleanError,
                vec![
                    Check::required(Id::NoFailover, Rule::NoFailover),
                    Check::required(Id::PassedThrough, Rule::PassedThrough(status)),
                ],
                "pass through: the primary's status, no failover",
            )
        }
        Some(Decision::Failover(_)) => (
            Ideal::Answer,
            vec![Check::required(Id::FailedOver, Rule::FailedOver)],
            "fail over: the fallback's answer",
        ),
        None => (
            Ideal::Answer,
            Vec::new(),
            "fail over before sending anything, continue the answer, or show the cut; never the cut stream as complete",
        ),
    };
    let script = match act {
        None => Script::answer(),
        Some(act) => Script::always(act),
    };
    case(
        id,
        upstream,
        passes,
        primary(script),
        ideal,
        checks,
        t.default_bound,
    )
}

/// A single-request case with the universal checks added.
fn case(
    id: &'static str,
    upstream: String,
    passes: &'static str,
    script: CaseScript,
    ideal: Ideal,
    mut checks: Vec<Check>,
    bound: Duration,
) -> Case {
    let mut all = vec![
        Check::required(Id::NoHang, Rule::NoHang),
        Check::required(Id::NoTruncatedSuccess, Rule::NoTruncatedSuccess),
        Check::required(Id::ContractsKept, Rule::ContractsKept),
    ];
    all.append(&mut checks);
    Case {
        id,
        upstream,
        passes,
        script: CaseScript {
            clock: id.to_string(),
            ..script
        },
        shape: Shape::Single,
        streaming: Streaming::AsConfigured,
        ideal,
        checks: all,
        bound,
        alive_after: false,
        structured: false,
        without_max_tokens: false,
        scored: true,
        contracts_judged_elsewhere: &[],
    }
}

/// A script for the primary; the fallback answers.
fn primary(script: Script) -> CaseScript {
    CaseScript {
        primary: script,
        fallback: Script::answer(),
        clock: String::new(),
    }
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

/// A 429, with `Retry-After` when given.
fn rate_limited(retry_after: Option<Duration>) -> ErrorSpec {
    let spec = ErrorSpec::new(
        429,
        ErrorKind::RateLimit,
        "Rate limit reached for requests (simulated by semantics).",
    );
    match retry_after {
        Some(d) => spec.with_retry_after(d),
        None => spec,
    }
}

/// `context_length_exceeded`.
fn context_too_long() -> ErrorSpec {
    ErrorSpec::new(
        400,
        ErrorKind::ContextLength,
        "This model's maximum context length is 8192 tokens; your messages resulted in 9000 tokens (simulated 400).",
    )
}

/// `content_policy_violation`.
fn content_filter() -> ErrorSpec {
    ErrorSpec::new(
        400,
        ErrorKind::ContentPolicy,
        "Your request was rejected as a result of our safety system (simulated 400).",
    )
}

/// The error a provider sends with `status`.
pub fn status_error(status: u16) -> ErrorSpec {
    let (message, kind) = match status {
        400 => (
            "Invalid request: 'messages' could not be processed (simulated 400).",
            ErrorKind::InvalidRequest,
        ),
        401 => (
            "Incorrect API key provided (simulated 401).",
            ErrorKind::Auth,
        ),
        402 => (
            "Insufficient credits on this account (simulated 402).",
            ErrorKind::Payment,
        ),
        403 => (
            "You are not allowed to use this model (simulated 403).",
            ErrorKind::Permission,
        ),
        404 => (
            "The model does not exist or you do not have access to it (simulated 404).",
            ErrorKind::ModelNotFound,
        ),
        _ => (
            "The server had an error while processing your request (simulated 5xx).",
            ErrorKind::Server,
        ),
    };
    ErrorSpec::new(status, kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Severity;

    fn cases(stream: bool) -> Vec<Case> {
        catalogue(&Timing::fast(), &GiveUpBounds::default(), stream)
    }

    fn find(cases: &[Case], id: &str) -> Case {
        cases.iter().find(|c| c.id == id).unwrap().clone()
    }

    fn required(case: &Case) -> Vec<Id> {
        case.checks
            .iter()
            .filter(|c| c.severity == Severity::Required)
            .map(|c| c.id)
            .collect()
    }

    #[test]
    fn every_case_the_issue_lists_is_there_once() {
        let ids: Vec<&str> = cases(false).iter().map(|c| c.id).collect();
        let listed = [
            "400",
            "401",
            "402",
            "403",
            "404",
            "429",
            "500",
            "502",
            "503",
            "504",
            "timeout",
            "cut",
            "ok",
            "schema",
            "429-retry-after",
            "429-persistent",
            "500-once",
            "503-persistent",
            "reset-before-headers",
            "no-response",
            "slow-first-token",
            "stream-cut",
            "stream-stall",
            "malformed-chunk",
            "no-done",
            "context-length",
            "content-filter",
            "prefill-rejected",
            "flap",
            "accounting",
            "both-fail",
            "model-id-map",
            "extra-params",
            "slow-reasoning-primary",
            "fallback-health",
        ];
        assert_eq!(ids.len(), listed.len(), "{ids:?}");
        for id in listed {
            assert_eq!(ids.iter().filter(|i| **i == id).count(), 1, "{id}");
        }
        assert_eq!(ids[0], "ok", "the control goes first");
        assert_eq!(ids.last(), Some(&"fallback-health"));
    }

    #[test]
    fn the_decision_tree_cases_keep_their_meaning() {
        for stream in [false, true] {
            let all = cases(stream);
            for id in ["ok", "schema"] {
                assert!(required(&find(&all, id)).contains(&Id::Delivered), "{id}");
            }
            for id in ["400", "401", "402", "403"] {
                let c = find(&all, id);
                assert!(required(&c).contains(&Id::NoFailover), "{id}");
                assert!(required(&c).contains(&Id::PassedThrough), "{id}");
                assert_eq!(c.ideal, Ideal::CleanError);
            }
            for id in ["404", "429", "500", "502", "503", "504", "timeout"] {
                assert!(required(&find(&all, id)).contains(&Id::FailedOver), "{id}");
            }
            // A cut body fails over; a cut stream cannot be replaced
            // cleanly, so only the universal checks judge it.
            assert_eq!(
                required(&find(&all, "cut")).contains(&Id::FailedOver),
                !stream
            );
        }
    }

    #[test]
    fn every_case_has_the_universal_checks_and_a_bound() {
        for c in cases(false) {
            let ids = required(&c);
            for id in [Id::NoHang, Id::NoTruncatedSuccess, Id::ContractsKept] {
                assert!(ids.contains(&id), "{} lacks {id:?}", c.id);
            }
            assert!(!c.bound.is_zero(), "{}", c.id);
            assert_eq!(c.script.clock, c.id);
        }
        assert!(!find(&cases(false), "fallback-health").scored);
        assert_eq!(cases(false).iter().filter(|c| !c.scored).count(), 1);
    }

    #[test]
    fn error_bodies_are_openai_style() {
        for c in cases(false) {
            for script in [&c.script.primary, &c.script.fallback] {
                let acts = script
                    .rules
                    .iter()
                    .map(|(_, a)| a)
                    .chain([&script.otherwise]);
                for act in acts {
                    if let Act::Error(spec) = act {
                        let body = cb_upstream::render::error_json(spec);
                        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                        assert!(v["error"]["message"].is_string(), "{}", c.id);
                        assert!(v["error"]["type"].is_string(), "{}", c.id);
                    }
                }
            }
        }
        let c = find(&cases(false), "429");
        let Act::Error(spec) = &c.script.primary.otherwise else {
            panic!("case 429 is a rate limit")
        };
        assert_eq!(spec.retry_after, Some(RETRY_AFTER_429));
    }
}
