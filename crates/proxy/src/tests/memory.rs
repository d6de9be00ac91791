//! What one request may make the proxy hold, whatever its upstream or its
//! client does, and records that say what the client got: comments,
//! token-less chunks and an endless line before the first token fail over
//! past `request_memory`; a relayed answer past it is not continued when
//! it breaks; an Anthropic fallback's endless line is refused; keep-alive
//! comments do not hide a stall; a stream cut by the deadline is recorded
//! as cut; a client that reads nothing is disconnected.

use super::*;
use crate::events::SwitchReason;
use crate::StallClock;
use tokio::io::AsyncWriteExt;

/// The budget of these tests: 64 KiB.
const BUDGET: usize = 64 * 1024;

/// A piece of upstream body this many bytes long, sent again and again.
const PIECE: usize = 16 * 1024;

fn budgeted(p: &ServerHandle, f: &ServerHandle) -> ProxyConfig {
    let mut c = quick_streams(p, f);
    // The first-token limit is not what these tests are about.
    c.behaviour.first_token_timeout = None;
    c.behaviour.request_memory = BUDGET;
    c
}

/// An upstream step sending `head`, then `repeat` `times` times `gap`
/// apart, and the count of repeats it sent.
fn endless(
    head: Vec<String>,
    repeat: String,
    times: usize,
    gap: Duration,
) -> (Step, Arc<AtomicUsize>) {
    let counter = Arc::new(AtomicUsize::new(0));
    let step = Step::Endless {
        head,
        repeat,
        times,
        gap,
        counter: counter.clone(),
    };
    (step, counter)
}

fn chunk(delta: Value) -> String {
    format!("data: {}\n\n", chunk_body("s", "m", 0, delta, None))
}

/// `unit` repeated to about [`PIECE`] bytes.
fn piece(unit: &str) -> String {
    unit.repeat(PIECE / unit.len())
}

/// Repeats of a piece the proxy may have let through before it stopped
/// reading: the budget, the channel and the loopback socket's buffers
/// (a few MB), far below the endless upstream's `usize::MAX`.
const STOPPED_BY: usize = 1024;

#[tokio::test(start_paused = true)]
async fn comments_or_token_less_chunks_past_the_budget_fail_over_before_the_first_token() {
    let role = chunk(json!({"role": "assistant"}));
    for unit in [": ping\n\n", role.as_str()] {
        let (step, sent) = endless(Vec::new(), piece(unit), usize::MAX, Duration::ZERO);
        let (p, _primary) = mock(vec![step]).await;
        let (f, fallback) = mock(vec![Step::Sse(sse(&["Oriane."]), None)]).await;
        let (proxy, state) = start(budgeted(&p, &f)).await;
        let (status, body) = post(&proxy, &streaming(conversation())).await;
        assert_eq!(status, 200, "{unit:?}");
        assert_eq!(streamed_text(&body).unwrap(), "Oriane.", "{unit:?}");
        assert_eq!(fallback.seen().len(), 1);
        let event = only_event(&state);
        assert_eq!(
            event.reason,
            SwitchReason::RequestMemoryExceeded,
            "{unit:?}"
        );
        assert!(!event.cut);
        assert!(sent.load(Ordering::SeqCst) < STOPPED_BY, "{unit:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn one_endless_line_past_the_budget_fails_over_before_the_first_token() {
    let head = vec!["data: {\"choices\":[{\"delta\":{\"content\":\"".to_string()];
    let (step, sent) = endless(head, piece("x"), usize::MAX, Duration::ZERO);
    let (p, _primary) = mock(vec![step]).await;
    let (f, _fallback) = mock(vec![Step::Sse(sse(&["Oriane."]), None)]).await;
    let (proxy, state) = start(budgeted(&p, &f)).await;
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "Oriane.");
    assert_eq!(
        only_event(&state).reason,
        SwitchReason::RequestMemoryExceeded
    );
    assert!(sent.load(Ordering::SeqCst) < STOPPED_BY);
}

/// An answer of `pieces` content chunks of 1 KiB each, then (when
/// `complete`) its finish chunk and `[DONE]`, else the body just ends.
fn long_answer(pieces: usize, complete: bool) -> Step {
    let mut events: Vec<String> = (0..pieces)
        .map(|_| chunk(json!({"content": "y".repeat(1024)})))
        .collect();
    if complete {
        events.push(format!(
            "data: {}\n\n",
            chunk_body("s", "m", 0, json!({}), Some("stop"))
        ));
        events.push("data: [DONE]\n\n".into());
    }
    Step::Sse(events, None)
}

#[tokio::test(start_paused = true)]
async fn a_broken_answer_longer_than_the_budget_is_not_continued_and_says_why() {
    let (p, _primary) = mock(vec![long_answer(100, false)]).await;
    let (f, fallback) = mock(vec![Step::Sse(sse(&["unused"]), None)]).await;
    let (proxy, state) = start(budgeted(&p, &f)).await;
    let (status, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(status, 200);
    assert!(streamed_text(&body).is_err(), "never complete");
    assert!(
        body.contains("request_memory_exceeded"),
        "a named error event"
    );
    assert!(!body.contains("[DONE]"));
    assert!(fallback.seen().is_empty(), "no continuation attempted");
    let event = only_event(&state);
    assert_eq!(
        (event.reason, event.status, event.cut),
        (SwitchReason::RequestMemoryExceeded, 200, true)
    );
    assert_eq!(
        event.continuation.as_deref(),
        Some("not continued: past --request-memory (65536 bytes)")
    );
}

#[tokio::test(start_paused = true)]
async fn a_whole_answer_longer_than_the_budget_is_relayed_untouched() {
    // The negative control: the budget bounds what is kept, not what is
    // relayed.
    let (p, _primary) = mock(vec![long_answer(100, true)]).await;
    let (f, fallback) = mock(vec![Step::Sse(sse(&["unused"]), None)]).await;
    let (proxy, state) = start(budgeted(&p, &f)).await;
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap().len(), 100 * 1024);
    assert!(fallback.seen().is_empty());
    let event = only_event(&state);
    assert_eq!((event.reason, event.cut), (SwitchReason::None, false));
}

#[tokio::test(start_paused = true)]
async fn an_anthropic_fallback_s_endless_line_is_refused_past_the_budget() {
    let head = vec![
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"".to_string(),
    ];
    let (step, sent) = endless(head, piece("z"), usize::MAX, Duration::ZERO);
    let (p, _primary) = mock(vec![err(503)]).await;
    let (f, _fallback) = mock(vec![step]).await;
    let mut c = budgeted(&p, &f);
    c.behaviour.fallback_dialect = cb_dialect::Dialect::Anthropic;
    let (proxy, state) = start(c).await;
    let (status, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(status, 502, "{body}");
    assert!(body.contains("request_memory_exceeded"), "{body}");
    let event = only_event(&state);
    assert_eq!(
        (event.reason, event.status),
        (SwitchReason::Status(503), 502)
    );
    assert!(sent.load(Ordering::SeqCst) < STOPPED_BY);
}

/// A primary that sends "Your sister " and then only `: ping`, every
/// 100 ms, 30 times (3 s), then ends its body.
fn pings_after_one_token() -> Step {
    let head = vec![chunk(json!({"content": "Your sister "}))];
    endless(head, ": ping\n\n".into(), 30, Duration::from_millis(100)).0
}

#[tokio::test(start_paused = true)]
async fn keep_alive_comments_after_the_first_token_are_a_stall() {
    let (p, _primary) = mock(vec![pings_after_one_token()]).await;
    let (f, _fallback) = mock(vec![Step::Sse(sse(&["is Oriane."]), None)]).await;
    let mut c = quick_streams(&p, &f);
    c.deadline = Duration::from_secs(10);
    let (proxy, state) = start(c).await;
    let began = Instant::now();
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "Your sister is Oriane.");
    // The stall limit is 300 ms; the pings went on for 3 s.
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    let event = only_event(&state);
    assert_eq!(event.reason, SwitchReason::KeepaliveStall);
    assert_eq!(event.continuation.as_deref(), Some("prefill"));
}

#[tokio::test(start_paused = true)]
async fn a_stall_timer_that_every_line_restarts_waits_out_the_pings() {
    // The control: the same stream, the timer restarted by every line.
    let (p, _primary) = mock(vec![pings_after_one_token()]).await;
    let (f, _fallback) = mock(vec![Step::Sse(sse(&["is Oriane."]), None)]).await;
    let mut c = quick_streams(&p, &f);
    c.behaviour.stall_clock = StallClock::EveryLine;
    c.deadline = Duration::from_secs(10);
    let (proxy, state) = start(c).await;
    let began = Instant::now();
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "Your sister is Oriane.");
    assert!(
        began.elapsed() >= Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(only_event(&state).reason, SwitchReason::StreamBroken);
}

#[tokio::test(start_paused = true)]
async fn a_stream_cut_by_the_deadline_is_recorded_as_cut() {
    let token = chunk(json!({"content": "a "}));
    let (step, _) = endless(Vec::new(), token, usize::MAX, Duration::from_millis(100));
    let (p, _primary) = mock(vec![step]).await;
    let (f, fallback) = mock(vec![Step::Sse(sse(&["unused"]), None)]).await;
    let mut c = quick_streams(&p, &f);
    c.deadline = Duration::from_secs(1);
    let (proxy, state) = start(c).await;
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .json(&streaming(conversation()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut chunks = response.bytes_stream();
    let mut got = Vec::new();
    let mut broke = false;
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(bytes) => got.extend_from_slice(&bytes),
            Err(_) => broke = true,
        }
    }
    let got = String::from_utf8(got).unwrap();
    assert!(broke, "the body is aborted");
    assert!(
        got.matches("\"a \"").count() >= 2,
        "part of the answer came: {got}"
    );
    assert!(!got.contains("[DONE]"));
    assert!(fallback.seen().is_empty());
    let event = only_event(&state);
    assert_eq!(
        (event.reason, event.status, event.cut),
        (SwitchReason::DeadlineCut, 200, true)
    );
    let metrics = state.metrics().render();
    assert!(
        metrics.contains(
            "continuity_proxy_streams_cut_total{mode=\"history\",reason=\"deadline_cut\"} 1\n"
        ),
        "{metrics}"
    );
    assert!(
        !metrics.contains("continuity_proxy_failovers_total{"),
        "{metrics}"
    );
    assert!(metrics.contains("continuity_proxy_requests_total{mode=\"history\",status=\"200\"} 1"));
}

#[tokio::test(start_paused = true)]
async fn a_client_that_reads_nothing_is_disconnected_and_its_upstream_dropped() {
    let token = chunk(json!({"content": "w".repeat(4096)}));
    let (step, _) = endless(Vec::new(), token, usize::MAX, Duration::ZERO);
    let (p, _primary) = mock(vec![step]).await;
    let (f, _fallback) = mock(vec![ok("unused")]).await;
    let mut c = quick_streams(&p, &f);
    c.deadline = Duration::from_secs(600);
    c.write_timeout = Duration::from_secs(2);
    let (proxy, state) = start(c).await;
    let body = streaming(conversation()).to_string();
    let mut client = tokio::net::TcpStream::connect(proxy.addr).await.unwrap();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    client.write_all(request.as_bytes()).await.unwrap();
    // Reads nothing from here on. The proxy's write timer fires, its
    // connection closes and the upstream's stream is dropped.
    let stats = proxy.stats();
    let upstream = p.stats();
    let until = Instant::now() + Duration::from_secs(60);
    while stats.write_timeouts() == 0
        || upstream.open() > 0
        || stats.open() > 0
        || state.events_snapshot().is_empty()
    {
        assert!(
            Instant::now() < until,
            "write timeouts {}, upstream connections {}",
            stats.write_timeouts(),
            upstream.open()
        );
        // A poll of the counters, bounded by `until`: they decide.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(stats.write_timeouts(), 1);
    let metrics = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{}/metrics", proxy.url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("continuity_proxy_connections_write_timeouts_total 1\n"),
        "{metrics}"
    );
    let event = only_event(&state);
    assert!(event.cut, "the client did not get the whole answer");
    drop(client);
}
