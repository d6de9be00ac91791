//! Every absurd duration, rate, weight, counter and body cap, on the
//! command line or in a fault profile, exits 2 before anything starts,
//! naming the flag or key and the allowed range (`src/config/ranges.rs`
//! holds the table). Each case is the real binary; a case whose value is
//! in range is run too, so the check is not a refusal of everything.

use crate::common::gateways::free_port;
use crate::common::repo;
use std::path::Path;
use std::process::Command;

fn exit_of(args: &[String]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .current_dir(repo(""))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(ToString::to_string).collect()
}

/// Asserts `args` exits 2 with `key` and "out of range" in the message.
fn refused(args: &[String], key: &str) {
    let (code, stderr) = exit_of(args);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(key) && stderr.contains("out of range: allowed"),
        "{args:?} should name {key:?} and its range: {stderr}"
    );
}

fn proxy(extra: &[&str]) -> Vec<String> {
    let mut args = strings(&["proxy", "--mode", "history"]);
    args.extend(strings(&[
        "--listen",
        &format!("127.0.0.1:{}", free_port()),
        "--primary",
        "http://127.0.0.1:9",
        "--fallback",
        "http://127.0.0.1:9",
    ]));
    args.extend(strings(extra));
    args
}

#[test]
fn absurd_proxy_flags_exit_2_naming_the_flag() {
    for (flag, value) in [
        ("--attempt-timeout", "1000days"),
        ("--deadline", "1000days"),
        ("--retry-delay", "1000days"),
        ("--first-token-timeout", "1000days"),
        ("--stall-timeout", "1000days"),
        ("--retry-after-cap", "2h"),
        ("--fallback-retries", "4000000000"),
        ("--same-route-retries", "101"),
    ] {
        refused(&proxy(&[flag, value]), flag);
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Profiles each holding one absurd value, with the key it must name.
fn absurd_profiles(dir: &Path) -> Vec<(String, &'static str)> {
    let base = "upstream = \"primary\"\nturns = \"final\"\n";
    vec![
        (
            write(
                dir,
                "hold.toml",
                &format!("{base}[modes.timeout]\nweight = 1\nhold = \"1000days\"\n"),
            ),
            "[modes.timeout] hold",
        ),
        (
            write(
                dir,
                "weight.toml",
                &format!("{base}[modes.api_error]\nweight = 1e12\n"),
            ),
            "[modes.api_error] weight",
        ),
        (
            write(
                dir,
                "retry.toml",
                &format!("{base}[modes.rate_limit]\nweight = 1\nretry_after = \"2h\"\n"),
            ),
            "[modes.rate_limit] retry_after",
        ),
        (
            write(
                dir,
                "delay.toml",
                "[degrade]\nupstream = \"primary\"\nturns = \"all\"\n[degrade.slow_first_token]\nrate = 0.1\ndelay = \"1000days\"\n",
            ),
            "[degrade.slow_first_token] delay",
        ),
    ]
}

#[test]
fn absurd_upstreams_flags_and_profiles_exit_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let upstreams = |extra: &[&str]| {
        let mut args = strings(&["upstreams"]);
        args.extend(strings(&[
            "--primary",
            &format!("127.0.0.1:{}", free_port()),
            "--fallback",
            &format!("127.0.0.1:{}", free_port()),
        ]));
        args.extend(strings(extra));
        args
    };
    refused(
        &upstreams(&["--provider-timeout", "1000days"]),
        "--provider-timeout",
    );
    for bytes in ["10", "18446744073709551615"] {
        refused(&upstreams(&["--max-body-bytes", bytes]), "--max-body-bytes");
    }
    for (file, key) in absurd_profiles(dir.path()) {
        refused(&upstreams(&["--faults", &file]), key);
    }
}

#[test]
fn absurd_run_flags_and_profiles_exit_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never");
    let run = |extra: &[&str]| {
        let mut args = strings(&["run", "--quiet", "--out", out.to_str().unwrap()]);
        args.extend(strings(extra));
        args
    };
    for (flag, value) in [
        ("--runs", "4000000000"),
        ("--concurrency", "1000000000"),
        ("--max-in-flight", "10000000000"),
        ("--request-timeout", "1000days"),
        ("--attempt-timeout", "1000days"),
        ("--gateway-wait", "1000days"),
        ("--judge-timeout", "1000days"),
        ("--ttft-limit", "1000days"),
        ("--max-response-bytes", "10"),
    ] {
        refused(&run(&[flag, value]), flag);
    }
    for (file, key) in absurd_profiles(dir.path()) {
        refused(&run(&["--faults", &file]), key);
    }
    assert!(!out.exists(), "no report directory for a refused run");
}

#[test]
fn absurd_semantics_grade_and_canary_flags_exit_2_naming_the_flag() {
    for (flag, value) in [
        ("--attempt-timeout", "1000days"),
        ("--max-give-up", "1000days"),
        ("--cooldown-wait", "1000days"),
        ("--max-attempts-per-upstream", "1000"),
    ] {
        refused(&strings(&["semantics", flag, value]), flag);
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("grade");
    refused(
        &strings(&[
            "grade",
            "--concurrency",
            "1000000000",
            "--out",
            out.to_str().unwrap(),
        ]),
        "--concurrency",
    );
    for (flag, value) in [
        ("--interval", "100days"),
        ("--rounds", "10000000"),
        ("--probe-timeout", "1000days"),
        ("--transient-rate", "2"),
        ("--max-response-bytes", "10"),
    ] {
        let out = dir.path().join(format!("canary{flag}"));
        refused(
            &strings(&["canary", flag, value, "--out", out.to_str().unwrap()]),
            flag,
        );
    }
}

#[test]
fn values_in_range_are_not_refused() {
    // The largest allowed values pass validation: one offline round runs.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let (code, stderr) = exit_of(&strings(&[
        "canary",
        "--rounds",
        "1",
        "--no-wait",
        "--interval",
        "7days",
        "--transient-rate",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(code, Some(0), "in range, not refused: {stderr}");
    assert!(out.join("report.md").is_file(), "{stderr}");
}
