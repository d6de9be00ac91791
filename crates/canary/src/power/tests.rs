//! `canary power` against what can be worked out by hand.

use super::*;

fn settings(trials: u64) -> Settings {
    Settings {
        incidences: vec![0.05],
        contracts: vec![ContractName::Schema],
        sticky: false,
        transient: 0.0,
        repeats: Repeats::default(),
        interval: Duration::from_secs(1800),
        trials,
        seed: 42,
        within: DAY,
        confidence: 0.9,
        max_false: 0.01,
    }
}

fn detectors_with(contract: ContractName, d: Detector) -> BTreeMap<ContractName, Detector> {
    BTreeMap::from([(contract, d)])
}

fn scenario_of(
    contract: ContractName,
    share: f64,
    sticky: bool,
    transient: f64,
    repeats: Repeats,
) -> Scenario {
    Scenario {
        contract,
        incidence: Incidence { share, sticky },
        transient,
        repeats,
        detectors: BTreeMap::new(),
        interval: Duration::from_secs(1800),
    }
}

/// The simulation runs the machine; the closed form is the chain. For one
/// checked reply per round at 5 % they must agree (the must-show case).
#[test]
fn the_simulation_agrees_with_the_closed_form_at_one_probe_and_five_percent() {
    let c = closed_form_check(&settings(2000), &BTreeMap::new());
    assert!(c.agrees(), "{c:?}");
    // And by hand: two failing rounds in a row within 48 rounds at q = 0.05.
    let mut p = [0.0f64; 49];
    for i in 2..=48 {
        p[i] = 0.0025 + 0.95 * p[i - 1] + 0.05 * 0.95 * p[i - 2];
    }
    assert!((c.closed_form - p[48]).abs() < 1e-12);
}

/// The cases the closed form only approximates or that exercise the
/// machine's other paths (transport errors freezing copies, sticky
/// sessions, the language majority, several copies): the simulation's 99.9 %
/// interval holds the closed form.
#[test]
fn the_simulation_and_the_closed_form_agree_on_sticky_lossy_and_repeated_rounds() {
    // A language checker that leaves some replies undetermined, as the
    // real one does: the machine reads that as silence.
    let unsure = Detector {
        recall: 0.8,
        undetermined_degraded: 0.15,
        fpr: 0.01,
        undetermined_clean: 0.1,
    };
    let mut lossy_unsure =
        scenario_of(ContractName::Language, 0.2, false, 0.1, Repeats::uniform(2));
    lossy_unsure.detectors = detectors_with(ContractName::Language, unsure);
    let mut sticky_unsure =
        scenario_of(ContractName::Language, 0.1, true, 0.05, Repeats::uniform(3));
    sticky_unsure.detectors = detectors_with(ContractName::Language, unsure);
    let cases = [
        lossy_unsure,
        sticky_unsure,
        scenario_of(ContractName::Language, 0.16, true, 0.1, Repeats::uniform(2)),
        scenario_of(ContractName::Language, 0.3, false, 0.0, Repeats::uniform(3)),
        scenario_of(
            ContractName::JunkPrefix,
            0.05,
            false,
            0.2,
            Repeats::uniform(2),
        ),
        scenario_of(
            ContractName::Schema,
            0.1,
            true,
            0.05,
            Repeats::default().with(crate::evidence::ProbeKind::Schema, 4),
        ),
    ];
    for s in cases {
        let rounds = s.rounds_in(DAY);
        let runs = sim::trials(&s, RouteHealth::Degraded, 1500, rounds, 7);
        let k = runs.iter().filter(|r| r.is_some()).count() as u64;
        let ci = cb_stats::wilson(k, 1500, 0.999);
        let closed = chain::within(degraded_odds(&s), 2, rounds);
        assert!(
            ci.lo <= closed && closed <= ci.hi,
            "{s:?}: simulated {k}/1500 {ci:?}, closed {closed}"
        );
    }
}

/// A checker that flags clean replies quarantines healthy routes, as often
/// as the chain says; one that never does, never.
#[test]
fn false_positives_quarantine_healthy_routes_as_the_chain_says() {
    let mut s = scenario_of(ContractName::Schema, 0.0, false, 0.0, Repeats::default());
    s.detectors = detectors_with(ContractName::Schema, Detector::deciding(1.0, 0.05));
    let rounds = s.rounds_in(DAY * 7);
    let runs = sim::trials(&s, RouteHealth::Healthy, 1500, rounds, 9);
    let k = runs.iter().filter(|r| r.is_some()).count() as u64;
    let ci = cb_stats::wilson(k, 1500, 0.999);
    let closed = chain::within(healthy_odds(&s, |c| s.detector(c)), 2, rounds);
    assert!(closed > 0.3, "{closed}");
    assert!(
        ci.lo <= closed && closed <= ci.hi,
        "simulated {k}/1500 {ci:?}, closed {closed}"
    );
    s.detectors.clear();
    let runs = sim::trials(&s, RouteHealth::Healthy, 200, rounds, 9);
    assert!(runs.iter().all(Option::is_none));
}

/// The budget is the smallest that reaches the target: one copy fewer
/// misses it, and the simulation at the budget reaches it.
#[test]
fn the_budget_is_the_smallest_that_catches_the_target_in_time() {
    let s = settings(1000);
    let detectors = BTreeMap::new();
    let incidence = Incidence {
        share: 0.05,
        sticky: false,
    };
    let b = budget(&s, &detectors, ContractName::Schema, incidence);
    let n = b.copies.unwrap();
    assert!(n > 1 && b.within >= 0.9, "{b:?}");
    let fewer = budget(
        &Settings {
            confidence: b.within + 1e-9,
            ..s.clone()
        },
        &detectors,
        ContractName::Schema,
        incidence,
    );
    assert!(fewer.copies.unwrap() > n || b.within >= 1.0);
    let below = scenario(
        &s,
        &detectors,
        ContractName::Schema,
        incidence,
        Repeats::default().for_contract(ContractName::Schema, n - 1),
    );
    assert!(chain::within(degraded_odds(&below), 2, below.rounds_in(DAY)) < 0.9);
    let at = scenario(
        &s,
        &detectors,
        ContractName::Schema,
        incidence,
        b.repeats.unwrap(),
    );
    let runs = sim::trials(&at, RouteHealth::Degraded, 1000, at.rounds_in(DAY), 3);
    let k = runs.iter().filter(|r| r.is_some()).count() as u64;
    assert!(cb_stats::wilson(k, 1000, 0.999).hi >= 0.9, "{k}/1000");
    // A language fault in 1 % of replies is out of reach of any budget.
    let rare = budget(
        &s,
        &detectors,
        ContractName::Language,
        Incidence {
            share: 0.01,
            sticky: false,
        },
    );
    assert_eq!(rare.copies, None);
}

/// The minimum incidence the canary reports is the edge: caught in time at
/// it, not a little below it.
#[test]
fn the_minimum_incidence_is_where_the_target_is_just_met() {
    let detectors = BTreeMap::new();
    let half_hour = Duration::from_secs(1800);
    let floor = |contract, sticky| {
        minimum_incidence(
            contract,
            sticky,
            Repeats::default(),
            &detectors,
            half_hour,
            DAY,
            0.9,
        )
        .unwrap()
    };
    for (contract, sticky) in [
        (ContractName::Schema, false),
        (ContractName::Language, false),
        (ContractName::Language, true),
    ] {
        let p = floor(contract, sticky);
        let at = |share| {
            let mut s = scenario_of(contract, share, sticky, 0.0, Repeats::default());
            s.detectors = detectors.clone();
            chain::within(degraded_odds(&s), 2, s.rounds_in(DAY))
        };
        assert!(
            at(p) >= 0.9 && at(p * 0.98) < 0.9,
            "{contract:?} {sticky}: {p}"
        );
    }
    // Sticky faults are easier: the confirmations stay in the session.
    let plain = floor(ContractName::Language, false);
    let sticky = floor(ContractName::Language, true);
    assert!(sticky < plain, "{sticky} {plain}");
}
