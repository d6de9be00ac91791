//! One test per departure from the design that issue 24 closed, each named
//! after the design rule it enforces (DESIGN.md, the `canary` suite): the
//! floor counts only routes in production, the worst evidence goes first,
//! each probe is scored on its own outcome, routes missing from a round are
//! marked absent. (The per-route consecutive rule is in `rules`, the
//! control's filtering signals in `control`.)

use super::*;
use std::collections::BTreeSet;

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The design: "a capacity floor of 2 routes counted among those in
/// production now (listed this round, not excluded by the reviewed or
/// runtime lists, not quarantined)". Five routes, two excluded by the
/// lists, two failing: the first failing one is quarantined (two stay in
/// production), the second would leave one, so it raises the alert.
#[test]
fn the_floor_counts_only_routes_in_production_now() {
    let mut sim = Sim::new(enforce());
    let excluded = set(&["reviewed-out", "runtime-out"]);
    let world = || {
        vec![
            pass("ok"),
            pass("reviewed-out"),
            pass("runtime-out"),
            fail("bad-1", ContractName::Schema),
            fail("bad-2", ContractName::JunkPrefix),
        ]
    };
    let mut last = None;
    for _ in 0..2 {
        let d = sim
            .machine
            .round_excluding(sim.now, &world(), &sim.policy, &excluded);
        sim.now = sim.now.plus(HALF_HOUR);
        last = Some(d);
    }
    let d = last.unwrap();
    let q: Vec<&str> = d
        .of_kind(RecordKind::Quarantine)
        .map(|r| r.route.as_str())
        .collect();
    let alerts: Vec<&LogRecord> = d.alerts().collect();
    assert_eq!(q, ["bad-1"], "{:?}", d.records);
    assert_eq!(alerts.len(), 1, "{:?}", d.records);
    assert_eq!(alerts[0].route, "bad-2");
    assert_eq!(alerts[0].healthy_routes, ["ok"]);
    assert!(
        alerts[0].evidence.contains("1 route(s) in production"),
        "{}",
        alerts[0].evidence
    );
    // Without the exclusions, the old count would have let both go.
    let mut sim = Sim::new(enforce());
    for _ in 0..2 {
        sim.round(&world());
    }
    assert!(sim.quarantined("bad-1") && sim.quarantined("bad-2"));
}

/// The design: "the worst evidence goes first" when the floor admits only
/// some quarantines: most failing contracts, then most consecutive rounds,
/// whatever the names' alphabetical order.
#[test]
fn when_the_floor_admits_only_some_the_worst_evidence_goes_first() {
    let mut sim = Sim::new(enforce());
    let worse = || {
        evidence(
            "zz-worse",
            &[
                (ContractName::Schema, Outcome::fail("schema broke")),
                (ContractName::JunkPrefix, Outcome::fail("junk")),
            ],
        )
    };
    for _ in 0..2 {
        sim.round(&[fail("aa-mild", ContractName::Schema), worse(), pass("a")]);
    }
    assert!(sim.quarantined("zz-worse"));
    assert!(!sim.quarantined("aa-mild"));
    let alert = sim.kinds(RecordKind::CapacityAlert);
    assert_eq!(alert.len(), 1);
    assert_eq!(alert[0].route, "aa-mild");

    // Same contracts: the longer run goes first.
    let mut sim = Sim::new(enforce());
    sim.round(&[
        pass("aa-short"),
        fail("zz-long", ContractName::Schema),
        pass("a"),
    ]);
    for _ in 0..2 {
        sim.round(&[
            fail("aa-short", ContractName::Schema),
            fail("zz-long", ContractName::Schema),
            pass("a"),
        ]);
    }
    assert!(sim.quarantined("zz-long"));
    assert!(!sim.quarantined("aa-short"));
}

/// The design: "only the failing probe's contracts count, and a transport
/// error (timeout before headers, 429, 5xx) freezes only the contracts of
/// that probe". A 429 on the roleplay probe and broken JSON on the schema
/// probe, twice: the schema failures count and the route is quarantined.
#[test]
fn a_transport_error_freezes_only_the_contracts_of_its_probe() {
    let mut sim = Sim::new(enforce());
    let half = || {
        let mut e = fail("bad", ContractName::Schema);
        e.probes.retain(|p| p.probe != ProbeKind::Roleplay);
        e.freeze_probe(
            ProbeKind::Roleplay,
            TransportError {
                kind: TransportKind::RateLimited,
                detail: "HTTP 429".into(),
            },
        );
        e
    };
    let d = sim.round(&[half(), pass("a"), pass("b")]);
    let frozen: Vec<&LogRecord> = d.of_kind(RecordKind::Frozen).collect();
    assert_eq!(frozen.len(), 1);
    assert!(
        frozen[0].evidence.contains("roleplay"),
        "{}",
        frozen[0].evidence
    );
    let row = d.routes.iter().find(|r| r.route == "bad").unwrap();
    assert!(row.frozen.is_none(), "the route as a whole is scored");
    // The roleplay contracts are absent (frozen); shared ones passed only
    // elsewhere are frozen too; the schema failure is there.
    assert!(!row.verdicts.contains_key(&ContractName::Ttft));
    assert!(!row.verdicts.contains_key(&ContractName::Empty));
    assert!(matches!(
        row.verdicts[&ContractName::Schema],
        ContractVerdict::Fail { .. }
    ));
    sim.round(&[half(), pass("a"), pass("b")]);
    assert!(sim.quarantined("bad"));

    // A partly frozen round that passes what it checked neither lifts a
    // quarantine early nor breaks the clean run.
    let clean_but_half = || {
        let mut e = pass("bad");
        e.probes.retain(|p| p.probe != ProbeKind::Roleplay);
        e.freeze_probe(
            ProbeKind::Roleplay,
            TransportError {
                kind: TransportKind::ServerError,
                detail: "HTTP 503".into(),
            },
        );
        e
    };
    sim.round(&[pass("bad"), pass("a"), pass("b")]);
    sim.round(&[clean_but_half(), pass("a"), pass("b")]);
    assert!(sim.quarantined("bad"));
    assert_eq!(sim.machine.route("bad").unwrap().clean_rounds, 1);
    sim.round(&[pass("bad"), pass("a"), pass("b")]);
    assert!(!sim.quarantined("bad"));
}

/// The design: "routes discovered every round". A route gone from the
/// listing leaves the round and the floor; its state is kept, marked absent.
#[test]
fn a_route_gone_from_the_listing_is_marked_absent_and_kept() {
    let mut sim = Sim::new(enforce());
    sim.round(&[fail("gone", ContractName::Schema), pass("a"), pass("b")]);
    sim.round(&[pass("a"), pass("b")]);
    let state = sim.machine.route("gone").unwrap();
    assert!(state.absent);
    assert_eq!(state.streak.rounds, 1, "its history is kept");
    sim.round(&[fail("gone", ContractName::Schema), pass("a"), pass("b")]);
    assert!(!sim.machine.route("gone").unwrap().absent);
    assert!(
        sim.quarantined("gone"),
        "consecutive scored rounds of the route"
    );
}

/// The rotation is configurable (`--languages`): round `n` asks
/// `rotation[n % len]`, and a failed language is still asked again first.
#[test]
fn the_language_rotation_is_the_one_configured() {
    let rotation = [Language::Tr, Language::Fr];
    let mut sim = Sim::new(enforce());
    let asked: Vec<Language> = (0..4)
        .map(|_| {
            let l = sim.machine.language_in("a", &rotation);
            sim.round(&[pass("a"), pass("b"), pass("c")]);
            l
        })
        .collect();
    assert_eq!(
        asked,
        [Language::Fr, Language::Tr, Language::Fr, Language::Tr]
    );
    let mut failing = fail("a", ContractName::Language);
    failing.language = Some(Language::Tr);
    sim.round(&[failing, pass("b"), pass("c")]);
    assert_eq!(sim.machine.language_in("a", &rotation), Language::Tr);
    assert_eq!(
        sim.machine.language_in("b", &[]),
        sim.machine.language_for("b"),
        "empty: the built-in rotation"
    );
}
