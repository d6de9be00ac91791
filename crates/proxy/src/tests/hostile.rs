//! Hostile upstreams against a real proxy: non-streamed 2xx bodies that
//! are broken, not a chat completion, stalled or trickled, and absurd
//! `Retry-After` values on every status. Each must fail over (or be
//! clamped), never panic, never hand the client an empty reply.

use super::*;

fn raw(status: u16, parts: Vec<&'static str>, gap: Duration, hold: bool) -> Step {
    Step::Raw {
        status,
        headers: vec![("content-type", "application/json")],
        parts,
        gap,
        hold,
    }
}

#[tokio::test(start_paused = true)]
async fn a_broken_or_foreign_non_streamed_200_fails_over() {
    let bodies: [&'static str; 4] = [
        r#"{"id":"x","choices":[{"message":{"content":"half"#,
        "not json at all",
        r#"{"id":"x","object":"list"}"#,
        "",
    ];
    for body in bodies {
        let (p, _) = mock(vec![raw(200, vec![body], Duration::ZERO, false)]).await;
        let (f, fallback) = mock(vec![ok("from fallback")]).await;
        let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
        let (got, reply) = post(&proxy, &conversation()).await;
        assert_eq!(
            (got, text_of(&reply).as_str()),
            (200, "from fallback"),
            "{body:?}"
        );
        assert_eq!(fallback.seen().len(), 1, "{body:?}");
        let event = only_event(&state);
        assert_eq!(event.reason.to_string(), "body_error", "{body:?}");
        assert_eq!(event.status, 200);
    }
}

#[tokio::test(start_paused = true)]
async fn a_stalled_or_trickled_non_streamed_body_fails_over_in_time() {
    // Headers, then silence; headers, then one byte every 50 ms (the
    // config's attempt timeout is 300 ms, its stall limit 10 s).
    let trickle: Vec<&'static str> = std::iter::repeat_n("{", 100).collect();
    for (name, step) in [
        ("stalled", raw(200, vec![r#"{"id":"#], Duration::ZERO, true)),
        (
            "trickled",
            raw(200, trickle, Duration::from_millis(50), true),
        ),
    ] {
        let (p, _) = mock(vec![step]).await;
        let (f, fallback) = mock(vec![ok("from fallback")]).await;
        let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
        let began = Instant::now();
        let (got, reply) = post(&proxy, &conversation()).await;
        assert_eq!(
            (got, text_of(&reply).as_str()),
            (200, "from fallback"),
            "{name}"
        );
        assert_eq!(fallback.seen().len(), 1, "{name}");
        // Within the attempt timeout after the headers (300 ms), far from
        // the 3 s deadline.
        assert!(
            began.elapsed() < Duration::from_millis(700),
            "{name}: {:?}",
            began.elapsed()
        );
        assert_eq!(
            only_event(&state).reason.to_string(),
            "body_error",
            "{name}"
        );
    }
    // With a stall limit shorter than the attempt timeout, silence ends
    // the attempt at the stall limit.
    let (p, _) = mock(vec![raw(200, vec!["{"], Duration::ZERO, true)]).await;
    let (f, _) = mock(vec![ok("from fallback")]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.behaviour.stall_timeout = Some(Duration::from_millis(100));
    let (proxy, _) = start(c).await;
    let began = Instant::now();
    let (got, _) = post(&proxy, &conversation()).await;
    assert_eq!(got, 200);
    assert!(
        began.elapsed() < Duration::from_millis(300),
        "{:?}",
        began.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_leaves_the_fallback_its_turn() {
    // A primary that answers headers and then trickles a byte every
    // 50 ms forever, with an attempt timeout longer than the deadline:
    // the primary's leg ends at its share, and the fallback answers.
    let trickle: Vec<&'static str> = std::iter::repeat_n(" ", 10_000).collect();
    let (p, _) = mock(vec![raw(200, trickle, Duration::from_millis(50), true)]).await;
    let (f, fallback) = mock(vec![ok("from fallback")]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.attempt_timeout = Duration::from_secs(30);
    c.deadline = Duration::from_secs(2);
    let (proxy, state) = start(c).await;
    let (got, reply) = post(&proxy, &conversation()).await;
    assert_eq!((got, text_of(&reply).as_str()), (200, "from fallback"));
    assert_eq!(fallback.seen().len(), 1);
    assert_eq!(only_event(&state).reason.to_string(), "timeout");
}

#[tokio::test(start_paused = true)]
async fn a_broken_fallback_body_is_a_clean_502_not_garbage() {
    let (p, _) = mock(vec![err(503)]).await;
    let (f, _) = mock(vec![raw(200, vec!["{\"half"], Duration::ZERO, false)]).await;
    let (proxy, _) = start(config(ProxyMode::History, &p, &f)).await;
    let (got, reply) = post(&proxy, &conversation()).await;
    assert_eq!(got, 502);
    let body: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(body["error"]["code"], "fallback_malformed");
}

#[tokio::test(start_paused = true)]
async fn absurd_retry_after_never_panics_a_request() {
    let absurd = [
        "1e20",
        "1e19",
        "18446744073709551616",
        "-1",
        "NaN",
        "soon",
        "Fri, 31 Dec 9999 23:59:59 GMT",
    ];
    for value in absurd {
        // On a 200, on the primary's 429 and 500 and on the fallback's 429.
        let scripts: [(Vec<Step>, Vec<Step>); 3] = [
            (
                vec![Step::Json(200, answer("p"), Some(value))],
                vec![ok("f")],
            ),
            (
                vec![Step::Json(
                    500,
                    error_body("x", "api_error", None),
                    Some(value),
                )],
                vec![ok("f")],
            ),
            (
                vec![Step::Json(429, error_body("x", "rate", None), Some(value))],
                vec![
                    Step::Json(429, error_body("x", "rate", None), Some(value)),
                    ok("f"),
                ],
            ),
        ];
        for (primary, fallback) in scripts {
            let (p, _) = mock(primary).await;
            let (f, _) = mock(fallback).await;
            let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
            let (got, reply) = post(&proxy, &conversation()).await;
            // 200 from an upstream, or the fallback's own 429 when the
            // wait it asks for does not fit the deadline.
            assert!(got == 200 || got == 429, "{value}: {got} {reply}");
            assert!(!reply.is_empty(), "{value}: an empty reply");
            let event = only_event(&state);
            assert_eq!(event.status, got, "{value}");
            let huge = !matches!(value, "-1" | "NaN" | "soon");
            if got != 200 {
                assert!(huge, "{value}: {reply}");
            }
        }
    }
    // The clamp is recorded.
    let (p, _) = mock(vec![Step::Json(
        429,
        error_body("x", "rate", None),
        Some("1e20"),
    )])
    .await;
    let (f, _) = mock(vec![ok("f")]).await;
    let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
    let (got, _) = post(&proxy, &conversation()).await;
    assert_eq!(got, 200);
    assert!(only_event(&state).retry_after_clamped);
}

#[tokio::test(start_paused = true)]
async fn too_many_messages_are_answered_413_naming_the_cap() {
    let (p, primary) = mock(vec![ok("p")]).await;
    let (f, _) = mock(vec![ok("f")]).await;
    let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
    let many = crate::server::MAX_MESSAGES + 1;
    let messages: Vec<Value> = (0..many)
        .map(|_| json!({"role": "user", "content": "x"}))
        .collect();
    let (got, reply) = post(&proxy, &json!({"model": "m", "messages": messages})).await;
    assert_eq!(got, 413, "{reply}");
    assert!(
        reply.contains(&crate::server::MAX_MESSAGES.to_string()),
        "{reply}"
    );
    assert!(primary.seen().is_empty());
    assert_eq!(only_event(&state).status, 413);
    // At the cap, served.
    let messages: Vec<Value> = (0..crate::server::MAX_MESSAGES)
        .map(|_| json!({"role": "user", "content": "x"}))
        .collect();
    let (got, _) = post(&proxy, &json!({"model": "m", "messages": messages})).await;
    assert_eq!(got, 200);
}

/// The test config with a 5 s attempt timeout and a 20 s deadline.
fn long_attempts(p: &ServerHandle, f: &ServerHandle) -> ProxyConfig {
    let mut c = config(ProxyMode::History, p, f);
    c.attempt_timeout = Duration::from_secs(5);
    c.deadline = Duration::from_secs(20);
    c
}

/// A 429 may state its wait only in its body: the primary is retried after
/// it, and a 429 body that never ends holds the failover for the short
/// body read (half a second), not the attempt timeout.
#[tokio::test(start_paused = true)]
async fn a_wait_stated_in_a_429_body_is_honoured_and_a_trickling_one_does_not_hold_the_failover() {
    let said = r#"{"error": {"message": "Rate limited. Please retry after 1s.", "type": "rate_limit_error"}}"#;
    let (p, primary) = mock(vec![
        raw(429, vec![said], Duration::ZERO, false),
        ok("from primary"),
    ])
    .await;
    let (f, _) = mock(vec![ok("from fallback")]).await;
    let (proxy, _state) = start(long_attempts(&p, &f)).await;
    let (status, body) = post(&proxy, &conversation()).await;
    assert_eq!((status, text_of(&body).as_str()), (200, "from primary"));
    let gaps = gaps(&primary.seen.lock().unwrap());
    assert!(gaps[0] >= Duration::from_secs(1), "{gaps:?}");

    // Headers, then a body that never comes: failed over within the
    // short read, long before the attempt timeout.
    let (p, _) = mock(vec![raw(429, Vec::new(), Duration::ZERO, true)]).await;
    let (f, _) = mock(vec![ok("from fallback")]).await;
    let (proxy, _state) = start(long_attempts(&p, &f)).await;
    let began = tokio::time::Instant::now();
    let (status, body) = post(&proxy, &conversation()).await;
    assert_eq!((status, text_of(&body).as_str()), (200, "from fallback"));
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
}
