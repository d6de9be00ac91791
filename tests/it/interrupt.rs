//! Ctrl-C (a real SIGINT to the binary) in every phase: the preflight wait,
//! the replay, and the judging after the replay. Each exits 130 and soon; a
//! report is written when anything finished, and nothing when nothing did.
//!
//! Each signal is sent once the phase is reached, as its readiness signal
//! shows (a line on stderr, answers counted at a control gateway, a request
//! at the judge), never after a fixed sleep.

use crate::common::gateways::{
    free_port, start_counted_on_free_ports, start_on_free_ports, Misbehaviour,
};
use crate::common::repo;
use continuity_bench::judge::sim;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest time from SIGINT to exit. What it tells apart: a binary that
/// stops at once (well under a second, even a debug build on a loaded
/// machine) from one that ignores the signal, which would go on waiting
/// its 60 s for the gateway or the judge, or replaying minutes of runs.
const PROMPT: Duration = Duration::from_secs(20);

/// Bound on reaching a phase: a hang, not a slow machine.
const REACH: Duration = Duration::from_secs(120);

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_continuity-bench"));
    command
        .current_dir(repo(""))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Sends SIGINT to `child` and returns its exit code, the rest of its
/// stderr (after `seen`, the lines already read) and how long it took to
/// exit.
fn interrupt(mut child: Child, seen: Option<StderrLines>) -> (Option<i32>, String, Duration) {
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut stderr = String::new();
    match seen {
        Some(lines) => {
            for line in lines.rx {
                stderr.push_str(&line);
                stderr.push('\n');
            }
        }
        None => {
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
        }
    }
    let status = child.wait().unwrap();
    (status.code(), stderr, sent.elapsed())
}

/// The lines of a child's stderr, read on a thread as they come.
struct StderrLines {
    rx: mpsc::Receiver<String>,
}

impl StderrLines {
    fn of(child: &mut Child) -> Self {
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StderrLines { rx }
    }

    /// Waits for a line containing `needle`; panics with what was read if
    /// none comes within [`REACH`] or stderr closes first.
    fn wait_for(&self, needle: &str) {
        let until = Instant::now() + REACH;
        let mut read = Vec::new();
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return,
                Ok(line) => read.push(line),
                Err(e) => panic!("no line with {needle:?} ({e}); stderr so far: {read:?}"),
            }
        }
    }
}

#[test]
fn during_the_preflight_wait_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let nobody = free_port();
    let mut child = binary()
        .args(["run", "--quiet", "--no-builtin", "--gateway-wait", "60s"])
        .arg("--gateway")
        .arg(format!("gw=http://127.0.0.1:{nobody}"))
        .arg("--upstream-ports")
        .arg(format!("gw={},{}", free_port(), free_port()))
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    let lines = StderrLines::of(&mut child);
    // The preflight failed once and the wait began.
    lines.wait_for("retrying for up to 1m (--gateway-wait)");
    let (code, stderr, took) = interrupt(child, Some(lines));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(took < PROMPT, "took {took:?}");
    assert!(stderr.contains("no report written"), "{stderr}");
    assert!(!out.exists(), "no empty report directory is left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_the_replay_the_report_of_what_finished_is_written() {
    let (gateway, primary, fallback, answered) =
        start_counted_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let dir = tempfile::tempdir().unwrap();
    let child = binary()
        .args([
            "run",
            "--quiet",
            "--no-builtin",
            "--latency",
            "realistic",
            "--runs",
            "3",
        ])
        .arg("--gateway")
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .arg("--out")
        .arg(dir.path())
        .spawn()
        .unwrap();
    // Well into the replay: answers went out (the preflight's is one), and
    // with realistic latency, a hundred conversations are in flight.
    answered.at_least(30, REACH).await;
    let (code, stderr, took) = tokio::task::spawn_blocking(move || interrupt(child, None))
        .await
        .unwrap();
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
    drop(gateway);
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
    let give_up = Instant::now() + REACH;
    while judge.requests() == 0 {
        assert!(Instant::now() < give_up, "the judge was never asked");
        // A poll of the judge's request count, bounded by `give_up`: the count decides.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, stderr, took) = tokio::task::spawn_blocking(move || interrupt(child, None))
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
