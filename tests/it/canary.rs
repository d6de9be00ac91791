//! `canary` end to end, in process: offline against the built-in simulated
//! endpoint (4 rounds enforcing; 200 rounds with transport errors on every
//! route; a control that stops filtering; a restart from the state file),
//! and against an OpenRouter-compatible endpoint written for these tests
//! (discovery, pinning, a route that ignores it, a key echoed in an error
//! body).
//!
//! No verdict here depends on how loaded the machine is (the integration
//! tests run in parallel on 2 cores). Time to first token is the only
//! contract judged on wall time, and wherever it is judged the limit is
//! 1 s, healthy routes send their first token at once and the slow route
//! sleeps 2 s before its own, which load can only make later. Where the
//! slow route is not the point (200 rounds, the restart, the control) it
//! is left out, so that rounds do not wait for it, and the 200-round run
//! (on tokio's paused clock) gives up on a probe (a transport error:
//! frozen, never failed) long before the ttft limit, so no ttft verdict can
//! fail there at all.

use crate::common::canary::*;
use crate::common::openrouter;
use continuity_bench::canary::endpoint::Behaviour;
use continuity_bench::canary::record::{LogRecord, RecordKind};
use continuity_bench::canary::runner::{self, CanaryOutcome};
use continuity_bench::canary::summary::RouteStatus;
use continuity_bench::config::{CanaryConfig, CanaryEndpoint};
use continuity_bench::contracts::ContractName;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Runs the canary, returning the outcome and everything it printed.
async fn run(config: &CanaryConfig) -> (CanaryOutcome, String) {
    let mut printed = String::new();
    let mut print = |text: &str| printed.push_str(text);
    let outcome = runner::execute(config, CancellationToken::new(), &mut print)
        .await
        .unwrap();
    (outcome, printed)
}

/// Quarantine records by route: (round, contract, action).
fn quarantines(records: &[LogRecord]) -> BTreeMap<String, Vec<(u64, ContractName, String)>> {
    let mut out: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.kind == RecordKind::Quarantine) {
        out.entry(r.route.clone()).or_default().push((
            r.round,
            r.contract.unwrap(),
            r.action.clone(),
        ));
    }
    out
}

fn status(outcome: &CanaryOutcome, route: &str) -> RouteStatus {
    outcome
        .report
        .routes
        .iter()
        .find(|r| r.route == route)
        .unwrap()
        .status
}

const DEGRADED: [(&str, ContractName); 4] = [
    ("dune/fp8", ContractName::JunkPrefix),
    ("ember/fp4", ContractName::Language),
    ("fjord", ContractName::Ttft),
    ("granite/fp8", ContractName::Schema),
];

const STAY_HEALTHY: [&str; 4] = ["atlas/bf16", "borealis/fp8", "cirrus", "isle/fp8"];

/// The seeded route with a slow first token.
const SLOW: &str = "fjord";

/// Every seeded route but [`SLOW`], for the runs that need not wait for it.
const WITHOUT_SLOW: [&str; 8] = [
    "atlas/bf16",
    "borealis/fp8",
    "cirrus",
    "dune/fp8",
    "ember/fp4",
    "granite/fp8",
    "harbor",
    "isle/fp8",
];

#[tokio::test]
async fn four_rounds_offline_quarantine_exactly_the_degraded_routes_after_two_failing_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    // The default command (ttft limit 1 s, slow route's first token at
    // 2 s, healthy ones at once): nothing to tune for the machine's load.
    let c = config(&[
        "--rounds",
        "4",
        "--no-wait",
        "--enforce",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(c.ttft_limit, Duration::from_secs(1));
    let (outcome, printed) = run(&c).await;
    let records = log(&outcome.files.log);
    let q = quarantines(&records);
    let expected: BTreeMap<String, Vec<(u64, ContractName, String)>> = DEGRADED
        .iter()
        .map(|(r, c)| (r.to_string(), vec![(2, *c, "quarantine".to_string())]))
        .collect();
    assert_eq!(q, expected, "{printed}");
    for r in records.iter().filter(|r| r.kind == RecordKind::Quarantine) {
        let contract = r.contract.unwrap();
        assert!(
            r.evidence
                .starts_with(&format!("failed {contract} in 2 consecutive rounds")),
            "{}",
            r.evidence
        );
        // The two failing rounds are the route's first two: each failed it.
        let row = outcome
            .report
            .routes
            .iter()
            .find(|x| x.route == r.route)
            .unwrap();
        assert_eq!(row.contracts[&contract].fail, 4, "{}", r.route);
        assert_eq!(row.status, RouteStatus::Quarantined);
    }
    for route in STAY_HEALTHY {
        assert_eq!(status(&outcome, route), RouteStatus::Healthy, "{route}");
    }
    assert_eq!(status(&outcome, "harbor"), RouteStatus::Control);
    assert_eq!(outcome.report.weak_probe_rounds, 0, "the control filtered");
    assert!(records
        .iter()
        .any(|r| r.route == "isle/fp8" && r.kind == RecordKind::Frozen));
    // The ignore list: the active quarantines, in the documented shape.
    let ignore: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.files.ignore).unwrap()).unwrap();
    assert_eq!(
        ignore,
        serde_json::json!({"provider": {"ignore": ["dune/fp8", "ember/fp4", "fjord", "granite/fp8"]}})
    );
    // Printed after every round, and the report files.
    assert_eq!(printed.matches("(enforce mode)").count(), 4);
    assert!(printed.contains("quarantined (junk_prefix)"), "{printed}");
    for file in [
        "report.md",
        "summary.json",
        "state.json",
        "decisions.jsonl",
        "ignore.json",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("canary-probes/1") && md.contains("does not judge"));
}

/// On tokio's paused clock: the held connections and the probe deadline
/// are virtual time, so the 200 rounds take no wall time waiting, and no
/// verdict depends on the machine's speed (the judging runs on the
/// blocking pool, which holds the clock while it works).
#[tokio::test(start_paused = true)]
async fn two_hundred_rounds_with_ten_percent_transport_errors_raise_no_false_positive() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut c = config(&[
        "--rounds",
        "200",
        "--no-wait",
        "--transient-rate",
        "0.1",
        "--routes",
        &WITHOUT_SLOW.join(","),
        "--concurrency",
        "8",
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    // Fast by construction, and blind to load by construction: the slow
    // route is left out (the 4-round run catches it), so no round waits
    // for a first token; a probe is given up after 250 ms (an injected
    // held connection costs that much), far below the 1 s ttft limit, so a
    // stream either arrives with its first token well inside the limit or
    // is a timeout, a transport error that freezes the route and is never
    // a failure. Load can only add frozen rounds, which delay a catch but
    // never make one.
    c.probe_timeout = Duration::from_millis(250);
    assert!(c.probe_timeout < c.ttft_limit);
    let CanaryEndpoint::Simulated(sim) = &mut c.endpoint else {
        unreachable!()
    };
    // Held connections outlast the deadline, but not the test's end by much.
    sim.timeout_hold = c.probe_timeout * 2;
    let (outcome, printed) = run(&c).await;
    let elapsed = started.elapsed();
    let records = log(&outcome.files.log);
    let q = quarantines(&records);
    for route in STAY_HEALTHY {
        assert!(
            !q.contains_key(route),
            "{route} quarantined: {:?}",
            q.get(route)
        );
        assert_eq!(status(&outcome, route), RouteStatus::Healthy);
    }
    for (route, contract) in DEGRADED.into_iter().filter(|(r, _)| *r != SLOW) {
        let first = q.get(route).map(|v| v[0].clone());
        let (round, c, action) = first.unwrap_or_else(|| panic!("{route} never caught"));
        assert_eq!(
            (c, action.as_str()),
            (contract, "would quarantine"),
            "{route}"
        );
        assert!(round <= 10, "{route} caught late, at round {round}");
    }
    assert!(
        q.keys().all(|r| DEGRADED.iter().any(|(d, _)| d == r)),
        "{q:?}"
    );
    // The transport errors were there, on every route, and froze rounds.
    let frozen = |route: &str| {
        records
            .iter()
            .filter(|r| r.route == route && r.kind == RecordKind::Frozen)
            .count()
    };
    for route in ["atlas/bf16", "cirrus", "dune/fp8", "granite/fp8"] {
        assert!(
            frozen(route) > 20,
            "{route}: {} frozen rounds",
            frozen(route)
        );
    }
    assert!(frozen("isle/fp8") > 80);
    assert!(records
        .iter()
        .any(|r| r.kind == RecordKind::Frozen && r.evidence.contains("timeout")));
    assert_eq!(printed.matches("(observe mode)").count(), 200);
    eprintln!("200 rounds in {elapsed:?}");
}

#[tokio::test]
async fn a_control_that_stops_filtering_marks_the_probe_weak() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&[
        "--rounds",
        "3",
        "--no-wait",
        "--control",
        "harbor",
        "--routes",
        "atlas/bf16,borealis/fp8,cirrus,harbor",
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    let CanaryEndpoint::Simulated(sim) = &mut c.endpoint else {
        unreachable!()
    };
    for route in &mut sim.routes {
        if route.tag == "harbor" {
            route.behaviour = Behaviour::Healthy;
        }
    }
    let (outcome, printed) = run(&c).await;
    let weak: Vec<LogRecord> = log(&outcome.files.log)
        .into_iter()
        .filter(|r| r.kind == RecordKind::ProbeWeak)
        .collect();
    assert_eq!(weak.len(), 3, "one per round");
    assert!(weak
        .iter()
        .all(|r| r.route == "harbor" && r.evidence.contains("known to filter")));
    assert_eq!(outcome.report.weak_probe_rounds, 3);
    let atlas = outcome
        .report
        .routes
        .iter()
        .find(|r| r.route == "atlas/bf16")
        .unwrap();
    assert_eq!(atlas.contracts[&ContractName::Refusal].weak_pass, 3);
    assert_eq!(atlas.contracts[&ContractName::Refusal].pass, 0);
    assert_eq!(
        atlas.rounds_clean, 0,
        "a weak pass is no evidence of health"
    );
    assert!(
        printed.contains("Weak probe(s) this round: roleplay"),
        "{printed}"
    );
}

/// (round, route, kind, contract, time, until) of every decision.
fn decisions(records: &[LogRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {:?} {} {:?}",
                r.round, r.route, r.kind, r.contract, r.time, r.until
            )
        })
        .collect()
}

#[tokio::test]
async fn two_runs_of_two_rounds_decide_as_one_run_of_four() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // Without the slow route: 8 rounds need not wait 2 s each.
    let routes = WITHOUT_SLOW.join(",");
    let common = ["--no-wait", "--enforce", "--routes", &routes];
    let line = |rounds: &str, tag: &str, part: &str| {
        let mut l: Vec<String> = common.iter().map(|s| s.to_string()).collect();
        for (flag, value) in [
            ("--rounds", rounds.to_string()),
            ("--state", path(&format!("{tag}-state.json"))),
            ("--log", path(&format!("{tag}-log.jsonl"))),
            ("--ignore-out", path(&format!("{tag}-ignore.json"))),
            ("--out", path(&format!("{tag}-{part}"))),
        ] {
            l.push(flag.to_string());
            l.push(value);
        }
        l
    };
    let as_refs = |l: &[String]| -> Vec<String> { l.to_vec() };
    let whole = as_refs(&line("4", "whole", "1"));
    let (one, _) = run(&config(
        &whole.iter().map(String::as_str).collect::<Vec<_>>(),
    ))
    .await;
    for part in ["1", "2"] {
        let l = line("2", "split", part);
        run(&config(&l.iter().map(String::as_str).collect::<Vec<_>>())).await;
    }
    let whole_log = log(Path::new(&path("whole-log.jsonl")));
    let split_log = log(Path::new(&path("split-log.jsonl")));
    assert_eq!(decisions(&split_log), decisions(&whole_log));
    assert!(whole_log.iter().any(|r| r.kind == RecordKind::Quarantine));
    let state = |tag: &str| {
        let s: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(path(&format!("{tag}-state.json"))).unwrap(),
        )
        .unwrap();
        let routes: BTreeMap<String, String> = s["routes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let q = &v["quarantine"];
                (
                    k.clone(),
                    format!(
                        "{} {} {} {}",
                        q["contract"], q["since"], q["until"], v["quarantines"]
                    ),
                )
            })
            .collect();
        (s["rounds"].clone(), s["last_round_at"].clone(), routes)
    };
    assert_eq!(state("split"), state("whole"));
    assert_eq!(
        std::fs::read_to_string(path("split-ignore.json")).unwrap(),
        std::fs::read_to_string(path("whole-ignore.json")).unwrap()
    );
    assert_eq!(one.report.rounds.last, Some(4));
}

const KEY: &str = "sk-or-canary-planted-key-7781";

#[tokio::test]
async fn against_a_test_endpoint_the_same_results_pinning_checked_and_the_key_never_shown() {
    let server = openrouter::start(KEY).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let endpoint = format!("{}/api/v1", server.url());
    let env = |var: &str| (var == "CANARY_TEST_KEY").then(|| KEY.to_string());
    let c = config_with_env(
        &[
            "--endpoint",
            &endpoint,
            "--key-env",
            "CANARY_TEST_KEY",
            "--model",
            "meta-llama/llama-3.3-70b-instruct",
            "--rounds",
            "4",
            "--no-wait",
            "--enforce",
            "--control",
            "hotel",
            // Far above a healthy first token, far below the slow route's.
            "--ttft-limit",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ],
        &env,
    );
    assert!(openrouter::SLOW_FIRST_TOKEN >= c.ttft_limit * 2);
    let (outcome, printed) = run(&c).await;
    let records = log(&outcome.files.log);
    let q = quarantines(&records);
    let expected: BTreeMap<String, Vec<(u64, ContractName, String)>> = [
        ("delta/fp8", ContractName::JunkPrefix),
        ("echo", ContractName::Schema),
        ("foxtrot/fp8", ContractName::Language),
        ("kilo/fp8", ContractName::Ttft),
    ]
    .iter()
    .map(|(r, c)| (r.to_string(), vec![(2, *c, "quarantine".to_string())]))
    .collect();
    assert_eq!(q, expected, "{printed}");
    // Discovered by tag, else by provider name.
    let ids: Vec<&str> = outcome
        .report
        .routes
        .iter()
        .map(|r| r.route.as_str())
        .collect();
    assert!(
        ids.contains(&"Charlie") && ids.contains(&"alpha/fp8"),
        "{ids:?}"
    );
    for route in ["alpha/fp8", "bravo", "Charlie", "india", "juliet", "golf"] {
        assert_eq!(status(&outcome, route), RouteStatus::Healthy, "{route}");
    }
    // golf answers from Alpha: pinning not honoured, never scored.
    let golf = outcome
        .report
        .routes
        .iter()
        .find(|r| r.route == "golf")
        .unwrap();
    assert_eq!(
        (golf.rounds_pinning_not_honoured, golf.rounds_scored),
        (4, 0)
    );
    let pinning: Vec<&LogRecord> = records
        .iter()
        .filter(|r| r.kind == RecordKind::PinningNotHonoured)
        .collect();
    assert_eq!(pinning.len(), 4);
    assert!(pinning.iter().all(|r| r.route == "golf"
        && r.action == "pinning not honoured"
        && r.evidence.contains("Alpha")));
    // The flaky route and the one echoing the key are frozen, never failed
    // (the test endpoint would hand their failures over to Alpha, and the
    // check above would see pinning not honoured, had the probes allowed
    // fallbacks).
    let juliet = outcome
        .report
        .routes
        .iter()
        .find(|r| r.route == "juliet")
        .unwrap();
    assert_eq!(juliet.rounds_frozen, 4);
    // india's transport errors freeze the probes they hit (each probe is
    // scored on its own outcome): logged, never failed.
    assert!(records
        .iter()
        .any(|r| r.route == "india" && r.kind == RecordKind::Frozen));
    assert_eq!(outcome.report.weak_probe_rounds, 0);
    // The ignore list is valid JSON of the documented shape.
    let ignore: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.files.ignore).unwrap()).unwrap();
    assert_eq!(
        ignore,
        serde_json::json!({"provider": {"ignore": ["delta/fp8", "echo", "foxtrot/fp8", "kilo/fp8"]}})
    );
    // The echoed key reached no file and nothing printed.
    assert!(records
        .iter()
        .any(|r| r.route == "juliet" && r.evidence.contains("[redacted]")));
    let mut texts = vec![printed];
    for entry in std::fs::read_dir(&out).unwrap() {
        texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    for text in &texts {
        assert!(
            !text.contains(KEY) && !text.contains("canary-planted"),
            "{text}"
        );
    }
}

/// Runs one round against `endpoint` with the key `key` and the extra
/// arguments, writing to `out`, and returns the error that stopped it.
async fn stopped_by(endpoint: &str, key: &str, extra: &[&str], out: &Path) -> String {
    let env = |_: &str| Some(key.to_string());
    let mut line = vec!["--endpoint", endpoint, "--rounds", "1"];
    line.extend_from_slice(extra);
    line.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let c = config_with_env(&line, &env);
    let mut print = |_: &str| {};
    runner::execute(&c, CancellationToken::new(), &mut print)
        .await
        .unwrap_err()
        .to_string()
}

#[tokio::test]
async fn a_wrong_key_or_a_control_that_is_no_route_stops_before_the_first_probe() {
    let server = openrouter::start(KEY).await;
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("{}/api/v1", server.url());
    let err = stopped_by(&endpoint, "sk-wrong-key-000000", &[], &dir.path().join("a")).await;
    assert!(
        err.contains("HTTP 401") && err.contains("--key-env"),
        "{err}"
    );
    let err = stopped_by(
        &endpoint,
        KEY,
        &["--control", "zulu"],
        &dir.path().join("b"),
    )
    .await;
    assert!(
        err.contains("--control \"zulu\"") && err.contains("alpha/fp8"),
        "{err}"
    );
    assert!(!dir.path().join("b/state.json").exists(), "no round ran");
}

#[tokio::test]
async fn a_hostile_listing_reaches_neither_the_terminal_nor_the_report_raw() {
    let hostile = [
        "evil\u{1b}[2J\u{1b}[31mred",
        "two\nlines",
        "<img src=x onerror=alert(1)>",
        "pipe|cell",
        "\u{202e}lanigiro",
        "bell\u{7}\u{0}",
    ];
    let mut extra: Vec<serde_json::Value> = hostile
        .iter()
        .map(|tag| serde_json::json!({"tag": tag, "provider_name": "Evil"}))
        .collect();
    extra.push(serde_json::json!({"tag": "z".repeat(4096)}));
    extra.push(serde_json::json!({"tag": "ok", "provider_name": "Line\r\nBreak"}));
    let server = openrouter::start_listing_also(KEY, extra).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let endpoint = format!("{}/api/v1", server.url());
    let env = |_: &str| Some(KEY.to_string());
    let c = config_with_env(
        &[
            "--endpoint",
            &endpoint,
            "--model",
            "meta-llama/llama-3.3-70b-instruct",
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
    let (outcome, printed) = run(&c).await;
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for (what, text) in [("stdout", &printed), ("report.md", &md)] {
        let raw: Vec<char> = text
            .chars()
            .filter(|&c| (c.is_control() && c != '\n') || c == '\u{202e}')
            .collect();
        assert!(raw.is_empty(), "{what} holds {raw:?}");
        for needle in [
            "<img",
            "pipe|cell",
            "two\nlines",
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
        ] {
            assert!(!text.contains(needle), "{what} holds {needle:?}");
        }
    }
    // Each refused entry is said as an alert, escaped; the plain routes
    // are probed as before.
    let alerts = printed
        .lines()
        .filter(|l| l.starts_with("alert: route listing:"))
        .count();
    assert_eq!(alerts, 8, "{printed}");
    assert!(printed.contains("evil\\u{1b}"), "{printed}");
    assert_eq!(outcome.report.routes.len(), openrouter::routes().len());
}

#[tokio::test]
async fn a_listing_of_a_hundred_thousand_routes_is_refused_with_its_count() {
    let extra: Vec<serde_json::Value> = (0..100_000)
        .map(|i| serde_json::json!({"tag": format!("r{i}")}))
        .collect();
    let server = openrouter::start_listing_also(KEY, extra).await;
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("{}/api/v1", server.url());
    let err = stopped_by(&endpoint, KEY, &[], &dir.path().join("a")).await;
    assert!(
        err.contains("100011 routes") && err.contains("--routes"),
        "{err}"
    );
    assert!(!dir.path().join("a/state.json").exists(), "no round ran");
}
