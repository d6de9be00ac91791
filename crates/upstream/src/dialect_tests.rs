//! Loopback tests of the Anthropic and Gemini routes: strict validation
//! with the API's own 400, answers whole and streamed that the proxy's
//! translators read back, faults in the dialect's error shape, what
//! survived of the client's request, and the fallback's context window.

use super::survived::ClientView;
use super::*;
use cb_dataset::{messages::client_messages, AnchorPlace, Conversation};
use cb_dataset::{Dataset, Turn, TurnKind};
use cb_dialect::{bridge, ChunkOptions, Dialect};
use cb_faults::FaultProfile;
use cb_testkit::conversation as kit;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

const SYSTEM: &str = "You are helpful.";

fn conversation() -> Conversation {
    let turn = |kind, user: &str| kit::turn(kind, user, Some("Noted."));
    Conversation {
        system: vec![
            "Answer in British English.".into(),
            "The user is on the mobile app.".into(),
        ],
        anchor_place: AnchorPlace::ToolResult,
        ..kit::conversation(
            "c001",
            kit::sister("Oriane"),
            vec![
                Turn {
                    tool: Some(Box::new(kit::read_note(
                        "{\"title\": \"family\"}",
                        "Note written by the user: My sister's name is Oriane.",
                    ))),
                    ..turn(
                        TurnKind::Anchor,
                        "Hi! Could you open the note I saved about my family?",
                    )
                },
                turn(TurnKind::Filler, "What is a good tea for the evening?"),
                turn(TurnKind::Probe, "What's my sister's name?"),
            ],
        )
    }
}

fn context(profile: &str) -> UpstreamContext {
    let profile = FaultProfile::parse(profile, "test.toml").unwrap();
    let d = Dataset {
        conversations: vec![conversation()],
    };
    let plan = FaultPlan::new(profile, 42, vec![3]);
    UpstreamContext::new(
        plan,
        ConversationIndex::of_dataset(&d),
        LatencyProfile::INSTANT,
        42,
        1,
    )
    .with_clients(ClientView {
        dataset: std::sync::Arc::new(d),
        system_prompt: SYSTEM.into(),
    })
}

/// The OpenAI request a client sends for `turn` (from 1).
fn openai(turn: usize, stream: bool) -> Value {
    let c = conversation();
    json!({
        "model": "gpt-client",
        "stream": stream,
        "messages": client_messages(&c, SYSTEM, turn - 1, |_| "Noted."),
    })
}

async fn start(ctx: &UpstreamContext) -> UpstreamPair {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    start_pair("sut", any, any, ctx.clone()).await.unwrap()
}

/// Sends turn `turn` to `base` in `dialect`, translated as the proxy
/// translates it; returns the status and the answer as OpenAI text (or
/// the raw error body).
async fn send(base: &str, dialect: Dialect, turn: usize, stream: bool) -> (u16, String) {
    let t = bridge::translate(dialect, &openai(turn, stream), Some("sim-fallback"))
        .unwrap()
        .unwrap();
    let mut req = reqwest::Client::new()
        .post(format!("{base}{}", t.path))
        .timeout(Duration::from_secs(10))
        .json(&t.body);
    for (k, v) in bridge::request_headers(dialect) {
        req = req.header(*k, *v);
    }
    let response = req.send().await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    if status != 200 {
        return (status, String::from_utf8_lossy(&bytes).into_owned());
    }
    let options = ChunkOptions::default();
    if stream {
        let mut tr = bridge::stream_translator(dialect, options).unwrap();
        let mut out = tr.feed(&bytes).unwrap();
        out.push_str(&tr.finish().unwrap());
        (status, cb_wire::sse::stream_text(out.as_bytes()).unwrap())
    } else {
        let c = bridge::completion(dialect, &bytes, &options)
            .unwrap()
            .unwrap();
        (
            status,
            cb_wire::openai::response_text(&c).unwrap_or_default(),
        )
    }
}

#[tokio::test(start_paused = true)]
async fn both_dialects_answer_from_history_and_note_what_survived() {
    let ctx = context("[modes.api_error]\n");
    let pair = start(&ctx).await;
    let fallback = format!("http://{}", pair.fallback.addr);
    for dialect in [Dialect::Anthropic, Dialect::Gemini] {
        for stream in [false, true] {
            let (status, text) = send(&fallback, dialect, 3, stream).await;
            assert_eq!(status, 200, "{dialect} {stream}: {text}");
            assert!(text.contains("Oriane"), "{dialect} {stream}: {text}");
        }
    }
    let survivals = ctx.log.survivals();
    assert_eq!(survivals.len(), 4);
    for s in &survivals {
        assert_eq!((s.conversation.as_str(), s.turn), ("c001", 3));
        assert!(s.survival.complete(), "{s:?}");
        assert_eq!(s.survival.system.sent, 3);
        assert_eq!(s.survival.tool_results.sent, 1);
        assert!(s.anchor);
    }
    pair.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn faults_come_in_the_dialect_error_shape() {
    let ctx = context("[modes.api_error]\nstatus = 503\n");
    let pair = start(&ctx).await;
    let primary = format!("http://{}", pair.primary.addr);
    let (status, body) = send(&primary, Dialect::Anthropic, 3, false).await;
    assert_eq!(status, 503);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    let (status, body) = send(&primary, Dialect::Gemini, 3, true).await;
    assert_eq!(status, 503);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["status"], "UNAVAILABLE");
    // Earlier turns are not faulted.
    assert_eq!(send(&primary, Dialect::Gemini, 2, false).await.0, 200);
    pair.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn invalid_requests_get_the_api_s_own_400_and_are_logged() {
    let ctx = context("[modes.api_error]\n");
    let pair = start(&ctx).await;
    let base = format!("http://{}", pair.fallback.addr);
    let client = reqwest::Client::new();
    // No max_tokens: Anthropic requires it.
    let response = client
        .post(format!("{base}/v1/messages"))
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let v: Value = response.json().await.unwrap();
    assert_eq!(v["error"]["type"], "invalid_request_error");
    // A Gemini body with OpenAI's messages.
    let response = client
        .post(format!("{base}/v1beta/models/g:generateContent"))
        .json(&json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let v: Value = response.json().await.unwrap();
    assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
    let rejections = ctx.log.rejections();
    assert_eq!(rejections.len(), 2);
    assert!(
        rejections[0].message.contains("max_tokens"),
        "{rejections:?}"
    );
    let rows = ctx.log.snapshot();
    assert!(rows
        .iter()
        .all(|r| r.action == cb_base::record::AttemptAction::BadRequest));
    pair.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_squeezed_fallback_refuses_what_does_not_fit() {
    let ctx = context("[modes.api_error]\n[fallback]\ncontext_tokens = 20\n");
    let pair = start(&ctx).await;
    let fallback = format!("http://{}", pair.fallback.addr);
    let (status, body) = send(&fallback, Dialect::Anthropic, 3, false).await;
    assert_eq!(status, 400);
    assert!(body.contains("prompt is too long"), "{body}");
    let response = reqwest::Client::new()
        .post(format!("{fallback}/v1/chat/completions"))
        .json(&openai(3, false))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let v: Value = response.json().await.unwrap();
    assert_eq!(v["error"]["code"], "context_length_exceeded");
    // The primary has no such window.
    let primary = format!("http://{}", pair.primary.addr);
    assert_eq!(send(&primary, Dialect::Anthropic, 2, false).await.0, 200);
    pair.shutdown().await;
}
