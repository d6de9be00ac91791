//! The canary's departures from its design (issue 24), in process against
//! the built-in simulated endpoint and a test endpoint, one test per design
//! rule: the floor counts only routes in production, routes are discovered
//! every round, a canary that scored nothing says so, a bad key stops it,
//! notifications reach a real command and a real webhook, credentials in
//! the endpoint URL never reach a file, and `release` counts on the clock
//! the state was written with.

use crate::common::canary::*;
use crate::common::openrouter;
use axum::routing::post;
use continuity_bench::canary::endpoint::{Behaviour, SimRoute};
use continuity_bench::canary::record::{LogRecord, RecordKind};
use continuity_bench::canary::runner::{self, CanaryError, CanaryOutcome};
use continuity_bench::config::{CanaryConfig, CanaryEndpoint};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

async fn run(config: &CanaryConfig) -> Result<(CanaryOutcome, String), CanaryError> {
    let mut printed = String::new();
    let mut print = |text: &str| printed.push_str(text);
    let outcome = runner::execute(config, CancellationToken::new(), &mut print).await?;
    Ok((outcome, printed))
}

/// Replaces the simulated routes (and drops the default control).
fn with_routes(c: &mut CanaryConfig, routes: Vec<SimRoute>) {
    c.policy.control = None;
    let CanaryEndpoint::Simulated(sim) = &mut c.endpoint else {
        unreachable!()
    };
    sim.routes = routes;
}

/// The design: "a capacity floor of 2 routes counted among those in
/// production now (listed this round, not excluded by the reviewed or
/// runtime lists, not quarantined)". Five routes, one excluded by the
/// reviewed list and one by the runtime list, two failing: one is
/// quarantined, the other raises the floor alert, and two routes stay
/// usable (the old count left one).
#[tokio::test]
async fn the_floor_counts_only_routes_in_production_now() {
    let dir = tempfile::tempdir().unwrap();
    let reviewed = dir.path().join("reviewed.txt");
    let runtime = dir.path().join("runtime.txt");
    std::fs::write(&reviewed, "rev\n").unwrap();
    std::fs::write(&runtime, "run\n").unwrap();
    let mut c = config(&[
        "--rounds",
        "2",
        "--no-wait",
        "--enforce",
        "--reviewed",
        reviewed.to_str().unwrap(),
        "--runtime",
        runtime.to_str().unwrap(),
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    with_routes(
        &mut c,
        vec![
            SimRoute::new("ok", "Ok", Behaviour::Healthy),
            SimRoute::new("rev", "Rev", Behaviour::Healthy),
            SimRoute::new("run", "Run", Behaviour::Healthy),
            SimRoute::new("bad-1", "BadOne", Behaviour::SchemaBreak { rate: 1.0 }),
            SimRoute::new("bad-2", "BadTwo", Behaviour::JunkPrefix { rate: 1.0 }),
        ],
    );
    let (outcome, printed) = run(&c).await.unwrap();
    let records = log(&outcome.files.log);
    let quarantined: Vec<&str> = records
        .iter()
        .filter(|r| r.kind == RecordKind::Quarantine)
        .map(|r| r.route.as_str())
        .collect();
    let alerts: Vec<&LogRecord> = records
        .iter()
        .filter(|r| r.kind == RecordKind::CapacityAlert)
        .collect();
    assert_eq!(quarantined.len(), 1, "{printed}");
    assert_eq!(alerts.len(), 1, "{printed}");
    assert_ne!(alerts[0].route, quarantined[0]);
    let ignore = ignored(&outcome.files.ignore);
    assert_eq!(ignore.len(), 3, "{ignore:?}");
    assert_eq!(5 - ignore.len(), 2, "two routes stay usable");
}

/// The design: "routes discovered every round". A route listed from round
/// 3 is probed from round 3; a route gone after round 2 leaves the rounds,
/// and its state is kept, marked absent.
#[tokio::test]
async fn routes_are_discovered_every_round() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&[
        "--rounds",
        "5",
        "--no-wait",
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    let mut late = SimRoute::new("late", "Late", Behaviour::Healthy);
    late.listed = Some((3, 99));
    let mut gone = SimRoute::new("gone", "Gone", Behaviour::SchemaBreak { rate: 1.0 });
    gone.listed = Some((1, 2));
    with_routes(
        &mut c,
        vec![
            SimRoute::new("a", "A", Behaviour::Healthy),
            SimRoute::new("b", "B", Behaviour::Healthy),
            SimRoute::new("c", "C", Behaviour::Healthy),
            late,
            gone,
        ],
    );
    let (outcome, _) = run(&c).await.unwrap();
    let row = |name: &str| {
        outcome
            .report
            .routes
            .iter()
            .find(|r| r.route == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("late").rounds_probed, 3);
    assert_eq!(row("gone").rounds_probed, 2);
    assert_eq!(row("a").rounds_probed, 5);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.files.state).unwrap()).unwrap();
    assert_eq!(state["routes"]["gone"]["absent"], true);
    assert!(state["routes"]["gone"]["quarantine"].is_object(), "kept");
    assert!(state["routes"]["late"].get("absent").is_none());
}

/// The design's canary that "could score no route says so": every request
/// answered with a transport error gives an alert line and an event per
/// round, and no round scored.
#[tokio::test]
async fn a_round_that_scored_no_route_is_an_alert() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&[
        "--rounds",
        "2",
        "--no-wait",
        "--transient-rate",
        "1",
        "--routes",
        "atlas/bf16,borealis/fp8,cirrus",
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    c.probe_timeout = Duration::from_millis(300);
    let CanaryEndpoint::Simulated(sim) = &mut c.endpoint else {
        unreachable!()
    };
    sim.timeout_hold = Duration::from_millis(600);
    let (outcome, printed) = run(&c).await.unwrap();
    assert_eq!(outcome.rounds_scored, 0);
    let alerts: Vec<LogRecord> = log(&outcome.files.log)
        .into_iter()
        .filter(|r| r.kind == RecordKind::NoRouteScored)
        .collect();
    assert_eq!(alerts.len(), 2);
    assert!(
        alerts[0]
            .evidence
            .starts_with("no route scored: every route"),
        "{}",
        alerts[0].evidence
    );
    let lines = printed
        .lines()
        .filter(|l| l.starts_with("alert: no route scored"))
        .count();
    assert_eq!(lines, 2, "{printed}");
}

/// A 401 on the probes (the routes given, so no listing): the run stops at
/// once with an error naming the key's variable, never the key.
#[tokio::test]
async fn a_refused_key_on_the_probes_stops_the_canary_naming_its_variable() {
    let server = openrouter::start("sk-the-right-key-000").await;
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("{}/api/v1", server.url());
    let env = |var: &str| (var == "CANARY_BAD_KEY").then(|| "sk-revoked-key-4242".to_string());
    let c = config_with_env(
        &[
            "--endpoint",
            &endpoint,
            "--key-env",
            "CANARY_BAD_KEY",
            "--routes",
            "alpha/fp8,bravo",
            "--rounds",
            "3",
            "--no-wait",
            "--out",
            dir.path().join("r").to_str().unwrap(),
        ],
        &env,
    );
    let err = run(&c).await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, CanaryError::KeyRefused { status: 401, .. }),
        "{text}"
    );
    assert!(
        text.contains("CANARY_BAD_KEY") && !text.contains("sk-revoked"),
        "{text}"
    );
}

/// Records what a webhook received.
async fn webhook(
    status: u16,
) -> (
    continuity_bench::server::ServerHandle,
    Arc<Mutex<Vec<String>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        post(move |body: String| {
            let kept = kept.clone();
            async move {
                kept.lock().unwrap().push(body);
                axum::http::StatusCode::from_u16(status).unwrap()
            }
        }),
    );
    let server = continuity_bench::server::serve(([127, 0, 0, 1], 0).into(), app)
        .await
        .unwrap();
    (server, seen)
}

/// The design: "notifications on every state change". A quarantine reaches
/// a real command (the event on its stdin) and a real webhook; a webhook
/// that fails is retried a bounded number of times, reported, and the
/// canary goes on.
#[tokio::test]
async fn state_changes_reach_the_command_and_the_webhook_and_a_failing_one_is_only_reported() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let (server, seen) = webhook(204).await;
    let notify = format!("cat >> '{}'", events.display());
    let hook = format!("{}/hook", server.url());
    let routes = "atlas/bf16,borealis/fp8,cirrus,granite/fp8,harbor";
    let c = config(&[
        "--rounds",
        "2",
        "--no-wait",
        "--enforce",
        "--routes",
        routes,
        "--notify",
        &notify,
        "--webhook",
        &hook,
        "--out",
        dir.path().join("a").to_str().unwrap(),
    ]);
    let (_, printed) = run(&c).await.unwrap();
    let lines = std::fs::read_to_string(&events).unwrap();
    let by_command: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        by_command
            .iter()
            .any(|e| e["kind"] == "quarantine" && e["route"] == "granite/fp8"),
        "{lines}"
    );
    assert!(by_command.iter().all(|e| e["kind"] != "frozen"));
    let posted = seen.lock().unwrap().clone();
    assert_eq!(posted.len(), by_command.len(), "{printed}");
    assert!(posted.iter().any(|b| b.contains("\"kind\":\"quarantine\"")));

    let (failing, tries) = webhook(500).await;
    let hook = format!("{}/hook", failing.url());
    let c = config(&[
        "--rounds",
        "2",
        "--no-wait",
        "--enforce",
        "--routes",
        routes,
        "--webhook",
        &hook,
        "--notify",
        "exit 3",
        "--out",
        dir.path().join("b").to_str().unwrap(),
    ]);
    let (outcome, printed) = run(&c).await.unwrap();
    assert_eq!(outcome.report.rounds.completed, 2);
    assert!(
        printed.contains("--webhook failed: HTTP 500 after 3 attempts"),
        "{printed}"
    );
    assert!(
        printed.contains("--notify failed: the command exited"),
        "{printed}"
    );
    let events = tries.lock().unwrap().len();
    assert!(events > 0 && events % 3 == 0, "{events} attempts");
}

/// The design's "one clock": `release` after a `--no-wait` run counts the
/// time left on the simulated clock the state was written with (1 d, not
/// 0 s on the wall clock), and rewrites the ignore list at once.
#[tokio::test]
async fn release_counts_on_the_clock_the_state_was_written_with() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let c = config(&[
        "--rounds",
        "2",
        "--no-wait",
        "--enforce",
        "--routes",
        "atlas/bf16,borealis/fp8,cirrus,granite/fp8,harbor",
        "--state",
        state.to_str().unwrap(),
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    let (outcome, _) = run(&c).await.unwrap();
    assert_eq!(ignored(&outcome.files.ignore), ["granite/fp8"]);
    let release = continuity_bench::config::CanaryReleaseConfig {
        route: "granite/fp8".into(),
        state: state.clone(),
        log: None,
    };
    let released =
        continuity_bench::canary::operator::release(&release, runner::wall_now()).unwrap();
    assert!(
        released.record.evidence.contains("had 1d left"),
        "{}",
        released.record.evidence
    );
    assert!(
        ignored(&outcome.files.ignore).is_empty(),
        "rewritten at once"
    );
}

/// The design: "keys ... never reach a report or a log"; credentials in
/// the endpoint URL are redacted everywhere. (The simulated endpoint,
/// served apart, stands for a remote one that takes them.)
#[tokio::test]
async fn credentials_in_the_endpoint_url_reach_no_file_and_no_output() {
    use continuity_bench::canary::endpoint::{SimConfig, SimEndpoint};
    let sim = SimEndpoint::start(SimConfig::new(
        7,
        Duration::from_secs(1),
        Duration::from_secs(4),
    ))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let endpoint = sim
        .url()
        .replacen("http://", "http://ops:planted-url-password@", 1);
    let env = |var: &str| (var == "CANARY_URL_KEY").then(|| "sk-url-test-key-5511".to_string());
    let c = config_with_env(
        &[
            "--endpoint",
            &endpoint,
            "--key-env",
            "CANARY_URL_KEY",
            "--routes",
            "atlas/bf16,cirrus",
            "--rounds",
            "1",
            "--no-wait",
            "--ttft-limit",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ],
        &env,
    );
    let (_, printed) = run(&c).await.unwrap();
    let mut texts = vec![printed];
    for entry in std::fs::read_dir(&out).unwrap() {
        texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("[redacted]@127.0.0.1"), "{summary}");
    for text in &texts {
        assert!(!text.contains("planted-url-password"), "{text}");
    }
    sim.shutdown().await;
}

/// The design: "probe sets ... compiled into the binary; a path on the
/// command line overrides them". A replaced probe set is what is sent, and
/// its version is what the report records.
#[tokio::test]
async fn a_probe_set_file_replaces_the_built_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let probes = dir.path().join("probes.toml");
    std::fs::write(
        &probes,
        "version = \"support-traffic/2\"\n[roleplay]\nsystem = \"You are Sam, a patient support agent.\"\n\
         user = \"Hello! My parcel has not arrived yet. Could you help me?\"\n[schema]\n\
         user = \"Describe the city of Porto as a JSON object.\"\n\
         schema = { type = \"object\", required = [\"city\"], properties = { city = { type = \"string\" } } }\n",
    )
    .unwrap();
    let c = config(&[
        "--rounds",
        "1",
        "--no-wait",
        "--routes",
        "atlas/bf16,cirrus",
        "--control",
        "cirrus",
        "--probes",
        probes.to_str().unwrap(),
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(c.probes.version, "support-traffic/2");
    let (outcome, _) = run(&c).await.unwrap();
    assert_eq!(outcome.report.probe_set_version, "support-traffic/2");
    let atlas = outcome
        .report
        .routes
        .iter()
        .find(|r| r.route == "atlas/bf16")
        .unwrap();
    assert_eq!(atlas.rounds_scored, 1);
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    assert!(md.contains("support-traffic/2"));
}
