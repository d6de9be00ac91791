//! `semantics`: which primary failures each system fails over on, checked on
//! the wire against the decision tree.
//!
//! Each system gets its own simulated upstream pair, as in `run`. For every
//! case in [`cases::CASES`] one single-turn request goes through the system
//! while its primary upstream executes the case's failure for real (an
//! error status with an OpenAI-style body, a 429 with `Retry-After`, or a
//! held connection). What the client got and how many requests each
//! upstream saw decide, by [`verdict::assess`], whether the system switched
//! when it should (5xx, 429, 404, timeout) and passed through what another
//! provider would not fix (400, 401, 402, 403).
//!
//! Cases run one after another for a system, control first, so a gateway's
//! cooldown after one failure cannot hide the next case's primary; systems
//! run side by side.

pub mod cases;
pub mod report;
pub mod verdict;

pub use report::{CaseResult, SemanticsJson, SemanticsReport, SystemResult};

use crate::config::SemanticsConfig;
use crate::contracts::{ContractInput, Language};
use crate::faults::{FaultPlan, Role};
use crate::openai::{ChatMessage, ChatRequest};
use crate::systems::{driver_client, send, Systems, SystemsSpec, Target, SYSTEM_PROMPT};
use crate::upstream::log::TurnKey;
use crate::upstream::{ConversationIndex, IndexEntry, LatencyProfile, UpstreamContext};
use cases::{Case, Fault, CASES};
use std::time::Duration;
use verdict::{assess, Observation};

/// Longest wait, after a case's answer, for its upstream attempts still in
/// flight to be recorded.
const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// Most times a request that skipped the primary is sent again.
pub const MAX_RESENDS: u32 = 2;

/// How much longer than the check's own deadline a TIMEOUT case holds, so
/// the hold never ends before the gateway or the check gives up.
const HOLD_MARGIN: Duration = Duration::from_secs(5);

/// Starts the systems and runs every case through each.
///
/// # Errors
/// A server that cannot start or a system that does not answer its
/// preflight request.
pub async fn execute(config: &SemanticsConfig) -> anyhow::Result<SemanticsReport> {
    let hold = config.request_timeout + HOLD_MARGIN;
    let script = CASES.iter().map(|c| c.action(hold)).collect();
    let messages: Vec<String> = CASES.iter().map(Case::message).collect();
    let ids: Vec<String> = CASES.iter().map(Case::conversation_id).collect();
    let entries = ids.iter().zip(&messages).map(|(id, message)| IndexEntry {
        id,
        first_user_message: message,
        probe: message,
        turns: 1,
    });
    let ctx = UpstreamContext::new(
        FaultPlan::scripted(script),
        ConversationIndex::new(entries),
        LatencyProfile::INSTANT,
        config.seed,
        1,
    );
    let client = driver_client()?;
    let spec = SystemsSpec {
        systems: &config.systems,
        attempt_timeout: config.attempt_timeout,
        request_timeout: config.request_timeout,
        seed: config.seed,
    };
    let systems = Systems::start(spec, &ctx, &client).await?;
    let checks = systems
        .targets
        .iter()
        .map(|target| check_system(&client, target, config, &ctx));
    let systems_results = futures::future::join_all(checks).await;
    Ok(SemanticsReport {
        tool: format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        model: config.systems.model.clone(),
        systems: systems_results,
    })
}

/// Runs every case through one system, one after another.
async fn check_system(
    client: &reqwest::Client,
    target: &Target,
    config: &SemanticsConfig,
    ctx: &UpstreamContext,
) -> SystemResult {
    let mut cases = Vec::with_capacity(CASES.len());
    for case in &CASES {
        let request = ChatRequest {
            model: config.systems.model.clone(),
            messages: vec![
                ChatMessage::new("system", SYSTEM_PROMPT),
                ChatMessage::new("user", &case.message()),
            ],
            stream: config.stream,
            stream_options: None,
            extra: {
                let mut extra = case_params();
                if case.structured {
                    extra.insert("response_format".into(), cases::response_format());
                }
                extra
            },
        };
        let (observation, resent) = send_case(
            client,
            target,
            config,
            ctx,
            &case.conversation_id(),
            &request,
        )
        .await;
        let expected = case.expected(config.stream);
        let (injected, what) = match case.fault {
            Fault::Status(s) => (Some(s), format!("a {s}")),
            Fault::Timeout => (None, "a timeout".to_string()),
            Fault::Cut => (None, "a body cut off".to_string()),
            Fault::None => (None, "no fault".to_string()),
        };
        cases.push(CaseResult {
            case: case.id.to_string(),
            primary: case.label.to_string(),
            expected: expected.label().to_string(),
            verdict: {
                let mut verdict = assess(expected, injected, &what, &observation);
                if resent > 0 {
                    verdict.notes.push(format!(
                        "the primary was skipped (a cooldown after an earlier case?); the request was sent {} more time(s), {} s apart",
                        resent,
                        config.cooldown_wait.as_secs_f64()
                    ));
                }
                verdict
            },
            observation,
        });
    }
    SystemResult {
        system: target.name.clone(),
        cases,
    }
}

/// Sends one case's request and observes it. A gateway that cooled its
/// primary down after an earlier case sends the request straight to the
/// fallback, which shows nothing about this case; the request is then sent
/// again after `cooldown_wait`, at most [`MAX_RESENDS`] times. Returns the
/// observation of the last send (attempts counted for that send only) and
/// how many times it was re-sent.
async fn send_case(
    client: &reqwest::Client,
    target: &Target,
    config: &SemanticsConfig,
    ctx: &UpstreamContext,
    conversation: &str,
    request: &ChatRequest,
) -> (Observation, u32) {
    let run = ctx.current_run();
    let arrived = |role| {
        ctx.log.arrived(TurnKey {
            run,
            system: &target.name,
            role,
            conversation,
            turn: 1,
        })
    };
    let mut resent = 0;
    loop {
        let before = (arrived(Role::Primary), arrived(Role::Fallback));
        let options = config.systems.send_options(config.request_timeout);
        let reply = send(client, target, request, options).await;
        let primary_attempts = arrived(Role::Primary) - before.0;
        let fallback_attempts = arrived(Role::Fallback) - before.1;
        // A held connection the gateway gave up on is recorded when the
        // upstream notices, which can be just after the client's answer.
        for role in [Role::Primary, Role::Fallback] {
            let key = TurnKey {
                run,
                system: &target.name,
                role,
                conversation,
                turn: 1,
            };
            ctx.log.settle_key(key, SETTLE_WAIT).await;
        }
        let rows = ctx.log.snapshot();
        let last = |role: Role, attempts: u32| {
            (attempts > 0)
                .then(|| {
                    rows.iter().rfind(|a| {
                        a.system == target.name && a.conversation == conversation && a.role == role
                    })
                })
                .flatten()
        };
        let (primary_row, fallback_row) = (
            last(Role::Primary, primary_attempts),
            last(Role::Fallback, fallback_attempts),
        );
        let contract_violations = match (&reply.answer, reply.status) {
            (Some(text), Some(status)) if (200..300).contains(&status) => {
                let ms = |v: Option<f64>| v.map(|ms| Duration::from_secs_f64(ms / 1000.0));
                let input = ContractInput {
                    request,
                    expected_language: Some(Language::En),
                    status,
                    stream: request.stream,
                    text,
                    finish_reason: reply.finish_reason.as_deref(),
                    ttft: ms(reply.ttft_ms),
                    ttfb: ms(reply.ttfb_ms),
                };
                config
                    .contracts
                    .check(&input)
                    .into_iter()
                    .filter_map(|r| match r.outcome {
                        Some(o) if o.is_fail() => Some(format!(
                            "{}: {}",
                            r.name.as_str(),
                            o.reason().unwrap_or_default()
                        )),
                        _ => None,
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        let observation = Observation {
            client_status: reply.status,
            client_error: reply.error,
            contract_violations,
            primary_attempts,
            fallback_attempts,
            fallback_model: fallback_row.map(|a| a.model.clone()),
            primary_params_missing: primary_row.map(|a| missing_params(request, &a.params)),
            fallback_params_missing: fallback_row.map(|a| missing_params(request, &a.params)),
            latency_ms: reply.latency_ms,
        };
        if observation.primary_attempts > 0
            || resent >= MAX_RESENDS
            || config.cooldown_wait.is_zero()
        {
            return (observation, resent);
        }
        tokio::time::sleep(config.cooldown_wait).await;
        resent += 1;
    }
}

/// The parameters of `request` that an upstream's `received` list (from
/// its attempt log) lacks.
fn missing_params(request: &ChatRequest, received: &[String]) -> Vec<String> {
    request
        .extra
        .keys()
        .filter(|k| !received.contains(k))
        .cloned()
        .collect()
}

/// The provider parameters every case's request carries, to see which
/// reach each upstream.
fn case_params() -> serde_json::Map<String, serde_json::Value> {
    let params = serde_json::json!({
        "max_tokens": 64,
        "seed": 7,
        "temperature": 0.2,
        "top_p": 0.9,
        "user": "continuity-bench-semantics",
    });
    match params {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}
