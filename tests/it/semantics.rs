//! Positive and negative controls of the failover-semantics check: a gateway
//! that fails over on every error (a 401 included) and one that never fails
//! over must each be caught on exactly the cases they get wrong, while the
//! reference proxies, checked beside them, follow the decision tree.

use crate::common::gateways::{start_on_free_ports, Misbehaviour, COOLDOWN};
use continuity_bench::config::{GatewaySpec, SemanticsConfig, SystemsConfig};
use continuity_bench::semantics::verdict::CaseStatus as Status;
use continuity_bench::semantics::{self, SemanticsReport, SystemResult};
use std::time::Duration;

/// Checks the reference proxies and one control gateway.
async fn check_with_control(kind: Misbehaviour) -> SemanticsReport {
    check_with_control_waiting(kind, Duration::from_secs(1), false).await
}

/// As [`check_with_control`], re-sending a case that skipped the primary
/// after `cooldown_wait` (zero: never), with streamed requests if `stream`.
async fn check_with_control_waiting(
    kind: Misbehaviour,
    cooldown_wait: Duration,
    stream: bool,
) -> SemanticsReport {
    let (gateway, primary, fallback) = start_on_free_ports(kind).await;
    let config = SemanticsConfig {
        seed: 42,
        attempt_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(20),
        systems: SystemsConfig {
            builtin: true,
            gateways: vec![GatewaySpec {
                name: "control".into(),
                url: gateway.url(),
                primary_port: primary,
                fallback_port: fallback,
                headers: Vec::new(),
            }],
            model: continuity_bench::config::DRIVER_MODEL.to_string(),
            gateway_wait: Duration::from_secs(5),
            max_response_bytes: continuity_bench::systems::DEFAULT_MAX_RESPONSE_BYTES,
        },
        stream,
        cooldown_wait,
        json: None,
        contracts: std::sync::Arc::new(continuity_bench::contracts::Contracts::default()),
    };
    semantics::execute(&config).await.unwrap()
}

fn system<'a>(report: &'a SemanticsReport, name: &str) -> &'a SystemResult {
    report.systems.iter().find(|s| s.system == name).unwrap()
}

/// The ids of the cases of `name` with `status`.
fn cases_with(report: &SemanticsReport, name: &str, status: Status) -> Vec<String> {
    system(report, name)
        .cases
        .iter()
        .filter(|c| c.verdict.status == status)
        .map(|c| c.case.clone())
        .collect()
}

fn assert_reference_systems_follow_the_tree(report: &SemanticsReport) {
    for name in ["stateless", "history"] {
        let s = system(report, name);
        assert_eq!(s.cases.len(), semantics::cases::CASES.len());
        for c in &s.cases {
            assert_eq!(
                c.verdict.status,
                Status::Expected,
                "{name} {}: {:?}",
                c.case,
                c.verdict
            );
            assert!(
                c.verdict.notes.is_empty(),
                "{name} {}: {:?}",
                c.case,
                c.verdict
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_fails_over_on_401_is_caught() {
    let report = check_with_control(Misbehaviour::FallsBackOnAnyError).await;
    assert_reference_systems_follow_the_tree(&report);
    assert_eq!(
        cases_with(&report, "control", Status::Deviates),
        ["400", "401", "402", "403"]
    );
    let c401 = system(&report, "control")
        .cases
        .iter()
        .find(|c| c.case == "401")
        .unwrap();
    assert!(
        c401.verdict.finding.contains("failed over on a 401"),
        "{:?}",
        c401.verdict
    );
    assert_eq!(c401.observation.primary_attempts, 1);
    assert_eq!(c401.observation.fallback_attempts, 1);
    assert_eq!(report.deviations(), 4);
    assert!(report
        .render()
        .contains("control 401: failed over on a 401"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_never_fails_over_is_caught() {
    let report = check_with_control(Misbehaviour::NeverFallsBack).await;
    assert_reference_systems_follow_the_tree(&report);
    assert_eq!(
        cases_with(&report, "control", Status::Deviates),
        ["404", "429", "500", "502", "503", "504", "timeout", "cut"]
    );
    assert_eq!(
        cases_with(&report, "control", Status::Expected),
        ["ok", "schema", "400", "401", "402", "403"]
    );
    let timeout = system(&report, "control")
        .cases
        .iter()
        .find(|c| c.case == "timeout")
        .unwrap();
    assert!(
        timeout
            .verdict
            .finding
            .contains("did not fail over on a timeout; the client got HTTP 504"),
        "{:?}",
        timeout.verdict
    );
    assert_eq!(timeout.observation.fallback_attempts, 0);
}

/// The command line: exit 1 when a gateway deviates, the findings printed,
/// and the same results written as JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_exits_1_on_a_deviation_and_writes_json() {
    let (gateway, primary, fallback) = start_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("semantics.json");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"));
    command
        .args(["semantics", "--no-builtin", "--gateway"])
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .arg("--json")
        .arg(&json);
    // The control gateway serves on this runtime while the command runs.
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("control 401: failed over on a 401"),
        "{stdout}"
    );
    assert!(
        stdout.contains("4 deviate from the decision tree"),
        "{stdout}"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = written["systems"][0]["cases"].as_array().unwrap();
    let c401 = cases.iter().find(|c| c["case"] == "401").unwrap();
    assert_eq!(c401["verdict"]["status"], "deviates");
    assert_eq!(c401["expected"], "pass through");
    assert_eq!(c401["observation"]["fallback_attempts"], 1);
}

/// A gateway that cools its primary down after a failure sends the next
/// case straight to the fallback. Without waiting, those cases are
/// inconclusive (never counted as a pass); waiting out the cooldown and
/// sending again recovers the real verdicts, with a note saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_cooldown_is_waited_out_or_reported_inconclusive() {
    let report =
        check_with_control_waiting(Misbehaviour::CoolsDownPrimary, Duration::ZERO, false).await;
    let inconclusive = cases_with(&report, "control", Status::Inconclusive);
    assert!(inconclusive.len() >= 5, "{inconclusive:?}");
    assert!(!inconclusive.contains(&"ok".to_string()));
    assert_eq!(report.inconclusive(), inconclusive.len());

    let report =
        check_with_control_waiting(Misbehaviour::CoolsDownPrimary, COOLDOWN * 2, false).await;
    assert_reference_systems_follow_the_tree(&report);
    assert_eq!(
        cases_with(&report, "control", Status::Inconclusive),
        Vec::<String>::new()
    );
    assert_eq!(
        cases_with(&report, "control", Status::Deviates),
        ["400", "401", "402", "403"]
    );
    let resent = system(&report, "control")
        .cases
        .iter()
        .filter(|c| c.verdict.notes.iter().any(|n| n.contains("was skipped")))
        .count();
    assert!(resent >= 5, "{resent}");
}

/// Provider parameters (max_tokens, seed, temperature, top_p, user) must
/// reach the fallback: a gateway that rebuilds the fallback's body from
/// `model` and `messages` alone is noted on every case it failed over,
/// while the reference proxies forward them all (checked above: no notes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parameters_dropped_at_the_fallback_are_noted() {
    let report = check_with_control(Misbehaviour::DropsParams).await;
    assert_reference_systems_follow_the_tree(&report);
    let control = system(&report, "control");
    let note =
        "the fallback did not receive the client's max_tokens, seed, temperature, top_p, user";
    for c in &control.cases {
        let failed_over = c.observation.fallback_attempts > 0;
        assert_eq!(
            c.verdict.notes.iter().any(|n| n == note),
            failed_over,
            "{}: {:?}",
            c.case,
            c.verdict.notes
        );
        assert_eq!(
            c.observation.primary_params_missing,
            Some(Vec::new()),
            "{}",
            c.case
        );
    }
    assert!(
        control
            .cases
            .iter()
            .filter(|c| c.observation.fallback_attempts > 0)
            .count()
            >= 11
    );
}

/// Streamed requests take the same decision tree: a gateway that fails
/// over plain requests but never streamed ones is caught with `--stream` on
/// every case that must fail over, while the reference proxies follow the
/// tree for streams too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_does_not_fail_over_streams_is_caught_with_stream() {
    let report =
        check_with_control_waiting(Misbehaviour::NoStreamFailover, Duration::from_secs(1), true)
            .await;
    assert_reference_systems_follow_the_tree(&report);
    assert_eq!(
        cases_with(&report, "control", Status::Deviates),
        ["404", "429", "500", "502", "503", "504", "timeout"]
    );
    // The cut stream reaches its client as a 504: visibly broken, as it
    // must be.
    assert_eq!(
        cases_with(&report, "control", Status::Expected),
        ["ok", "schema", "400", "401", "402", "403", "cut"]
    );
}

/// A stream that breaks off after its first bytes cannot be replaced, so
/// the client must see the break: a gateway that ends the cut stream with
/// `data: [DONE]` hands the client a truncated answer that looks complete
/// and is caught; the reference proxies let the break through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_masks_a_cut_stream_is_caught() {
    let report =
        check_with_control_waiting(Misbehaviour::MasksCutStreams, Duration::from_secs(1), true)
            .await;
    assert_reference_systems_follow_the_tree(&report);
    for name in ["stateless", "history"] {
        let cut = system(&report, name)
            .cases
            .iter()
            .find(|c| c.case == "cut")
            .unwrap();
        assert!(
            cut.observation
                .client_error
                .as_deref()
                .is_some_and(|e| e.contains("broken off")),
            "{name}: {:?}",
            cut.observation
        );
    }
    assert_eq!(
        cases_with(&report, "control", Status::Deviates),
        ["400", "401", "402", "403", "cut"]
    );
    let cut = system(&report, "control")
        .cases
        .iter()
        .find(|c| c.case == "cut")
        .unwrap();
    assert!(
        cut.verdict.finding.contains("as a complete answer"),
        "{:?}",
        cut.verdict
    );
    assert_eq!(cut.observation.fallback_attempts, 0);
}

/// The structured-output case: a gateway that strips the outer braces of
/// every answer is caught by the `schema` contract on it (and every case
/// it answered), while the reference systems keep every answer's contract.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_breaks_structured_output_is_caught_by_the_schema_contract() {
    let report = check_with_control(Misbehaviour::StripsJsonBraces).await;
    assert_reference_systems_follow_the_tree(&report);
    let control = system(&report, "control");
    let schema = control.cases.iter().find(|c| c.case == "schema").unwrap();
    assert_eq!(
        schema.verdict.status,
        Status::Deviates,
        "{:?}",
        schema.verdict
    );
    assert!(
        schema
            .observation
            .contract_violations
            .iter()
            .any(|v| v.starts_with("schema: ")),
        "{:?}",
        schema.observation
    );
    for name in ["stateless", "history"] {
        for c in &system(&report, name).cases {
            assert!(
                c.observation.contract_violations.is_empty(),
                "{name} {}",
                c.case
            );
        }
    }
}
