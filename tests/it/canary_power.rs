//! `canary power`'s budgets against the canary itself (issue 42): at the
//! budget `canary power` recommends for 24 h, the real canary, probing the
//! simulated endpoint over the wire on a paused clock, quarantines a route
//! that degrades 5 % of its language replies and one whose schema breaks
//! in 16 % of its sessions (sticky), in at least 9 of 10 seeded runs, and
//! never a healthy route.

use crate::common::canary::*;
use clap::Parser;
use continuity_bench::canary::endpoint::{Behaviour, SimRoute};
use continuity_bench::canary::power::{self, rates, Detector, Incidence};
use continuity_bench::canary::probe::Repeats;
use continuity_bench::canary::record::RecordKind;
use continuity_bench::canary::runner;
use continuity_bench::cli::{CanaryAction, Cli, Command};
use continuity_bench::config::CanaryEndpoint;
use continuity_bench::contracts::ContractName;
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;

/// `canary power`'s settings from its command line.
fn power_settings(line: &[&str]) -> power::Settings {
    let mut argv = vec!["continuity-bench", "canary", "power"];
    argv.extend_from_slice(line);
    let Command::Canary(args) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    let Some(CanaryAction::Power(power)) = args.action else {
        unreachable!()
    };
    continuity_bench::config::canary_power_settings(&power).unwrap()
}

/// Runs the canary offline for `rounds` rounds (enforcing, on the paused
/// clock) at `seed` and `repeats`, against two healthy routes, a route
/// mixing languages into `rare` of its replies and one whose schema breaks
/// in `sticky` of its sessions; returns its decision log and what it
/// printed.
async fn canary_on_four_routes(
    rounds: u32,
    seed: u64,
    repeats: Repeats,
    rare: f64,
    sticky: f64,
) -> (Vec<continuity_bench::canary::record::LogRecord>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&[
        "--rounds",
        &rounds.to_string(),
        "--no-wait",
        "--enforce",
        "--seed",
        &seed.to_string(),
        "--repeats",
        &repeats.to_string(),
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    c.policy.control = None;
    let CanaryEndpoint::Simulated(sim) = &mut c.endpoint else {
        unreachable!()
    };
    sim.routes = vec![
        SimRoute::new(HEALTHY[0], "Steady", Behaviour::Healthy),
        SimRoute::new(HEALTHY[1], "Calm", Behaviour::Healthy),
        SimRoute::new(RARE, "Rare", Behaviour::LanguageMix { rate: rare }),
        SimRoute::new(STICKY, "Sticky", Behaviour::SchemaBreak { rate: sticky }).sticky(),
    ];
    let mut printed = String::new();
    let mut print = |text: &str| printed.push_str(text);
    let outcome = runner::execute(&c, CancellationToken::new(), &mut print)
        .await
        .unwrap();
    (log(&outcome.files.log), printed)
}

const RARE: &str = "rare/fp8";
const STICKY: &str = "sticky/fp8";
const HEALTHY: [&str; 2] = ["steady/bf16", "calm"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_recommended_budget_rare_and_sticky_faults_are_quarantined_within_a_day() {
    let measured = rates::measured_once().unwrap();
    let detectors: BTreeMap<ContractName, Detector> =
        measured.iter().map(|(c, m)| (*c, m.detector())).collect();
    let settings = power_settings(&["--within", "24h", "--confidence", "0.9"]);
    let language = power::budget(
        &settings,
        &detectors,
        ContractName::Language,
        Incidence {
            share: 0.05,
            sticky: false,
        },
    );
    let schema = power::budget(
        &settings,
        &detectors,
        ContractName::Schema,
        Incidence {
            share: 0.16,
            sticky: true,
        },
    );
    let (Some(l), Some(s)) = (language.repeats, schema.repeats) else {
        panic!("no budget: {language:?} {schema:?}")
    };
    // One canary, both budgets: each probe at the larger of the two.
    let repeats = Repeats {
        roleplay: l.roleplay.max(s.roleplay),
        schema: l.schema.max(s.schema),
        language: l.language.max(s.language),
    };
    assert!(repeats.language > 1 && repeats.schema > 1, "{repeats:?}");

    let mut caught: BTreeMap<&str, u32> = BTreeMap::new();
    for seed in 0..10u64 {
        let (records, printed) = canary_on_four_routes(48, seed, repeats, 0.05, 0.16).await;
        assert!(printed.contains("power: at --repeats"), "{printed}");
        // 48 rounds half an hour apart: any quarantine is within 24 h.
        for r in records.iter().filter(|r| r.kind == RecordKind::Quarantine) {
            assert!(
                !HEALTHY.contains(&r.route.as_str()),
                "seed {seed}: a healthy route was quarantined: {r:?}"
            );
        }
        for route in [RARE, STICKY] {
            if records
                .iter()
                .any(|r| r.kind == RecordKind::Quarantine && r.route == route)
            {
                *caught.entry(route).or_default() += 1;
            }
        }
    }
    eprintln!("at --repeats {repeats}: quarantined within 24 h in 10 seeded runs: {caught:?}");
    for route in [RARE, STICKY] {
        let n = caught.get(route).copied().unwrap_or(0);
        assert!(
            n >= 9,
            "{route} quarantined in {n} of 10 runs at --repeats {repeats}"
        );
    }
}

/// With copies, a rerun on the same seed decides the same: the simulated
/// endpoint keys each copy's draws on its session, not on the order the
/// copies arrive in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_decide_the_same_on_a_rerun() {
    let repeats = Repeats::parse("language=12,schema=3").unwrap();
    let mut logs = Vec::new();
    for _ in 0..2 {
        let (records, _) = canary_on_four_routes(6, 42, repeats, 0.3, 0.3).await;
        let records: Vec<String> = records
            .into_iter()
            .map(|r| format!("{} {} {:?} {}", r.round, r.route, r.kind, r.evidence))
            .collect();
        logs.push(records);
    }
    assert!(!logs[0].is_empty());
    assert_eq!(logs[0], logs[1]);
}
