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
fn terminate(child: Child) -> (Option<i32>, String) {
    let (code, _, stderr) = send(child, "-TERM");
    (code, stderr)
}

/// Sends `signal` (`-TERM`, `-INT`) to `child`; its exit code, the rest of
/// its stdout (when not taken) and its stderr.
fn send(mut child: Child, signal: &str) -> (Option<i32>, String, String) {
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stdout = child.stdout.take().map(|mut out| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = out.read_to_string(&mut text);
            text
        })
    });
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let code = child.wait().unwrap().code();
    let stdout = stdout.map(|t| t.join().unwrap()).unwrap_or_default();
    (code, stdout, stderr)
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
fn the_proxy_stops_with_143_on_sigterm_and_130_on_sigint() {
    for (signal, status) in [("-TERM", 143), ("-INT", 130)] {
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
        let (code, _, stderr) = send(child, signal);
        assert_eq!(code, Some(status), "{signal}: {stderr}");
    }
}

#[test]
fn the_upstreams_stop_with_130_on_sigint() {
    let mut child = binary()
        .args(["upstreams", "--latency", "instant"])
        .arg("--primary")
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--fallback")
        .arg(format!("127.0.0.1:{}", free_port()))
        .spawn()
        .unwrap();
    wait_for_stdout(&mut child, "press Ctrl-C to stop");
    let (code, _, stderr) = send(child, "-INT");
    assert_eq!(code, Some(130), "{stderr}");
}

/// The canary, offline, stopped by `signal` once its first round is
/// printed: it writes its report and state and exits with `status`.
fn canary_stops(signal: &str, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("canary");
    let mut child = binary()
        .args(["canary", "--out"])
        .arg(&out)
        .spawn()
        .unwrap();
    wait_for_stdout(&mut child, "Round 1 at");
    let (code, _, stderr) = send(child, signal);
    assert_eq!(code, Some(status), "{signal}: {stderr}");
    for file in ["report.md", "summary.json", "state.json"] {
        assert!(out.join(file).is_file(), "{file} written: {stderr}");
    }
}

#[test]
fn the_canary_exits_143_on_sigterm() {
    canary_stops("-TERM", 143);
}

#[test]
fn the_canary_exits_130_on_sigint() {
    canary_stops("-INT", 130);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantics_exits_143_on_sigterm_mid_catalogue() {
    let (gateway, primary, fallback, answered) =
        start_counted_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let child = binary()
        .args(["semantics", "--fast", "--no-builtin"])
        .arg("--gateway")
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .spawn()
        .unwrap();
    // A case is under way: its request reached the gateway.
    answered.at_least(1, REACH).await;
    let (code, _, stderr) = tokio::task::spawn_blocking(move || send(child, "-TERM"))
        .await
        .unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grade_names_sigterm_in_its_page_and_exits_143() {
    let (gateway, primary, fallback, answered) =
        start_counted_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("grade");
    let child = binary()
        .args(["grade", "--quiet", "--no-builtin", "--latency", "realistic"])
        .arg("--gateway")
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    answered.at_least(30, REACH).await;
    let (code, _, stderr) = tokio::task::spawn_blocking(move || send(child, "-TERM"))
        .await
        .unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    let page = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(page.contains("Interrupted (SIGTERM)"), "{page}");
    let paper = std::fs::read_to_string(out.join("paper/summary.md")).unwrap();
    assert!(paper.contains("Interrupted (SIGTERM)"), "{paper}");
    drop(gateway);
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
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || send(child, "-TERM"))
        .await
        .unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    for file in ["summary.md", "config.json", "turns.csv", "events.csv"] {
        assert!(dir.path().join(file).is_file(), "{file} written: {stderr}");
    }
    // The report and the table name the signal, not Ctrl-C.
    assert!(
        stdout.starts_with("INTERRUPTED (SIGTERM)"),
        "{stdout}\n{stderr}"
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("**Interrupted (SIGTERM).**") && !summary.contains("Ctrl-C"),
        "{summary}"
    );
    let json = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    assert!(json.contains(r#""interrupted_by": "sigterm""#), "{json}");
    drop(gateway);
}
