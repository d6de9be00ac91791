//! Positive and negative controls of every continuity detector: small
//! gateways built to trip one detector each (dropping history, leaking it
//! between sessions, retrying a 429 in a tight loop, truncating it, asking
//! back so a judge must decide), run beside the reference systems, which
//! must trip none of them.

use crate::common::gateways::{start_on_free_ports, Misbehaviour};
use crate::common::{execute, gateway_spec, quick_run, repo, system};
use continuity_bench::config::{GatewaySpec, Replay, RunConfig};
use continuity_bench::continuity::RunOutcome;
use continuity_bench::judge::{sim, JudgeConfig};
use continuity_bench::secret::Secret;
use continuity_bench::sse::ClientProfile;
use std::time::Duration;

/// A header value sent to the control gateway; it must appear in no report file.
const SECRET_HEADER_VALUE: &str = "Bearer control-gateway-secret-4711";

/// Runs the reference systems and one control gateway under `profile`, once.
async fn run_with_control(
    kind: Misbehaviour,
    profile: &str,
    judge: Option<JudgeConfig>,
) -> (tempfile::TempDir, RunOutcome) {
    run_with_control_tuned(kind, profile, judge, |_| ()).await
}

/// As [`run_with_control`], with a last change to the configuration.
async fn run_with_control_tuned(
    kind: Misbehaviour,
    profile: &str,
    judge: Option<JudgeConfig>,
    tune: impl FnOnce(&mut RunConfig),
) -> (tempfile::TempDir, RunOutcome) {
    let (gateway, primary, fallback) = start_on_free_ports(kind).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    config.faults = continuity_bench::source::Source::File(repo(profile));
    config.judge = judge;
    config.systems.gateways = vec![GatewaySpec {
        headers: vec![("Authorization".into(), Secret::new(SECRET_HEADER_VALUE))],
        ..gateway_spec("control", gateway.url(), primary, fallback)
    }];
    tune(&mut config);
    let outcome = execute(&config).await;
    (dir, outcome)
}

/// A gateway that routes on model ids of its own is asked for its own
/// (`--gateway-model`, or `model` on its systems-file entry) while the
/// reference systems are asked for the run's: it keeps every
/// conversation. Asked for the run's model, it refuses the preflight and
/// the run says so before it starts.
#[tokio::test(start_paused = true)]
async fn a_gateway_is_asked_for_its_own_model_id() {
    use crate::common::gateways::OWN_MODEL_PREFIX;
    let own = format!(
        "{OWN_MODEL_PREFIX}{}",
        continuity_bench::config::DRIVER_MODEL
    );
    let (_dir, outcome) = run_with_control_tuned(
        Misbehaviour::RoutesOnItsOwnModelNames,
        "fault_profiles/paper.toml",
        None,
        |config| config.systems.gateways[0].model = Some(own.clone()),
    )
    .await;
    let control = system(&outcome, "control");
    assert_eq!(control.events, 150);
    assert!(control.cpr.rate.unwrap() >= 0.99, "{:?}", control.cpr);
    assert!(system(&outcome, "history").cpr.rate.unwrap() >= 0.99);
    let recorded: serde_json::Value = serde_json::from_slice(
        &std::fs::read(outcome.report_dir.as_ref().unwrap().join("config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        recorded["gateways"][0]["model"], own,
        "config.json says which model the gateway was asked for"
    );

    let (gateway, primary, fallback) =
        start_on_free_ports(Misbehaviour::RoutesOnItsOwnModelNames).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    config.systems.gateways = vec![gateway_spec("control", gateway.url(), primary, fallback)];
    config.systems.gateway_wait = Duration::ZERO;
    let Err(refused) = continuity_bench::continuity::execute(
        &config,
        tokio_util::sync::CancellationToken::new(),
        std::time::Instant::now(),
    )
    .await
    else {
        panic!("the run's model is refused by the gateway, yet the run went on");
    };
    assert!(
        format!("{refused:#}").contains("must start with acme::"),
        "{refused:#}"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_history_loses_the_conversation() {
    let (_dir, outcome) = run_with_control(
        Misbehaviour::LastMessageOnly,
        "fault_profiles/paper.toml",
        None,
    )
    .await;
    let control = system(&outcome, "control");
    assert_eq!(control.events, 150);
    assert_eq!(
        control.availability.successes, 150,
        "it answers, so only CPR can catch it"
    );
    assert!(
        control.cpr.rate.unwrap() < 0.05,
        "control CPR {}",
        control.cpr.rate.unwrap()
    );
    assert!(system(&outcome, "history").cpr.rate.unwrap() >= 0.99);
    for entry in std::fs::read_dir(outcome.report_dir.as_ref().unwrap()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("control-gateway-secret"),
            "a header value leaked into the report"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_shared_history_bleeds_between_sessions() {
    let (_dir, outcome) = run_with_control(
        Misbehaviour::SharedHistory,
        "fault_profiles/paper.toml",
        None,
    )
    .await;
    let control = system(&outcome, "control");
    // About 35 of 150 events bleed with a pool of 20 histories; 10 leaves
    // room for scheduling without letting a detector that misses most pass.
    assert!(
        control.bleed.events >= 10,
        "bleed detected at concurrency 100: {:?}",
        control.bleed
    );
    let example = &control.bleed.examples[0];
    assert_ne!(
        example.anchor_of, example.conversation,
        "the anchor came from another conversation"
    );
    for name in ["history", "stateless"] {
        assert_eq!(
            system(&outcome, name).bleed.events,
            0,
            "{name} keeps sessions apart"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_tight_retry_loop_is_flagged_as_a_storm() {
    let (_dir, outcome) = run_with_control(
        Misbehaviour::TightRetryLoop,
        "fault_profiles/storm.toml",
        None,
    )
    .await;
    let control = system(&outcome, "control");
    assert!(control.attempts.storm, "{:?}", control.attempts);
    assert!(control.attempts.early_retries > 0);
    assert!(
        control.attempts.fallback_429s > 0,
        "the fallback's bucket ran dry"
    );
    let history = system(&outcome, "history");
    assert!(
        !history.attempts.storm,
        "the reference honours Retry-After: {:?}",
        history.attempts.storm_reasons
    );
    assert!(
        history.attempts.fallback_429s > 0,
        "the reference met the same rate limit"
    );
}

#[tokio::test(start_paused = true)]
async fn truncating_history_lowers_cpr() {
    let (_dir, outcome) = run_with_control(
        Misbehaviour::TruncateToLast3,
        "fault_profiles/paper.toml",
        None,
    )
    .await;
    let (control, history) = (system(&outcome, "control"), system(&outcome, "history"));
    assert!(
        control.cpr.rate.unwrap() + 0.5 < history.cpr.rate.unwrap(),
        "control {} vs history {}",
        control.cpr.rate.unwrap(),
        history.cpr.rate.unwrap()
    );
    assert!(!history.attempts.storm);
    assert_eq!(history.bleed.events, 0);
}

/// A judge configuration pointing at `url`.
fn judge_at(url: String, timeout: Duration) -> JudgeConfig {
    let options = continuity_bench::cli::JudgeOptions {
        judge: Some(url),
        judge_model: Some("judge-model".into()),
        judge_key_env: "CONTROL_JUDGE_KEY".into(),
        judge_cache: None,
        judge_timeout: timeout,
    };
    continuity_bench::config::judge_config(&options, |_| Some("test-key".into()))
        .unwrap()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_judge_decides_what_the_fast_path_leaves() {
    let judge = sim::start(sim::Behaviour::Sensible).await.unwrap();
    let (_dir, outcome) = run_with_control(
        Misbehaviour::AsksBack,
        "fault_profiles/paper.toml",
        Some(judge_at(judge.url(), Duration::from_secs(5))),
    )
    .await;
    let control = system(&outcome, "control");
    assert_eq!(
        control.verdicts.by_judge, 150,
        "every answer ends with a question: {:?}",
        control.verdicts
    );
    assert!(
        control.cpr.rate.unwrap() >= 0.99,
        "the judge sees the value: {}",
        control.cpr.rate.unwrap()
    );
    assert_eq!(
        system(&outcome, "history").verdicts.by_judge,
        0,
        "plain answers stay on the fast path"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_judge_leaves_events_undetermined_and_the_report_finishes() {
    for behaviour in [
        sim::Behaviour::Garbage,
        sim::Behaviour::Error500,
        sim::Behaviour::Hang,
    ] {
        let judge = sim::start(behaviour).await.unwrap();
        let (_dir, outcome) = run_with_control_tuned(
            Misbehaviour::AsksBack,
            "fault_profiles/paper.toml",
            Some(judge_at(judge.url(), Duration::from_millis(200))),
            |c| {
                c.systems.builtin = false;
                c.replay = Replay::FastForward;
            },
        )
        .await;
        let control = system(&outcome, "control");
        assert_eq!(
            control.verdicts.undetermined, 150,
            "{behaviour:?}: {:?}",
            control.verdicts
        );
        assert_eq!(control.cpr.successes, 0, "undetermined is not preserved");
        assert!(outcome
            .report_dir
            .as_ref()
            .unwrap()
            .join("summary.md")
            .is_file());
        let reasons: Vec<&str> = outcome
            .data
            .as_ref()
            .unwrap()
            .events
            .iter()
            .filter(|e| e.system == "control")
            .map(|e| e.reason.as_str())
            .collect();
        assert!(
            reasons.iter().all(|r| r.contains("judge")),
            "{behaviour:?}: {:?}",
            &reasons[..3]
        );
    }
}

/// With `--stream --client strict`, an answer counts only when its stream
/// is complete: a gateway whose fallback stream is cut before `data:
/// [DONE]` gets no preserved event, each an error naming the cut, while
/// the reference proxies stream their answers through intact.
#[tokio::test(start_paused = true)]
async fn a_fallback_stream_cut_before_done_is_an_error_to_a_strict_reader() {
    let (_dir, outcome) = run_with_control_tuned(
        Misbehaviour::CutsFallbackStreams,
        "fault_profiles/paper.toml",
        None,
        |c| {
            c.stream = true;
            c.client = ClientProfile::Strict;
        },
    )
    .await;
    let control = system(&outcome, "control");
    assert_eq!(control.events, 150);
    assert_eq!(control.cpr.successes, 0, "{:?}", control.cpr);
    let events: Vec<_> = outcome
        .data
        .as_ref()
        .unwrap()
        .events
        .iter()
        .filter(|e| e.system == "control")
        .collect();
    assert!(
        events
            .iter()
            .all(|e| e.reason.contains("the stream ended without data: [DONE]")),
        "{:?}",
        events[0]
    );
    assert!(system(&outcome, "history").cpr.rate.unwrap() >= 0.99);
    assert_eq!(system(&outcome, "stateless").availability.successes, 150);
    // The turns before the failure streamed through the control intact.
    let control_turns = outcome
        .data
        .as_ref()
        .unwrap()
        .turns
        .iter()
        .filter(|t| t.system == "control" && !t.is_final);
    assert!(control_turns.clone().count() > 500);
    let broken: Vec<_> = control_turns
        .clone()
        .filter(|t| t.error.is_some())
        .collect();
    assert!(
        broken.is_empty(),
        "{} turns failed, first: {:?}",
        broken.len(),
        broken.first()
    );
    assert!(outcome
        .data
        .as_ref()
        .unwrap()
        .summary
        .notes
        .iter()
        .any(|n| n.contains("streamed answer")));
}

/// With `--stream` and the default client, the same cut streams are read
/// as the official SDKs read them: a body that ends cleanly is the whole
/// answer, so every event turn of the control carries the text that came
/// (no `[DONE]` error, no finish reason), the report records the profile
/// and names its rule, and the reference proxies are unchanged.
#[tokio::test(start_paused = true)]
async fn a_fallback_stream_cut_before_done_is_the_answer_an_sdk_returns() {
    let (_dir, outcome) = run_with_control_tuned(
        Misbehaviour::CutsFallbackStreams,
        "fault_profiles/paper.toml",
        None,
        |c| c.stream = true,
    )
    .await;
    let data = outcome.data.as_ref().unwrap();
    assert_eq!(data.config.client, ClientProfile::OpenAiSdk);
    let finals: Vec<_> = data
        .turns
        .iter()
        .filter(|t| t.system == "control" && t.is_final)
        .collect();
    assert_eq!(finals.len(), 150);
    for turn in &finals {
        assert_eq!(turn.error, None, "{turn:?}");
        assert_eq!(turn.status, Some(200), "{turn:?}");
        assert!(!turn.answer.is_empty(), "{turn:?}");
        assert_eq!(turn.finish_reason, None, "{turn:?}");
    }
    assert!(data
        .events
        .iter()
        .filter(|e| e.system == "control")
        .all(|e| !e.reason.contains("[DONE]")));
    assert_eq!(system(&outcome, "control").availability.successes, 150);
    assert!(system(&outcome, "history").cpr.rate.unwrap() >= 0.99);
    assert!(data
        .summary
        .notes
        .iter()
        .any(|n| n.contains("read `openai-sdk`") && n.contains("official OpenAI SDKs")));
}
