//! `semantics`: the failover catalogue, run on the wire through every
//! system and scored like a scorecard.
//!
//! Each system gets its own simulated upstream pair, as in `run`. For every
//! case of the [`catalogue`] the upstreams execute the case's script for
//! real (error statuses with OpenAI-style bodies, resets, held
//! connections, cut, stalled and malformed streams, rules on the model id,
//! a prefill and the parameters, a primary that flaps, a fallback whose key
//! expired) while one request, or a sequence, goes through the system. The
//! checks read what the client got and the upstreams' attempt log
//! ([`observe`]), each against a bound ([`checks`]), and the case gets a
//! verdict ([`verdict`]): `pass`, `partial`, `safe`, `fail` or
//! `inconclusive`. The report ([`report`]) is a table, a scorecard line per
//! system, JSON, and with `--out` a Markdown scorecard and a chart
//! ([`scorecard`]).
//!
//! Cases run one after another for a system, control first, so a
//! gateway's cooldown after one failure cannot hide the next case's
//! primary (a case that skipped the primary is sent again after
//! `--cooldown-wait`, and is inconclusive if it still does); systems run
//! side by side.

pub mod case;
pub mod catalogue;
pub mod checks;
pub mod config;
pub mod health;
pub mod honesty;
pub mod load;
pub mod observe;
pub mod policy;
pub mod report;
pub mod scorecard;
pub mod timing;
pub mod verdict;

pub use report::{CaseResult, SemanticsJson, SemanticsReport, SystemResult};

use crate::config::SemanticsConfig;
use case::{Case, Shape, CONTEXT_MODEL};
use cb_client::driver_client;
use cb_driver::{BuiltinProxyOptions, Systems, SystemsSpec, SYSTEM_PROMPT};
use cb_faults::{CaseScript, FaultPlan, Role};
use cb_proxy::ProxyBehaviour;
use cb_upstream::{ConversationIndex, IndexEntry, LatencyProfile, UpstreamContext};
use cb_wire::openai::{ChatMessage, ChatRequest, StreamOptions};
use checks::{measure, Outcome};
use observe::{now_ms, send_one, Destination, Sent};
use report::Scorecard;
use tokio::time::Instant;

/// Most times a request that skipped the primary is sent again.
pub const MAX_RESENDS: u32 = 2;

/// `max_tokens` the built-in proxies give the fallback when the client sent
/// none (the simulated fallback of `extra-params` requires one).
pub const BUILTIN_FALLBACK_MAX_TOKENS: u32 = 1024;

/// One conversation the upstreams recognise: a case's request (or one of
/// its sequence, or the healthy request after it).
struct Conversation {
    id: String,
    message: String,
    script: CaseScript,
}

/// The conversations of `case`: its requests, then the one after it.
fn conversations_of(case: &Case) -> Vec<Conversation> {
    let main = |id: String, part: String| Conversation {
        id,
        message: case.message(&part),
        script: case.script.clone(),
    };
    let mut out = match case.shape {
        Shape::Single | Shape::Health => {
            vec![main(format!("semantics-{}", case.id), String::new())]
        }
        Shape::Sequence { count, .. } => (1..=count)
            .map(|k| {
                main(
                    format!("semantics-{}-{k}", case.id),
                    format!(", request {k} of {count}"),
                )
            })
            .collect(),
    };
    if case.alive_after {
        out.push(Conversation {
            id: before_id(case),
            message: case.message(", a healthy request before it"),
            script: CaseScript::answering(case.id),
        });
        out.push(Conversation {
            id: after_id(case),
            message: case.message(", a healthy request after it"),
            script: CaseScript::answering(case.id),
        });
    }
    out
}

fn after_id(case: &Case) -> String {
    format!("semantics-{}-after", case.id)
}

/// The healthy request sent before a case that has one after it: when
/// both fail, the system fails that request shape whatever the case did
/// (Portkey 1.15.2 answers every streamed request 500).
fn before_id(case: &Case) -> String {
    format!("semantics-{}-before", case.id)
}

/// How the built-in proxies are configured for the catalogue: the
/// behaviour a user of the simulated upstreams would give them (the
/// fallback's own model id, the `max_tokens` and `enable_thinking: false`
/// the simulated fallback needs, its larger-context model), with the
/// stream limits of the timing profile.
pub fn builtin_options(config: &SemanticsConfig) -> BuiltinProxyOptions {
    let mut behaviour = ProxyBehaviour {
        first_token_timeout: Some(config.timing.builtin_first_token_timeout),
        stall_timeout: Some(config.timing.builtin_stall_timeout),
        fallback_max_tokens: Some(BUILTIN_FALLBACK_MAX_TOKENS),
        ..ProxyBehaviour::default()
    };
    behaviour
        .fallback_params
        .insert("enable_thinking".into(), serde_json::Value::Bool(false));
    BuiltinProxyOptions {
        behaviour,
        context_model_on_fallback: Some(CONTEXT_MODEL.to_string()),
    }
}

/// Starts the systems and runs every case through each.
///
/// # Errors
/// A server that cannot start or a system that does not answer its
/// preflight request.
pub async fn execute(config: &SemanticsConfig) -> anyhow::Result<SemanticsReport> {
    let cases: Vec<Case> = catalogue::catalogue(&config.timing, &config.give_up, config.stream)
        .into_iter()
        .filter(|c| {
            config
                .cases
                .as_ref()
                .is_none_or(|wanted| wanted.iter().any(|w| w == c.id))
        })
        .collect();
    let mut conversations: Vec<Conversation> = cases.iter().flat_map(conversations_of).collect();
    if let Some(c) = config.load {
        conversations.extend((1..=c).map(|k| Conversation {
            id: load::conversation_id(k),
            message: load::message(k, c),
            script: load::script(config.timing.retry_after, config.load_fault),
        }));
    }
    let index = ConversationIndex::new(conversations.iter().map(|c| IndexEntry {
        id: &c.id,
        first_user_message: &c.message,
        probe: &c.message,
        turns: 1,
        script: &[],
    }));
    let plan = FaultPlan::cases(conversations.iter().map(|c| c.script.clone()).collect());
    let ctx = UpstreamContext::new(plan, index, LatencyProfile::INSTANT, config.seed, 1);
    let client = driver_client()?;
    let spec = SystemsSpec {
        systems: &config.systems,
        attempt_timeout: config.attempt_timeout,
        request_timeout: config.timing.builtin_deadline,
        seed: config.seed,
        api: cb_client::Api::Chat,
    };
    let systems = Systems::start_with(spec, &builtin_options(config), &ctx, &client).await?;
    let ports = systems.upstream_ports();
    let runs = systems.targets.iter().enumerate().map(|(k, target)| {
        let to = Destination {
            target,
            ctx: &ctx,
            config,
            ports: ports.get(k).copied(),
        };
        check_system(&client, to, &cases, &conversations)
    });
    let results = futures::future::join_all(runs).await;
    Ok(SemanticsReport {
        tool: format!("{} {}", cb_base::TOOL, cb_base::VERSION),
        model: config.systems.model.clone(),
        profile: config.timing.profile,
        max_attempts_per_upstream: config.give_up.max_attempts_per_upstream,
        max_give_up_ms: u64::try_from(config.give_up.max_give_up.as_millis()).unwrap_or(u64::MAX),
        stream: config.stream,
        client: config.client,
        client_rule: config.client.rule().into(),
        systems: results,
    })
}

/// Runs every case through one system, one after another.
async fn check_system(
    client: &reqwest::Client,
    to: Destination<'_>,
    cases: &[Case],
    conversations: &[Conversation],
) -> SystemResult {
    let began = Instant::now();
    let mut results = Vec::with_capacity(cases.len());
    for case in cases {
        results.push(run_case(client, to, case, conversations).await);
    }
    let load = match to.config.load {
        Some(c) => {
            // The catalogue's last cases leave cooldowns behind (an expired
            // fallback key, both upstreams rate limited): they are waited
            // out, as a case that skipped the primary is.
            tokio::time::sleep(to.config.cooldown_wait).await;
            Some(load::run(client, to, c, to.config.stream).await)
        }
        None => None,
    };
    SystemResult {
        system: to.target.name.clone(),
        model: to.target.model.clone(),
        wall_ms: began.elapsed().as_secs_f64() * 1000.0,
        scorecard: Scorecard::of(&results),
        honesty: honesty::HonestyCard::of(results.iter().map(|c| &c.honesty)),
        load,
        cases: results,
    }
}

/// The request of conversation `id` of `case`, asking for `model`.
fn request_of(
    case: &Case,
    id: &str,
    conversations: &[Conversation],
    config: &SemanticsConfig,
    model: &str,
) -> ChatRequest {
    let message = conversations
        .iter()
        .find(|c| c.id == id)
        .map_or_else(String::new, |c| c.message.clone());
    let stream = case.streams(config.stream);
    let mut extra = case_params();
    if case.without_max_tokens {
        extra.remove("max_tokens");
    }
    if case.structured {
        extra.insert("response_format".into(), response_format());
    }
    ChatRequest {
        model: model.to_string(),
        messages: vec![
            ChatMessage::new("system", SYSTEM_PROMPT),
            ChatMessage::new("user", &message),
        ],
        stream,
        stream_options: stream.then_some(StreamOptions {
            include_usage: true,
        }),
        extra,
    }
}

/// Runs one case through one system and judges it.
async fn run_case(
    client: &reqwest::Client,
    to: Destination<'_>,
    case: &Case,
    conversations: &[Conversation],
) -> CaseResult {
    let config = to.config;
    let system = &to.target.name;
    let model = to.target.model(&config.systems.model);
    let id = format!("semantics-{}", case.id);
    let mut resent = 0;
    let mut health = None;
    let before = if case.alive_after {
        let before = before_id(case);
        let request = request_of(case, &before, conversations, config, model);
        let start = now_ms(to.ctx);
        Some(
            send_one(
                client,
                to,
                &before,
                &request,
                config.timing.default_bound,
                start,
            )
            .await,
        )
    } else {
        None
    };
    let requests = match case.shape {
        Shape::Single => {
            let request = request_of(case, &id, conversations, config, model);
            loop {
                to.ctx.start_clock(system, case.id);
                let start = now_ms(to.ctx);
                let sent = send_one(client, to, &id, &request, case.bound, start).await;
                if sent.count(Role::Primary) > 0
                    || resent >= MAX_RESENDS
                    || config.cooldown_wait.is_zero()
                {
                    break vec![sent];
                }
                // The case's own protocol: wait out the gateway's cooldown before the next try
                // (bounded by the loop), not a guess that a phase was reached.
                tokio::time::sleep(config.cooldown_wait).await;
                resent += 1;
            }
        }
        Shape::Sequence { count, interval } => {
            to.ctx.start_clock(system, case.id);
            let start = now_ms(to.ctx);
            let began = Instant::now();
            let sends = (1..=count).map(|k| {
                let conversation = format!("semantics-{}-{k}", case.id);
                let request = request_of(case, &conversation, conversations, config, model);
                async move {
                    tokio::time::sleep_until(began + interval * (k - 1)).await;
                    send_one(client, to, &conversation, &request, case.bound, start).await
                }
            });
            futures::future::join_all(sends).await
        }
        Shape::Health => {
            let (sent, view) = fallback_health(client, to, case, &id, conversations).await;
            health = Some(view);
            vec![sent]
        }
    };
    let after = if case.alive_after {
        let after = after_id(case);
        let request = request_of(case, &after, conversations, config, model);
        let start = now_ms(to.ctx);
        Some(
            send_one(
                client,
                to,
                &after,
                &request,
                config.timing.default_bound,
                start,
            )
            .await,
        )
    } else {
        None
    };
    let outcome = Outcome {
        case,
        requests: &requests,
        before: before.as_ref(),
        after: after.as_ref(),
        health: health.as_ref(),
    };
    let checks: Vec<_> = case.checks.iter().map(|c| measure(c, &outcome)).collect();
    let judged = verdict::judge(&outcome, &checks);
    let notes = verdict::notes(&outcome);
    CaseResult {
        case: case.id.to_string(),
        upstream: case.upstream.clone(),
        passes: case.passes.to_string(),
        scored: case.scored,
        verdict: judged.verdict,
        reason: judged.reason,
        checks,
        notes,
        honesty: honesty::judge(&requests, to.ports),
        resent,
        requests,
        after,
        health,
    }
}

/// `fallback-health`: the health routes with the fallback healthy, then
/// with its key expired, then the case's request (the primary fails, so
/// the fallback is needed); the key is restored afterwards.
async fn fallback_health(
    client: &reqwest::Client,
    to: Destination<'_>,
    case: &Case,
    id: &str,
    conversations: &[Conversation],
) -> (Sent, health::HealthView) {
    let system = &to.target.name;
    let timeout = to.config.timing.health_probe_timeout;
    let healthy = health::probe_all(client, to.target, timeout).await;
    let since = now_ms(to.ctx);
    let lists = to.ctx.model_lists(system, Role::Fallback);
    to.ctx.set_expired(system, Role::Fallback, true);
    let expired = health::probe_all(client, to.target, timeout).await;
    to.ctx.start_clock(system, case.id);
    let model = to.target.model(&to.config.systems.model);
    let request = request_of(case, id, conversations, to.config, model);
    let sent = send_one(client, to, id, &request, case.bound, now_ms(to.ctx)).await;
    let own_fallback_calls = health::own_calls(to.ctx, system, since, lists);
    to.ctx.set_expired(system, Role::Fallback, false);
    let exposed_by = health::exposed(&healthy, &expired);
    (
        sent,
        health::HealthView {
            healthy,
            expired,
            exposed_by,
            own_fallback_calls,
        },
    )
}

/// The provider parameters every case's request carries, to see which
/// reach each upstream.
fn case_params() -> serde_json::Map<String, serde_json::Value> {
    let params = serde_json::json!({
        "max_tokens": 256,
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

/// The `response_format` of a structured case: a small fixed schema.
pub fn response_format() -> serde_json::Value {
    serde_json::json!({
        "type": "json_schema",
        "json_schema": {
            "name": "semantics_case",
            "strict": true,
            "schema": {
                "type": "object",
                "properties": {
                    "answer": {"type": "string"},
                    "confidence": {"type": "number"}
                },
                "required": ["answer", "confidence"],
                "additionalProperties": false
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{GiveUpBounds, Timing};
    use cb_upstream::SimulatedModel;
    use std::time::Duration;

    #[test]
    fn every_request_is_recognised_and_gets_the_long_answer() {
        let cases = catalogue::catalogue(
            &Timing::full(Duration::from_secs(30)),
            &GiveUpBounds::default(),
            false,
        );
        let conversations: Vec<Conversation> = cases.iter().flat_map(conversations_of).collect();
        let mut messages: Vec<&str> = conversations.iter().map(|c| c.message.as_str()).collect();
        messages.sort_unstable();
        messages.dedup();
        assert_eq!(messages.len(), conversations.len(), "messages are unique");
        assert_eq!(
            conversations
                .iter()
                .filter(|c| c.id.starts_with("semantics-flap-"))
                .count(),
            20
        );
        for c in &conversations {
            let request = ChatRequest {
                model: "m".into(),
                messages: vec![
                    ChatMessage::new("system", SYSTEM_PROMPT),
                    ChatMessage::new("user", &c.message),
                ],
                stream: false,
                stream_options: None,
                extra: serde_json::Map::new(),
            };
            let text = SimulatedModel::text_for(&request);
            assert_eq!(
                text.split(' ').count(),
                case::ANSWER_WORDS,
                "{}: {text}",
                c.id
            );
        }
    }
}
