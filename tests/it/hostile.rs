//! Hostile gateways against the driver: a redirect, bodies over the size
//! cap (plain and streamed, announced or not), long answers, `content` that
//! is not text, and headers echoed back. Each must end as an `error` (or a
//! bounded row) with a reason that says what happened, and a planted secret
//! must reach no file, no stdout and no stderr.

use crate::common::gateways::free_port;
use crate::common::hostile::{self, Hostile};
use crate::common::{csv_rows, quick_run, repo};
use continuity_bench::client::send_body;
use continuity_bench::client::{
    driver_client, send, DriverClient, Exchange, SendOptions, SystemKind, Target,
};
use continuity_bench::config::{GatewaySpec, Replay, RunConfig};
use continuity_bench::continuity::{self, report::ReportData};
use continuity_bench::openai::{ChatMessage, ChatRequest};
use continuity_bench::secret::Secret;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A quick fast-forward run of one external gateway at `url` alone.
fn gateway_run(out: &Path, url: String, headers: Vec<(String, Secret)>) -> RunConfig {
    let mut config = quick_run(out, 1);
    config.replay = Replay::FastForward;
    config.systems.builtin = false;
    config.systems.gateways = vec![GatewaySpec {
        name: "hostile".into(),
        url,
        primary_port: free_port(),
        fallback_port: free_port(),
        headers,
        model: None,
    }];
    config
}

async fn run(config: &RunConfig) -> ReportData {
    let outcome = continuity::execute(config, CancellationToken::new(), Instant::now())
        .await
        .unwrap();
    outcome.data.expect("conversations finished")
}

/// Every conversation's (only) turn is an error whose reason passes `check`.
fn every_turn_failed(data: &ReportData, check: impl Fn(&str) -> bool) {
    let turns = &data.turns;
    assert_eq!(turns.len(), 150, "one final turn per conversation");
    for t in turns {
        let reason = t.error.as_deref().unwrap_or("no error");
        assert!(check(reason), "{}: {reason}", t.conversation);
        assert!(t.answer.is_empty());
    }
}

/// One request to `url`, as the driver sends it: through reqwest (as the
/// preflight and an `https://` system) and through the replay's bare
/// connections (a plain `http://` system), which must end the same way.
async fn exchange(url: String, stream: bool, options: SendOptions) -> Exchange {
    let target = Target {
        name: "hostile".into(),
        kind: SystemKind::Gateway,
        url,
        headers: vec![("X-Api-Key".into(), Secret::new("sk-hostile-one-exchange-9"))],
        model: None,
    };
    let request = ChatRequest {
        model: "continuity-sim".into(),
        messages: vec![ChatMessage::new("user", "My sister's name is Oriane.")],
        stream,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    let client = driver_client().unwrap();
    let through_reqwest = send(&client, &target, &request, options).await;
    let body = serde_json::to_vec(&request).unwrap();
    let plain = send_body(&DriverClient::new(client), &target, body, stream, options).await;
    assert_eq!(
        (&plain.status, &plain.answer, &plain.error),
        (
            &through_reqwest.status,
            &through_reqwest.answer,
            &through_reqwest.error
        ),
        "the two transports disagree"
    );
    plain
}

#[tokio::test(start_paused = true)]
async fn a_redirect_is_an_error_and_the_secret_header_stays_home() {
    let landing = hostile::landing().await;
    let gateway = hostile::start(Hostile::Redirect {
        to: landing.server.url(),
    })
    .await;
    let reply = exchange(
        gateway.url(),
        false,
        SendOptions::new(Duration::from_secs(10)),
    )
    .await;
    assert_eq!(reply.status, Some(302));
    let reason = reply.error.unwrap();
    let location = format!("{}/v1/chat/completions", landing.server.url());
    assert!(
        reason.starts_with(&format!("HTTP 302 redirect to {location}")),
        "{reason}"
    );

    let dir = tempfile::tempdir().unwrap();
    let secret = Secret::new("sk-redirect-planted-4d1e");
    let config = gateway_run(
        dir.path(),
        gateway.url(),
        vec![("X-Api-Key".into(), secret)],
    );
    let data = run(&config).await;
    every_turn_failed(&data, |r| r.starts_with("HTTP 302 redirect to "));
    assert!(
        landing.seen.lock().unwrap().is_empty(),
        "the landing server got no request, so no X-Api-Key"
    );
}

#[tokio::test(start_paused = true)]
async fn a_body_over_the_cap_is_an_error_and_is_not_read_further() {
    let cap = 256 * 1024;
    let options = SendOptions {
        deadline: Duration::from_secs(20),
        max_response_bytes: cap,
    };
    // The reason (not a timeout) and the bytes the server got to send show
    // that reading stopped at the cap: of 1 GiB, what fits in the
    // connection's buffers once the client stops reading (a few MiB on
    // loopback), never the rest. Counted, not timed.
    for (announce, stream) in [(false, false), (false, true), (true, false)] {
        let bytes = if announce { 4 << 20 } else { 1 << 30 };
        let (gateway, sent) = hostile::start_counting(Hostile::Oversized { bytes, announce }).await;
        let reply = exchange(gateway.url(), stream, options).await;
        let reason = reply.error.unwrap();
        assert_eq!(
            reason,
            format!("response larger than {cap} bytes (--max-response-bytes); stopped reading it"),
            "announce {announce}, stream {stream}"
        );
        assert_eq!(reply.status, Some(200));
        drop(gateway);
        if !announce {
            assert!(
                sent.bytes() < 64 << 20,
                "the server sent {} bytes of {bytes}: the client read on past the cap",
                sent.bytes()
            );
        }
    }

    let gateway = hostile::start(Hostile::Oversized {
        bytes: 1 << 20,
        announce: false,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = gateway_run(dir.path(), gateway.url(), Vec::new());
    config.systems.max_response_bytes = cap;
    let data = run(&config).await;
    every_turn_failed(&data, |r| {
        r.starts_with("response larger than 262144 bytes")
    });
    config.stream = true;
    let data = run(&config).await;
    every_turn_failed(&data, |r| {
        r.starts_with("response larger than 262144 bytes")
    });
}

#[tokio::test(start_paused = true)]
async fn long_answers_are_cut_in_turns_csv_with_their_full_length() {
    let chars = 5_000;
    let gateway = hostile::start(Hostile::LongAnswers { chars }).await;
    let dir = tempfile::tempdir().unwrap();
    let data = run(&gateway_run(dir.path(), gateway.url(), Vec::new())).await;
    // Scoring read the whole answer; once it is done, the report keeps
    // the bounded part and the full length.
    for t in &data.turns {
        assert_eq!(
            t.answer.chars().count(),
            continuity_bench::record::ANSWER_BOUND
        );
        assert_eq!(t.answer_chars, chars as u64);
    }
    let rows = csv_rows(&dir.path().join("turns.csv"));
    let column = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (answer, length) = (column("answer"), column("answer_chars"));
    assert_eq!(rows.len(), 151);
    for row in &rows[1..] {
        assert_eq!(
            row[answer].chars().count(),
            continuity_bench::record::ANSWER_BOUND
        );
        assert_eq!(row[length], chars.to_string());
    }
}

#[tokio::test(start_paused = true)]
async fn content_that_is_not_text_says_what_was_there() {
    let options = SendOptions::new(Duration::from_secs(10));
    for (value, kind) in [
        (serde_json::json!(42), "a number (42)"),
        (serde_json::json!({"text": "Oriane"}), "an object"),
    ] {
        let gateway = hostile::start(Hostile::Content(value)).await;
        let plain = exchange(gateway.url(), false, options).await.error.unwrap();
        assert!(
            plain.starts_with(&format!("choices[0].message.content is {kind}")),
            "{plain}"
        );
        let streamed = exchange(gateway.url(), true, options).await.error.unwrap();
        assert!(
            streamed.starts_with(&format!(
                "stream chunk 1: choices[0].delta.content is {kind}"
            )),
            "{streamed}"
        );
    }
    // Arrays of text parts stay valid.
    let parts = serde_json::json!([{"type": "text", "text": "Your sister is Oriane."}]);
    let gateway = hostile::start(Hostile::Content(parts)).await;
    let reply = exchange(gateway.url(), false, options).await;
    assert_eq!(reply.answer.as_deref(), Some("Your sister is Oriane."));
}

/// The planted values: a gateway header and the judge's key.
const HEADER_VALUE: &str = "hdr-7Qx2-planted-header-value";
const JUDGE_KEY: &str = "jdg-9Kp4-planted-judge-key";

/// Runs the binary with `args` against the echoing gateway at `url`, the
/// header planted in its environment; returns (exit code, stdout, stderr).
fn run_binary(url: &str, out: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["run", "--quiet", "--no-builtin", "--latency", "instant"])
        .args(["--gateway-wait", "1s", "--gateway"])
        .arg(format!("echo={url}"))
        .arg("--upstream-ports")
        .arg(format!("echo={},{}", free_port(), free_port()))
        .args(["--header", "echo:X-Api-Key=env:PLANTED_HEADER"])
        .args(args)
        .arg("--out")
        .arg(out)
        .env("PLANTED_HEADER", HEADER_VALUE)
        .env("PLANTED_JUDGE_KEY", JUDGE_KEY)
        .current_dir(repo(""))
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs the binary against a gateway of `kind` that fails the preflight;
/// checks that the run stopped there (exit 2, the HTTP 500 quoted) and
/// returns (stdout, stderr).
async fn refused_at_preflight(kind: Hostile) -> (String, String) {
    let gateway = hostile::start(kind).await;
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = {
        let (url, out) = (gateway.url(), out.path().to_path_buf());
        tokio::task::spawn_blocking(move || run_binary(&url, &out, &[]))
            .await
            .unwrap()
    };
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("did not answer a preflight request: HTTP 500"),
        "{stderr}"
    );
    (stdout, stderr)
}

/// Asserts that no planted value (nor a distinctive piece of one) is in
/// `text`, named `what`.
fn assert_clean(what: &str, text: &str) {
    for planted in [HEADER_VALUE, JUDGE_KEY, "7Qx2", "9Kp4"] {
        assert!(!text.contains(planted), "{what} holds {planted:?}");
    }
}

/// Every file under `dir`, read as (lossy) text: the whole value must be in
/// none; text files must not hold a piece of it either.
fn assert_dir_clean(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        match std::str::from_utf8(&bytes) {
            Ok(text) => {
                assert_clean(&name, text);
                all.push_str(text);
            }
            Err(_) => {
                let text = String::from_utf8_lossy(&bytes);
                assert!(
                    !text.contains(HEADER_VALUE) && !text.contains(JUDGE_KEY),
                    "{name}"
                );
            }
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echoed_secrets_reach_no_file_no_stdout_and_no_stderr() {
    let gateway = hostile::start(Hostile::Echo).await;
    let judge = hostile::echo_judge().await;
    let judge_url = judge.url();
    let url = gateway.url();

    // Live replay, with the echoing judge deciding the echoed answers.
    let live = tempfile::tempdir().unwrap();
    let cache = live.path().join("judge-cache.jsonl");
    let cache = cache.to_str().unwrap().to_string();
    let (code, stdout, stderr) = {
        let (url, out, cache, judge_url) =
            (url.clone(), live.path().to_path_buf(), cache, judge_url);
        tokio::task::spawn_blocking(move || {
            run_binary(
                &url,
                &out,
                &[
                    "--judge",
                    &judge_url,
                    "--judge-model",
                    "echo",
                    "--judge-key-env",
                    "PLANTED_JUDGE_KEY",
                    "--judge-cache",
                    &cache,
                ],
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(code, Some(0), "{stderr}");
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);
    let files = assert_dir_clean(live.path());
    // Positive controls: the echoes really happened and were replaced, in
    // answers, in error bodies cut at the excerpt and in judge reasons.
    let turns = std::fs::read_to_string(live.path().join("turns.csv")).unwrap();
    assert!(turns.contains("x-api-key: [redacted]"), "answers echoed");
    assert!(
        turns.contains("HTTP 500: {\"\"error\"\""),
        "error bodies echoed"
    );
    let events = std::fs::read_to_string(live.path().join("events.csv")).unwrap();
    assert!(
        events.contains("authorization: Bearer [redacted]"),
        "the judge echoed its key: {events}"
    );
    assert!(files.contains("[redacted]"));

    // Streamed, the echo split across two chunks.
    let streamed = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = {
        let (url, out) = (url.clone(), streamed.path().to_path_buf());
        tokio::task::spawn_blocking(move || run_binary(&url, &out, &["--stream", "--fast-forward"]))
            .await
            .unwrap()
    };
    assert_eq!(code, Some(0), "{stderr}");
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);
    assert_dir_clean(streamed.path());
    let turns = std::fs::read_to_string(streamed.path().join("turns.csv")).unwrap();
    assert!(
        turns.contains("x-api-key: [redacted]"),
        "streamed answers echoed"
    );

    // A preflight that fails with the echo: the error printed is clean.
    let (stdout, stderr) = refused_at_preflight(Hostile::EchoFailingPreflight).await;
    assert!(
        stderr.contains("[redacted]"),
        "the preflight reply echoed: {stderr}"
    );
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);
}

/// A gateway's error body quoted in the error the run stops with reaches
/// the terminal with its control characters escaped: no escape sequence
/// can clear the screen or colour the tool's words, no carriage return can
/// overwrite the line; the message itself is still there to read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_s_escape_sequences_reach_the_terminal_escaped() {
    let (stdout, stderr) = refused_at_preflight(Hostile::EscapesInPreflight).await;
    assert!(
        // The client's error excerpt is one line: the carriage return
        // became a space before the message was made.
        stderr.contains("boom\\u{1b}[2J\\u{1b}[31mall systems pass\\u{1b}[0m \\u{8}\\u{7}"),
        "the body is quoted, escaped: {stderr:?}"
    );
    for text in [&stdout, &stderr] {
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "a raw control character reached the terminal: {text:?}"
        );
    }
}
