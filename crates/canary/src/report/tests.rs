//! The report from hand-built rounds: its JSON matches
//! `schema/canary.schema.json` (and the schema bites), and the Markdown
//! shows the rules with their numbers, the routes, the decisions, the
//! ignore list and what the canary does not judge.

use super::*;
use crate::clock::Timestamp;
use crate::discover::Route;
use crate::evidence::{ProbeEvidence, ProbeKind, RouteEvidence, TransportError, TransportKind};
use crate::machine::Machine;
use crate::prober::RouteProbe;
use cb_contracts::Outcome;

fn evidence(route: &str, junk: bool) -> RouteEvidence {
    let mut e = RouteEvidence::new(route);
    let outcome = if junk {
        Outcome::fail("the reply starts with a stray ','")
    } else {
        Outcome::Pass
    };
    e.probes = vec![ProbeEvidence::new(
        ProbeKind::Roleplay,
        [
            (ContractName::JunkPrefix, outcome),
            (ContractName::Refusal, Outcome::Pass),
        ],
    )];
    e
}

fn fixture() -> CanaryReport {
    let names = ["a", "b", "bad", "flaky"];
    let routes: Vec<Route> = names.iter().map(|n| Route::named(n)).collect();
    let policy = Policy {
        enforce: true,
        ..Policy::default()
    };
    let mut machine = Machine::new();
    let mut tally = Tally::new(&routes, None);
    let t0 = Timestamp::from_unix(1_735_689_600).unwrap();
    let mut ignore = IgnoreList::default();
    for i in 0..3u32 {
        let now = t0.plus(std::time::Duration::from_secs(1800) * i);
        let mut round: Vec<RouteEvidence> =
            names.iter().map(|n| evidence(n, *n == "bad")).collect();
        round[3].probes.clear();
        round[3].transport_error = Some(TransportError {
            kind: TransportKind::RateLimited,
            detail: "HTTP 429".into(),
        });
        let probes: Vec<RouteProbe> = round
            .iter()
            .map(|e| RouteProbe {
                evidence: e.clone(),
                requests: 3,
                key_refused: None,
            })
            .collect();
        let d = machine.round(now, &round, &policy);
        tally.add(&probes, &d);
        ignore = IgnoreList::merged(&[], &[], &machine, now, Mode::Enforce);
    }
    CanaryReport {
        tool: "continuity-bench".into(),
        version: "0.1.0".into(),
        probe_set_version: crate::probe::PROBE_SET_VERSION.into(),
        endpoint: EndpointInfo {
            kind: EndpointKind::Simulated,
            url: None,
            transient_rate: Some(0.1),
        },
        model: "m/x".into(),
        seed: 42,
        mode: Mode::Enforce,
        policy: policy.clone(),
        ttft_limit_ms: 200,
        probe_timeout_ms: 2000,
        clock: ClockInfo {
            no_wait: true,
            interval_secs: 1800,
            first_round_at: tally.first.map(|(_, t)| t),
            last_round_at: tally.last.map(|(_, t)| t),
        },
        rounds: RoundsInfo {
            requested: Some(3),
            completed: tally.completed,
            first: tally.first.map(|(n, _)| n),
            last: tally.last.map(|(n, _)| n),
        },
        interrupted: false,
        requests: tally.requests,
        repeats: crate::probe::Repeats::default(),
        power: vec![crate::power::Floor {
            contract: ContractName::Language,
            replies: Some(0.4),
            sessions: None,
        }],
        weak_probe_rounds: tally.weak_probe_rounds,
        routes: tally.rows(&machine, Mode::Enforce),
        decisions: tally.decisions.clone(),
        ignore,
        files: FilesInfo {
            state: "state.json".into(),
            log: "decisions.jsonl".into(),
            ignore_out: "ignore.json".into(),
            reviewed: "built-in".into(),
            runtime: None,
        },
    }
}

fn errors(instance: &serde_json::Value) -> Vec<String> {
    cb_testkit::Schema::new(include_str!("../../../../schema/canary.schema.json")).errors(instance)
}

#[test]
fn the_json_matches_its_schema_and_the_schema_bites() {
    let report = fixture();
    let json: serde_json::Value =
        serde_json::from_slice(&SummaryJson.render(&report).unwrap()).unwrap();
    assert_eq!(errors(&json), Vec::<String>::new());
    for (pointer, bad) in [
        ("/routes/0/status", serde_json::json!("fine")),
        ("/decisions/0/kind", serde_json::json!("maybe")),
        ("/ignore/provider/ignore", serde_json::json!("bad")),
        ("/mode", serde_json::json!("loud")),
    ] {
        let mut broken = json.clone();
        *broken.pointer_mut(pointer).unwrap() = bad;
        assert!(!errors(&broken).is_empty(), "{pointer}");
    }
}

#[test]
fn the_tally_counts_rounds_freezes_requests_and_decisions() {
    let r = fixture();
    let row = |name: &str| r.routes.iter().find(|x| x.route == name).unwrap();
    assert_eq!(r.requests, 36);
    assert_eq!(r.rounds.completed, 3);
    let bad = row("bad");
    assert_eq!(bad.status, RouteStatus::Quarantined);
    assert_eq!(bad.contract, Some(ContractName::JunkPrefix));
    assert_eq!(bad.time_left_secs, Some(86_400 - 1800));
    assert_eq!(
        (bad.quarantines, bad.rounds_scored, bad.rounds_clean),
        (1, 3, 0)
    );
    assert_eq!(bad.contracts[&ContractName::JunkPrefix].fail, 3);
    let flaky = row("flaky");
    assert_eq!((flaky.rounds_frozen, flaky.rounds_scored), (3, 0));
    assert_eq!(row("a").rounds_clean, 3);
    assert_eq!(r.ignore.provider.ignore, ["bad"]);
    assert!(r
        .decisions
        .iter()
        .all(|d| d.kind != crate::record::RecordKind::Frozen));
    assert_eq!(r.decisions.len(), 1);
}

#[test]
fn the_markdown_states_the_rules_the_routes_and_what_is_not_judged() {
    let md = markdown::render(&fixture());
    for needle in [
        "Probe set `canary-probes/1`",
        "**enforce** mode",
        "failing any contract in 2 consecutive scored rounds",
        "2 consecutive fully passing rounds",
        "1d, 3d, then 7d, and 14d",
        "fewer than 2 routes in production",
        "| bad | quarantined (junk_prefix) | 23h 30m | 3 | 3 | 0 | 0 | 0 | 1 | 0 | 9 |",
        "| flaky | healthy | - | 3 | 0 | 0 | 3 | 0 | 0 | 0 | 9 |",
        "**quarantine** `bad` (junk_prefix)",
        "\"bad\"",
        "does not judge",
        "transport errors on 10 % of requests",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in\n{md}");
    }
    assert_eq!(md, markdown::render(&fixture()), "deterministic");
}
