//! Test fixture: a realistic report (two reference systems, 750 events each
//! in the summary, with the paper's figures for `history`) and a smaller,
//! consistent set of recorded rows that the plots and CSV files are made from.

use super::ReportData;
use crate::config::ResolvedConfig;
use crate::record::{EventRecord, Stage};
use crate::summary::{
    AttemptSummary, BleedExample, BleedSummary, CloByLength, CloSummary, ContractRate, GroupRate,
    StageCounts, Summary, SystemSummary, VerdictCounts,
};
use cb_base::record::{AttemptAction, AttemptRecord, TurnRecord};
use cb_contracts::ContractName;
use cb_faults::{FaultMode, Role};
use cb_scoring::{Verdict, VerdictMethod};
use cb_stats::{Distribution, Interval};
use rand::Rng;

pub(crate) use cb_stats::rate;

fn groups(keys: &[&str], successes: &[u64], trials: u64) -> Vec<GroupRate> {
    keys.iter()
        .zip(successes)
        .map(|(key, &s)| GroupRate {
            key: (*key).to_string(),
            rate: rate(s, trials),
        })
        .collect()
}

const RUN_KEYS: [&str; 5] = ["run 1", "run 2", "run 3", "run 4", "run 5"];
const FAULT_KEYS: [&str; 3] = ["TIMEOUT", "API_ERROR", "RATE_LIMIT"];
const LENGTH_KEYS: [&str; 5] = ["7", "8", "9", "10", "11"];

fn stateless() -> SystemSummary {
    SystemSummary {
        name: "stateless".into(),
        stages: StageCounts {
            failover: 750,
            broke_before: 0,
            not_exercised: 0,
        },
        stage_reasons: vec![],
        warning: None,
        survival: rate(0, 750),
        clean_cpr: rate(0, 750),
        contracts: vec![
            ContractRate {
                contract: ContractName::JunkPrefix,
                applied: 6750,
                undetermined: 0,
                broken: rate(0, 6750),
            },
            ContractRate {
                contract: ContractName::Refusal,
                applied: 6750,
                undetermined: 0,
                broken: rate(0, 6750),
            },
        ],
        ttft_ms: Distribution::default(),
        events: 750,
        verdicts: VerdictCounts {
            preserved: 0,
            lost: 750,
            error: 0,
            undetermined: 0,
            by_fast_path: 750,
            by_judge: 0,
        },
        cpr: rate(0, 750),
        cpr_clustered: Some(Interval { lo: 0.0, hi: 0.0 }),
        availability: rate(750, 750),
        conditional_cpr: rate(0, 750),
        cpr_per_run: groups(&RUN_KEYS, &[0; 5], 150),
        cpr_run_min: Some(0.0),
        cpr_run_max: Some(0.0),
        cpr_by_fault: groups(&FAULT_KEYS, &[0; 3], 250),
        cpr_by_length: groups(&LENGTH_KEYS, &[0; 5], 150),
        bleed: BleedSummary {
            events: 0,
            answers: 6750,
            answers_bleeding: 0,
            by_turn: vec![],
            examples: vec![],
        },
        attempts: AttemptSummary {
            primary_mean: 1.0,
            fallback_mean: 1.0,
            max_per_event: 2,
            per_event: vec![(2, 750)],
            fallback_429s: 0,
            gaps_ms: Distribution {
                n: 750,
                mean: 2480.5,
                min: 1.2,
                median: 3.4,
                p95: 10_001.9,
                p99: 10_003.2,
                max: 10_004.0,
            },
            early_retries: 0,
            storm: false,
            storm_reasons: vec![],
        },
        event_latency_ms: Distribution {
            n: 750,
            mean: 3153.2,
            min: 380.4,
            median: 1930.3,
            p95: 11_210.0,
            p99: 11_890.6,
            max: 12_020.8,
        },
        fallback_delivery: None,
        past_fault: None,
    }
}

fn history() -> SystemSummary {
    SystemSummary {
        name: "history".into(),
        stages: StageCounts {
            failover: 750,
            broke_before: 0,
            not_exercised: 0,
        },
        stage_reasons: vec![],
        warning: None,
        survival: rate(744, 750),
        clean_cpr: rate(743, 750),
        contracts: vec![
            ContractRate {
                contract: ContractName::JunkPrefix,
                applied: 6747,
                undetermined: 10,
                broken: rate(1, 6737),
            },
            ContractRate {
                contract: ContractName::Refusal,
                applied: 6747,
                undetermined: 0,
                broken: rate(0, 6747),
            },
        ],
        ttft_ms: Distribution::default(),
        events: 750,
        verdicts: VerdictCounts {
            preserved: 744,
            lost: 3,
            error: 3,
            undetermined: 0,
            by_fast_path: 750,
            by_judge: 0,
        },
        cpr: rate(744, 750),
        cpr_clustered: Some(Interval {
            lo: 0.981_3,
            hi: 0.997_3,
        }),
        availability: rate(747, 750),
        conditional_cpr: rate(744, 747),
        cpr_per_run: groups(&RUN_KEYS, &[149, 148, 150, 148, 149], 150),
        cpr_run_min: Some(148.0 / 150.0),
        cpr_run_max: Some(1.0),
        cpr_by_fault: groups(&FAULT_KEYS, &[248, 246, 250], 250),
        cpr_by_length: groups(&LENGTH_KEYS, &[149, 148, 150, 148, 149], 150),
        bleed: BleedSummary {
            events: 1,
            answers: 6747,
            answers_bleeding: 2,
            by_turn: vec![(4, 1), (9, 1)],
            examples: vec![BleedExample {
                run: 3,
                conversation: "c042".into(),
                turn: 9,
                anchor_of: "c117".into(),
                answer_excerpt: "Your sister is called Maelis.".into(),
            }],
        },
        attempts: AttemptSummary {
            primary_mean: 1.0,
            fallback_mean: 1.004,
            max_per_event: 3,
            per_event: vec![(2, 747), (3, 3)],
            fallback_429s: 3,
            gaps_ms: Distribution {
                n: 753,
                mean: 2512.7,
                min: 1.1,
                median: 3.6,
                p95: 10_002.4,
                p99: 10_480.0,
                max: 11_020.3,
            },
            early_retries: 0,
            storm: false,
            storm_reasons: vec![],
        },
        event_latency_ms: Distribution {
            n: 750,
            mean: 3212.4,
            min: 402.1,
            median: 1480.3,
            p95: 12_894.0,
            p99: 14_210.7,
            max: 15_020.9,
        },
        fallback_delivery: None,
        past_fault: None,
    }
}

/// A realistic summary: `stateless` 0/750, `history` 744/750 with the
/// paper's CLO figures.
pub(crate) fn summary() -> Summary {
    Summary {
        tool: "continuity-bench".into(),
        version: "0.1.0".into(),
        seed: 42,
        interrupted: false,
        interrupted_by: None,
        runs: 5,
        conversations: 150,
        dataset: "datasets/continuity-150.jsonl".into(),
        fault_profile: "fault_profiles/paper.toml".into(),
        confidence: 0.95,
        percentile_method: cb_stats::PERCENTILE_METHOD.into(),
        bootstrap_resamples: 10_000,
        systems: vec![stateless(), history()],
        clo: Some(CloSummary {
            treatment: "history".into(),
            baseline: "stateless".into(),
            delta_ms: Distribution {
                n: 747,
                mean: 59.2,
                min: -2210.4,
                median: -450.0,
                p95: 13_614.0,
                p99: 14_890.4,
                max: 15_500.2,
            },
            by_length: (7..=11)
                .map(|turns| CloByLength {
                    turns,
                    delta_ms: Distribution {
                        n: 150,
                        mean: 10.0 * f64::from(turns),
                        min: -100.0,
                        median: 8.0 * f64::from(turns),
                        p95: 30.0 * f64::from(turns),
                        p99: 35.0 * f64::from(turns),
                        max: 40.0 * f64::from(turns),
                    },
                })
                .collect(),
        }),
        notes: vec![
            "With the simulated model the fallback can only answer from the messages it receives, so the CPR gap between `stateless` and `history` is by construction: it checks the harness, not a gateway.".into(),
            "Faults happen on the wire at the primary upstream on the final turn of every conversation.".into(),
        ],
        shard: None,
        merged_shards: None,
        requests_in_flight: vec![crate::summary::InFlight {
            shard: None,
            concurrency: 100,
            jobs: 300,
            cap: None,
            bound: None,
            peak: Some(100),
        }],
    }
}

pub(crate) fn config() -> ResolvedConfig {
    ResolvedConfig {
        tool: "continuity-bench".into(),
        version: "0.1.0".into(),
        seed: 42,
        runs: 5,
        concurrency: 100,
        dataset: "datasets/continuity-150.jsonl".into(),
        conversations: 150,
        fault_profile: "fault_profiles/paper.toml".into(),
        latency: "fast".into(),
        replay: "fast_forward".into(),
        stream: false,
        client: cb_client::sse::ClientProfile::OpenAiSdk,
        api: cb_client::Api::Chat,
        attempt_timeout_ms: 10_000,
        request_timeout_ms: 60_000,
        max_response_bytes: 4 * 1024 * 1024,
        fallback_dialect: cb_dialect::Dialect::Openai,
        systems: vec!["stateless".into(), "history".into()],
        judge: None,
        interrupted: false,
        interrupted_by: None,
        requests_in_flight: Default::default(),
        model: "continuity-sim".into(),
        gateways: Vec::new(),
        confidence: 0.95,
        percentile_method: cb_stats::PERCENTILE_METHOD.into(),
        bootstrap_resamples: 10_000,
        providers: None,
        shard: None,
        dataset_sha256: None,
        fault_profile_sha256: None,
        merged_from: Vec::new(),
    }
}

/// Conversations in the recorded rows of the fixture (kept small).
const ROW_CONVERSATIONS: u32 = 30;
/// Runs in the recorded rows of the fixture.
const ROW_RUNS: u32 = 5;

/// Recorded rows for `stateless` and `history`: every turn, every event and
/// the final-turn attempts, with deterministic pseudo-random latencies.
fn rows() -> (Vec<TurnRecord>, Vec<EventRecord>, Vec<AttemptRecord>) {
    let mut turns = Vec::new();
    let mut events = Vec::new();
    let mut attempts = Vec::new();
    for run in 1..=ROW_RUNS {
        for (system_index, system) in ["stateless", "history"].into_iter().enumerate() {
            let mut rng = cb_base::seed::rng(
                42,
                "report-fixture",
                u64::from(run) * 2 + system_index as u64,
            );
            let mut clock = 0.0_f64;
            for c in 0..ROW_CONVERSATIONS {
                let conversation = format!("c{:03}", c + 1);
                let n_turns = 7 + (c % 5);
                let mode = FaultMode::ALL[((run - 1 + c) % 3) as usize];
                let is_history = system == "history";
                let failed = is_history && run == 2 && c == 4;
                let bleed = is_history && run == 3 && c == 9;
                let mut final_latency = 0.0;
                for turn in 1..=n_turns {
                    let is_final = turn == n_turns;
                    let base = 300.0 + rng.random::<f64>() * 400.0;
                    let mut latency = if is_history {
                        base + 45.0 * f64::from(turn)
                    } else {
                        base + 8.0 * f64::from(turn)
                    };
                    if is_final && mode == FaultMode::Timeout {
                        latency += 10_000.0;
                    }
                    if is_final && mode == FaultMode::RateLimit && rng.random::<f64>() < 0.2 {
                        latency += 1_000.0 + rng.random::<f64>() * 2_000.0;
                    }
                    if failed && is_final {
                        latency = 60_000.0;
                    }
                    clock += 1.0 + rng.random::<f64>() * 3.0;
                    let answer = if failed && is_final {
                        String::new()
                    } else if is_final && is_history {
                        if bleed {
                            "Your sister is called Maelis, isn't she?".to_string()
                        } else {
                            format!("Your sister is called Oriane-{conversation}.")
                        }
                    } else if is_final {
                        "I don't know your sister's name; you haven't told me.".to_string()
                    } else {
                        format!("Noted, turn {turn}. Commas, \"quotes\"\nand a newline survive.")
                    };
                    turns.push(TurnRecord {
                        run,
                        system: system.to_string(),
                        conversation: conversation.clone(),
                        turn,
                        turns: n_turns,
                        is_final,
                        messages_sent: 2 * turn - 1,
                        sent_at_ms: clock,
                        status: if failed && is_final { None } else { Some(200) },
                        latency_ms: latency,
                        answer_chars: answer.chars().count() as u64,
                        answer,
                        error: (failed && is_final)
                            .then(|| "request deadline of 60000 ms exceeded".to_string()),
                        bleed_from: if bleed && is_final {
                            vec!["c117".to_string()]
                        } else {
                            Vec::new()
                        },
                        ..TurnRecord::default()
                    });
                    final_latency = latency;
                }
                let (verdict, reason, bleed_from) = if failed {
                    (Verdict::Error, "no response before the deadline", "")
                } else if bleed {
                    (
                        Verdict::Lost,
                        "answer names another conversation's anchor",
                        "c117",
                    )
                } else if is_history {
                    (Verdict::Preserved, "expected value found", "")
                } else {
                    (Verdict::Lost, "expected value absent", "")
                };
                let excerpt = turns.last().map(|t| t.answer.clone()).unwrap_or_default();
                events.push(EventRecord {
                    run,
                    system: system.to_string(),
                    conversation: conversation.clone(),
                    turns: n_turns,
                    turn: n_turns,
                    stage: Stage::Failover,
                    stage_reason: String::new(),
                    fault_mode: mode,
                    client_status: if failed { None } else { Some(200) },
                    latency_ms: final_latency,
                    verdict,
                    method: VerdictMethod::FastPath,
                    reason: reason.to_string(),
                    bleed_from: bleed_from.to_string(),
                    contract_violations: if bleed {
                        "junk_prefix".to_string()
                    } else {
                        String::new()
                    },
                    answer_excerpt: excerpt,
                    primary_attempts: 1,
                    fallback_attempts: 1,
                    probes: Default::default(),
                    outage_end: n_turns,
                    served_after: Default::default(),
                    tools: Default::default(),
                    tools_reason: String::new(),
                });
                let (action, status, duration) = match mode {
                    FaultMode::Timeout => (AttemptAction::TimeoutHeld, None, 10_000.0),
                    FaultMode::ApiError => (AttemptAction::ApiError, Some(503), 2.5),
                    FaultMode::RateLimit => (AttemptAction::RateLimited, Some(429), 1.5),
                };
                for (role, attempt_action, attempt_status, attempt_duration) in [
                    (Role::Primary, action, status, duration),
                    (
                        Role::Fallback,
                        AttemptAction::Ok,
                        Some(200),
                        final_latency * 0.8,
                    ),
                ] {
                    attempts.push(AttemptRecord {
                        action: attempt_action,
                        status: attempt_status,
                        messages: if is_history || role == Role::Primary {
                            2 * n_turns - 1
                        } else {
                            1
                        },
                        approx_tokens: 40 * n_turns,
                        model: "sim-model-1".to_string(),
                        client_gave_up: role == Role::Primary && mode == FaultMode::Timeout,
                        duration_ms: attempt_duration,
                        ..cb_testkit::record::attempt(
                            run,
                            system,
                            role,
                            &conversation,
                            n_turns,
                            clock + 0.25,
                        )
                    });
                }
            }
        }
    }
    (turns, events, attempts)
}

/// The full fixture report.
pub(crate) fn report_data() -> ReportData {
    let (turns, events, attempts) = rows();
    ReportData {
        config: config(),
        turns,
        events,
        attempts,
        summary: summary(),
    }
}
