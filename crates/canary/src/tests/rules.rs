//! One test (or a few) per quarantine rule, on hand-written rounds.

use super::*;

// ---- the 2-round rule ----

#[test]
fn two_consecutive_failures_of_one_contract_quarantine_naming_it() {
    let mut sim = Sim::new(enforce());
    let junk =
        |s: &mut Sim| s.round(&[fail("bad", ContractName::JunkPrefix), pass("a"), pass("b")]);
    let d1 = junk(&mut sim);
    assert!(d1.records.is_empty(), "{:?}", d1.records);
    assert!(!sim.quarantined("bad"));
    let at = sim.now;
    let d2 = junk(&mut sim);
    assert_eq!(kinds(&d2), [("bad".to_string(), RecordKind::Quarantine)]);
    let r = &d2.records[0];
    assert_eq!(r.contract, Some(ContractName::JunkPrefix));
    assert_eq!(r.mode, Mode::Enforce);
    assert_eq!(r.action, "quarantine");
    assert_eq!(r.until, Some(at.plus(DAY)));
    assert_eq!(r.time, at);
    assert!(
        r.evidence
            .contains("junk_prefix broke; roleplay probe: junk_prefix broke"),
        "{}",
        r.evidence
    );
    assert!(sim.quarantined("bad"));
    assert!(!sim.quarantined("a") && !sim.quarantined("b"));
}

/// The design: "a route is quarantined after 2 consecutive failing rounds
/// (any contract; the evidence says which)". A route broken a different
/// way each round is still the same route failing two rounds running.
#[test]
fn two_consecutive_failing_rounds_of_any_contracts_quarantine_the_route() {
    let mut sim = Sim::new(enforce());
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    assert!(!sim.quarantined("bad"));
    let d = sim.round(&[fail("bad", ContractName::Refusal), pass("a"), pass("b")]);
    assert_eq!(kinds(&d), [("bad".to_string(), RecordKind::Quarantine)]);
    let r = &d.records[0];
    // The evidence lists which contracts, round by round.
    assert!(
        r.evidence
            .starts_with("failed schema, refusal in 2 consecutive rounds"),
        "{}",
        r.evidence
    );
    assert!(
        r.evidence
            .contains("schema probe: schema broke; roleplay probe: refusal broke"),
        "{}",
        r.evidence
    );
    let q = sim
        .machine
        .route("bad")
        .unwrap()
        .quarantine
        .clone()
        .unwrap();
    assert_eq!(q.contracts, [ContractName::Schema, ContractName::Refusal]);
    // The per-contract detail is kept for the log: each ran one round.
    let mut sim = Sim::new(enforce());
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    let state = sim.machine.route("bad").unwrap();
    assert_eq!(state.failing[&ContractName::Schema].rounds, 1);
    assert_eq!(state.streak.rounds, 1);
}

#[test]
fn a_pass_between_two_failures_starts_the_count_again() {
    let mut sim = Sim::new(enforce());
    for e in [
        fail("bad", ContractName::Schema),
        pass("bad"),
        fail("bad", ContractName::Schema),
    ] {
        sim.round(&[e, pass("a"), pass("b")]);
    }
    assert!(!sim.quarantined("bad"));
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    assert!(sim.quarantined("bad"));
}

#[test]
fn undetermined_and_frozen_rounds_neither_advance_nor_reset() {
    let mut sim = Sim::new(enforce());
    let others = [pass("a"), pass("b")];
    let round = |s: &mut Sim, e: RouteEvidence| {
        let mut all = vec![e];
        all.extend(others.iter().cloned());
        s.round(&all)
    };
    for _ in 0..5 {
        round(&mut sim, transport("bad"));
        round(&mut sim, undetermined("bad", ContractName::Language));
    }
    assert!(!sim.quarantined("bad"));
    assert_eq!(sim.kinds(RecordKind::Frozen).len(), 5);
    round(&mut sim, fail("bad", ContractName::Language));
    round(&mut sim, transport("bad"));
    round(&mut sim, undetermined("bad", ContractName::Language));
    assert!(!sim.quarantined("bad"));
    round(&mut sim, fail("bad", ContractName::Language));
    assert!(sim.quarantined("bad"));
}

#[test]
fn a_reply_from_another_route_is_never_scored_against_this_one() {
    let mut sim = Sim::new(enforce());
    for _ in 0..4 {
        let mut e = fail("bad", ContractName::Schema);
        e.served_by_other = Some("a".into());
        let d = sim.round(&[e, pass("a"), pass("b")]);
        assert_eq!(
            kinds(&d),
            [("bad".to_string(), RecordKind::PinningNotHonoured)]
        );
        assert!(d.records[0].evidence.contains("came from a"));
    }
    assert!(!sim.quarantined("bad"));
}

// ---- release ----

#[test]
fn two_clean_rounds_lift_a_quarantine_early() {
    let mut sim = Sim::new(enforce());
    let all = |bad: RouteEvidence| vec![bad, pass("a"), pass("b")];
    sim.round(&all(fail("bad", ContractName::Empty)));
    sim.round(&all(fail("bad", ContractName::Empty)));
    assert!(sim.quarantined("bad"));
    // Still failing while quarantined: nothing new, still probed.
    let d = sim.round(&all(fail("bad", ContractName::Empty)));
    assert!(d.records.is_empty());
    sim.round(&all(pass("bad")));
    // An undetermined contract is not a pass: the clean run starts over.
    sim.round(&all(undetermined("bad", ContractName::Truncated)));
    sim.round(&all(pass("bad")));
    assert!(sim.quarantined("bad"));
    // A frozen round does not break the run either.
    sim.round(&all(transport("bad")));
    let d = sim.round(&all(pass("bad")));
    assert_eq!(kinds(&d), [("bad".to_string(), RecordKind::EarlyRelease)]);
    assert_eq!(d.records[0].contract, Some(ContractName::Empty));
    assert!(!sim.quarantined("bad"));
    // The history stays: the next quarantine is the second step.
    assert_eq!(sim.machine.route("bad").unwrap().quarantines, 1);
}

#[test]
fn a_quarantine_ends_when_its_time_is_up() {
    let mut sim = Sim::new(enforce());
    sim.round(&[fail("bad", ContractName::Ttft), pass("a"), pass("b")]);
    sim.round(&[fail("bad", ContractName::Ttft), pass("a"), pass("b")]);
    sim.advance(DAY - HALF_HOUR * 2);
    let d = sim.round(&[fail("bad", ContractName::Ttft), pass("a"), pass("b")]);
    assert!(d.records.is_empty(), "{:?}", d.records);
    let d = sim.round(&[fail("bad", ContractName::Ttft), pass("a"), pass("b")]);
    assert_eq!(kinds(&d), [("bad".to_string(), RecordKind::Expiry)]);
    // After a release the count starts over: one failing round is not enough.
    assert!(!sim.quarantined("bad"));
}

#[test]
fn a_person_can_release_a_quarantine() {
    let mut sim = Sim::new(enforce());
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    assert_eq!(
        sim.machine.release("a", sim.now),
        Err(ReleaseError::NotQuarantined("a".into()))
    );
    assert_eq!(
        sim.machine.release("zzz", sim.now),
        Err(ReleaseError::UnknownRoute("zzz".into()))
    );
    let r = sim.machine.release("bad", sim.now).unwrap();
    assert_eq!(r.kind, RecordKind::ManualRelease);
    assert_eq!(r.contract, Some(ContractName::Schema));
    assert_eq!(r.mode, Mode::Enforce);
    assert_eq!(r.time, sim.now);
    assert!(r.evidence.contains("23h 30m left"), "{}", r.evidence);
    assert!(!sim.quarantined("bad"));
    let line = r.to_json_line().unwrap();
    assert!(line.contains("\"kind\":\"manual_release\""), "{line}");
}

// ---- escalation ----

/// Quarantine lengths of a route that fails `Schema` every round for `days`.
fn lengths_of_an_always_failing_route(days: u64) -> Vec<Duration> {
    let mut sim = Sim::new(enforce());
    let rounds = days * 48;
    for _ in 0..rounds {
        sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    }
    sim.kinds(RecordKind::Quarantine)
        .iter()
        .map(|r| r.until.unwrap().since(r.time))
        .collect()
}

#[test]
fn quarantines_escalate_one_three_seven_days() {
    // 17 days hold four quarantines: 0.5 h + 1 d + 3 d + 7 d + 7 d, with a
    // round of re-counting after each expiry.
    let lengths = lengths_of_an_always_failing_route(17);
    assert_eq!(lengths, [DAY, DAY * 3, DAY * 7, DAY * 7]);
}

#[test]
fn fourteen_quiet_days_reset_the_history() {
    let quarantine_then_release = |sim: &mut Sim| {
        for _ in 0..2 {
            sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
        }
        for _ in 0..2 {
            sim.round(&[pass("bad"), pass("a"), pass("b")]);
        }
        assert!(!sim.quarantined("bad"));
    };
    let length_of_next = |sim: &mut Sim| {
        for _ in 0..2 {
            sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
        }
        let q = sim
            .machine
            .route("bad")
            .unwrap()
            .quarantine
            .clone()
            .unwrap();
        q.until.since(q.since)
    };

    // 13 days after the first began: the second lasts 3 days.
    let mut sim = Sim::new(enforce());
    let began = sim.now.plus(HALF_HOUR);
    quarantine_then_release(&mut sim);
    sim.advance(DAY * 13 - sim.now.since(began) - HALF_HOUR * 2);
    assert_eq!(length_of_next(&mut sim), DAY * 3);
    assert!(sim.kinds(RecordKind::HistoryReset).is_empty());

    // 14 days: the history resets (logged) and the next lasts 1 day.
    let mut sim = Sim::new(enforce());
    let began = sim.now.plus(HALF_HOUR);
    quarantine_then_release(&mut sim);
    sim.advance(DAY * 14 - sim.now.since(began));
    let d = sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    assert_eq!(kinds(&d), [("bad".to_string(), RecordKind::HistoryReset)]);
    let q = {
        sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
        sim.machine
            .route("bad")
            .unwrap()
            .quarantine
            .clone()
            .unwrap()
    };
    assert_eq!(q.until.since(q.since), DAY);
    assert_eq!(q.step, 1);
}

// ---- the capacity floor ----

#[test]
fn the_capacity_floor_turns_the_second_quarantine_into_an_alert() {
    let mut sim = Sim::new(enforce());
    let round = |s: &mut Sim| {
        s.round(&[
            fail("x-bad", ContractName::JunkPrefix),
            fail("y-bad", ContractName::Language),
            pass("z-good"),
        ])
    };
    round(&mut sim);
    let d = round(&mut sim);
    assert_eq!(
        kinds(&d),
        [
            ("x-bad".to_string(), RecordKind::Quarantine),
            ("y-bad".to_string(), RecordKind::CapacityAlert),
        ]
    );
    let alert = d.alerts().next().unwrap();
    assert_eq!(alert.contract, Some(ContractName::Language));
    assert_eq!(alert.healthy_routes, ["z-good"]);
    assert!(
        alert.evidence.contains("below the floor of 2"),
        "{}",
        alert.evidence
    );
    assert!(sim.quarantined("x-bad") && !sim.quarantined("y-bad"));
    // The alert repeats while the route keeps failing and the floor holds.
    let d = round(&mut sim);
    assert_eq!(
        kinds(&d),
        [("y-bad".to_string(), RecordKind::CapacityAlert)]
    );
    let ignore = IgnoreList::merged(&[], &[], &sim.machine, sim.now, Mode::Enforce);
    assert_eq!(ignore.provider.ignore, ["x-bad"]);
}

#[test]
fn the_floor_counts_routes_released_in_the_same_round() {
    let mut sim = Sim::new(enforce());
    sim.round(&[fail("a", ContractName::Empty), pass("b"), pass("c")]);
    sim.round(&[
        fail("a", ContractName::Empty),
        pass("b"),
        fail("c", ContractName::Schema),
    ]);
    assert!(sim.quarantined("a"));
    // a passes its second clean round as c fails its second round: a is
    // released first, so c can be quarantined.
    let d = sim.round(&[pass("a"), pass("b"), fail("c", ContractName::Schema)]);
    assert!(d.alerts().next().is_some(), "a still quarantined here");
    let d = sim.round(&[pass("a"), pass("b"), fail("c", ContractName::Schema)]);
    assert_eq!(
        kinds(&d),
        [
            ("a".to_string(), RecordKind::EarlyRelease),
            ("c".to_string(), RecordKind::Quarantine),
        ]
    );
}

// ---- observe mode ----

#[test]
fn observe_mode_logs_every_decision_and_enforces_nothing() {
    let script = |sim: &mut Sim| {
        let mut out = Vec::new();
        for i in 0..12 {
            let bad = if i < 3 {
                fail("bad", ContractName::Refusal)
            } else {
                pass("bad")
            };
            let d = sim.round(&[bad, fail("worse", ContractName::Schema), pass("good")]);
            out.push(kinds(&d));
        }
        out
    };
    let mut observe = Sim::new(Policy::default());
    let mut enforced = Sim::new(enforce());
    // The same decisions, in the same order, in both modes.
    assert_eq!(script(&mut observe), script(&mut enforced));
    assert!(!observe.log.is_empty());
    assert!(observe.log.iter().all(|r| r.mode == Mode::Observe));
    let q = observe.kinds(RecordKind::Quarantine);
    let routes: Vec<&str> = q.iter().map(|r| r.route.as_str()).collect();
    assert_eq!(routes, ["bad", "worse"]);
    assert_eq!(q[0].action, "would quarantine");
    let released = observe.kinds(RecordKind::EarlyRelease);
    assert_eq!(released[0].action, "would release (clean rounds)");
    assert_eq!(observe.kinds(RecordKind::CapacityAlert).len(), 3);
    // The would-be quarantine is tracked, and nothing is enforced.
    assert!(observe.quarantined("worse"));
    let list = |sim: &Sim| IgnoreList::merged(&[], &[], &sim.machine, sim.now, sim.policy.mode());
    assert!(list(&observe).provider.ignore.is_empty());
    assert_eq!(list(&enforced).provider.ignore, ["worse"]);
}

#[test]
fn switching_to_enforce_logs_the_tracked_quarantines() {
    let mut sim = Sim::new(Policy::default());
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    sim.policy.enforce = true;
    let d = sim.round(&[fail("bad", ContractName::Schema), pass("a"), pass("b")]);
    assert_eq!(kinds(&d), [("bad".to_string(), RecordKind::ModeChange)]);
    assert_eq!(d.records[0].mode, Mode::Enforce);
    let list = IgnoreList::merged(&[], &[], &sim.machine, sim.now, Mode::Enforce);
    assert_eq!(list.provider.ignore, ["bad"]);
}

// ---- the positive control ----

#[test]
fn a_passing_control_makes_the_filter_probe_weak_for_every_route() {
    let policy = Policy {
        control: Some("ctl".into()),
        ..enforce()
    };
    let mut sim = Sim::new(policy);
    let all = |bad: RouteEvidence, ctl: RouteEvidence| vec![bad, ctl, pass("a"), pass("b")];
    sim.round(&all(
        fail("bad", ContractName::Schema),
        control_trips("ctl"),
    ));
    sim.round(&all(
        fail("bad", ContractName::Schema),
        control_trips("ctl"),
    ));
    assert!(sim.quarantined("bad"));
    // The control stops filtering: the roleplay probe is weak. bad passes
    // everything, but its roleplay passes are no evidence of health.
    for _ in 0..4 {
        let d = sim.round(&all(pass("bad"), pass("ctl")));
        assert_eq!(d.weak_probes, [ProbeKind::Roleplay]);
        let weak = d.of_kind(RecordKind::ProbeWeak).next().unwrap();
        assert_eq!(weak.route, "ctl");
        assert_eq!(weak.probe, Some(ProbeKind::Roleplay));
        assert!(
            weak.evidence.contains("known to filter"),
            "{}",
            weak.evidence
        );
        assert!(d.routes.iter().all(|r| !r.clean));
    }
    assert!(sim.quarantined("bad"), "weak passes lifted a quarantine");
    // Failures on a weak probe still count.
    let a_fails = || {
        vec![
            fail("a", ContractName::JunkPrefix),
            pass("b"),
            pass("bad"),
            pass("ctl"),
        ]
    };
    sim.round(&a_fails());
    let d = sim.round(&a_fails());
    assert!(d.of_kind(RecordKind::CapacityAlert).any(|r| r.route == "a"));
    assert!(sim.quarantined("bad"));
    // The control filters again: two clean rounds release.
    sim.round(&all(pass("bad"), control_trips("ctl")));
    let d = sim.round(&all(pass("bad"), control_trips("ctl")));
    assert!(d.weak_probes.is_empty());
    assert_eq!(kinds(&d), [("bad".to_string(), RecordKind::EarlyRelease)]);
    // The control itself, failing refusal every round, is never scored.
    assert!(sim.machine.route("ctl").is_none());
}

#[test]
fn an_unreadable_control_leaves_the_probe_unverified() {
    let policy = Policy {
        control: Some("ctl".into()),
        ..enforce()
    };
    let mut sim = Sim::new(policy);
    let d = sim.round(&[pass("a"), pass("b"), transport("ctl")]);
    assert_eq!(d.weak_probes, [ProbeKind::Roleplay]);
    let d = sim.round(&[pass("a"), pass("b")]);
    assert_eq!(d.weak_probes, [ProbeKind::Roleplay]);
    assert!(d
        .of_kind(RecordKind::ProbeWeak)
        .next()
        .unwrap()
        .evidence
        .contains("not probed"));
}

// ---- language re-check ----

#[test]
fn a_failed_language_is_asked_again_until_it_passes() {
    let mut sim = Sim::new(enforce());
    let first = sim.machine.language_for("bad");
    assert_eq!(first, ROTATION[1]);
    let mut e = fail("bad", ContractName::Language);
    e.language = Some(first);
    sim.round(&[e, pass("a"), pass("b")]);
    assert_eq!(sim.machine.language_for("bad"), first);
    assert_eq!(sim.machine.language_for("a"), ROTATION[2]);
    // A frozen round keeps the re-check; an undetermined one too.
    sim.round(&[transport("bad"), pass("a"), pass("b")]);
    let mut e = undetermined("bad", ContractName::Language);
    e.language = Some(first);
    sim.round(&[e, pass("a"), pass("b")]);
    assert_eq!(sim.machine.language_for("bad"), first);
    let mut e = fail("bad", ContractName::Language);
    e.language = Some(first);
    sim.round(&[e, pass("a"), pass("b")]);
    assert!(
        sim.quarantined("bad"),
        "the rotation did not dodge the rule"
    );
    let mut e = pass("bad");
    e.language = Some(first);
    sim.round(&[e, pass("a"), pass("b")]);
    assert_ne!(sim.machine.language_for("bad"), first);
}
