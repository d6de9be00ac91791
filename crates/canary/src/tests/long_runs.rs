//! Seeded long runs: transport noise, a restart from the state file, and the
//! speed of a two-week replay.

use super::*;

// ---- seeded long runs ----

/// Evidence of round `i` of a seeded world: `healthy-*` routes fine, `flaky`
/// fine but with frequent transport errors, every route with transport
/// errors at `transport_rate`; `junk` prefixes junk in about 19 of 20
/// replies when `degraded` is set.
fn seeded_world(seed: u64, i: u64, transport_rate: f64, degraded: bool) -> Vec<RouteEvidence> {
    let mut rng = cb_base::seed::rng(seed, "canary-tests-world", i);
    let mut names = vec!["flaky", "healthy-1", "healthy-2", "healthy-3", "healthy-4"];
    if degraded {
        names.push("junk");
    }
    names
        .into_iter()
        .map(|name| {
            let mut e = if name == "junk" && rng.random_bool(0.95) {
                fail(name, ContractName::JunkPrefix)
            } else {
                pass(name)
            };
            let rate = if name == "flaky" { 0.3 } else { transport_rate };
            // Each probe draws its own transport error: a frozen probe
            // leaves the round with the other probes' replies only.
            let probes: Vec<ProbeKind> = e.probes.iter().map(|p| p.probe).collect();
            for probe in probes {
                if rng.random_bool(rate) {
                    e.probes.retain(|p| p.probe != probe);
                    e.freeze_probe(
                        probe,
                        TransportError {
                            kind: if rng.random_bool(0.5) {
                                TransportKind::RateLimited
                            } else {
                                TransportKind::ServerError
                            },
                            detail: "injected".into(),
                        },
                    );
                }
            }
            e
        })
        .collect()
}

#[test]
fn transport_errors_at_ten_percent_never_quarantine_a_healthy_route() {
    for seed in [1, 2, 3] {
        let mut sim = Sim::new(enforce());
        for i in 0..200 {
            sim.round(&seeded_world(seed, i, 0.10, false));
        }
        assert!(
            sim.log.iter().all(|r| r.kind == RecordKind::Frozen),
            "seed {seed}: {:?}",
            sim.log.iter().find(|r| r.kind != RecordKind::Frozen)
        );
        // About 140 frozen route-rounds: 30 % of flaky's, 10 % of the others'.
        assert!(sim.kinds(RecordKind::Frozen).len() > 100);
    }
}

#[test]
fn a_degraded_route_is_still_caught_through_ten_percent_transport_errors() {
    let mut sim = Sim::new(enforce());
    for i in 0..200 {
        sim.round(&seeded_world(1, i, 0.10, true));
    }
    let q = sim.kinds(RecordKind::Quarantine);
    assert_eq!(q.len(), 3, "1 d, 3 d, then 7 d within 100 hours");
    assert!(q
        .iter()
        .all(|r| r.route == "junk" && r.contract == Some(ContractName::JunkPrefix)));
    assert!(q[0].round <= 5, "caught late, at round {}", q[0].round);
}

/// A mixed world for the replay tests, with a control and a manual release.
fn replay_world(i: u64) -> Vec<RouteEvidence> {
    let mut world = seeded_world(9, i, 0.1, true);
    let mut rng = cb_base::seed::rng(9, "canary-tests-replay", i);
    let mixer = if rng.random_bool(0.6) {
        fail("mixer", ContractName::Language)
    } else if rng.random_bool(0.5) {
        undetermined("mixer", ContractName::Language)
    } else {
        pass("mixer")
    };
    world.push(mixer);
    world.push(if rng.random_bool(0.9) {
        control_trips("ctl")
    } else {
        pass("ctl")
    });
    world
}

fn replay_policy(i: u64) -> Policy {
    Policy {
        control: Some("ctl".into()),
        enforce: i >= 100,
        ..Policy::default()
    }
}

/// Rounds `range` of the replay world on `machine`, with a manual release of
/// `junk` at round 250; returns the log lines.
fn replay(machine: &mut Machine, range: std::ops::Range<u64>) -> Vec<String> {
    let mut lines = Vec::new();
    for i in range {
        let now = t0().plus(HALF_HOUR * i as u32);
        if i == 250 {
            if let Ok(r) = machine.release("junk", now) {
                lines.push(r.to_json_line().unwrap());
            }
        }
        let d = machine.round(now, &replay_world(i), &replay_policy(i));
        lines.extend(d.records.iter().map(|r| r.to_json_line().unwrap()));
    }
    lines
}

#[test]
fn a_restart_from_the_state_file_decides_as_an_uninterrupted_run() {
    let mut whole = Machine::new();
    let uninterrupted = replay(&mut whole, 0..400);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("canary-state.json");
    let mut first = Machine::new();
    let mut lines = replay(&mut first, 0..137);
    state::save(&path, first.state()).unwrap();
    drop(first);
    let mut restarted = Machine::from_state(state::load(&path).unwrap());
    lines.extend(replay(&mut restarted, 137..400));

    assert_eq!(lines, uninterrupted);
    assert_eq!(restarted.state(), whole.state());
    // The scenario exercised what a restart must carry over.
    let all = uninterrupted.join("");
    for kind in [
        "quarantine",
        "early_release",
        "manual_release",
        "probe_weak",
        "mode_change",
    ] {
        assert!(
            all.contains(&format!("\"kind\":\"{kind}\"")),
            "no {kind} in the replay"
        );
    }
}

#[test]
fn two_weeks_of_half_hour_rounds_replay() {
    let rounds = 14 * 48;
    let worlds: Vec<Vec<RouteEvidence>> = (0..rounds).map(replay_world).collect();
    let policy = replay_policy(0);
    let mut machine = Machine::new();
    let mut records = 0;
    for (i, world) in worlds.iter().enumerate() {
        let now = t0().plus(HALF_HOUR * i as u32);
        records += machine.round(now, world, &policy).records.len();
    }
    assert!(records > 0);
    assert_eq!(machine.state().rounds, rounds);
    // How fast this is belongs to a benchmark (`cargo bench --bench
    // canary_replay` prints it); a test asserts what was decided, never how
    // long the machine took to decide it.
}
