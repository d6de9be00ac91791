//! SIGTERM (what `timeout`, systemd, Docker and CI send) to the real
//! binary: every command writes its files as after Ctrl-C and exits 143;
//! an output path that cannot be written is refused before the work
//! starts (exit 2). Each signal goes once the command says it is ready (a
//! line on stdout, answers counted at a control gateway), never after a
//! fixed sleep.

use crate::common::gateways::{free_port, start_counted_on_free_ports, Misbehaviour};
use crate::common::repo;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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

/// Reads `child`'s stdout until a line holds `needle` (on a thread, so a
/// child that never says it panics after [`REACH`] instead of hanging);
/// returns the lines read.
fn wait_for_stdout(child: &mut Child, needle: &'static str) -> Vec<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut read = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let found = line.contains(needle);
            read.push(line);
            if found {
                let _ = tx.send(read.clone());
            }
        }
    });
    rx.recv_timeout(REACH)
        .unwrap_or_else(|e| panic!("no stdout line with {needle:?}: {e}"))
}

/// Sends SIGTERM to `child`; its exit code and stderr.
fn terminate(mut child: Child) -> (Option<i32>, String) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (child.wait().unwrap().code(), stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstreams_write_their_attempts_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let attempts = dir.path().join("attempts.csv");
    let (primary, fallback) = (free_port(), free_port());
    let mut child = binary()
        .args(["upstreams", "--latency", "instant"])
        .arg("--primary")
        .arg(format!("127.0.0.1:{primary}"))
        .arg("--fallback")
        .arg(format!("127.0.0.1:{fallback}"))
        .arg("--attempts")
        .arg(&attempts)
        .spawn()
        .unwrap();
    let child = tokio::task::spawn_blocking(move || {
        wait_for_stdout(&mut child, "press Ctrl-C to stop");
        child
    })
    .await
    .unwrap();
    let answered = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
        .post(format!("http://127.0.0.1:{fallback}/v1/chat/completions"))
        .json(&serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status().as_u16(), 200);
    let (code, stderr) = tokio::task::spawn_blocking(move || terminate(child))
        .await
        .unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    let written = std::fs::read_to_string(&attempts).unwrap();
    assert_eq!(
        written.lines().count(),
        2,
        "a header and the attempt: {written}"
    );
}

#[test]
fn an_attempts_file_that_cannot_be_written_is_refused_at_start() {
    let output = binary()
        .args(["upstreams", "--attempts", "/no/such/dir/a.csv"])
        .arg("--primary")
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--fallback")
        .arg(format!("127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--attempts"), "{stderr}");
}

#[test]
fn the_proxy_stops_on_sigterm_with_143() {
    let mut child = binary()
        .args(["proxy", "--mode", "history"])
        .arg("--listen")
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--primary")
        .arg(format!("http://127.0.0.1:{}", free_port()))
        .arg("--fallback")
        .arg(format!("http://127.0.0.1:{}", free_port()))
        .spawn()
        .unwrap();
    wait_for_stdout(&mut child, "proxy listening on");
    let (code, stderr) = terminate(child);
    assert_eq!(code, Some(143), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_writes_the_report_of_what_finished_on_sigterm() {
    let (gateway, primary, fallback, answered) =
        start_counted_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let dir = tempfile::tempdir().unwrap();
    let child = binary()
        .args(["run", "--quiet", "--no-builtin", "--latency", "realistic"])
        .arg("--gateway")
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .arg("--out")
        .arg(dir.path())
        .spawn()
        .unwrap();
    // Well into the replay: answers went out.
    answered.at_least(30, REACH).await;
    let (code, stderr) = tokio::task::spawn_blocking(move || terminate(child))
        .await
        .unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    for file in ["summary.md", "config.json", "turns.csv", "events.csv"] {
        assert!(dir.path().join(file).is_file(), "{file} written: {stderr}");
    }
    drop(gateway);
}
