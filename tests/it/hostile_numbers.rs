//! Absurd numbers from a peer on every client path of the harness, written
//! byte for byte on a raw TCP connection: a `Content-Length` of
//! `u64::MAX`, far past the body, negative, `1e300` or a word, and `usage`
//! counts of `u64::MAX`, `-1`, `1e300` and strings. The driver reading a
//! gateway records a failure with its reason (a bad length) or leaves the
//! count unmeasured (a count that is not a `u32`); `semantics`, `canary`
//! and `upstreams --provider` reading such a peer end with an error or an
//! answer, never a panic. The proxy reading an upstream is tested in
//! `crates/proxy/src/tests/hostile_numbers.rs`.

use crate::common::gateways::free_port;
use crate::common::repo;
use continuity_bench::client::{driver_client, send, SendOptions, SystemKind, Target};
use continuity_bench::openai::{ChatMessage, ChatRequest};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::process::{Command, Output};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The absurd `Content-Length` values.
const LENGTHS: [&str; 5] = ["18446744073709551615", "99999999999", "-1", "1e300", "many"];

/// Absurd `usage` counts.
fn counts() -> Vec<Value> {
    vec![json!(u64::MAX), json!(-1), json!(1e300), json!("12")]
}

/// A peer that answers every request with `reply(first line)`, as
/// written, then closes the connection. Runs until the test ends.
async fn raw_peer(reply: impl Fn(&str) -> String + Send + Sync + 'static) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let reply = std::sync::Arc::new(reply);
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 8192];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let first = text.lines().next().unwrap_or_default().to_string();
                let _ = tcp.write_all(reply(&first).as_bytes()).await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    addr
}

fn http(length: &str, content_type: &str, body: &str) -> String {
    format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\nconnection: close\r\n\r\n{body}")
}

fn completion(usage: &Value) -> String {
    json!({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": "Oriane."}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": usage, "completion_tokens": usage, "total_tokens": usage}})
    .to_string()
}

fn request(stream: bool) -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        messages: vec![ChatMessage::new("user", "hi")],
        stream,
        stream_options: None,
        extra: serde_json::Map::new(),
    }
}

fn target(addr: SocketAddr) -> Target {
    Target {
        name: "hostile".into(),
        kind: SystemKind::Gateway,
        url: format!("http://{addr}"),
        headers: vec![],
        model: None,
    }
}

#[tokio::test]
async fn the_driver_records_a_bad_length_as_a_failure_with_its_reason() {
    let client = driver_client().unwrap();
    let body = completion(&json!(3));
    for length in LENGTHS {
        let body = body.clone();
        let addr = raw_peer(move |_| http(length, "application/json", &body)).await;
        let got = send(
            &client,
            &target(addr),
            &request(false),
            SendOptions::new(Duration::from_secs(20)),
        )
        .await;
        let reason = got.error.as_deref().unwrap_or_default();
        assert!(
            got.answer.is_none() && !reason.is_empty(),
            "{length}: {:?} / {reason}",
            got.answer
        );
    }
}

#[tokio::test]
async fn the_driver_leaves_an_absurd_usage_count_unmeasured() {
    let client = driver_client().unwrap();
    for count in counts() {
        let body = completion(&count);
        let length = body.len().to_string();
        let addr = raw_peer(move |_| http(&length, "application/json", &body)).await;
        let got = send(
            &client,
            &target(addr),
            &request(false),
            SendOptions::new(Duration::from_secs(20)),
        )
        .await;
        assert_eq!(got.answer.as_deref(), Some("Oriane."), "{count}: {got:?}");
        assert_eq!(got.completion_tokens, None, "{count}: not a count");
        // The same in a stream's last chunk.
        let chunk = json!({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Oriane."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": count, "completion_tokens": count, "total_tokens": count}});
        let events = format!("data: {chunk}\n\ndata: [DONE]\n\n");
        let length = events.len().to_string();
        let addr = raw_peer(move |_| http(&length, "text/event-stream", &events)).await;
        let got = send(
            &client,
            &target(addr),
            &request(true),
            SendOptions::new(Duration::from_secs(20)),
        )
        .await;
        assert_eq!(got.answer.as_deref(), Some("Oriane."), "{count}: {got:?}");
        assert_eq!(got.completion_tokens, None, "{count}: not a count");
    }
}

/// A peer serving `/v1/models` and `/models` sensibly and every other
/// request with an absurd length or absurd counts, by turns.
async fn hostile_api(length: &'static str, count: Value) -> SocketAddr {
    raw_peer(move |first| {
        if first.starts_with("GET") {
            let body =
                json!({"object": "list", "data": [{"id": "m", "object": "model"}]}).to_string();
            return http(&body.len().to_string(), "application/json", &body);
        }
        if length.is_empty() {
            let body = completion(&count);
            http(&body.len().to_string(), "application/json", &body)
        } else {
            http(length, "application/json", &completion(&json!(3)))
        }
    })
    .await
}

fn binary(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .current_dir(repo(""))
        .env("CB_TEST_HOSTILE_KEY", "k-1")
        .args(args)
        .output()
        .unwrap()
}

/// No panic: not the panic status, no panic message.
fn assert_no_panic(what: &str, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(101), "{what}: {stderr}");
    assert!(output.status.code().is_some(), "{what}: killed: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

/// The peers: each absurd length, then each absurd count.
async fn peers() -> Vec<(String, SocketAddr)> {
    let mut peers = Vec::new();
    for length in LENGTHS {
        peers.push((
            format!("length {length}"),
            hostile_api(length, Value::Null).await,
        ));
    }
    for count in counts() {
        peers.push((format!("usage {count}"), hostile_api("", count).await));
    }
    peers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantics_and_canary_reading_absurd_numbers_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    for (what, addr) in peers().await {
        let args: Vec<String> = [
            "semantics",
            "--fast",
            "--no-builtin",
            "--cases",
            "ok",
            "--gateway-wait",
            "0s",
            "--gateway",
            &format!("h=http://{addr}"),
            "--upstream-ports",
            &format!("h={},{}", free_port(), free_port()),
        ]
        .map(String::from)
        .to_vec();
        let output = tokio::task::spawn_blocking(move || binary(&args))
            .await
            .unwrap();
        assert_no_panic(&format!("semantics, {what}"), &output);
        let out = dir.path().join(format!("canary-{}", addr.port()));
        let args: Vec<String> = [
            "canary",
            "--rounds",
            "1",
            "--no-wait",
            "--routes",
            "a",
            "--key-env",
            "CB_TEST_HOSTILE_KEY",
            "--endpoint",
            &format!("http://{addr}/v1"),
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec();
        let output = tokio::task::spawn_blocking(move || binary(&args))
            .await
            .unwrap();
        assert_no_panic(&format!("canary, {what}"), &output);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstreams_pass_through_absurd_numbers_without_a_panic() {
    for (what, addr) in peers().await {
        let (primary, fallback) = (free_port(), free_port());
        let mut child = Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
            .current_dir(repo(""))
            .args(["upstreams", "--latency", "instant", "--provider-model", "m"])
            .arg("--provider")
            .arg(format!("http://{addr}/v1"))
            .arg("--primary")
            .arg(format!("127.0.0.1:{primary}"))
            .arg("--fallback")
            .arg(format!("127.0.0.1:{fallback}"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read to its end (a closed pipe would fail the last line it
        // prints); readiness comes down the channel.
        let stdout = child.stdout.take().unwrap();
        let (ready, serving) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if line.contains("press Ctrl-C to stop") {
                    let _ = ready.send(());
                }
            }
        });
        tokio::task::spawn_blocking(move || serving.recv_timeout(Duration::from_secs(120)))
            .await
            .unwrap()
            .expect("the upstreams say they serve");
        let answered = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap()
            .post(format!("http://127.0.0.1:{fallback}/v1/chat/completions"))
            .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .unwrap();
        let status = answered.status().as_u16();
        let body = answered.text().await.unwrap();
        assert!(!body.is_empty(), "{what}: an empty reply ({status})");
        if what.starts_with("length") {
            assert!(status >= 500, "{what}: a failure: {status} {body}");
        }
        // Still serving, and stopped cleanly.
        std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(143), "{what}");
        assert_no_panic(&format!("upstreams --provider, {what}"), &output);
    }
}
