//! Loopback tests of the simulated upstreams with a real HTTP client: faults
//! on the wire, normal and streamed answers, and the attempt log.

use super::*;
use cb_base::record::{AttemptAction, AttemptRecord};
use cb_dataset::{Conversation, Dataset, TurnKind};
use cb_faults::FaultProfile;
use cb_testkit::conversation as kit;
use cb_wire::openai::ChatMessage;
use cb_wire::sse::{assemble, read_all};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

const TURNS: usize = 3;

fn conversation(i: usize) -> Conversation {
    let name = format!("Name{i}");
    kit::conversation(
        format!("c{i:03}"),
        kit::sister(&name),
        vec![
            kit::turn(
                TurnKind::Anchor,
                format!("My sister's name is {name}."),
                Some("Noted."),
            ),
            kit::turn(TurnKind::Filler, "What is a good tea?", Some("Oolong.")),
            kit::turn(TurnKind::Probe, "What is my sister called?", None),
        ],
    )
}

fn dataset() -> Dataset {
    Dataset {
        conversations: (0..6).map(conversation).collect(),
    }
}

/// The messages of `turn` (from 1) of conversation `i`, as a client sends them.
fn messages(i: usize, turn: usize) -> Vec<ChatMessage> {
    let c = conversation(i);
    let mut out = vec![ChatMessage::new("system", "You are helpful.")];
    for t in &c.turns[..turn] {
        out.push(ChatMessage::new("user", &t.user));
        if out.iter().filter(|m| m.role == "user").count() < turn {
            out.push(ChatMessage::new(
                "assistant",
                t.assistant.as_deref().unwrap_or(""),
            ));
        }
    }
    out
}

fn request(i: usize, turn: usize, stream: bool, usage: bool) -> Value {
    let mut body = json!({"model": "gpt-test", "messages": messages(i, turn), "temperature": 0});
    if stream {
        body["stream"] = json!(true);
        if usage {
            body["stream_options"] = json!({"include_usage": true});
        }
    }
    body
}

fn context(profile: &str, latency: LatencyProfile) -> UpstreamContext {
    let profile = FaultProfile::parse(profile, "test.toml").unwrap();
    let d = dataset();
    let plan = FaultPlan::new(profile, 42, vec![TURNS; d.conversations.len()]);
    UpstreamContext::new(plan, ConversationIndex::of_dataset(&d), latency, 42, 1)
}

async fn start(ctx: &UpstreamContext) -> UpstreamPair {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    start_pair("sut", any, any, ctx.clone()).await.unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn post(url: &str, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{url}/v1/chat/completions"))
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Polls the log until a row matches, for at most 5 s.
async fn wait_for_row(log: &AttemptLog, pred: impl Fn(&AttemptRecord) -> bool) -> AttemptRecord {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(r) = log.snapshot().into_iter().find(|r| pred(r)) {
            return r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no matching row in {:?}",
            log.snapshot()
        );
        // A poll of the log, bounded by the deadline: the row decides, not the sleep.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn timeout_holds_until_client_gives_up() {
    let ctx = context("[modes.timeout]\nhold = \"30s\"\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let err = impatient
        .post(format!("{}/v1/chat/completions", pair.primary.url()))
        .json(&request(0, TURNS, false, false))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let row = wait_for_row(&ctx.log, |r| r.client_gave_up).await;
    assert_eq!(row.action, AttemptAction::TimeoutHeld);
    assert_eq!(row.status, None);
    assert_eq!((row.conversation.as_str(), row.turn), ("c000", 3));
    assert!(
        (250.0..2000.0).contains(&row.duration_ms),
        "held {} ms",
        row.duration_ms
    );
}

#[tokio::test(start_paused = true)]
async fn timeout_hold_ending_answers_504() {
    let ctx = context(
        "[modes.timeout]\nhold = \"100ms\"\n",
        LatencyProfile::INSTANT,
    );
    let pair = start(&ctx).await;
    let resp = post(&pair.primary.url(), &request(1, TURNS, false, false)).await;
    assert_eq!(resp.status().as_u16(), 504);
    let row = wait_for_row(&ctx.log, |r| r.conversation == "c001").await;
    assert_eq!((row.status, row.client_gave_up), (Some(504), false));
    assert!(row.duration_ms >= 100.0);
}

#[tokio::test(start_paused = true)]
async fn api_error_sends_503_body() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    let resp = post(&pair.primary.url(), &request(2, TURNS, false, false)).await;
    assert_eq!(resp.status().as_u16(), 503);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "server_error");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("API_ERROR"));
    let row = wait_for_row(&ctx.log, |r| r.conversation == "c002").await;
    assert_eq!(
        (row.action, row.status),
        (AttemptAction::ApiError, Some(503))
    );
    // The fallback answers the same turn normally.
    let ok = post(&pair.fallback.url(), &request(2, TURNS, false, false)).await;
    assert_eq!(ok.status().as_u16(), 200);
}

#[tokio::test(start_paused = true)]
async fn rate_limit_sends_429_with_retry_after() {
    let ctx = context(
        "[modes.rate_limit]\nretry_after = \"1500ms\"\n",
        LatencyProfile::INSTANT,
    );
    let pair = start(&ctx).await;
    let resp = post(&pair.primary.url(), &request(3, TURNS, false, false)).await;
    assert_eq!(resp.status().as_u16(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    assert_eq!(body["error"]["type"], "requests");
    let row = wait_for_row(&ctx.log, |r| r.conversation == "c003").await;
    assert_eq!(
        (row.action, row.status),
        (AttemptAction::RateLimited, Some(429))
    );
}

#[test]
fn retry_after_rounds_up_to_whole_seconds() {
    use super::render::retry_after_secs;
    assert_eq!(retry_after_secs(Duration::ZERO), 1);
    assert_eq!(retry_after_secs(Duration::from_millis(200)), 1);
    assert_eq!(retry_after_secs(Duration::from_secs(1)), 1);
    assert_eq!(retry_after_secs(Duration::from_millis(1001)), 2);
}

#[tokio::test(start_paused = true)]
async fn non_faulted_turns_answer_200() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::FAST);
    let pair = start(&ctx).await;
    for turn in 1..TURNS {
        let resp = post(&pair.primary.url(), &request(0, turn, false, false)).await;
        assert_eq!(resp.status().as_u16(), 200, "turn {turn}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["model"], "gpt-test");
        assert_eq!(body["choices"][0]["message"]["role"], "assistant");
        assert_eq!(
            cb_wire::openai::response_text(&body).unwrap(),
            model::reply(&messages(0, turn))
        );
        assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    }
    let rows = ctx.log.for_turn(1, "sut", "c000", 2);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        (r.action, r.status, r.role, r.attempt, r.messages),
        (AttemptAction::Ok, Some(200), cb_faults::Role::Primary, 1, 4)
    );
    assert!(!r.client_gave_up && !r.stream);
    assert_eq!(r.model, "gpt-test");
}

fn data_lines(raw: &str) -> Vec<Value> {
    raw.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn streaming_sends_role_content_finish_usage_done() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::FAST);
    let pair = start(&ctx).await;
    let resp = post(&pair.fallback.url(), &request(4, TURNS, true, true)).await;
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let raw = resp.text().await.unwrap();
    let text = assemble(&read_all(raw.as_bytes())).unwrap().text;
    assert!(raw.trim_end().ends_with("data: [DONE]"));
    assert_eq!(text, model::reply(&messages(4, TURNS)));
    let chunks = data_lines(&raw);
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(chunks.len() >= 4, "role, content, finish, usage: {raw}");
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().unwrap() > 0);
    let row = wait_for_row(&ctx.log, |r| r.conversation == "c004").await;
    assert!(row.stream && !row.client_gave_up);
    assert_eq!(row.status, Some(200));

    // Without include_usage there is no usage chunk.
    let raw = post(&pair.fallback.url(), &request(4, 1, true, false))
        .await
        .text()
        .await
        .unwrap();
    let chunks = data_lines(&raw);
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );
}

#[tokio::test(start_paused = true)]
async fn repeated_requests_count_attempts() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    for _ in 0..3 {
        let resp = post(&pair.primary.url(), &request(5, TURNS, false, false)).await;
        assert_eq!(resp.status().as_u16(), 503, "every attempt gets the fault");
    }
    let ok = post(&pair.fallback.url(), &request(5, TURNS, false, false)).await;
    assert_eq!(ok.status().as_u16(), 200);
    let rows = ctx.log.for_turn(1, "sut", "c005", TURNS as u32);
    let mut primary: Vec<u32> = rows
        .iter()
        .filter(|r| r.role == cb_faults::Role::Primary)
        .map(|r| r.attempt)
        .collect();
    primary.sort_unstable();
    assert_eq!(primary, vec![1, 2, 3]);
    assert_eq!(rows.len(), 4);
    // A new run starts counting again.
    ctx.set_run(2);
    post(&pair.fallback.url(), &request(5, TURNS, false, false)).await;
    let rows = ctx.log.for_turn(2, "sut", "c005", TURNS as u32);
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].run, rows[0].attempt), (2, 1));
}

/// Runs overlap: a request belongs to its conversation's run, whatever
/// run another conversation is in, and a request of no known conversation
/// to the earliest run in progress.
#[tokio::test(start_paused = true)]
async fn a_request_belongs_to_its_conversation_s_run() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    ctx.set_run(1);
    ctx.set_conversation_run(4, 1);
    ctx.set_conversation_run(5, 2);
    post(&pair.fallback.url(), &request(5, TURNS, false, false)).await;
    post(&pair.fallback.url(), &request(4, TURNS, false, false)).await;
    assert_eq!(ctx.log.for_turn(2, "sut", "c005", TURNS as u32).len(), 1);
    assert_eq!(ctx.log.for_turn(1, "sut", "c005", TURNS as u32).len(), 0);
    assert_eq!(ctx.log.for_turn(1, "sut", "c004", TURNS as u32).len(), 1);
    // Run 2's fault plan is the one its request met: the primary fails
    // on the final turn in every run of this profile, with run 2's row.
    let resp = post(&pair.primary.url(), &request(5, TURNS, false, false)).await;
    assert_eq!(resp.status().as_u16(), 503);
    let rows = ctx.log.for_turn(2, "sut", "c005", TURNS as u32);
    assert!(rows
        .iter()
        .any(|r| r.role == cb_faults::Role::Primary && r.status == Some(503)));
    let body =
        json!({"model": "unknown", "messages": [{"role": "user", "content": "Hello there"}]});
    post(&pair.fallback.url(), &body).await;
    let row = wait_for_row(&ctx.log, |r| r.model == "unknown").await;
    assert_eq!((row.conversation.as_str(), row.run), ("", 1));
}

#[tokio::test(start_paused = true)]
async fn unknown_conversation_is_answered_and_logged_empty() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "Hello there"}]});
    let resp = post(&pair.primary.url(), &body).await;
    assert_eq!(resp.status().as_u16(), 200);
    let row = wait_for_row(&ctx.log, |r| r.model == "m").await;
    assert_eq!((row.conversation.as_str(), row.turn), ("", 1));
    assert_eq!(row.action, AttemptAction::Ok);
}

#[tokio::test(start_paused = true)]
async fn malformed_requests_get_400() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    let resp = client()
        .post(format!("{}/v1/chat/completions", pair.primary.url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    let empty = post(&pair.primary.url(), &json!({"model": "x", "messages": []})).await;
    assert_eq!(empty.status().as_u16(), 400);
    let rows = ctx.log.snapshot();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r.action == AttemptAction::BadRequest && r.status == Some(400)));
    assert_eq!(rows[1].model, "x");
}

#[tokio::test(start_paused = true)]
async fn a_long_model_in_a_bad_request_is_cut_once_naming_its_length() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    let model = "m".repeat(100_000);
    let resp = post(
        &pair.primary.url(),
        &json!({"model": model, "messages": []}),
    )
    .await;
    assert_eq!(resp.status().as_u16(), 400);
    let rows = ctx.log.snapshot();
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0].model.ends_with("…[cut: 100000 bytes]"),
        "{}",
        rows[0].model
    );
    assert!(rows[0].model.len() < 300);
}

#[tokio::test(start_paused = true)]
async fn models_are_listed() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::INSTANT);
    let pair = start(&ctx).await;
    let body: Value = client()
        .get(format!("{}/v1/models", pair.fallback.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["object"], "list");
    let ids: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(ids.contains(&"sim-model"), "{ids:?}");
    assert!(ctx.log.is_empty(), "listing models is not an attempt");
}

#[tokio::test(start_paused = true)]
async fn client_leaving_a_normal_answer_is_logged_as_gave_up() {
    // Realistic latency waits at least 300 ms before the first byte.
    let ctx = context("[modes.api_error]\n", LatencyProfile::REALISTIC);
    let pair = start(&ctx).await;
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let err = impatient
        .post(format!("{}/v1/chat/completions", pair.fallback.url()))
        .json(&request(1, 1, true, false))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    let row = wait_for_row(&ctx.log, |r| r.client_gave_up).await;
    assert_eq!((row.action, row.status), (AttemptAction::Ok, None));
}

#[tokio::test(start_paused = true)]
async fn rate_limiter_refuses_a_tight_loop_and_lets_a_patient_retry_through() {
    let ctx = context(
        "[modes.api_error]\n[rate_limiter]\nrejections = 2\nretry_after = \"1s\"\n",
        LatencyProfile::INSTANT,
    );
    let pair = start(&ctx).await;
    let fallback = pair.fallback.url();
    // Two counted rejections, then a tight loop that is always early.
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let resp = post(&fallback, &request(0, 1, false, false)).await;
        statuses.push(resp.status().as_u16());
        if resp.status().as_u16() == 429 {
            assert_eq!(resp.headers()["retry-after"], "1");
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["code"], "rate_limit_exceeded");
        }
        // Paused clock: a tight loop, 10 virtual ms between retries, always early.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(statuses, vec![429; 5]);
    // Waiting the Retry-After it was told gets through.
    // Paused clock: exactly the Retry-After it was told, on virtual time.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let resp = post(&fallback, &request(0, 1, false, false)).await;
    assert_eq!(resp.status().as_u16(), 200);
    let rows = ctx.log.for_turn(1, "sut", "c000", 1);
    let limited = rows
        .iter()
        .filter(|r| r.action == AttemptAction::RateLimited && r.retry_after_ms == Some(1000))
        .count();
    assert_eq!((rows.len(), limited), (6, 5));
    // Another turn, another conversation and another run each start afresh,
    // and the primary has no limiter.
    for (i, turn) in [(0, 2), (1, 1)] {
        let resp = post(&fallback, &request(i, turn, false, false)).await;
        assert_eq!(resp.status().as_u16(), 429, "c{i:03} turn {turn}");
    }
    ctx.set_run(2);
    let resp = post(&fallback, &request(0, 1, false, false)).await;
    assert_eq!(resp.status().as_u16(), 429, "a new run");
    let resp = post(&pair.primary.url(), &request(0, 1, false, false)).await;
    assert_eq!(resp.status().as_u16(), 200);
}

#[test]
fn the_limiter_measures_the_wait_the_wire_tells() {
    use cb_faults::limiter::told_wait;
    for ms in [0, 1, 200, 999, 1000, 1001, 1500, 2000, 59_999] {
        let d = Duration::from_millis(ms);
        assert_eq!(
            told_wait(d),
            Duration::from_secs(super::render::retry_after_secs(d)),
            "{ms} ms"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn answers_wait_for_the_modelled_latency() {
    let ctx = context("[modes.api_error]\n", LatencyProfile::REALISTIC);
    let pair = start(&ctx).await;
    let msgs = messages(2, 2);
    let input: u32 = msgs
        .iter()
        .map(|m| cb_wire::openai::approx_tokens(&m.text()))
        .sum();
    let key = latency::JitterKey {
        system: "sut",
        role: cb_faults::Role::Fallback,
        conversation: "c002",
        turn: 2,
        attempt: 1,
    };
    let latency = LatencyProfile::REALISTIC;
    let expected = latency.time_to_first_token(42, &key, input)
        + latency.output_time(super::responder::NOMINAL_OUTPUT_TOKENS);
    let sent = tokio::time::Instant::now();
    let resp = post(&pair.fallback.url(), &request(2, 2, true, false)).await;
    let _ = resp.text().await.unwrap();
    let elapsed = sent.elapsed();
    assert!(elapsed >= expected, "{elapsed:?} < {expected:?}");
    assert!(elapsed < expected + Duration::from_secs(2), "{elapsed:?}");
}
