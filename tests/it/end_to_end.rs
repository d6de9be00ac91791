//! End-to-end behaviour of `run`: the verdict a user pastes into a write-up,
//! its reproducibility, and a clean stop on Ctrl-C.

use crate::common::gateways::{free_port, start_counted_on_free_ports, Misbehaviour};
use crate::common::{csv_rows, execute, gateway_spec, quick_run, repo, small_dataset};
use continuity_bench::continuity;
use continuity_bench::record::AttemptAction;
use continuity_bench::scoring::Verdict;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn reference_systems_separate_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = execute(&quick_run(dir.path(), 2)).await;
    let summary = &outcome.data.as_ref().unwrap().summary;
    let by_name = |n: &str| summary.systems.iter().find(|s| s.name == n).unwrap();
    let (stateless, history) = (by_name("stateless"), by_name("history"));
    for s in [stateless, history] {
        assert_eq!(s.events, 300, "{}: 150 conversations x 2 runs", s.name);
        assert_eq!(
            s.availability.successes, 300,
            "{}: every event answered 2xx",
            s.name
        );
        assert_eq!(s.bleed.events, 0, "{}: no context bleed", s.name);
        // Every event cost exactly one faulted primary attempt and one
        // fallback attempt: no hidden retries.
        assert!(
            (s.attempts.primary_mean - 1.0).abs() < 1e-9,
            "{}: {:?}",
            s.name,
            s.attempts
        );
        assert!(
            (s.attempts.fallback_mean - 1.0).abs() < 1e-9,
            "{}: {:?}",
            s.name,
            s.attempts
        );
    }
    assert_eq!(stateless.cpr.successes, 0);
    assert!(
        history.cpr.rate.unwrap() >= 0.99,
        "history CPR {}",
        history.cpr.rate.unwrap()
    );
    let clo = summary.clo.as_ref().expect("both reference systems ran");
    assert_eq!(clo.delta_ms.n, 300);
    for file in [
        "config.json",
        "turns.csv",
        "events.csv",
        "attempts.csv",
        "summary.json",
        "summary.md",
    ] {
        assert!(dir.path().join(file).is_file(), "{file} written");
    }
    // Every fault mode really happened on the wire.
    let actions: std::collections::BTreeSet<&str> = outcome
        .data
        .as_ref()
        .unwrap()
        .attempts
        .iter()
        .map(|a| a.action.as_str())
        .collect();
    for action in ["ok", "timeout_held", "api_error", "rate_limited"] {
        assert!(
            actions.contains(action),
            "attempt actions {actions:?} lack {action}"
        );
    }
    let held_and_abandoned = outcome
        .data
        .as_ref()
        .unwrap()
        .attempts
        .iter()
        .filter(|a| a.action == AttemptAction::TimeoutHeld && a.client_gave_up)
        .count();
    assert_eq!(
        held_and_abandoned, 200,
        "100 TIMEOUT events per run over 2 systems, each abandoned by the proxy"
    );
}

#[tokio::test(start_paused = true)]
async fn same_seed_same_verdicts() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&a, &b] {
        execute(&quick_run(dir.path(), 1)).await;
    }
    let strip = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
        let header = rows[0].clone();
        let latency = header.iter().position(|h| h == "latency_ms").unwrap();
        rows.into_iter()
            .map(|mut r| {
                r.remove(latency);
                r
            })
            .collect()
    };
    let ea = strip(csv_rows(&a.path().join("events.csv")));
    let eb = strip(csv_rows(&b.path().join("events.csv")));
    assert_eq!(ea.len(), 301);
    assert_eq!(ea, eb, "events.csv identical apart from latency");
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_still_writes_the_report() {
    let (gateway, primary, fallback, answered) =
        start_counted_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 3);
    config.latency = continuity_bench::upstream::LatencyProfile::REALISTIC;
    config.concurrency = 20;
    config.systems.builtin = false;
    config.systems.gateways = vec![gateway_spec("control", gateway.url(), primary, fallback)];
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        // Once the replay is under way (the preflight, which Ctrl-C also
        // interrupts, writing nothing, is one answer): its answers are the
        // signal, not a sleep.
        answered.at_least(40, Duration::from_secs(120)).await;
        trigger.cancel();
    });
    let outcome = continuity::execute(&config, cancel, std::time::Instant::now())
        .await
        .unwrap();
    assert!(outcome.interrupted);
    let events = &outcome.data.as_ref().unwrap().events;
    assert!(
        events.len() < 450,
        "stopped early, got {} events",
        events.len()
    );
    assert!(dir.path().join("summary.json").is_file());
    assert!(events.iter().all(|e| e.verdict != Verdict::Undetermined));
    assert!(outcome
        .data
        .as_ref()
        .unwrap()
        .summary
        .notes
        .iter()
        .any(|n| n.contains("interrupted")));
}

/// Exit code of a quick `run` (instant latency, fast-forward, a generous
/// proxy timeout so a loaded test machine does not turn a slow fallback
/// answer into an error) with `extra` flags, writing its report to `out`.
fn quick_run_exit_code(extra: &[&str], out: &std::path::Path) -> Option<i32> {
    run_exit_code(extra, "3s", out)
}

/// A fast-forward run's exit code, with the given attempt timeout.
fn run_exit_code(extra: &[&str], attempt_timeout: &str, out: &std::path::Path) -> Option<i32> {
    std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["run", "--quiet", "--latency", "instant", "--fast-forward"])
        .args(["--attempt-timeout", attempt_timeout])
        .args(extra)
        .arg("--out")
        .arg(out)
        .current_dir(repo(""))
        .status()
        .unwrap()
        .code()
}

#[test]
fn fail_under_cpr_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let code = quick_run_exit_code(
        &["--fail-system", "stateless", "--fail-under-cpr", "50"],
        &dir.path().join("a"),
    );
    assert_eq!(code, Some(1), "stateless CPR 0 % is under 50 %");
    // The passing side must not depend on the machine: with the paper
    // profile's TIMEOUT mode the fallback has what is left of a 3 s attempt
    // timeout, which a loaded machine can spend. Without it (503 and 429
    // only, answered at once) and with a 60 s attempt timeout, no load comes
    // near the margin.
    let profile = std::fs::read_to_string(repo("fault_profiles/paper.toml")).unwrap();
    let start = profile.find("[modes.timeout]").unwrap();
    let end = profile.find("[modes.api_error]").unwrap();
    let errors_only = dir.path().join("errors-only.toml");
    std::fs::write(
        &errors_only,
        format!("{}{}", &profile[..start], &profile[end..]),
    )
    .unwrap();
    let errors_only = errors_only.to_str().unwrap();
    let passing = |out: &str| {
        run_exit_code(
            &["--faults", errors_only, "--fail-under-cpr", "99"],
            "60s",
            &dir.path().join(out),
        )
    };
    assert_eq!(passing("b"), Some(0), "history CPR is at least 99 %");
    // A report is never overwritten: the same --out again is refused.
    assert_eq!(
        passing("b"),
        Some(2),
        "an --out that holds a report is refused"
    );
}

#[test]
fn a_typo_in_a_fault_profile_names_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let profile = std::fs::read_to_string(repo("fault_profiles/paper.toml")).unwrap();
    let bad = dir.path().join("typo.toml");
    std::fs::write(&bad, profile.replace("hold = \"30s\"", "hodl = \"30s\"")).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["run", "--quiet", "--faults"])
        .arg(&bad)
        .current_dir(repo(""))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("typo.toml") && stderr.contains("\"hodl\""),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_gateway_stops_the_run_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (dead, primary, fallback) = (free_port(), free_port(), free_port());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args([
            "run",
            "--quiet",
            "--no-builtin",
            "--gateway-wait",
            "1s",
            "--gateway",
        ])
        .arg(format!("mygw=http://127.0.0.1:{dead}"))
        .arg("--upstream-ports")
        .arg(format!("mygw={primary},{fallback}"))
        .arg("--header")
        .arg("mygw:Authorization=env:CONTINUITY_TEST_SECRET")
        .env("CONTINUITY_TEST_SECRET", "Bearer do-not-print-me")
        .arg("--out")
        .arg(dir.path())
        .current_dir(repo(""))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did not answer"), "{stderr}");
    assert!(
        stderr.contains(&format!("http://127.0.0.1:{primary}/v1")),
        "shows the expected config: {stderr}"
    );
    assert!(
        !stderr.contains("do-not-print-me"),
        "the header value stays secret"
    );
    assert!(
        !dir.path().join("summary.json").exists(),
        "no run, no report"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_re_renders_the_same_summary_from_the_csv_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    config.replay = continuity_bench::config::Replay::FastForward;
    execute(&config).await;
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let before = read(&dir.path().join("summary.json"));
    std::fs::remove_file(dir.path().join("summary.json")).unwrap();
    std::fs::remove_file(dir.path().join("cpr_by_fault.svg")).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .arg("report")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("history"));
    assert_eq!(read(&dir.path().join("summary.json")), before);
    assert!(dir.path().join("cpr_by_fault.svg").is_file());
}

/// `generate` to a pipe that closes early ends quietly, and an existing
/// `--out` is kept unless `--force`.
#[test]
fn generate_handles_a_closed_pipe_and_keeps_existing_files() {
    use std::io::Read as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["generate", "--conversations", "300"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close the pipe, as `| head -1` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(first.starts_with(b"{\"id\":\"c001\""));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.jsonl");
    std::fs::write(&out, "keep me").unwrap();
    let status = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
            .args(["generate", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = status(&[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    assert_eq!(status(&["--force"]).status.code(), Some(0));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(repo("datasets/continuity-150.jsonl")).unwrap()
    );
}

/// What can be checked before the replay is checked before any system
/// starts: an unwritable `--out`, a `--fail-system` that names no system.
/// "Before" is shown by a gateway port that nobody may connect to: the
/// process exits 2 and the listener has no connection waiting.
#[test]
fn bad_output_and_unknown_fail_system_stop_before_any_request() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let gateway = format!("gw=http://{}", listener.local_addr().unwrap());
    let upstreams = format!("gw={},{}", free_port(), free_port());
    let run = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
            .arg("run")
            .args(["--gateway", &gateway, "--upstream-ports", &upstreams])
            .args(args)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let nobody_called = || {
        assert_eq!(
            listener.accept().map(|_| ()).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "the gateway was called"
        );
    };
    let (code, stderr) = run(&["--out", "/proc/x"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("/proc/x") && stderr.contains("--out"),
        "{stderr}"
    );
    nobody_called();
    let (code, stderr) = run(&["--fail-system", "histroy", "--fail-under-cpr", "99"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--fail-system \"histroy\"") && stderr.contains("stateless, history, gw"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "one line naming the cause: {stderr}"
    );
    nobody_called();
}

/// With no path argument, the built-in dataset and fault profile make the
/// main job work from any directory.
#[test]
fn runs_from_any_directory_with_no_path_argument() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["run", "--runs", "1", "--quiet", "--latency", "instant"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let reports: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1);
    let config = std::fs::read_to_string(reports[0].join("config.json")).unwrap();
    assert!(
        config.contains("datasets/continuity-150.jsonl (built in)"),
        "{config}"
    );
    assert!(reports[0].join("summary.md").is_file());
    // The default dataset's table fits a 100-column terminal; `--wide`
    // (here through `report DIR`) keeps every column, wider than that.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("system"), "{stdout}");
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    let wide = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .arg("report")
        .arg(&reports[0])
        .arg("--wide")
        .output()
        .unwrap();
    let wide = String::from_utf8_lossy(&wide.stdout);
    let header = wide.lines().next().unwrap_or_default();
    assert!(
        header.contains("clustered 95 %") && header.contains("survival"),
        "{wide}"
    );
    assert!(header.chars().count() > 100, "{wide}");
}

/// `--max-in-flight` holds requests back without changing what a run
/// finds: every conversation still runs, the peak stays under the cap, and
/// the report says which limit set it.
#[tokio::test(start_paused = true)]
async fn a_cap_on_requests_in_flight_holds_them_back_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(dir.path(), 1);
    // Forty conversations and a profile without TIMEOUT: with three
    // requests in flight, each held connection would cost its attempt
    // timeout in turn.
    config.dataset = continuity_bench::source::Source::File(small_dataset(dir.path(), CAPPED));
    let profile = dir.path().join("errors.toml");
    std::fs::write(
        &profile,
        "name = \"errors\"\n[modes.api_error]\nweight = 1\n[modes.rate_limit]\nweight = 1\n",
    )
    .unwrap();
    config.faults = continuity_bench::source::Source::File(profile);
    config.max_in_flight = Some(3);
    let outcome = execute(&config).await;
    let data = outcome.data.as_ref().unwrap();
    let flight = data.config.requests_in_flight;
    assert_eq!(flight.cap, Some(3));
    assert_eq!(
        flight.bound,
        Some(continuity_bench::driver::Bound::MaxInFlight)
    );
    let peak = flight.peak.unwrap();
    assert!((1..=3).contains(&peak), "peak {peak}");
    for s in &data.summary.systems {
        assert_eq!(s.events, CAPPED as u64, "{}", s.name);
    }
    let notes = data.summary.notes.join("\n");
    assert!(
        notes.contains("at most 3 at once, set by --max-in-flight"),
        "{notes}"
    );
}

/// Conversations of the capped run.
const CAPPED: usize = 40;

/// A fast-forward run sends only each conversation's final turn: a profile
/// that faults an earlier turn (the built-in `outage`, turns 3 to 5) is
/// refused before any request, naming the turn and the fix, and nothing
/// is written.
#[test]
fn a_fast_forward_run_refuses_a_profile_that_faults_an_earlier_turn() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["run", "--quiet", "--fast-forward", "--faults", "outage"])
        .arg("--out")
        .arg(&out)
        .current_dir(repo(""))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("faults turn 3") && stderr.contains("drop --fast-forward"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
}
