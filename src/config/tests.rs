//! Tests of the configuration layer: defaults, and every refusal names its flag.

use super::*;
use crate::cli::RunArgs;
use crate::cli::{Cli, Command};
use clap::Parser;
use std::path::PathBuf;

fn args(extra: &[&str]) -> RunArgs {
    let mut argv = vec!["continuity-bench", "run"];
    argv.extend_from_slice(extra);
    match Cli::parse_from(argv).command {
        Command::Run(a) => a,
        _ => unreachable!("parsed a run command"),
    }
}

#[test]
fn defaults_resolve() {
    let now = time::macros::datetime!(2026-11-29 18:34:50 UTC);
    let cfg = run_config(&args(&[]), now).unwrap();
    assert_eq!(cfg.runs, 1);
    assert_eq!(cfg.concurrency, 100);
    assert_eq!(cfg.seed, 42);
    assert_eq!(cfg.replay, Replay::Live);
    assert_eq!(
        cfg.out,
        OutDir::Default(PathBuf::from("reports/2026-11-29T18-34-50Z"))
    );
}

#[test]
fn bad_values_name_the_flag() {
    let now = time::OffsetDateTime::UNIX_EPOCH;
    let err = run_config(&args(&["--runs", "0"]), now).unwrap_err();
    assert!(err.to_string().contains("--runs"));
    let err = run_config(&args(&["--fail-under-cpr", "150"]), now).unwrap_err();
    assert!(err.to_string().contains("--fail-under-cpr"));
    let err = run_config(&args(&["--attempt-timeout", "0s"]), now).unwrap_err();
    assert!(err.to_string().contains("--attempt-timeout"));
}

#[test]
fn gateways_ports_and_secret_headers() {
    let a = args(&[
        "--gateway",
        "litellm=http://127.0.0.1:4000/",
        "--gateway",
        "portkey=http://127.0.0.1:8787/v1",
        "--upstream-ports",
        "portkey=9101,9102",
        "--header",
        "litellm:Authorization=env:TEST_KEY_VAR",
    ]);
    let env = |var: &str| (var == "TEST_KEY_VAR").then(|| "Bearer s3cr3t-value".to_string());
    let g = parse_gateways(&a.systems, &env).unwrap();
    assert_eq!((g[0].primary_port, g[0].fallback_port), (9001, 9002));
    assert_eq!((g[1].primary_port, g[1].fallback_port), (9101, 9102));
    assert_eq!(g[0].url, "http://127.0.0.1:4000");
    assert_eq!(g[1].url, "http://127.0.0.1:8787");
    assert_eq!(
        g[0].headers[0].1,
        crate::secret::Secret::new("Bearer s3cr3t-value")
    );
    assert!(
        !format!("{g:?}").contains("s3cr3t"),
        "Debug never shows a header value"
    );
    let cfg = run_config(&a, time::OffsetDateTime::UNIX_EPOCH);
    // TEST_KEY_VAR is not set in the real environment: the error names
    // the variable, never a value.
    let err = cfg.unwrap_err().to_string();
    assert!(
        err.contains("TEST_KEY_VAR") && err.contains("not set"),
        "{err}"
    );
}

#[test]
fn gateway_mistakes_are_named() {
    let none = |_: &str| None;
    let err = parse_gateways(&args(&["--gateway", "litellm"]).systems, &none).unwrap_err();
    assert!(err.to_string().contains("NAME=URL"));
    let err = parse_gateways(&args(&["--gateway", "history=http://x"]).systems, &none).unwrap_err();
    assert!(matches!(err, ConfigError::DuplicateSystem(ref n) if n == "history"));
    let err = parse_gateways(
        &args(&["--gateway", "a=http://x", "--upstream-ports", "b=1,2"]).systems,
        &none,
    )
    .unwrap_err();
    assert!(matches!(err, ConfigError::UpstreamPorts(_)));
    let err = run_config(&args(&["--no-builtin"]), time::OffsetDateTime::UNIX_EPOCH).unwrap_err();
    assert!(matches!(err, ConfigError::NoSystems));
}

#[test]
fn options_validate_into_a_config() {
    use crate::cli::{Cli, Command, JudgeCommand};
    use clap::Parser;
    let parse = |args: &[&str]| {
        let mut all = vec!["continuity-bench", "judge", "calibrate"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).unwrap().command {
            Command::Judge(j) => match j.command {
                JudgeCommand::Calibrate(c) => c.judge,
            },
            _ => unreachable!(),
        }
    };
    let no_env = |_: &str| None;
    assert!(judge_config(&parse(&[]), no_env).unwrap().is_none());
    let sim = judge_config(&parse(&["--judge", "sim"]), no_env)
        .unwrap()
        .unwrap();
    assert_eq!(
        (sim.endpoint, sim.model.as_str()),
        (crate::judge::JudgeEndpoint::Sim, crate::judge::SIM_MODEL)
    );

    let url = ["--judge", "https://api.example.com/v1"];
    let err = judge_config(&parse(&url), no_env).unwrap_err();
    assert!(err.to_string().contains("--judge-model"), "{err}");
    let with_model = [
        &url[..],
        &["--judge-model", "m", "--judge-key-env", "MY_KEY"],
    ]
    .concat();
    let err = judge_config(&parse(&with_model), no_env).unwrap_err();
    assert!(err.to_string().contains("MY_KEY"), "{err}");
    let secret = "sk-abc-SECRET";
    let cfg = judge_config(&parse(&with_model), |v| {
        (v == "MY_KEY").then(|| secret.to_string())
    })
    .unwrap()
    .unwrap();
    assert!(!format!("{cfg:?}").contains(secret));
    assert!(!cfg.describe().contains(secret));
    let err = judge_config(&parse(&["--judge-model", "m"]), no_env).unwrap_err();
    assert!(err.to_string().contains("without --judge"), "{err}");
}

#[test]
fn proxy_flags_map_to_the_config() {
    use clap::Parser;
    let cli = crate::cli::Cli::try_parse_from([
        "continuity-bench",
        "proxy",
        "--mode",
        "stateless",
        "--primary",
        "http://127.0.0.1:9001",
        "--fallback",
        "http://127.0.0.1:9002",
        "--fallback-model",
        "backup",
        "--attempt-timeout",
        "250ms",
        "--deadline",
        "5s",
        "--fallback-retries",
        "1",
        "--events",
        "ev.jsonl",
        "--seed",
        "9",
    ])
    .unwrap();
    let crate::cli::Command::Proxy(args) = cli.command else {
        panic!("not the proxy command");
    };
    let c = proxy_config(args).unwrap();
    assert_eq!(c.mode, crate::proxy::ProxyMode::Stateless);
    assert_eq!(
        (c.primary_model, c.fallback_model.as_deref()),
        (None, Some("backup"))
    );
    assert_eq!(c.attempt_timeout, std::time::Duration::from_millis(250));
    assert_eq!(c.deadline, std::time::Duration::from_secs(5));
    assert_eq!((c.fallback_429_retries, c.seed), (1, 9));
    assert_eq!(c.events_path, Some("ev.jsonl".into()));
    assert_eq!(
        c.behaviour,
        crate::proxy::ProxyBehaviour::default(),
        "the flags' defaults are the documented ones"
    );
    let cli = crate::cli::Cli::try_parse_from([
        "continuity-bench",
        "proxy",
        "--mode",
        "history",
        "--primary",
        "http://127.0.0.1:9001",
        "--fallback",
        "http://127.0.0.1:9002",
        "--same-route-retries",
        "0",
        "--retry-status",
        "500,502",
        "--first-token-timeout",
        "0s",
        "--continuation",
        "restart",
        "--context-fallback",
        "http://127.0.0.1:9003",
        "--fallback-max-tokens",
        "512",
        "--fallback-param",
        "enable_thinking=false",
    ])
    .unwrap();
    let crate::cli::Command::Proxy(args) = cli.command else {
        panic!("not the proxy command");
    };
    let b = proxy_config(args).unwrap().behaviour;
    assert_eq!(
        (b.same_route_retries, b.retry_statuses),
        (0, vec![500, 502])
    );
    assert_eq!(b.first_token_timeout, None, "0s disables");
    assert_eq!(b.continuation, crate::proxy::Continuation::Restart);
    assert_eq!(b.context_fallback.as_deref(), Some("http://127.0.0.1:9003"));
    assert_eq!(b.fallback_max_tokens, Some(512));
    assert_eq!(
        b.fallback_params["enable_thinking"],
        serde_json::json!(false)
    );
}

#[test]
fn headers_and_ports_are_checked_before_any_request() {
    let none = |_: &str| None;
    let parse = |extra: &[&str]| {
        let mut all = vec!["--gateway", "gw=http://127.0.0.1:4000"];
        all.extend_from_slice(extra);
        parse_gateways(&args(&all).systems, &none)
    };
    let err = parse(&["--header", "gw:Bad Name=x"]).unwrap_err();
    assert!(matches!(err, ConfigError::HeaderName { .. }), "{err}");
    let err = parse(&["--header", "gw:X-Key=line\r\nInjected: yes"]).unwrap_err();
    assert!(matches!(err, ConfigError::HeaderValue { .. }), "{err}");
    assert!(
        !err.to_string().contains("Injected"),
        "the value is never printed"
    );
    let err = parse(&["--upstream-ports", "gw=9001,9001"]).unwrap_err();
    assert!(err.to_string().contains("port 9001 is given to"), "{err}");
    let err = parse_gateways(
        &args(&[
            "--gateway",
            "a=http://127.0.0.1:4000",
            "--gateway",
            "b=http://127.0.0.1:4001",
            "--upstream-ports",
            "b=9001,9003",
        ])
        .systems,
        &none,
    )
    .unwrap_err();
    assert!(
        matches!(err, ConfigError::PortTaken { port: 9001, .. }),
        "{err}"
    );
    let err = parse_gateways(
        &args(&["--gateway", "gw=http://localhost:9002"]).systems,
        &none,
    )
    .unwrap_err();
    assert!(
        matches!(err, ConfigError::GatewayOnUpstreamPort { .. }),
        "{err}"
    );
    assert!(parse(&["--header", "gw:X-Api-Key=ok"]).is_ok());
}

#[test]
fn a_retry_status_the_proxy_does_not_fail_over_on_is_refused() {
    let parse = |statuses: &str| {
        let cli = crate::cli::Cli::try_parse_from([
            "continuity-bench",
            "proxy",
            "--mode",
            "history",
            "--primary",
            "http://127.0.0.1:9001",
            "--fallback",
            "http://127.0.0.1:9002",
            "--retry-status",
            statuses,
        ])
        .unwrap();
        let crate::cli::Command::Proxy(args) = cli.command else {
            panic!("not the proxy command");
        };
        proxy_config(args)
    };
    // A delivered answer or a permanent error must not be retried.
    for bad in ["500,200", "401"] {
        let err = parse(bad).unwrap_err().to_string();
        assert!(err.contains("--retry-status"), "{err}");
    }
    assert!(parse("429,503,404").is_ok());
}

#[test]
fn judge_calibrate_uses_its_built_in_cases_without_a_path() {
    use crate::cli::JudgeCommand;
    let parse = |args: &[&str]| {
        let mut all = vec!["continuity-bench", "judge", "calibrate"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).unwrap().command {
            Command::Judge(j) => match j.command {
                JudgeCommand::Calibrate(c) => c,
            },
            _ => unreachable!(),
        }
    };
    let no_env = |_: &str| None;
    // No --cases: the compiled-in copy, readable whatever the working
    // directory (the path it names does not need to exist here).
    let config = calibrate_config(&parse(&[]), no_env).unwrap();
    assert_eq!(
        config.cases.label(),
        "datasets/judge-calibration.jsonl (built in)"
    );
    let cases: Vec<crate::judge::calibrate::CalibrationCase> =
        crate::report::calibration::load(&config.cases).unwrap();
    assert!(cases.len() > 10, "{} cases", cases.len());
    // A file given is read from disk.
    let config = calibrate_config(&parse(&["--cases", "/nonexistent/x.jsonl"]), no_env).unwrap();
    assert!(
        crate::report::calibration::load::<crate::judge::calibrate::CalibrationCase>(&config.cases)
            .is_err()
    );
}

#[test]
fn semantics_out_takes_force_like_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("semantics.json"), "{}").unwrap();
    let out = dir.path().to_str().unwrap();
    let parse = |args: &[&str]| {
        let mut all = vec!["continuity-bench", "semantics", "--out", out];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).unwrap().command {
            Command::Semantics(s) => s,
            _ => unreachable!(),
        }
    };
    let err = semantics_config(&parse(&[])).unwrap_err().to_string();
    assert!(err.contains("--force"), "{err}");
    let config = semantics_config(&parse(&["--force"])).unwrap();
    assert_eq!(config.out.as_deref(), Some(dir.path()));
}

#[test]
fn grade_overhead_takes_its_trials_and_requests_and_only_with_overhead() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let out = out.to_str().unwrap();
    let parse = |extra: &[&str]| {
        let mut argv = vec!["continuity-bench", "grade", "--out", out];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv)
    };
    let Command::Grade(plain) = parse(&["--overhead"]).unwrap().command else {
        unreachable!("parsed a grade command")
    };
    let defaults = grade_config(&plain, time::OffsetDateTime::UNIX_EPOCH)
        .unwrap()
        .overhead
        .unwrap();
    assert_eq!((defaults.trials, defaults.requests), (5, 200));
    std::fs::remove_dir_all(dir.path().join("g")).unwrap();
    let Command::Grade(light) = parse(&[
        "--overhead",
        "--overhead-trials",
        "2",
        "--overhead-requests",
        "50",
    ])
    .unwrap()
    .command
    else {
        unreachable!("parsed a grade command")
    };
    let light = grade_config(&light, time::OffsetDateTime::UNIX_EPOCH)
        .unwrap()
        .overhead
        .unwrap();
    assert_eq!((light.trials, light.requests), (2, 50));
    assert!(parse(&[]).is_ok(), "grade parses without --overhead");
    let err = parse(&["--overhead-trials", "2"]).unwrap_err().to_string();
    assert!(err.contains("--overhead"), "{err}");
}
