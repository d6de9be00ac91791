//! Tests of the grade's files: the summary against its schema, the page and
//! the Markdown rendered from a summary, and a grade directory read back.

use super::summary::*;
use super::*;
use cb_testkit::Schema;

fn schema() -> Schema {
    Schema::new(include_str!("../../schema/grade.schema.json"))
}

fn contract(name: &str, broken: u64, decided: u64) -> cb_continuity::summary::ContractRate {
    serde_json::from_value(serde_json::json!({
        "contract": name,
        "applied": decided + 1,
        "undetermined": 1,
        "broken": cb_stats::rate(broken, decided),
    }))
    .unwrap()
}

fn figures(profile: &str, preserved: u64, events: u64) -> ContinuityFigures {
    ContinuityFigures {
        profile: profile.into(),
        planned: events,
        events,
        cpr: cb_stats::rate(preserved, events),
        cpr_clustered: (events > 0).then_some(cb_stats::Interval { lo: 0.9, hi: 1.0 }),
        clean_cpr: cb_stats::rate(preserved.saturating_sub(1), events),
        availability: cb_stats::rate(events, events),
        contracts: vec![contract("junk_prefix", 3, 40), contract("language", 0, 40)],
        latency_by_length: vec![
            LengthLatency {
                turns: 7,
                n: 3,
                median_ms: 12.0,
                p95_ms: 1013.0,
            },
            LengthLatency {
                turns: 9,
                n: 2,
                median_ms: 14.0,
                p95_ms: 1020.0,
            },
        ],
        latency_by_mode: vec![
            ModeLatency {
                fault_mode: cb_faults::FaultMode::Timeout,
                by_length: vec![LengthLatency {
                    turns: 7,
                    n: 1,
                    median_ms: 1013.0,
                    p95_ms: 1013.0,
                }],
            },
            ModeLatency {
                fault_mode: cb_faults::FaultMode::ApiError,
                by_length: vec![LengthLatency {
                    turns: 9,
                    n: 2,
                    median_ms: 14.0,
                    p95_ms: 15.0,
                }],
            },
        ],
        storm: false,
        warning: None,
        past_fault: None,
    }
}

fn case(case: &str, verdict: &str) -> CaseEvidence {
    CaseEvidence {
        case: case.into(),
        verdict: serde_json::from_value(serde_json::json!(verdict)).unwrap(),
        scored: true,
        reason: if verdict == "pass" {
            String::new()
        } else {
            "failed_over: the fallback answered <200>".into()
        },
        checks: vec![CheckEvidence {
            check: "no_failover".into(),
            severity: cb_semantics::case::Severity::Required,
            passed: verdict == "pass",
            applicable: true,
            value: "1 fallback attempt".into(),
            bound: "0".into(),
        }],
        notes: vec![],
        requests: vec![RequestEvidence {
            client: "200 answer (12 ms)".into(),
            attempts: vec![AttemptEvidence {
                role: cb_base::Role::Primary,
                attempt: 1,
                at_ms: 1.5,
                status: Some(401),
                action: cb_base::record::AttemptAction::ApiError,
                detail: "error 401".into(),
                model: "continuity-sim".into(),
            }],
        }],
    }
}

fn system(name: &str, control: bool, verdicts: [&str; 2]) -> GradeSystem {
    GradeSystem {
        name: name.into(),
        kind: super::summary::GradedKind::Builtin,
        url: None,
        notes: format!("{name} notes"),
        control,
        continuity: vec![figures("paper", 5, 5), figures("degraded", 0, 0)],
        scorecard: Some(Scorecard {
            pass: verdicts.iter().filter(|v| **v == "pass").count() as u32,
            fail: verdicts.iter().filter(|v| **v == "fail").count() as u32,
            ..Scorecard::default()
        }),
        honesty: Some(cb_semantics::honesty::HonestyCard {
            model: cb_semantics::honesty::Tally {
                honest: u32::from(!control),
                judged: 1,
            },
            ..Default::default()
        }),
        load: (!control).then_some(cb_semantics::load::LoadFigures {
            fault: cb_semantics::load::LoadFault::PrimaryLimited,
            concurrency: 100,
            retry_after_ms: 1000,
            answered: 100,
            cut_at_bound: 0,
            bound_ms: 10_000,
            unreached: 0,
            attempts_mean: Some(cb_semantics::load::Estimate {
                value: 3.0,
                low: Some(2.9),
                high: Some(3.1),
            }),
            attempts_p99: Some(cb_semantics::load::Estimate {
                value: 4.0,
                low: Some(3.0),
                high: None,
            }),
            attempts_max: Some(4),
            retries: 100,
            sync_index: Some(1.1),
            worst_ms: Some(2040.0),
            p99_ms: Some(2030.0),
        }),
        cases: vec![case("401", verdicts[0]), case("503", verdicts[1])],
        unmeasured: vec!["CPR under `degraded`: the profile faults no turn".into()],
    }
}

/// A grade of two systems over two cases.
pub fn fixture() -> GradeSummary {
    let mut summary = GradeSummary {
        kind: super::summary::SummaryKind::Grade,
        tool: "continuity-bench".into(),
        version: "0.0.0".into(),
        seed: 42,
        written_at: "2026-12-02T00:00:00Z".into(),
        systems_file: Some("examples/systems/builtin.toml".into()),
        interrupted: false,
        interrupted_by: None,
        profiles: vec![
            ProfileRun {
                profile: "paper".into(),
                dir: "paper".into(),
                runs: 1,
                conversations: 5,
                interrupted: false,
            },
            ProfileRun {
                profile: "degraded".into(),
                dir: "degraded".into(),
                runs: 1,
                conversations: 5,
                interrupted: false,
            },
        ],
        semantics_profile: Some("fast".into()),
        semantics_client: Some(cb_wire::sse::ClientProfile::OpenAiSdk),
        semantics_dir: Some("semantics".into()),
        cases: ["401", "503"]
            .map(|c| CaseInfo {
                case: c.into(),
                upstream: format!("{c} on every attempt"),
                passes: "x".into(),
                scored: true,
            })
            .to_vec(),
        systems: vec![
            system("stateless", true, ["pass", "pass"]),
            system("gw-1", false, ["fail", "pass"]),
        ],
        gate: None,
        overhead: Some(overhead_fixture()),
        overhead_dir: Some("overhead".into()),
    };
    summary.gate = Some(
        gate::Gate::parse("cpr=95,semantics-fail=0")
            .unwrap()
            .check(&summary.systems),
    );
    summary
}

/// An overhead measurement of the fixture's systems: gw-1 adds about
/// 2 ms at C = 1 and has a process read; at C = 64 the baseline itself
/// saturated (its p99 from 11 to 30 ms), so that point is rig-limited;
/// the stateless proxy's process was not read.
fn overhead_fixture() -> cb_overhead::OverheadReport {
    use cb_overhead::figures::{points, Pooled};
    use cb_overhead::schedule::{Mode, Subject};
    let sample = |base: f64, spread: f64| -> Vec<f64> {
        // Steps of 1/397 keep every figure off a rounding boundary, so
        // the page reads back the same through JSON.
        (0..400)
            .map(|i| base + spread * f64::from(i) / 397.0)
            .collect()
    };
    let mut pooled = std::collections::BTreeMap::new();
    for (c, base, gw) in [(1, 10.0, 12.0), (64, 10.0, 40.0)] {
        let spread = if c == 1 { 1.0 } else { 20.0 };
        for (subject, at) in [
            (Subject::Baseline, base),
            (Subject::System("stateless".into()), base + 0.3),
            (Subject::System("gw-1".into()), gw),
        ] {
            pooled.insert(
                (c, Mode::Plain, subject),
                Pooled {
                    latencies_ms: sample(at, spread),
                    ..Pooled::default()
                },
            );
        }
    }
    let systems = vec!["stateless".to_string(), "gw-1".to_string()];
    cb_overhead::OverheadReport {
        seed: 42,
        points: points(&pooled, &systems),
        systems,
        concurrency: vec![1, 64],
        modes: vec![Mode::Plain],
        trials: 2,
        requests: 200,
        warmup: 20,
        upstream_delay_ms: 10.0,
        processes: vec![cb_overhead::ProcessFigures {
            system: "gw-1".into(),
            pid: 4242,
            started_here: false,
            rss_before_kib: Some(100 * 1024),
            peak_rss_kib: 300 * 1024,
            peak_reset: true,
            cpu_seconds: 1.5,
            requests: 1000,
        }],
        unread: vec![("stateless".into(), "no PID given (--pid NAME=PID)".into())],
        left_out: Vec::new(),
        fallback_attempts: vec![("stateless".into(), 0), ("gw-1".into(), 0)],
        slots: Vec::new(),
        interrupted: false,
    }
}

/// The overhead sits beside continuity and the scorecard: in the
/// overview, each system's added p50 / p99 per concurrency and its peak
/// memory; the rig-limited point is not charged; the section has the
/// baseline's own figures; the Markdown says the same.
#[test]
fn the_overhead_is_on_the_page_beside_continuity() {
    let summary = fixture();
    let html = page::render(&summary);
    assert!(
        html.contains("added latency p50 / p99, ms (plain)"),
        "{html}"
    );
    assert!(
        html.contains("+2.00 / +2.00 at C = 1; rig-limited at C = 64"),
        "{html}"
    );
    assert!(html.contains("300 MiB"), "{html}");
    assert!(html.contains("not read"), "{html}");
    assert!(html.contains("id=\"overhead\""), "{html}");
    assert!(html.contains("(baseline)"), "the baseline's own row");
    assert!(html.contains("1500.000"), "CPU ms per 1,000 requests");
    let md = markdown::render(&summary);
    assert!(md.contains("## Overhead when nothing fails"), "{md}");
    assert!(
        md.contains("| gw-1 | +2.00 / +2.00 at C = 1; rig-limited at C = 64 | 300 MiB |"),
        "{md}"
    );
    let mut none = summary;
    none.overhead = None;
    none.overhead_dir = None;
    let html = page::render(&none);
    assert!(!html.contains("id=\"overhead\""));
    assert!(!markdown::render(&none).contains("## Overhead"));
}

fn json(summary: &GradeSummary) -> serde_json::Value {
    serde_json::to_value(summary).unwrap()
}

#[test]
fn the_fixture_matches_the_schema_and_a_missing_field_does_not() {
    let schema = schema();
    assert_eq!(schema.errors(&json(&fixture())), Vec::<String>::new());
    let mut bare = fixture();
    bare.gate = None;
    bare.semantics_profile = None;
    bare.systems[0].scorecard = None;
    assert_eq!(schema.errors(&json(&bare)), Vec::<String>::new());
    let mut broken = json(&fixture());
    broken["systems"][0]
        .as_object_mut()
        .unwrap()
        .remove("unmeasured");
    let errors = schema.errors(&broken);
    assert!(
        errors.iter().any(|e| e.contains("unmeasured")),
        "{errors:?}"
    );
    let mut broken = json(&fixture());
    broken["systems"][1]["cases"][0]["verdict"] = "great".into();
    assert!(!schema.errors(&broken).is_empty());
}

#[test]
fn every_scorecard_cell_links_to_evidence_in_the_page() {
    let html = page::render(&fixture());
    for sys in ["stateless", "gw-1"] {
        for case in ["401", "503"] {
            let id = page::evidence_id(sys, case);
            assert!(html.contains(&format!("href=\"#{id}\"")), "no link to {id}");
            assert_eq!(html.matches(&format!("id=\"{id}\"")).count(), 1, "{id}");
        }
    }
    // Every in-page link has its target.
    for link in html.split("href=\"#").skip(1) {
        let id = &link[..link.find('"').unwrap()];
        assert!(html.contains(&format!("id=\"{id}\"")), "dangling #{id}");
    }
    // Evidence: the attempt log and the checks, escaped.
    assert!(html.contains("error 401"));
    assert!(html.contains("the fallback answered &lt;200&gt;"));
    assert!(html.contains("class=\"fail\""));
}

#[test]
fn the_page_is_self_contained_and_says_what_was_not_measured() {
    let html = page::render(&fixture());
    let without_svg_namespace = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for external in [
        "http://", "https://", "<script", "<link", "<img", "@import", "url(",
    ] {
        assert!(
            !without_svg_namespace.contains(external),
            "{external} in the page"
        );
    }
    assert!(html.contains("the profile faults no turn"));
    assert!(html.contains("(log scale)"), "latency on a log axis");
    assert!(html.contains("no delivered answer broke a contract") || html.contains("junk_prefix"));
    assert!(html.contains("100.00 % (5/5)"), "CPR with counts");
    assert!(
        html.contains("[90.00 %, 100.00 %]"),
        "the clustered interval"
    );
    assert!(html.contains("NOT met"), "the gate fails on gw-1");
}

#[test]
fn the_markdown_has_the_same_tables() {
    let md = markdown::render(&fixture());
    for needle in [
        "| system | profile | failover/planned | CPR | 95 % Wilson | clustered 95 % | clean CPR |",
        "| `401` | pass | fail |",
        "gw-1: 1 pass / 0 partial / 0 safe / 1 fail, 0 inconclusive; honest claims: model 1/1, usage n/a, routing n/a; attempts per request under load: 3.00 [2.90, 3.10] at C = 100 (primary-limited); retries 100, synchronisation x1.1; worst 2.04 s",
        "stateless: 2 pass / 0 partial / 0 safe / 0 fail, 0 inconclusive; honest claims: model 0/1",
        "**NOT met**",
        "- gw-1: semantics-fail<=0 measured 1 fail",
    ] {
        assert!(md.contains(needle), "{needle:?} missing:\n{md}");
    }
    assert!(
        !md.contains("stateless: semantics-fail"),
        "the control is left out of the gate"
    );
}

#[test]
fn a_grade_directory_reads_back_and_renders_the_same_page() {
    let dir = tempfile::tempdir().unwrap();
    let summary = fixture();
    let written = write_grade(dir.path(), &summary).unwrap();
    assert_eq!(written.len(), 3);
    assert!(is_grade_dir(dir.path()));
    let back = read_grade(dir.path()).unwrap();
    // JSON keeps floats to within an ulp; the page shows two decimals.
    assert_eq!(back.systems.len(), summary.systems.len());
    assert_eq!(page::render(&back), page::render(&summary));
    assert_eq!(markdown::render(&back), markdown::render(&summary));
    let first = std::fs::read(dir.path().join(HTML_FILE)).unwrap();
    write_grade(dir.path(), &back).unwrap();
    assert_eq!(std::fs::read(dir.path().join(HTML_FILE)).unwrap(), first);
    let run_dir = tempfile::tempdir().unwrap();
    std::fs::write(run_dir.path().join(SUMMARY_FILE), b"{\"tool\":\"x\"}").unwrap();
    assert!(!is_grade_dir(run_dir.path()), "a run's summary is no grade");
}

#[test]
fn a_wide_scorecard_scrolls_in_its_own_box() {
    let html = page::render(&fixture());
    let heading = html.find("id=\"scorecard\"").unwrap();
    let rest = &html[heading..];
    let boxed = rest.find("<div style=\"overflow-x:auto\">").unwrap();
    let table = rest.find("<table>").unwrap();
    let closed = rest.find("</table>\n</div>").unwrap();
    assert!(
        boxed < table && table < closed,
        "the scorecard is not in its box"
    );
}

/// The overview shows each system's honesty beside its scorecard, `n/a`
/// for a family never judged and `not run` without the catalogue.
#[test]
fn the_overview_shows_the_honest_claims() {
    let mut summary = fixture();
    let html = page::render(&summary);
    assert!(html.contains("honest claims (cases)"), "{html}");
    assert!(html.contains("model 0/1, usage n/a, routing n/a"), "{html}");
    assert!(html.contains("model 1/1, usage n/a, routing n/a"), "{html}");
    assert!(html.contains("attempts per request under load"), "{html}");
    assert!(
        html.contains(
            "3.00 [2.90, 3.10] at C = 100 (primary-limited); retries 100, synchronisation x1.1; worst 2.04 s"
        ),
        "{html}"
    );
    summary.systems[1].honesty = None;
    assert!(page::render(&summary).contains("not run"));
}
