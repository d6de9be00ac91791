//! Loopback tests of case-scripted upstreams: each scripted behaviour is
//! seen on the wire by a real HTTP client (a reset with no response, a
//! stream cut or stalled, a malformed event, no `data: [DONE]`, reasoning
//! text, a late first token), and the rules on the request decide.

use super::*;
use cb_faults::{Act, CaseScript, End, ErrorKind, ErrorSpec, Script, When};
use cb_wire::sse::{assemble, read_all};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

const MESSAGE: &str = "scripted test. Please reply in exactly 60 words.";

fn context(script: CaseScript) -> UpstreamContext {
    let index = ConversationIndex::new([IndexEntry {
        id: "case",
        first_user_message: MESSAGE,
        probe: MESSAGE,
        turns: 1,
        script: &[],
    }]);
    UpstreamContext::new(
        cb_faults::FaultPlan::cases(vec![script]),
        index,
        LatencyProfile::INSTANT,
        1,
        1,
    )
}

fn primary(script: Script) -> CaseScript {
    CaseScript {
        primary: script,
        fallback: Script::answer(),
        clock: "case".into(),
    }
}

async fn start(ctx: &UpstreamContext) -> UpstreamPair {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    start_pair("sut", any, any, ctx.clone()).await.unwrap()
}

fn body(stream: bool) -> Value {
    json!({
        "model": "m",
        "stream": stream,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": MESSAGE}],
    })
}

async fn send(url: &str, body: &Value) -> Result<reqwest::Response, reqwest::Error> {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .post(format!("{url}/v1/chat/completions"))
        .json(body)
        .send()
        .await
}

fn canonical() -> String {
    model::reply(&[cb_wire::openai::ChatMessage::new("user", MESSAGE)])
}

fn words(n: usize) -> String {
    canonical().split_inclusive(' ').take(n).collect()
}

#[tokio::test(start_paused = true)]
async fn a_reset_sends_no_byte_then_the_next_attempt_answers() {
    let ctx = context(primary(Script::first(1, Act::Reset, Act::answer())));
    let pair = start(&ctx).await;
    let err = send(&pair.primary.url(), &body(false)).await.unwrap_err();
    assert!(err.status().is_none(), "{err}");
    let chain = format!("{err:?}").to_lowercase();
    // A real RST: the client's socket says "connection reset by peer".
    assert!(chain.contains("connectionreset"), "{chain}");
    let ok = send(&pair.primary.url(), &body(false)).await.unwrap();
    assert_eq!(ok.status(), 200);
    let details = ctx.log.details();
    assert_eq!(details[0].act, "reset before headers");
    assert_eq!((details[1].attempt, details[1].act.as_str()), (2, "answer"));
}

#[tokio::test(start_paused = true)]
async fn a_cut_stream_stops_after_its_chunks_without_a_terminator() {
    let ctx = context(primary(Script::always(Act::shaped(|s| {
        s.end = End::CutAfter(40);
    }))));
    let pair = start(&ctx).await;
    let response = send(&pair.primary.url(), &body(true)).await.unwrap();
    assert_eq!(response.status(), 200);
    let (got, broke) = read_to_end(response).await;
    assert!(broke, "the body breaks off");
    let err = assemble(&read_all(&got)).unwrap_err();
    assert_eq!(err, "the stream ended without data: [DONE] after 41 chunks");
    assert_eq!(content(&got), words(40));
}

/// The body of a streamed answer read to its end: its bytes, and whether
/// it broke off (an aborted connection) rather than ended.
async fn read_to_end(response: reqwest::Response) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
        match chunk {
            Ok(bytes) => got.extend_from_slice(&bytes),
            Err(_) => return (got, true),
        }
    }
    (got, false)
}

/// A plain (non-streamed) answer of the primary, as JSON.
async fn plain_answer(pair: &UpstreamPair) -> Value {
    send(&pair.primary.url(), &body(false))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The content text of a stream's events.
fn content(bytes: &[u8]) -> String {
    read_all(bytes)
        .events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_stall_goes_silent_then_the_connection_is_aborted() {
    let silent = Duration::from_millis(600);
    for end in [
        End::StallAfter { tokens: 20, silent },
        End::BodyStall { silent },
    ] {
        let ctx = context(primary(Script::always(Act::shaped(|s| s.end = end))));
        let pair = start(&ctx).await;
        let began = Instant::now();
        let response = send(&pair.primary.url(), &body(true)).await.unwrap();
        let (bytes, broke) = read_to_end(response).await;
        assert!(began.elapsed() >= silent, "{end:?}");
        assert!(
            broke,
            "{end:?}: a stall ends with the connection aborted, not a clean end"
        );
        let sdk = cb_wire::sse::ClientProfile::OpenAiSdk.assemble(&read_all(&bytes));
        assert_eq!(sdk.unwrap().finish_reason, None, "{end:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_truncated_stream_ends_cleanly_without_finish_or_done() {
    let ctx = context(primary(Script::always(Act::shaped(|s| {
        s.end = End::TruncatedAfter(40);
    }))));
    let pair = start(&ctx).await;
    let response = send(&pair.primary.url(), &body(true)).await.unwrap();
    let (bytes, broke) = read_to_end(response).await;
    assert!(!broke, "the body ends cleanly");
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("[DONE]"), "{text}");
    let sdk = cb_wire::sse::ClientProfile::OpenAiSdk
        .assemble(&read_all(&bytes))
        .unwrap();
    assert_eq!(sdk.finish_reason, None);
    assert_eq!(content(&bytes), words(40));
    // A plain body: the same words, valid JSON.
    let plain = plain_answer(&pair).await;
    assert_eq!(
        plain["choices"][0]["message"]["content"],
        words(40).as_str()
    );
}

#[tokio::test(start_paused = true)]
async fn an_error_event_ends_a_stream_before_or_after_its_first_text() {
    for k in [0, 20] {
        let ctx = context(primary(Script::always(Act::shaped(|s| {
            s.end = End::ErrorAfter(k);
        }))));
        let pair = start(&ctx).await;
        let response = send(&pair.primary.url(), &body(true)).await.unwrap();
        assert_eq!(response.status(), 200);
        let (bytes, broke) = read_to_end(response).await;
        assert!(!broke, "the body ends cleanly after the error event");
        assert_eq!(content(&bytes), words(k));
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("[DONE]"), "{text}");
        let err = assemble(&read_all(&bytes)).unwrap_err();
        assert!(
            err.starts_with(&format!("error in the stream after {} chunks", k + 2)),
            "{err}"
        );
        assert!(err.contains("Overloaded"), "{err}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_length_stop_says_length_in_a_complete_stream_and_body() {
    let ctx = context(primary(Script::always(Act::shaped(|s| {
        s.end = End::LengthAfter(40);
    }))));
    let pair = start(&ctx).await;
    let response = send(&pair.primary.url(), &body(true)).await.unwrap();
    let (bytes, broke) = read_to_end(response).await;
    assert!(!broke);
    let assembled = assemble(&read_all(&bytes)).unwrap();
    assert_eq!(assembled.text, words(40));
    assert_eq!(assembled.finish_reason.as_deref(), Some("length"));
    assert!(words(40).len() < canonical().len());
    let plain = plain_answer(&pair).await;
    assert_eq!(
        plain["choices"][0]["message"]["content"],
        words(40).as_str()
    );
    assert_eq!(plain["choices"][0]["finish_reason"], "length");
    assert_eq!(
        plain["usage"]["completion_tokens"],
        cb_wire::openai::approx_tokens(&words(40))
    );
}

#[tokio::test(start_paused = true)]
async fn malformed_event_no_done_reasoning_and_a_late_first_token() {
    let late = Duration::from_millis(400);
    let ctx = context(primary(Script::always(Act::shaped(|s| {
        s.malformed_after = Some(9);
        s.first_token_after = Some(late);
        s.reasoning = true;
        s.end = End::NoDone;
    }))));
    let pair = start(&ctx).await;
    let began = Instant::now();
    let text = send(&pair.primary.url(), &body(true))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(began.elapsed() >= late);
    assert!(!text.contains("[DONE]"), "{text}");
    assert!(text.contains("reasoning_content"), "{text}");
    assert!(text.contains("\"usage\""), "{text}");
    let err = assemble(&read_all(text.as_bytes())).unwrap_err();
    assert!(err.starts_with("malformed stream chunk 12"), "{err}");
    // Without the broken event the content is whole.
    let content: String = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(content, canonical());
    // A plain request gets the reasoning beside the content.
    let plain: Value = send(&pair.primary.url(), &body(false))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(plain["choices"][0]["message"]["content"], canonical());
    assert!(plain["choices"][0]["message"]["reasoning_content"].is_string());
}

#[tokio::test(start_paused = true)]
async fn request_rules_prefill_model_and_parameters() {
    let prefill_400 = Act::Error(ErrorSpec::new(
        400,
        ErrorKind::InvalidRequest,
        "prefill is not supported",
    ));
    let ctx = context(CaseScript {
        primary: Script::when(
            When::ModelIsNot("own".into()),
            Act::Error(ErrorSpec::new(
                404,
                ErrorKind::ModelNotFound,
                "no such model",
            )),
            Act::answer(),
        ),
        fallback: Script::when(When::EndsWithAssistant, prefill_400, Act::answer()),
        clock: "case".into(),
    });
    let pair = start(&ctx).await;
    assert_eq!(
        send(&pair.primary.url(), &body(false))
            .await
            .unwrap()
            .status(),
        404
    );
    let mut own = body(false);
    own["model"] = json!("own");
    assert_eq!(send(&pair.primary.url(), &own).await.unwrap().status(), 200);

    let mut prefilled = body(false);
    prefilled["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": words(40)}));
    assert_eq!(
        send(&pair.fallback.url(), &prefilled)
            .await
            .unwrap()
            .status(),
        400
    );
    let details = ctx.log.details();
    assert!(details.iter().any(|d| d.prefill && d.act == "error 400"));
    // Without the prefill the fallback answers; the primary continues it.
    prefilled["model"] = json!("own");
    let rest: Value = send(&pair.primary.url(), &prefilled)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rest = rest["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(format!("{}{rest}", words(40)), canonical());
}

#[tokio::test(start_paused = true)]
async fn a_flap_follows_its_clock_and_an_expired_key_refuses_everything() {
    let ctx = context(primary(Script::when(
        When::WithinClock(Duration::from_millis(300)),
        Act::Error(ErrorSpec::new(503, ErrorKind::Server, "down")),
        Act::answer(),
    )));
    let pair = start(&ctx).await;
    ctx.start_clock("sut", "case");
    assert_eq!(
        send(&pair.primary.url(), &body(false))
            .await
            .unwrap()
            .status(),
        503
    );
    // Paused clock: the case clock is past its 300 ms outage by virtual time, whatever the
    // load.
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(
        send(&pair.primary.url(), &body(false))
            .await
            .unwrap()
            .status(),
        200
    );

    ctx.set_expired("sut", Role::Fallback, true);
    assert_eq!(
        send(&pair.fallback.url(), &body(false))
            .await
            .unwrap()
            .status(),
        401
    );
    let models = reqwest::get(format!("{}/v1/models", pair.fallback.url()))
        .await
        .unwrap();
    assert_eq!(models.status(), 401);
    assert_eq!(ctx.model_lists("sut", Role::Fallback), 1);
    ctx.set_expired("sut", Role::Fallback, false);
    assert_eq!(
        send(&pair.fallback.url(), &body(false))
            .await
            .unwrap()
            .status(),
        200
    );
}
