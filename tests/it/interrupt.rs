//! Ctrl-C (a real SIGINT to the binary) in every phase: the preflight wait,
//! the replay, and the judging after the replay. Each exits 130 within two
//! seconds; a report is written when anything finished, and nothing when
//! nothing did.

use crate::common::gateways::{free_port, start_on_free_ports, Misbehaviour};
use crate::common::repo;
use continuity_bench::judge::sim;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest time from SIGINT to exit.
const PROMPT: Duration = Duration::from_secs(2);

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_continuity-bench"));
    command
        .current_dir(repo(""))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Sends SIGINT to `child` and returns its exit code, stderr and how long it
/// took to exit.
fn interrupt(child: Child) -> (Option<i32>, String, Duration) {
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        sent.elapsed(),
    )
}

#[test]
fn during_the_preflight_wait_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let nobody = free_port();
    let child = binary()
        .args(["run", "--quiet", "--no-builtin", "--gateway-wait", "60s"])
        .arg("--gateway")
        .arg(format!("gw=http://127.0.0.1:{nobody}"))
        .arg("--upstream-ports")
        .arg(format!("gw={},{}", free_port(), free_port()))
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let (code, stderr, took) = interrupt(child);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(took < PROMPT, "took {took:?}");
    assert!(stderr.contains("no report written"), "{stderr}");
    assert!(!out.exists(), "no empty report directory is left behind");
}

#[test]
fn during_the_replay_the_report_of_what_finished_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let child = binary()
        .args([
            "run",
            "--quiet",
            "--latency",
            "realistic",
            "--runs",
            "3",
            "--out",
        ])
        .arg(dir.path())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(4000));
    let (code, stderr, took) = interrupt(child);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(took < PROMPT, "took {took:?}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("**Interrupted (Ctrl-C).**"), "{summary}");
    let config = std::fs::read_to_string(dir.path().join("config.json")).unwrap();
    assert!(config.contains("\"interrupted\": true"), "{config}");
    // The conversations cut short keep the turns they sent.
    let turns = std::fs::read_to_string(dir.path().join("turns.csv")).unwrap();
    assert!(
        turns.contains("interrupted (Ctrl-C)"),
        "partial conversations are kept"
    );
}

/// The judge phase of a run whose every answer needs a judge, with a judge
/// that never answers: Ctrl-C there writes the report, the events it did
/// not judge left undetermined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_judging_the_report_is_written() {
    let (gateway, primary, fallback) = start_on_free_ports(Misbehaviour::AsksBack).await;
    let judge = sim::start(sim::Behaviour::Hang).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_path_buf();
    let child = binary()
        .env("CB_TEST_JUDGE_KEY", "judge-key-not-secret")
        .args([
            "run",
            "--quiet",
            "--latency",
            "instant",
            "--fast-forward",
            "--no-builtin",
        ])
        .arg("--gateway")
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .args(["--judge", &judge.url(), "--judge-model", "m"])
        .args([
            "--judge-key-env",
            "CB_TEST_JUDGE_KEY",
            "--judge-timeout",
            "60s",
        ])
        .arg("--judge-cache")
        .arg(dir.path().join("cache.jsonl"))
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    // Wait until the judge is being asked (the replay is over).
    let give_up = Instant::now() + Duration::from_secs(60);
    while judge.requests() == 0 {
        assert!(Instant::now() < give_up, "the judge was never asked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, stderr, took) = tokio::task::spawn_blocking(move || interrupt(child))
        .await
        .unwrap();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(took < PROMPT, "took {took:?}");
    let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
    assert!(events.lines().count() > 100, "every event is in the report");
    assert!(
        events.contains(",undetermined,"),
        "unjudged events stay undetermined"
    );
    drop(gateway);
}
