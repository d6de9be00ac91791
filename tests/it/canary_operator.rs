//! The canary as an operator meets it: the real binary, running with
//! `--interval 2s`, and a person beside it. Each phase is awaited on a
//! readiness line the canary prints (`Round N at ...`, printed once the
//! round's state, log and ignore list are written), never on a sleep; the
//! waits are bounded so that a hang fails the test instead of holding it.
//!
//! - `canary release` while it runs: the route leaves `ignore.json` at once
//!   and stays released in the rounds that follow;
//! - a second canary on the same state exits 2 at once, naming the first;
//! - an endpoint answering 401 to everything: exit 2 within seconds, the
//!   message naming the key's variable.

use crate::common::canary::*;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_continuity-bench");

/// Longest wait for one readiness line (a bound, not a pace).
const READY_WITHIN: Duration = Duration::from_secs(90);

/// A running canary and its stdout, line by line.
struct Running {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .arg("canary")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for the line that starts round `n`'s summary.
    fn round(&mut self, n: u64) {
        let want = format!("Round {n} at ");
        loop {
            let line = self
                .lines
                .recv_timeout(READY_WITHIN)
                .unwrap_or_else(|_| panic!("no `{want}` line; saw {:?}", self.seen));
            let found = line.starts_with(&want);
            self.seen.push(line);
            if found {
                return;
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // The canary this test started, by its own handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Files {
    _dir: tempfile::TempDir,
    state: PathBuf,
    ignore: PathBuf,
    log: PathBuf,
    out: PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    Files {
        state: dir.path().join("state.json"),
        ignore: dir.path().join("ignore.json"),
        log: dir.path().join("decisions.jsonl"),
        out: dir.path().join("report"),
        _dir: dir,
    }
}

const ROUTES: &str = "atlas/bf16,borealis/fp8,cirrus,granite/fp8,harbor";

#[test]
fn a_release_during_a_running_canary_leaves_the_ignore_list_at_once_and_stays() {
    let f = files();
    let mut canary = Running::start(&[
        "--interval",
        "2s",
        "--enforce",
        "--routes",
        ROUTES,
        "--state",
        f.state.to_str().unwrap(),
        "--ignore-out",
        f.ignore.to_str().unwrap(),
        "--log",
        f.log.to_str().unwrap(),
        "--out",
        f.out.to_str().unwrap(),
    ]);
    canary.round(2);
    assert_eq!(ignored(&f.ignore), ["granite/fp8"], "{:?}", canary.seen);
    let release = Command::new(BIN)
        .args([
            "canary",
            "release",
            "granite/fp8",
            "--state",
            f.state.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&release.stdout).into_owned();
    assert!(
        release.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&release.stderr)
    );
    assert!(said.contains("handed to it"), "{said}");
    assert!(ignored(&f.ignore).is_empty(), "rewritten at once");
    // The round in progress takes the release, and the next keeps it.
    for n in [3, 4] {
        canary.round(n);
        assert!(
            ignored(&f.ignore).is_empty(),
            "round {n}: {:?}",
            ignored(&f.ignore)
        );
        let state: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f.state).unwrap()).unwrap();
        assert!(
            state["routes"]["granite/fp8"]["quarantine"].is_null(),
            "round {n}"
        );
    }
    let log = std::fs::read_to_string(&f.log).unwrap();
    assert_eq!(
        log.matches("\"kind\":\"manual_release\"").count(),
        1,
        "{log}"
    );
    assert_eq!(log.matches("\"kind\":\"quarantine\"").count(), 1, "{log}");
}

#[test]
fn a_second_canary_on_the_same_state_exits_2_at_once_naming_the_first() {
    let f = files();
    let mut first = Running::start(&[
        "--interval",
        "2s",
        "--routes",
        ROUTES,
        "--state",
        f.state.to_str().unwrap(),
        "--out",
        f.out.to_str().unwrap(),
    ]);
    first.round(1);
    let second = Command::new(BIN)
        .args(["canary", "--interval", "2s", "--routes", ROUTES, "--state"])
        .arg(&f.state)
        .arg("--out")
        .arg(f.out.with_file_name("second"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("another canary holds the state file")
            && err.contains(&format!("pid {}", first.child.id())),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&second.stdout).contains("Round 1"));
    assert!(
        !f.out.with_file_name("second").exists(),
        "stopped before claiming --out"
    );
}

/// An endpoint that answers 401 to everything, on 127.0.0.1, in a thread
/// of its own (this test is synchronous).
fn refusing_endpoint() -> (String, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let app = axum::Router::new().fallback(|| async {
            (
                axum::http::StatusCode::UNAUTHORIZED,
                r#"{"error": {"message": "User not found.", "code": 401}}"#,
            )
        });
        continuity_bench::server::serve(([127, 0, 0, 1], 0).into(), app)
            .await
            .unwrap()
    });
    let url = server.url();
    std::mem::forget(server);
    (url, rt)
}

#[test]
fn an_endpoint_answering_401_to_everything_exits_2_naming_the_key_variable() {
    let (url, _rt) = refusing_endpoint();
    let f = files();
    for extra in [&[][..], &["--routes", "alpha,bravo"][..]] {
        let out = Command::new(BIN)
            .args([
                "canary",
                "--endpoint",
                &url,
                "--key-env",
                "CB_CANARY_TEST_KEY",
            ])
            .args(extra)
            .arg("--out")
            .arg(f.out.with_file_name(format!("r{}", extra.len())))
            .env("CB_CANARY_TEST_KEY", "sk-revoked-planted-777")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("CB_CANARY_TEST_KEY") && err.contains("401"),
            "{err}"
        );
        assert!(!err.contains("sk-revoked-planted"), "{err}");
    }
}

#[test]
fn a_run_whose_rounds_scored_nothing_exits_non_zero_with_the_alert() {
    let f = files();
    let out = Command::new(BIN)
        .args([
            "canary",
            "--rounds",
            "2",
            "--no-wait",
            "--transient-rate",
            "1",
            "--routes",
            "atlas/bf16,cirrus",
            "--ttft-limit",
            "100ms",
            "--probe-timeout",
            "300ms",
            "--out",
        ])
        .arg(&f.out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert_eq!(
        said.lines()
            .filter(|l| l.starts_with("alert: no route scored"))
            .count(),
        2,
        "{said}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no round scored any route"));
}
