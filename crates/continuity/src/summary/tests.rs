//! Summaries of hand-built rows: rates with their counts and intervals,
//! groupings, stages, context bleed, upstream attempts and retry storms,
//! and CLO, checked against figures worked out by hand.

use super::build::MAX_BLEED_EXAMPLES;
use super::*;
use crate::record::{EventRecord, Stage};
use cb_base::record::{AttemptRecord, TurnRecord};
use cb_faults::{FaultMode, Role};
use cb_scoring::{Verdict, VerdictMethod};
use cb_stats::{wilson, PERCENTILE_METHOD};

fn ctx(systems: &[&str]) -> SummaryContext {
    SummaryContext {
        seed: 42,
        runs: 2,
        conversations: 3,
        dataset: "datasets/test.jsonl".into(),
        fault_profile: "fault_profiles/test.toml".into(),
        systems: systems.iter().map(|s| s.to_string()).collect(),
        bootstrap_resamples: 1000,
        notes: vec!["a note".into()],
        interrupted: false,
        interrupted_by: None,
        shard: None,
        merged_shards: None,
        requests_in_flight: Vec::new(),
    }
}

#[allow(clippy::too_many_arguments)]
fn event(
    run: u32,
    system: &str,
    conversation: &str,
    turns: u32,
    fault_mode: FaultMode,
    status: Option<u16>,
    latency_ms: f64,
    verdict: Verdict,
) -> EventRecord {
    EventRecord {
        fault_mode,
        client_status: status,
        latency_ms,
        verdict,
        method: if verdict == Verdict::Undetermined {
            VerdictMethod::Judge
        } else {
            VerdictMethod::FastPath
        },
        answer_excerpt: format!("answer {run} {conversation}"),
        ..crate::record::fixture::event(run, system, conversation, turns)
    }
}

fn attempt(
    run: u32,
    system: &str,
    role: Role,
    conversation: &str,
    turn: u32,
    arrived_ms: f64,
    status: Option<u16>,
) -> AttemptRecord {
    AttemptRecord {
        status,
        ..cb_testkit::record::attempt(run, system, role, conversation, turn, arrived_ms)
    }
}

use FaultMode::{ApiError, RateLimit, Timeout};
use Verdict::{Error, Lost, Preserved, Undetermined};

/// 2 systems × 2 runs × 3 conversations (c1: 7 turns, c2: 9, c3: 7).
fn events() -> Vec<EventRecord> {
    let ok = Some(200);
    let mut e = vec![
        // history: 5 preserved, 1 error (504).
        event(1, "history", "c1", 7, Timeout, ok, 1000.0, Preserved),
        event(1, "history", "c2", 9, ApiError, ok, 1200.0, Preserved),
        event(1, "history", "c3", 7, RateLimit, ok, 900.0, Preserved),
        event(2, "history", "c1", 7, ApiError, ok, 1100.0, Preserved),
        event(2, "history", "c2", 9, Timeout, Some(504), 30000.0, Error),
        event(2, "history", "c3", 7, Timeout, ok, 800.0, Preserved),
        // stateless: 1 preserved, 3 lost, 1 undetermined, 1 error (none).
        event(1, "stateless", "c1", 7, Timeout, ok, 700.0, Lost),
        event(1, "stateless", "c2", 9, ApiError, ok, 1000.0, Preserved),
        event(1, "stateless", "c3", 7, RateLimit, ok, 950.0, Lost),
        event(2, "stateless", "c1", 7, ApiError, ok, 600.0, Undetermined),
        event(2, "stateless", "c2", 9, Timeout, ok, 500.0, Lost),
        event(2, "stateless", "c3", 7, Timeout, None, 30000.0, Error),
    ];
    e[8].bleed_from = "c2".into();
    e[10].bleed_from = "c1;c3".into();
    // Completion order, not run order.
    e.reverse();
    e
}

fn attempts() -> Vec<AttemptRecord> {
    vec![
        // history run 1 c1 (final turn 7): primary, then fallback 429 twice, then ok.
        attempt(1, "history", Role::Primary, "c1", 7, 100.0, None),
        attempt(1, "history", Role::Fallback, "c1", 7, 150.0, Some(429)),
        attempt(1, "history", Role::Fallback, "c1", 7, 400.0, Some(429)),
        attempt(1, "history", Role::Fallback, "c1", 7, 1000.0, Some(200)),
        // An earlier turn of the same conversation: not a final-turn attempt.
        attempt(1, "history", Role::Primary, "c1", 6, 50.0, Some(200)),
        // history run 1 c2: primary + fallback, listed out of order.
        attempt(1, "history", Role::Fallback, "c2", 9, 330.0, Some(200)),
        attempt(1, "history", Role::Primary, "c2", 9, 300.0, Some(500)),
        // Another system's attempt for the same conversation.
        attempt(1, "stateless", Role::Primary, "c1", 7, 10.0, None),
    ]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn rates_and_counts() {
    let s = summarize(&ctx(&["history", "stateless"]), &events(), &[], &attempts());
    assert_eq!(s.tool, "continuity-bench");
    assert_eq!(s.percentile_method, PERCENTILE_METHOD);
    assert_eq!(s.confidence, 0.95);
    assert_eq!(s.notes, vec!["a note".to_string()]);
    let h = &s.systems[0];
    assert_eq!(h.name, "history");
    assert_eq!(h.events, 6);
    assert_eq!(
        h.verdicts,
        VerdictCounts {
            preserved: 5,
            lost: 0,
            error: 1,
            undetermined: 0,
            by_fast_path: 6,
            by_judge: 0
        }
    );
    assert_eq!((h.cpr.successes, h.cpr.trials), (5, 6));
    assert!(close(h.cpr.rate.unwrap(), 5.0 / 6.0));
    assert_eq!(h.cpr.wilson, Some(wilson(5, 6, 0.95)));
    assert_eq!((h.availability.successes, h.availability.trials), (5, 6));
    assert_eq!(
        (h.conditional_cpr.successes, h.conditional_cpr.trials),
        (5, 5)
    );

    let st = &s.systems[1];
    assert_eq!(st.verdicts.preserved, 1);
    assert_eq!(st.verdicts.lost, 3);
    assert_eq!(st.verdicts.undetermined, 1);
    assert_eq!(st.verdicts.error, 1);
    assert_eq!((st.verdicts.by_fast_path, st.verdicts.by_judge), (5, 1));
    // Undetermined and errors count as not preserved.
    assert_eq!((st.cpr.successes, st.cpr.trials), (1, 6));
    assert_eq!((st.availability.successes, st.availability.trials), (5, 6));
    assert_eq!(
        (st.conditional_cpr.successes, st.conditional_cpr.trials),
        (1, 5)
    );
    assert!(close(st.conditional_cpr.rate.unwrap(), 0.2));
}

#[test]
fn wilson_bounds_are_the_published_formula() {
    // Wilson(5, 6) at 95 %: [0.4365, 0.9699] (closed form, z = 1.959964).
    let s = summarize(&ctx(&["history"]), &events(), &[], &[]);
    let w = s.systems[0].cpr.wilson.unwrap();
    assert!((w.lo - 0.4365).abs() < 5e-4, "{w:?}");
    assert!((w.hi - 0.9699).abs() < 5e-4, "{w:?}");
}

#[test]
fn groups() {
    let s = summarize(&ctx(&["history", "stateless"]), &events(), &[], &[]);
    let h = &s.systems[0];
    let keys: Vec<&str> = h.cpr_per_run.iter().map(|g| g.key.as_str()).collect();
    assert_eq!(keys, ["1", "2"]);
    assert_eq!(h.cpr_per_run[0].rate.successes, 3);
    assert_eq!(h.cpr_per_run[1].rate.successes, 2);
    assert!(close(h.cpr_run_min.unwrap(), 2.0 / 3.0));
    assert!(close(h.cpr_run_max.unwrap(), 1.0));

    let faults: Vec<(&str, u64, u64)> = h
        .cpr_by_fault
        .iter()
        .map(|g| (g.key.as_str(), g.rate.successes, g.rate.trials))
        .collect();
    assert_eq!(
        faults,
        [("TIMEOUT", 2, 3), ("API_ERROR", 2, 2), ("RATE_LIMIT", 1, 1)]
    );
    let lengths: Vec<(&str, u64, u64)> = h
        .cpr_by_length
        .iter()
        .map(|g| (g.key.as_str(), g.rate.successes, g.rate.trials))
        .collect();
    assert_eq!(lengths, [("7", 4, 4), ("9", 1, 2)]);
}

#[test]
fn lengths_sort_numerically() {
    let ev = vec![
        event(1, "x", "a", 11, Timeout, Some(200), 1.0, Preserved),
        event(1, "x", "b", 9, Timeout, Some(200), 1.0, Lost),
    ];
    let s = summarize(&ctx(&["x"]), &ev, &[], &[]);
    let keys: Vec<&str> = s.systems[0]
        .cpr_by_length
        .iter()
        .map(|g| g.key.as_str())
        .collect();
    assert_eq!(keys, ["9", "11"]);
}

#[test]
fn clo_pairs_only_when_both_answered() {
    let s = summarize(&ctx(&["history", "stateless"]), &events(), &[], &[]);
    let clo = s.clo.expect("both reference systems ran");
    assert_eq!(clo.treatment, "history");
    assert_eq!(clo.baseline, "stateless");
    // Pairs: r1c1 1000-700, r1c2 1200-1000, r1c3 900-950, r2c1 1100-600.
    // r2c2 (history 504) and r2c3 (stateless no response) are left out.
    let d = clo.delta_ms;
    assert_eq!(d.n, 4);
    assert!(close(d.min, -50.0));
    assert!(close(d.max, 500.0));
    assert!(close(d.mean, (300.0 + 200.0 - 50.0 + 500.0) / 4.0));
    assert!(close(d.median, 250.0));
    // numpy: np.percentile([-50, 200, 300, 500], 95) = 470.0
    assert!(close(d.p95, 470.0));

    let only_history = summarize(&ctx(&["history"]), &events(), &[], &[]);
    assert_eq!(only_history.clo, None);
}

#[test]
fn attempts_of_final_turns() {
    let s = summarize(&ctx(&["history", "stateless"]), &events(), &[], &attempts());
    let a = &s.systems[0].attempts;
    // 6 events: r1c1 has 4 attempts, r1c2 has 2, the other 4 none.
    assert_eq!(a.per_event, vec![(0, 4), (2, 1), (4, 1)]);
    assert_eq!(a.max_per_event, 4);
    assert!(close(a.primary_mean, 2.0 / 6.0));
    assert!(close(a.fallback_mean, 4.0 / 6.0));
    assert_eq!(a.fallback_429s, 2);
    // Gaps: r1c1 50, 250, 600; r1c2 30 (sorted by arrival).
    assert_eq!(a.gaps_ms.n, 4);
    assert!(close(a.gaps_ms.min, 30.0));
    assert!(close(a.gaps_ms.max, 600.0));
    assert!(close(a.gaps_ms.median, 150.0));
    let st = &s.systems[1].attempts;
    assert_eq!(st.per_event, vec![(0, 5), (1, 1)]);
    assert_eq!(st.fallback_429s, 0);
}

#[test]
fn bleed_examples() {
    let s = summarize(&ctx(&["history", "stateless"]), &events(), &[], &[]);
    assert_eq!(s.systems[0].bleed.events, 0);
    let b = &s.systems[1].bleed;
    assert_eq!(b.events, 2);
    assert_eq!(
        b.examples,
        vec![
            BleedExample {
                run: 1,
                conversation: "c3".into(),
                turn: 7,
                anchor_of: "c2".into(),
                answer_excerpt: "answer 1 c3".into()
            },
            BleedExample {
                run: 2,
                conversation: "c2".into(),
                turn: 9,
                anchor_of: "c1;c3".into(),
                answer_excerpt: "answer 2 c2".into()
            },
        ]
    );
    let many: Vec<EventRecord> = (0..15)
        .map(|i| {
            let mut e = event(
                1,
                "x",
                &format!("c{i:02}"),
                7,
                Timeout,
                Some(200),
                1.0,
                Lost,
            );
            e.bleed_from = "c99".into();
            e
        })
        .collect();
    let s = summarize(&ctx(&["x"]), &many, &[], &[]);
    assert_eq!(s.systems[0].bleed.events, 15);
    assert_eq!(s.systems[0].bleed.examples.len(), MAX_BLEED_EXAMPLES);
}

#[test]
fn clustered_interval_is_deterministic_and_order_free() {
    let a = summarize(&ctx(&["history", "stateless"]), &events(), &[], &attempts());
    let mut shuffled = events();
    shuffled.rotate_left(5);
    let b = summarize(&ctx(&["history", "stateless"]), &shuffled, &[], &attempts());
    assert_eq!(a, b);
    let c = a.systems[0].cpr_clustered.unwrap();
    let r = a.systems[0].cpr.rate.unwrap();
    assert!(c.lo <= r && r <= c.hi);
}

#[test]
fn empty_input_and_silent_systems() {
    let s = summarize(&ctx(&["history", "stateless", "litellm"]), &[], &[], &[]);
    assert_eq!(s.systems.len(), 3);
    for sys in &s.systems {
        assert_eq!(sys.events, 0);
        // Nothing measured is n/a, not 0 %.
        assert_eq!((sys.cpr.rate, sys.cpr.wilson), (None, None));
        assert_eq!(sys.cpr_clustered, None);
        assert_eq!((sys.availability.rate, sys.survival.rate), (None, None));
        assert_eq!(sys.warning, None);
        assert!(sys.cpr_per_run.is_empty());
        assert_eq!(sys.attempts.per_event, Vec::<(u32, u64)>::new());
        assert_eq!(sys.event_latency_ms.n, 0);
    }
    assert_eq!(s.clo.as_ref().map(|c| c.delta_ms.n), Some(0));
    // A listed system with no events next to one with events.
    let s = summarize(&ctx(&["history", "litellm"]), &events(), &[], &[]);
    assert_eq!(s.systems[1].name, "litellm");
    assert_eq!(s.systems[1].events, 0);
    assert!(serde_json::to_string(&s).is_ok());
}

fn staged(mut e: EventRecord, stage: Stage, reason: &str) -> EventRecord {
    e.stage = stage;
    e.stage_reason = reason.into();
    e
}

#[test]
fn only_failover_events_enter_cpr_and_the_rest_is_counted_beside_it() {
    let broke = "broke at turn 1: connection failed";
    let mut ev: Vec<EventRecord> = (0..10)
        .map(|i| {
            event(
                1,
                "gw",
                &format!("c{i}"),
                7,
                Timeout,
                Some(200),
                10.0,
                Preserved,
            )
        })
        .collect();
    // Two conversations broke at turn 1: they must not count as failover
    // events, nor as errors of the fault mode, nor in the latency.
    for e in &mut ev[..2] {
        *e = staged(e.clone(), Stage::BrokeBefore, broke);
        e.verdict = Error;
        e.client_status = None;
        e.latency_ms = 0.0;
    }
    let s = summarize(&ctx(&["gw"]), &ev, &[], &[]);
    let x = &s.systems[0];
    assert_eq!(
        x.stages,
        StageCounts {
            failover: 8,
            broke_before: 2,
            not_exercised: 0
        }
    );
    assert_eq!((x.events, x.cpr.successes, x.cpr.trials), (8, 8, 8));
    assert_eq!(x.cpr.rate, Some(1.0));
    assert_eq!(x.cpr_by_fault[0].rate.trials, 8);
    assert_eq!(x.event_latency_ms.n, 8);
    assert_eq!((x.survival.successes, x.survival.trials), (8, 10));
    assert_eq!(
        x.stage_reasons,
        [StageReason {
            stage: Stage::BrokeBefore,
            reason: broke.into(),
            events: 2
        }]
    );
    // 8 of 10 is under the 90 % share: the warning names the cause.
    let warning = x.warning.as_deref().unwrap();
    assert!(warning.contains("only 8 of 10 planned events"), "{warning}");
    assert!(warning.contains(broke), "{warning}");
    // 9 of 10 is not.
    ev[1] = event(1, "gw", "c1", 7, Timeout, Some(200), 10.0, Preserved);
    let s = summarize(&ctx(&["gw"]), &ev, &[], &[]);
    assert_eq!(s.systems[0].warning, None);
}

#[test]
fn a_gateway_that_never_calls_its_upstreams_has_no_cpr() {
    let reason = "no upstream saw the faulted turn";
    let ev: Vec<EventRecord> = (0..5)
        .map(|i| {
            staged(
                event(
                    1,
                    "gw",
                    &format!("c{i}"),
                    7,
                    Timeout,
                    Some(200),
                    1.0,
                    Preserved,
                ),
                Stage::NotExercised,
                reason,
            )
        })
        .collect();
    let s = summarize(&ctx(&["gw"]), &ev, &[], &[]);
    let x = &s.systems[0];
    assert_eq!((x.events, x.stages.not_exercised), (0, 5));
    assert_eq!((x.cpr.rate, x.cpr_clustered), (None, None));
    // It did keep the conversations alive: survival says so.
    assert_eq!(x.survival.rate, Some(1.0));
    assert!(x.warning.as_deref().unwrap().contains(reason));
}

#[test]
fn bleed_on_every_turn_is_counted_per_turn() {
    let turn = |conversation: &str, turn: u32, bleed: &str| TurnRecord {
        run: 1,
        system: "gw".into(),
        conversation: conversation.into(),
        turn,
        turns: 7,
        is_final: turn == 7,
        messages_sent: 2 * turn,
        sent_at_ms: 0.0,
        status: Some(200),
        latency_ms: 1.0,
        answer: format!("answer {turn}"),
        answer_chars: 8,
        error: None,
        bleed_from: bleed
            .split(';')
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect(),
        ..TurnRecord::default()
    };
    let turns = vec![
        turn("c1", 2, "c9"),
        turn("c1", 3, ""),
        turn("c2", 2, "c8;c9"),
        turn("c2", 5, "c7"),
        turn("c2", 7, ""),
    ];
    let ev = vec![event(1, "gw", "c1", 7, Timeout, Some(200), 1.0, Preserved)];
    let s = summarize(&ctx(&["gw"]), &ev, &turns, &[]);
    let b = &s.systems[0].bleed;
    assert_eq!((b.answers, b.answers_bleeding, b.events), (5, 3, 0));
    assert_eq!(b.by_turn, [(2, 2), (5, 1)]);
    assert_eq!(b.examples[0].turn, 2);
}

fn rate_limited(role: Role, arrived_ms: f64) -> AttemptRecord {
    let mut a = attempt(1, "history", role, "c1", 7, arrived_ms, Some(429));
    a.retry_after_ms = Some(1000);
    a
}

#[test]
fn retries_before_retry_after_are_a_storm() {
    let ok = |role, at| attempt(1, "history", role, "c1", 7, at, Some(200));
    // Positive control: a tight loop on the fallback, 20 ms apart.
    let mut tight = vec![attempt(
        1,
        "history",
        Role::Primary,
        "c1",
        7,
        0.0,
        Some(503),
    )];
    tight.extend((0..5).map(|k| rate_limited(Role::Fallback, 10.0 + 20.0 * f64::from(k))));
    tight.push(ok(Role::Fallback, 110.0));
    let one = [event(
        1,
        "history",
        "c1",
        7,
        Timeout,
        Some(200),
        1000.0,
        Preserved,
    )];
    let s = summarize(&ctx(&["history"]), &one, &[], &tight);
    let a = &s.systems[0].attempts;
    assert_eq!(a.per_event, vec![(7, 1)], "{a:?}");
    assert_eq!(a.early_retries, 5);
    assert!(a.storm);
    assert!(
        a.storm_reasons.iter().any(|r| r.contains("Retry-After")),
        "{:?}",
        a.storm_reasons
    );
    assert!(
        a.storm_reasons.iter().any(|r| r.contains("more than 6")),
        "{:?}",
        a.storm_reasons
    );

    // Negative control: a primary 429 followed at once by the fallback
    // (a failover, not a retry), then fallback retries that wait out
    // Retry-After.
    let patient = vec![
        rate_limited(Role::Primary, 0.0),
        rate_limited(Role::Fallback, 5.0),
        rate_limited(Role::Fallback, 1_100.0),
        ok(Role::Fallback, 2_300.0),
    ];
    let s = summarize(&ctx(&["history"]), &one, &[], &patient);
    let a = &s.systems[0].attempts;
    assert_eq!(a.early_retries, 0);
    assert!(!a.storm, "{:?}", a.storm_reasons);
}
