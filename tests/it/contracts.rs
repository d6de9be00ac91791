//! Positive and negative controls of every answer contract in `run`: one
//! gateway built to trip each contract (junk before the text, part of the
//! answer translated, a refusal, an empty answer, an answer cut short, a
//! stalled first token), run beside the reference systems, which must trip
//! none on clean upstreams. A contract that passes its tripping system, or
//! fires on the reference systems, fails the test.

use crate::common::gateways::{start_on_free_ports, Misbehaviour, STALL};
use crate::common::{execute, gateway_spec, quick_run, small_dataset};
use continuity_bench::config::GatewaySpec;
use continuity_bench::continuity::summary::SystemSummary;
use continuity_bench::contracts::{ContractName, ContractSettings, Contracts};
use continuity_bench::server::ServerHandle;
use std::time::Duration;

/// The control gateways and the contract each must trip.
const CONTROLS: [(Misbehaviour, &str, ContractName); 5] = [
    (Misbehaviour::PrefixesJunk, "junk", ContractName::JunkPrefix),
    (
        Misbehaviour::TranslatesPart,
        "translates",
        ContractName::Language,
    ),
    (Misbehaviour::Refuses, "refuses", ContractName::Refusal),
    (Misbehaviour::EmptiesAnswers, "empties", ContractName::Empty),
    (
        Misbehaviour::CutsAnswersShort,
        "cuts",
        ContractName::Truncated,
    ),
];

/// Conversations of the stalled-first-token test.
const STALLED: usize = 30;

async fn gateways(kinds: &[(Misbehaviour, &str)]) -> (Vec<ServerHandle>, Vec<GatewaySpec>) {
    let mut handles = Vec::new();
    let mut specs = Vec::new();
    for (kind, name) in kinds {
        let (gateway, primary, fallback) = start_on_free_ports(*kind).await;
        specs.push(gateway_spec(name, gateway.url(), primary, fallback));
        handles.push(gateway);
    }
    (handles, specs)
}

fn broken(system: &SystemSummary, contract: ContractName) -> (u64, u64) {
    system
        .contracts
        .iter()
        .find(|c| c.contract == contract)
        .map_or((0, 0), |c| (c.broken.successes, c.broken.trials))
}

fn assert_clean(system: &SystemSummary) {
    for c in &system.contracts {
        assert_eq!(
            c.broken.successes,
            0,
            "{} broke {} on clean upstreams: {:?}",
            system.name,
            c.contract.as_str(),
            c
        );
    }
    assert!(!system.contracts.is_empty(), "{} was checked", system.name);
}

#[tokio::test(start_paused = true)]
async fn each_contract_catches_its_gateway_and_spares_the_reference_systems() {
    let kinds: Vec<(Misbehaviour, &str)> = CONTROLS.iter().map(|(k, n, _)| (*k, *n)).collect();
    let (_handles, specs) = gateways(&kinds).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    config.replay = continuity_bench::config::Replay::FastForward;
    config.systems.gateways = specs;
    let outcome = execute(&config).await;
    let summary = &outcome.data.as_ref().unwrap().summary;
    let system = |name: &str| summary.systems.iter().find(|s| s.name == name).unwrap();
    assert_clean(system("history"));
    assert_clean(system("stateless"));
    for (_, name, contract) in CONTROLS {
        let s = system(name);
        let (failed, decided) = broken(s, contract);
        assert!(
            decided >= 140,
            "{name}: {contract:?} decided only {decided} of 150"
        );
        assert_eq!(failed, decided, "{name}: {contract:?} let some through");
        // It trips its own contract, not the others.
        for other in ContractName::ALL.into_iter().filter(|c| *c != contract) {
            let (f, _) = broken(s, other);
            assert_eq!(f, 0, "{name} also tripped {}", other.as_str());
        }
    }
    // Clean CPR falls with the contracts, CPR does not (the junk still
    // carries the anchor).
    let junk = system("junk");
    assert!(junk.cpr.rate.unwrap() > 0.95);
    assert_eq!(junk.clean_cpr.rate, Some(0.0));
    let turns = &outcome.data.as_ref().unwrap().turns;
    assert!(turns.iter().filter(|t| t.system == "junk").all(|t| t
        .violations()
        .collect::<Vec<_>>()
        == [ContractName::JunkPrefix]
        && t.contracts
            .iter()
            .any(|c| c.failed() && c.outcome.reason().is_some_and(|r| !r.is_empty()))));
}

#[tokio::test(start_paused = true)]
async fn a_stalled_first_token_breaks_ttft_in_a_stream() {
    let (_handles, specs) = gateways(&[(Misbehaviour::StallsFirstToken, "stalls")]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    // One wave of final turns (fewer conversations than --concurrency), so
    // the test waits out one stall, not several.
    config.dataset = continuity_bench::source::Source::File(small_dataset(dir.path(), STALLED));
    config.replay = continuity_bench::config::Replay::FastForward;
    config.stream = true;
    config.systems.gateways = specs;
    // Clean upstreams: no failure (a TIMEOUT failover delays the first
    // token by the attempt timeout, which a 1 s limit rightly catches).
    let clean = dir.path().join("clean.toml");
    std::fs::write(&clean, "name = \"clean\"\n[degrade]\n").unwrap();
    config.faults = continuity_bench::source::Source::File(clean);
    config.out = continuity_bench::config::OutDir::Given {
        path: dir.path().join("report"),
        force: false,
    };
    // Margins no load can cross: the stalled gateway's first token comes a
    // second after the limit at the earliest (a sleep never ends early),
    // and a clean first token through `history` takes milliseconds, so a
    // machine would have to stall a ready task for 5 s to fail it.
    config.contracts = std::sync::Arc::new(
        Contracts::new(ContractSettings {
            ttft_limit: Duration::from_secs(5),
            ..ContractSettings::default()
        })
        .unwrap(),
    );
    let outcome = execute(&config).await;
    let summary = &outcome.data.as_ref().unwrap().summary;
    let system = |name: &str| summary.systems.iter().find(|s| s.name == name).unwrap();
    let n = STALLED as u64;
    let (failed, decided) = broken(system("stalls"), ContractName::Ttft);
    assert_eq!((failed, decided), (n, n));
    assert!(system("stalls").ttft_ms.median >= STALL.as_secs_f64() * 1000.0);
    assert_eq!(broken(system("history"), ContractName::Ttft), (0, n));
    assert_clean(system("history"));
}

/// `degraded.toml` through the reference systems: every answer the primary
/// degraded breaks exactly the contract of its degradation, and no other
/// answer breaks any.
#[tokio::test(start_paused = true)]
async fn degraded_answers_break_exactly_their_contract() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    config.faults =
        continuity_bench::source::Source::File(crate::common::repo("fault_profiles/degraded.toml"));
    let outcome = execute(&config).await;
    let data = outcome.data.as_ref().unwrap();
    let degradation: std::collections::HashMap<(&str, &str, u32), &str> = data
        .attempts
        .iter()
        .filter(|a| a.role == continuity_bench::faults::Role::Primary)
        .map(|a| {
            (
                (a.system.as_str(), a.conversation.as_str(), a.turn),
                a.degradation.as_str(),
            )
        })
        .collect();
    let mut degraded = 0;
    for t in &data.turns {
        let d = degradation[&(t.system.as_str(), t.conversation.as_str(), t.turn)];
        let expected = match d {
            // Not streamed: no contract sees a first token.
            "" | "slow_first_token" => "",
            "language_drift" => "language",
            other => other,
        };
        degraded += usize::from(!expected.is_empty());
        let broken: Vec<&str> = t.violations().map(|n| n.as_str()).collect();
        assert_eq!(
            broken.join(";"),
            expected,
            "{} {} turn {}: degraded {d:?}; {:?}",
            t.system,
            t.conversation,
            t.turn,
            t.contracts
        );
    }
    assert!(degraded > 300, "{degraded} answers degraded");
}
