//! Event accounting against gateways that never reach the fault: one that
//! drops a fifth of the first turns (its conversations break before the
//! faulted turn) and one that answers by itself (the faulted upstream never
//! sees a request). Only failover events may enter CPR; the rest is counted
//! beside it and warned about.

use crate::common::gateways::{start_on_free_ports, Misbehaviour};
use crate::common::{execute, gateway_spec, quick_run, system};
use continuity_bench::continuity::record::Stage;
use continuity_bench::continuity::{
    self,
    report::{render_table, Columns},
};

async fn run_beside(kind: Misbehaviour) -> (tempfile::TempDir, continuity::RunOutcome) {
    let (gateway, primary, fallback) = start_on_free_ports(kind).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    config.systems.gateways = vec![gateway_spec("control", gateway.url(), primary, fallback)];
    let outcome = execute(&config).await;
    drop(gateway);
    (dir, outcome)
}

#[tokio::test(start_paused = true)]
async fn conversations_that_break_before_the_fault_are_not_failover_events() {
    let (_dir, outcome) = run_beside(Misbehaviour::DropsFirstTurns).await;
    let data = outcome.data.as_ref().unwrap();
    let control = system(&outcome, "control");
    let st = control.stages;
    assert_eq!(st.total(), 150);
    // About a fifth of the first turns are dropped.
    assert!((15..=45).contains(&st.broke_before), "{st:?}");
    assert_eq!(st.not_exercised, 0, "{:?}", control.stage_reasons);
    // CPR counts only the conversations that reached the fault, and those
    // kept their anchor: it forwards history.
    assert_eq!(control.events, st.failover);
    assert_eq!(control.cpr.rate, Some(1.0), "{:?}", control.cpr);
    assert_eq!(control.availability.rate, Some(1.0));
    assert!(control
        .cpr_by_fault
        .iter()
        .all(|g| g.rate.rate == Some(1.0)));
    // The conversation-level figure counts everything: about 80 %.
    let survival = control.survival.rate.unwrap();
    assert!((0.7..=0.9).contains(&survival), "survival {survival}");
    assert_eq!(control.survival.successes, st.failover);
    // The broken conversations say where they broke, and the table warns.
    let broke: Vec<_> = data
        .events
        .iter()
        .filter(|e| e.system == "control" && e.stage == Stage::BrokeBefore)
        .collect();
    assert!(broke
        .iter()
        .all(|e| e.stage_reason.starts_with("broke at turn 1:")));
    assert!(broke
        .iter()
        .all(|e| e.latency_ms == 0.0 && e.client_status.is_none()));
    assert!(control.stage_reasons[0]
        .reason
        .starts_with("broke at turn 1:"));
    let warning = control.warning.as_deref().unwrap();
    assert!(warning.contains("broke before it"), "{warning}");
    let table = render_table(&data.summary, Columns::Fit);
    assert!(table.contains("WARNING control: only"), "{table}");
    // The reference systems reach every fault and get no warning.
    for name in ["stateless", "history"] {
        let s = system(&outcome, name);
        assert_eq!(
            (s.stages.failover, s.warning.as_deref()),
            (150, None),
            "{name}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_gateway_that_never_calls_its_upstreams_has_no_cpr() {
    let (_dir, outcome) = run_beside(Misbehaviour::AnswersItself).await;
    let data = outcome.data.as_ref().unwrap();
    let control = system(&outcome, "control");
    assert_eq!(control.stages.not_exercised, 150, "{:?}", control.stages);
    assert_eq!((control.events, control.cpr.rate), (0, None));
    assert_eq!(control.cpr_clustered, None);
    assert_eq!(control.event_latency_ms.n, 0);
    let warning = control.warning.as_deref().unwrap();
    assert!(
        warning.contains("no upstream saw the faulted turn"),
        "{warning}"
    );
    assert!(
        data.attempts.iter().all(|a| a.system != "control"),
        "its upstreams saw nothing"
    );
    let table = render_table(&data.summary, Columns::Fit);
    let line = table.lines().find(|l| l.starts_with("control")).unwrap();
    assert!(
        line.contains("0/150") && line.contains("n/a (0/0)"),
        "{line}"
    );
}

/// The same gateway through the binary: `--fail-under-cpr` on a system with
/// no failover event fails (exit 1), it never passes by default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_under_cpr_fails_when_cpr_is_not_measured() {
    let (gateway, primary, fallback) = start_on_free_ports(Misbehaviour::AnswersItself).await;
    let dir = tempfile::tempdir().unwrap();
    let url = gateway.url();
    let out = dir.path().join("report");
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
            .args([
                "run",
                "--quiet",
                "--latency",
                "instant",
                "--fast-forward",
                "--no-builtin",
            ])
            .arg("--gateway")
            .arg(format!("control={url}"))
            .arg("--upstream-ports")
            .arg(format!("control={primary},{fallback}"))
            .args(["--fail-system", "control", "--fail-under-cpr", "1", "--out"])
            .arg(&out)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("CPR is n/a"), "{stderr}");
    drop(gateway);
}
