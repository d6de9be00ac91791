//! The routing and accounting cases: the fallback's model named in the
//! answer, its own model id, the parameters it requires, a slow primary
//! beside a fast fallback, and both upstreams failing within the user's
//! give-up bounds.

use super::build::{case, primary};
use super::errors::status_error;
use super::secs;
use crate::case::{Case, Check, CheckId as Id, Ideal, Rule};
use crate::timing::{GiveUpBounds, Timing};
use cb_driver::FALLBACK_MODEL;
use cb_faults::{Act, CaseScript, ErrorKind, ErrorSpec, Script, When};

/// `accounting`, `model-id-map`, `extra-params`, `slow-reasoning-primary`,
/// `both-fail`.
pub(super) fn routing(t: &Timing, give_up: &GiveUpBounds) -> Vec<Case> {
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
