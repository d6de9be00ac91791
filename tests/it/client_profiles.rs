//! The `openai-sdk` client profile against the official OpenAI SDKs
//! themselves, on the same bytes: every answer shape of the catalogue's
//! cases (their primary's script, streamed, with its silences shortened)
//! and a few shapes the scripts cannot make (an error chunk, a falsy
//! `error`, a last event without its blank line) are served by the
//! harness's upstream; the catalogue's own reading
//! ([`read_as`] with [`ClientProfile::OpenAiSdk`]) and each SDK
//! (`tests/sdk/read_stream.py`, `tests/sdk/read_stream.mjs`) read them,
//! and must agree on whether the client raises, the text it returns and
//! its finish reason. The strict profile must raise wherever the stream
//! has no `data: [DONE]`.
//!
//! The SDKs come from `scripts/sdk-install` (into `target/sdk/`), or from
//! `CONTINUITY_BENCH_SDK_PYTHON` (a Python with `openai`) and
//! `CONTINUITY_BENCH_SDK_NODE` (a directory whose `node_modules` holds
//! `openai`). Without them the test says so and checks nothing, unless
//! `CONTINUITY_BENCH_REQUIRE_SDKS=1` (CI sets it), which makes a missing
//! SDK a failure.

use continuity_bench::client::{send, SendOptions, SystemKind, Target};
use continuity_bench::faults::{Act, CaseScript, End, FaultPlan, Script, Shape};
use continuity_bench::openai::{ChatMessage, ChatRequest, StreamOptions};
use continuity_bench::semantics::catalogue::catalogue;
use continuity_bench::semantics::observe::read_as;
use continuity_bench::semantics::timing::{GiveUpBounds, Timing};
use continuity_bench::sse::ClientProfile;
use continuity_bench::upstream::{
    start_pair, ConversationIndex, IndexEntry, LatencyProfile, UpstreamContext,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const MESSAGE: &str = "client profile check. Please reply in exactly 60 words.";

/// Longest silence a shape keeps here: the SDKs run in real time.
const SHORT: Duration = Duration::from_millis(300);

/// What a client made of a stream.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    raised: bool,
    text: String,
    finish_reason: Option<String>,
}

/// The SDKs on this machine, or why there are none.
struct Sdks {
    python: Option<PathBuf>,
    node: Option<PathBuf>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sdks() -> Sdks {
    let sdk = repo().join("target/sdk");
    let node_runs = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let python = std::env::var_os("CONTINUITY_BENCH_SDK_PYTHON")
        .map(PathBuf::from)
        .or_else(|| Some(sdk.join("venv/bin/python")))
        .filter(|p| p.exists());
    let node = std::env::var_os("CONTINUITY_BENCH_SDK_NODE")
        .map(PathBuf::from)
        .or_else(|| Some(sdk.join("node")))
        .filter(|d| node_runs && d.join("node_modules/openai").is_dir());
    Sdks { python, node }
}

/// A shape's silences and delays cut to [`SHORT`].
fn shortened(mut shape: Shape) -> Shape {
    let cap = |d: Duration| d.min(SHORT);
    shape.delay = shape.delay.map(cap);
    shape.first_token_after = shape.first_token_after.map(cap);
    shape.end = match shape.end {
        End::StallAfter { tokens, silent } => End::StallAfter {
            tokens,
            silent: cap(silent),
        },
        End::KeepAliveAfter { tokens, .. } => End::KeepAliveAfter {
            tokens,
            every: Duration::from_millis(100),
            silent: SHORT,
        },
        End::BodyStall { silent } => End::BodyStall {
            silent: cap(silent),
        },
        other => other,
    };
    shape
}

/// Every distinct answer shape the catalogue's primaries send, named by
/// the first case that sends it.
fn catalogue_shapes() -> Vec<(String, Shape)> {
    let mut shapes: Vec<(String, Shape)> = Vec::new();
    for case in catalogue(&Timing::fast(), &GiveUpBounds::default(), true) {
        let acts = std::iter::once(&case.script.primary.otherwise)
            .chain(case.script.primary.rules.iter().map(|(_, act)| act));
        for act in acts {
            if let Act::Answer(shape) = act {
                let shape = shortened(shape.clone());
                if !shapes.iter().any(|(_, s)| *s == shape) {
                    shapes.push((case.id.to_string(), shape));
                }
            }
        }
    }
    shapes
}

/// Serves `shape` from a fresh simulated primary; its base URL (with
/// `/v1`) and the pair, kept alive by the caller.
async fn serve(shape: Shape) -> (String, continuity_bench::upstream::UpstreamPair) {
    let index = ConversationIndex::new([IndexEntry {
        id: "case",
        first_user_message: MESSAGE,
        probe: MESSAGE,
        turns: 1,
        script: &[],
    }]);
    let script = CaseScript {
        primary: Script::always(Act::Answer(shape)),
        fallback: Script::answer(),
        clock: "case".into(),
    };
    let ctx = UpstreamContext::new(
        FaultPlan::cases(vec![script]),
        index,
        LatencyProfile::INSTANT,
        1,
        1,
    );
    let any = "127.0.0.1:0".parse().unwrap();
    let pair = start_pair("sdk", any, any, ctx).await.unwrap();
    (format!("{}/v1", pair.primary.url()), pair)
}

/// The catalogue's reading of one streamed request to `base` by `profile`,
/// and whether the stream carried `data: [DONE]`.
async fn harness_reading(base: &str, profile: ClientProfile) -> (Reading, bool) {
    let client = continuity_bench::client::driver_client().unwrap();
    let target = Target {
        name: "sdk".into(),
        kind: SystemKind::Gateway,
        url: base.trim_end_matches("/v1").to_string(),
        headers: Vec::new(),
        model: None,
    };
    let request = ChatRequest {
        model: "continuity-sim".into(),
        messages: vec![ChatMessage::new("user", MESSAGE)],
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        extra: serde_json::Map::new(),
    };
    let reply = send(
        &client,
        &target,
        &request,
        SendOptions::new(Duration::from_secs(30)),
    )
    .await;
    let done = reply
        .stream
        .as_ref()
        .is_some_and(|t| t.events.iter().any(|e| e.data == "[DONE]"));
    let read = read_as(profile, &reply);
    let raised = read.error.is_some() || read.answer.is_none();
    let reading = Reading {
        raised,
        text: if raised {
            String::new()
        } else {
            read.answer.unwrap_or_default()
        },
        finish_reason: if raised { None } else { read.finish_reason },
    };
    (reading, done)
}

/// One SDK's reading of a streamed request to `base`: the script's JSON
/// line.
fn sdk_reading(program: &Path, args: &[&Path], cwd: &Path, base: &str) -> Reading {
    // Bounded: the SDKs' own timeouts do not cover a body that never ends.
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg(program)
        .args(args)
        .arg(base)
        .arg(MESSAGE)
        .current_dir(cwd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "{}: no JSON line ({e}): {stdout}{}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let raised = !v["raised"].is_null();
    Reading {
        raised,
        text: if raised {
            String::new()
        } else {
            v["text"].as_str().unwrap_or_default().to_string()
        },
        finish_reason: if raised {
            None
        } else {
            v["finish_reason"].as_str().map(str::to_string)
        },
    }
}

/// Shapes on which the two SDKs read differently: the profile follows the
/// Python SDK there (see `crates/wire/src/sse/client.rs`), and the test
/// requires that the Node SDK still differs, so the list stays true.
const PYTHON_ONLY: &[&str] = &["a last event without its blank line, no [DONE]"];

/// Shapes the scripted upstream does not send, as raw bodies.
fn raw_shapes() -> Vec<(&'static str, String)> {
    let chunk = |v: Value| format!("data: {v}\n\n");
    let text = |t: &str| {
        chunk(
            serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]}),
        )
    };
    let finish = chunk(
        serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    );
    vec![
        (
            "an error chunk after text",
            format!(
                "{}{}data: [DONE]\n\n",
                text("Hello "),
                chunk(
                    serde_json::json!({"error": {"message": "Overloaded", "type": "overloaded_error"}})
                )
            ),
        ),
        (
            "chunks whose error is null",
            format!(
                "{}{}{finish}data: [DONE]\n\n",
                chunk(
                    serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "error": null, "choices": [{"index": 0, "delta": {"content": "Hello "}, "finish_reason": null}]})
                ),
                text("there.")
            ),
        ),
        (
            "keep-alive comments between chunks, then a clean end without [DONE]",
            format!("{}: ping\n\n{}: ping\n\n", text("Hello "), text("there.")),
        ),
        (
            "a last event without its blank line, no [DONE]",
            format!("{}{}", text("Hello "), text("there.").trim_end()),
        ),
        (
            "chunks whose error is false, 0 or empty",
            format!(
                "{}{}{}{finish}data: [DONE]\n\n",
                chunk(
                    serde_json::json!({"error": false, "choices": [{"index": 0, "delta": {"content": "a "}, "finish_reason": null}]})
                ),
                chunk(
                    serde_json::json!({"error": 0, "choices": [{"index": 0, "delta": {"content": "b "}, "finish_reason": null}]})
                ),
                chunk(
                    serde_json::json!({"error": "", "choices": [{"index": 0, "delta": {"content": "c"}, "finish_reason": null}]})
                ),
            ),
        ),
    ]
}

/// Serves `body` as a 200 event stream that ends cleanly.
async fn serve_raw(body: String) -> (String, tokio::task::JoinHandle<()>) {
    let (base, server) = serve_bytes("text/event-stream", None, body.into_bytes()).await;
    (format!("{base}/v1"), server)
}

/// Serves every chat request with `body` as a 200 of `content_type`,
/// under `Content-Encoding: encoding` when one is given; the base URL
/// (without `/v1`) and the server.
async fn serve_bytes(
    content_type: &'static str,
    encoding: Option<&'static str>,
    body: Vec<u8>,
) -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::post;
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let body = body.clone();
            async move {
                let mut response = axum::response::Response::builder()
                    .status(200)
                    .header("content-type", content_type);
                if let Some(encoding) = encoding {
                    response = response.header("content-encoding", encoding);
                }
                response.body(axum::body::Body::from(body)).unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (format!("http://{addr}"), server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_profile_reads_every_stream_as_the_official_sdks_do() {
    let Sdks { python, node } = sdks();
    let required = std::env::var_os("CONTINUITY_BENCH_REQUIRE_SDKS").is_some();
    if python.is_none() || node.is_none() {
        assert!(
            !required,
            "CONTINUITY_BENCH_REQUIRE_SDKS is set but the SDKs are missing (python: {python:?}, node: {node:?}); run scripts/sdk-install"
        );
        eprintln!(
            "skipped: the official OpenAI SDKs are not installed here; run scripts/sdk-install (or set CONTINUITY_BENCH_SDK_PYTHON and CONTINUITY_BENCH_SDK_NODE)"
        );
        return;
    }
    let (python, node_dir) = (python.unwrap(), node.unwrap());
    // The Node script must sit beside its node_modules to import `openai`
    // (under a name of its own, so nothing of the directory's is replaced).
    let mjs = node_dir.join(".continuity-bench-read_stream.mjs");
    std::fs::copy(repo().join("tests/sdk/read_stream.mjs"), &mjs).unwrap();
    let py = repo().join("tests/sdk/read_stream.py");
    let node_bin = Path::new("node");

    let mut checked = Vec::new();
    let mut disagreements = Vec::new();
    let mut compare = |name: &str,
                       (ours, done): (Reading, bool),
                       (strict, _): (Reading, bool),
                       sdks: [(&str, Reading); 2]| {
        for (sdk, theirs) in sdks {
            // Where the SDKs differ, the profile follows the Python SDK
            // (client.rs says where); the Node SDK is then not held to it.
            if ours != theirs && !(sdk == "node" && PYTHON_ONLY.contains(&name)) {
                disagreements.push(format!(
                    "{name}: {sdk} read {theirs:?}, openai-sdk read {ours:?}"
                ));
            }
        }
        // Strict raises where the SDKs do, and wherever [DONE] is missing
        // (and on any `error` key, falsy or not).
        if (ours.raised || !done) && !strict.raised {
            disagreements.push(format!(
                "{name}: strict raised {} (the SDK raised {}, [DONE] {})",
                strict.raised,
                ours.raised,
                if done { "came" } else { "missing" }
            ));
        }
        checked.push((name.to_string(), ours.raised, strict.raised));
    };

    for (case, shape) in catalogue_shapes() {
        let name = format!("{case} ({:?})", shape.end);
        let (base, _ours) = serve(shape.clone()).await;
        let harness = harness_reading(&base, ClientProfile::OpenAiSdk).await;
        let (base, _s) = serve(shape.clone()).await;
        let strict = harness_reading(&base, ClientProfile::Strict).await;
        let (base, _p) = serve(shape.clone()).await;
        let py_read = tokio::task::block_in_place(|| sdk_reading(&python, &[&py], &repo(), &base));
        let (base, _n) = serve(shape.clone()).await;
        let node_read =
            tokio::task::block_in_place(|| sdk_reading(node_bin, &[&mjs], &node_dir, &base));
        compare(
            &name,
            harness,
            strict,
            [("python", py_read), ("node", node_read)],
        );
    }
    let mut node_differs = Vec::new();
    for (name, body) in raw_shapes() {
        let (base, server) = serve_raw(body).await;
        let harness = harness_reading(&base, ClientProfile::OpenAiSdk).await;
        let strict = harness_reading(&base, ClientProfile::Strict).await;
        let py_read = tokio::task::block_in_place(|| sdk_reading(&python, &[&py], &repo(), &base));
        let node_read =
            tokio::task::block_in_place(|| sdk_reading(node_bin, &[&mjs], &node_dir, &base));
        server.abort();
        if PYTHON_ONLY.contains(&name) && node_read != py_read {
            node_differs.push(name);
        }
        compare(
            name,
            harness,
            strict,
            [("python", py_read), ("node", node_read)],
        );
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
    assert_eq!(
        node_differs, PYTHON_ONLY,
        "the SDKs now agree on a shape listed as theirs to differ on"
    );
    // Both outcomes were seen: shapes the SDKs answer and shapes they
    // raise on, and a clean end that only the strict reader refuses.
    assert!(checked.iter().any(|(_, raised, _)| *raised), "{checked:?}");
    assert!(checked.iter().any(|(_, raised, _)| !raised), "{checked:?}");
    assert!(
        checked.iter().any(|(_, sdk, strict)| !sdk && *strict),
        "{checked:?}"
    );
    eprintln!(
        "{} stream shapes read alike by the SDKs and the profile",
        checked.len()
    );
}

/// `body` compressed as `encoding` names (`gzip` or `deflate`).
fn compressed(encoding: &str, body: &str) -> Vec<u8> {
    use std::io::Write;
    let level = flate2::Compression::default();
    match encoding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(body.as_bytes()).unwrap();
            e.finish().unwrap()
        }
        _ => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(body.as_bytes()).unwrap();
            e.finish().unwrap()
        }
    }
}

/// A gateway at `url` and a request to it, streamed or not.
fn gateway_and_request(url: String, stream: bool) -> (Target, ChatRequest) {
    let target = Target {
        name: "compressing".into(),
        kind: SystemKind::Gateway,
        url,
        headers: Vec::new(),
        model: None,
    };
    let request = ChatRequest {
        model: "continuity-sim".into(),
        messages: vec![ChatMessage::new("user", MESSAGE)],
        stream,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    (target, request)
}

/// The SDKs' HTTP stacks (httpx, undici) decode a gzip or deflate body
/// whether or not they asked for one, so a compressed answer is an answer
/// to the client too, streamed or plain, through both of its transports
/// (the driver's bare connections and the TLS client); bytes that claim
/// gzip and are not are an error naming the encoding.
#[tokio::test]
async fn a_compressed_answer_is_read_as_the_sdks_read_it() {
    use continuity_bench::client::{send_body, DriverClient};
    const STREAM: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Your sister is \"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Oriane.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    const PLAIN: &str = "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Your sister is Oriane.\"},\"finish_reason\":\"stop\"}]}";
    let options = SendOptions::new(Duration::from_secs(30));
    for encoding in ["gzip", "deflate"] {
        for (stream, content_type, body) in [
            (true, "text/event-stream", STREAM),
            (false, "application/json", PLAIN),
        ] {
            let (url, server) =
                serve_bytes(content_type, Some(encoding), compressed(encoding, body)).await;
            let (target, request) = gateway_and_request(url, stream);
            let tls = continuity_bench::client::driver_client().unwrap();
            let through_reqwest = send(&tls, &target, &request, options).await;
            let body = serde_json::to_vec(&request).unwrap();
            let through_plain =
                send_body(&DriverClient::new(tls), &target, body, stream, options).await;
            for reply in [through_reqwest, through_plain] {
                assert_eq!(reply.error, None, "{encoding} stream {stream}: {reply:?}");
                assert_eq!(
                    reply.answer.as_deref(),
                    Some("Your sister is Oriane."),
                    "{encoding} stream {stream}"
                );
                assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
            }
            server.abort();
        }
    }
    // Plain JSON that claims to be gzip: what an SDK raises on too.
    let (url, server) = serve_bytes("application/json", Some("gzip"), PLAIN.into()).await;
    let (target, request) = gateway_and_request(url, false);
    let tls = continuity_bench::client::driver_client().unwrap();
    let reply = send(&tls, &target, &request, options).await;
    assert_eq!(reply.answer, None);
    let error = reply.error.unwrap();
    assert!(
        error.starts_with("the gzip body does not decode"),
        "{error}"
    );
    server.abort();
}
