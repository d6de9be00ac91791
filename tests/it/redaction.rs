//! A gateway URL that carries credentials, a password in its userinfo and
//! an `api_key` in its query, given to `run`, `semantics`, `grade` and
//! `canary`: neither credential appears on stdout, on stderr or in any
//! file of the output directory (every file read, whatever its kind),
//! while the URL itself does appear, redacted, where the outputs name it.

use crate::common::gateways::{free_port, start_counted_on_free_ports, Misbehaviour};
use crate::common::{repo, small_dataset};
use std::path::Path;
use std::process::{Command, Output};

const PASSWORD: &str = "pa55";
const KEY: &str = "sk-XYZ";

/// The credential-bearing URL of a gateway on `port`.
fn secret_url(port: u16) -> String {
    format!("http://user:{PASSWORD}@127.0.0.1:{port}/v1?api_key={KEY}")
}

fn binary(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .current_dir(repo(""))
        .args(args)
        .output()
        .unwrap()
}

/// Every byte of every file under `dir`, with its path.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// Asserts that neither credential is in `output`'s streams nor in any
/// file under `dir`; returns everything read, for the positive checks.
fn assert_clean(what: &str, output: &Output, dir: &Path) -> String {
    let mut all = vec![
        ("stdout".to_string(), output.stdout.clone()),
        ("stderr".to_string(), output.stderr.clone()),
    ];
    all.extend(files(dir));
    let mut text = String::new();
    for (name, bytes) in &all {
        let shown = String::from_utf8_lossy(bytes);
        for secret in [PASSWORD, KEY] {
            assert!(
                !shown.contains(secret),
                "{what}: {secret} in {name}:\n{}",
                shown
                    .lines()
                    .filter(|l| l.contains(secret))
                    .take(3)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        text.push_str(&shown);
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_semantics_and_grade_never_show_a_gateway_urls_credentials() {
    let (gateway, primary, fallback, answered) =
        start_counted_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let url = secret_url(gateway.addr.port());
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path(), 20);
    let dataset = dataset.to_str().unwrap();
    let system = format!("control={url}");
    let ports = format!("control={primary},{fallback}");
    let outputs = dir.path().join("outputs");
    std::fs::create_dir(&outputs).unwrap();

    let out = outputs.join("run");
    let run = tokio::task::spawn_blocking({
        let (system, ports, out) = (system.clone(), ports.clone(), out.clone());
        let dataset = dataset.to_string();
        move || {
            binary(&[
                "run",
                "--quiet",
                "--no-builtin",
                "--gateway",
                &system,
                "--upstream-ports",
                &ports,
                "--dataset",
                &dataset,
                "--out",
                out.to_str().unwrap(),
            ])
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let shown = assert_clean("run", &run, &out);
    assert!(
        shown.contains("http://[redacted]@127.0.0.1") && shown.contains("api_key=[redacted]"),
        "run names the gateway, redacted: {stderr}"
    );
    assert!(answered.count() > 0, "the gateway was reached");

    let out = outputs.join("semantics");
    let semantics = tokio::task::spawn_blocking({
        let (system, ports, out) = (system.clone(), ports.clone(), out.clone());
        move || {
            binary(&[
                "semantics",
                "--fast",
                "--no-builtin",
                "--cases",
                "ok,400,both-fail",
                "--gateway",
                &system,
                "--upstream-ports",
                &ports,
                "--out",
                out.to_str().unwrap(),
            ])
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&semantics.stderr).into_owned();
    assert!(
        matches!(semantics.status.code(), Some(0 | 1)),
        "semantics ran: {stderr}"
    );
    assert_clean("semantics", &semantics, &out);

    let out = outputs.join("grade");
    let grade = tokio::task::spawn_blocking({
        let (system, ports, out) = (system.clone(), ports.clone(), out.clone());
        let dataset = dataset.to_string();
        move || {
            binary(&[
                "grade",
                "--quiet",
                "--no-builtin",
                "--cases",
                "ok",
                "--gateway",
                &system,
                "--upstream-ports",
                &ports,
                "--dataset",
                &dataset,
                "--out",
                out.to_str().unwrap(),
            ])
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&grade.stderr).into_owned();
    assert!(
        matches!(grade.status.code(), Some(0 | 1)),
        "grade ran: {stderr}"
    );
    let shown = assert_clean("grade", &grade, &out);
    assert!(
        shown.contains("[redacted]@127.0.0.1"),
        "the grade names the gateway, redacted"
    );
    drop(gateway);
}

#[test]
fn the_canary_never_shows_an_endpoints_credentials() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens there: the listing fails, and the error names the
    // endpoint.
    let port = free_port();
    for url in [
        secret_url(port),
        format!("http://127.0.0.1:{port}/v1?api_key={KEY}"),
    ] {
        let out = dir.path().join(format!("canary-{}", url.len()));
        let canary = Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
            .current_dir(repo(""))
            .env("CB_TEST_CANARY_KEY", "k-123")
            .args(["canary", "--rounds", "1", "--key-env", "CB_TEST_CANARY_KEY"])
            .arg("--endpoint")
            .arg(&url)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&canary.stderr).into_owned();
        assert_ne!(canary.status.code(), Some(0), "{stderr}");
        std::fs::create_dir_all(&out).unwrap();
        let shown = assert_clean("canary", &canary, &out);
        assert!(shown.contains("[redacted]"), "the error names it: {stderr}");
    }
}
