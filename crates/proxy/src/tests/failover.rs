//! The failover core end to end through a real proxy: the decision tree,
//! held and refused connections, what each mode's fallback receives, the
//! bounded same-route retry, the fallback's 429 retries and their backoff,
//! the overall deadline, the larger-context route, what the fallback
//! needs, the metrics and events, and the health check.

use super::*;

#[tokio::test(start_paused = true)]
async fn decision_tree_end_to_end() {
    let switch = [500u16, 502, 503, 504, 429, 404];
    let pass = [400u16, 401, 402, 403];
    for status in switch.into_iter().chain(pass) {
        let (p, primary) = mock(vec![err(status)]).await;
        let (f, fallback) = mock(vec![ok("from fallback")]).await;
        let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
        let (got, body) = post(&proxy, &conversation()).await;
        let event = only_event(&state);
        // The same-route retry tries a 500 once more (a 429 without
        // Retry-After fails over at once).
        let tries = if status == 500 { 2 } else { 1 };
        assert_eq!(primary.seen().len(), tries, "{status}: primary tries");
        if switch.contains(&status) {
            assert_eq!(got, 200, "{status} must switch");
            assert_eq!(text_of(&body), "from fallback");
            assert_eq!(fallback.seen().len(), 1, "{status}");
            assert_eq!(event.reason.to_string(), format!("status_{status}"));
            assert_eq!(event.provider_fallback.as_deref(), Some(f.url().as_str()));
        } else {
            assert_eq!(got, status, "{status} must pass through");
            let expected = error_body(&format!("primary says {status}"), "api_error", None);
            assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), expected);
            assert!(
                fallback.seen().is_empty(),
                "{status} must not reach the fallback"
            );
            assert_eq!(event.reason.to_string(), "none");
            assert_eq!(event.provider_fallback, None);
        }
        assert_eq!(event.status, got);
    }
}

#[tokio::test(start_paused = true)]
async fn held_connection_times_out_and_switches() {
    let (p, primary) = mock(vec![Step::Hold]).await;
    let (f, fallback) = mock(vec![ok("after timeout")]).await;
    let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
    let began = Instant::now();
    let (got, body) = post(&proxy, &conversation()).await;
    assert_eq!((got, text_of(&body).as_str()), (200, "after timeout"));
    assert!(began.elapsed() >= Duration::from_millis(300));
    assert_eq!((primary.seen().len(), fallback.seen().len()), (1, 1));
    let event = only_event(&state);
    assert_eq!(event.reason.to_string(), "timeout");
    assert!(
        event.latency_primary_ms >= 300.0,
        "{}",
        event.latency_primary_ms
    );
}

#[tokio::test(start_paused = true)]
async fn refused_connection_switches() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = listener.local_addr().unwrap();
    drop(listener);
    let (f, fallback) = mock(vec![ok("after refusal")]).await;
    let mut c = ProxyConfig::new(ProxyMode::History, format!("http://{dead}"), f.url());
    c.attempt_timeout = Duration::from_millis(300);
    let (proxy, state) = start(c).await;
    let (got, body) = post(&proxy, &conversation()).await;
    assert_eq!((got, text_of(&body).as_str()), (200, "after refusal"));
    assert_eq!(fallback.seen().len(), 1);
    assert_eq!(only_event(&state).reason.to_string(), "connect_error");
}

#[tokio::test(start_paused = true)]
async fn fallback_payload_per_mode_with_mapped_models() {
    for mode in [ProxyMode::Stateless, ProxyMode::History] {
        let (p, primary) = mock(vec![err(503)]).await;
        let (f, fallback) = mock(vec![ok("x")]).await;
        let mut c = config(mode, &p, &f);
        c.primary_model = Some("primary-model".into());
        c.fallback_model = Some("fallback-model".into());
        let (proxy, state) = start(c).await;
        let (got, _) = post(&proxy, &conversation()).await;
        assert_eq!(got, 200);

        let to_primary = &primary.seen()[0];
        let mut expected = conversation();
        expected["model"] = json!("primary-model");
        assert_eq!(
            to_primary.body, expected,
            "the primary gets the full request"
        );

        let to_fallback = &fallback.seen()[0];
        assert_eq!(to_fallback.body["model"], json!("fallback-model"));
        assert_eq!(to_fallback.body["provider_x"], json!({"safe_mode": true}));
        assert_eq!(to_fallback.body["temperature"], json!(0.1));
        let sent = to_fallback.body["messages"].clone();
        match mode {
            ProxyMode::History => assert_eq!(sent, conversation()["messages"]),
            ProxyMode::Stateless => assert_eq!(
                sent,
                json!([
                    {"role": "system", "content": "You are terse."},
                    {"role": "user", "content": "What is my sister called?"}
                ])
            ),
        }
        for seen in [to_primary, to_fallback] {
            assert!(
                seen.headers.get("authorization").is_none(),
                "client auth leaked"
            );
        }
        let event = only_event(&state);
        assert_eq!(event.model_requested, "client-model");
        assert_eq!(event.model_actual.as_deref(), Some("fallback-model"));
        assert_eq!(event.mode, mode);
    }
}

#[tokio::test(start_paused = true)]
async fn fallback_429_retries_are_bounded_and_respect_retry_after() {
    let limited = Step::Json(
        429,
        error_body("slow down", "rate_limit_error", None),
        Some("0.06"),
    );
    let (p, _primary) = mock(vec![err(503)]).await;
    let (f, fallback) = mock(vec![limited]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.fallback_429_retries = 3;
    let (proxy, state) = start(c).await;
    let (got, body) = post(&proxy, &conversation()).await;
    assert_eq!(got, 429, "retries exhausted: the client gets the 429");
    assert!(body.contains("slow down"));
    let seen = fallback.seen();
    assert_eq!(seen.len(), 4, "retries + 1 fallback attempts, no more");
    for gap in gaps(&seen) {
        assert!(
            gap >= Duration::from_millis(60),
            "gap {gap:?} below Retry-After"
        );
    }
    let event = only_event(&state);
    assert_eq!((event.fallback_attempts, event.status), (4, 429));
    assert_eq!(
        state.metrics().get(
            "continuity_proxy_fallback_429_retries_total",
            "mode=\"history\""
        ),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn fallback_429_backoff_is_the_seeded_jittered_growing_delay() {
    let limited = Step::Json(429, error_body("busy", "rate_limit_error", None), None);
    let (p, _primary) = mock(vec![err(500)]).await;
    let (f, fallback) = mock(vec![
        limited.clone(),
        limited.clone(),
        limited,
        ok("finally"),
    ])
    .await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.fallback_429_retries = 3;
    c.backoff_base = Duration::from_millis(40);
    c.backoff_cap = Duration::from_millis(400);
    c.seed = 11;
    let (base, cap) = (c.backoff_base, c.backoff_cap);
    let (proxy, state) = start(c).await;
    let (got, body) = post(&proxy, &conversation()).await;
    assert_eq!((got, text_of(&body).as_str()), (200, "finally"));
    let seen = fallback.seen();
    assert_eq!(seen.len(), 4);
    // Request 0 of this proxy draws its jitter from rng(11, "backoff", 0).
    let mut rng = cb_base::seed::rng(11, "backoff", 0);
    let expected: Vec<Duration> = (0..3)
        .map(|k| backoff_delay(k, base, cap, None, &mut rng))
        .collect();
    for (k, (gap, wait)) in gaps(&seen).into_iter().zip(&expected).enumerate() {
        let bound = (base * 2u32.pow(k as u32)).min(cap);
        assert!(*wait <= bound);
        assert!(
            gap >= *wait,
            "retry {k}: gap {gap:?} shorter than backoff {wait:?}"
        );
        assert!(
            gap < *wait + Duration::from_millis(500),
            "retry {k}: gap {gap:?}"
        );
    }
    assert_eq!(only_event(&state).fallback_attempts, 4);
}

#[tokio::test(start_paused = true)]
async fn fallback_429_stops_when_the_wait_would_pass_the_deadline() {
    let limited = Step::Json(
        429,
        error_body("later", "rate_limit_error", None),
        Some("1"),
    );
    let (p, _primary) = mock(vec![err(503)]).await;
    let (f, fallback) = mock(vec![limited, ok("too late")]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.deadline = Duration::from_millis(600);
    let (proxy, state) = start(c).await;
    let began = Instant::now();
    let (got, _) = post(&proxy, &conversation()).await;
    assert_eq!(got, 429);
    assert!(
        began.elapsed() < Duration::from_millis(600),
        "it did not wait"
    );
    assert_eq!(fallback.seen().len(), 1);
    assert_eq!(only_event(&state).fallback_attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn overall_deadline_cuts_a_slow_chain() {
    let (p, _primary) = mock(vec![Step::Hold]).await;
    let (f, fallback) = mock(vec![Step::Hold]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.attempt_timeout = Duration::from_millis(300);
    c.deadline = Duration::from_millis(450);
    let (proxy, state) = start(c).await;
    let began = Instant::now();
    let (got, body) = post(&proxy, &conversation()).await;
    let took = began.elapsed();
    assert_eq!(got, 504);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], json!("deadline_exceeded"));
    assert!(took >= Duration::from_millis(450), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    assert_eq!(fallback.seen().len(), 1);
    let event = only_event(&state);
    assert_eq!(
        (event.reason.to_string().as_str(), event.status),
        ("timeout", 504)
    );
    assert_eq!(event.model_actual, None);
}

#[tokio::test(start_paused = true)]
async fn metrics_and_events_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let (p, _primary) = mock(vec![ok("fine"), err(503), err(400)]).await;
    let (f, _fallback) = mock(vec![ok("rescued")]).await;
    let mut c = config(ProxyMode::Stateless, &p, &f);
    c.events_path = Some(path.clone());
    let (proxy, _state) = start(c).await;
    let statuses = [
        post(&proxy, &conversation()).await.0,
        post(&proxy, &conversation()).await.0,
        post(&proxy, &conversation()).await.0,
    ];
    assert_eq!(statuses, [200, 200, 400]);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let bad = client
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-client-secret"));
    let events: Vec<SwitchEvent> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reasons: Vec<(String, u16)> = events
        .iter()
        .map(|e| (e.reason.to_string(), e.status))
        .collect();
    assert_eq!(
        reasons,
        [
            ("none".to_string(), 200),
            ("status_503".to_string(), 200),
            ("none".to_string(), 400),
            ("invalid_request".to_string(), 400)
        ]
    );

    let metrics = client
        .get(format!("{}/metrics", proxy.url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "continuity_proxy_requests_total{mode=\"stateless\",status=\"200\"} 2",
        "continuity_proxy_requests_total{mode=\"stateless\",status=\"400\"} 2",
        "continuity_proxy_failovers_total{mode=\"stateless\",reason=\"status_503\"} 1",
        "continuity_proxy_upstream_attempts_total{mode=\"stateless\",role=\"primary\"} 3",
        "continuity_proxy_upstream_attempts_total{mode=\"stateless\",role=\"fallback\"} 1",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing {line} in\n{metrics}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn requests_share_no_conversation_state() {
    let (p, _primary) = mock(vec![err(503)]).await;
    let (f, fallback) = mock(vec![ok("x")]).await;
    let (proxy, _state) = start(config(ProxyMode::History, &p, &f)).await;
    let other = json!({"model": "m", "messages": [{"role": "user", "content": "unrelated"}]});
    post(&proxy, &conversation()).await;
    post(&proxy, &other).await;
    assert_eq!(fallback.seen()[1].body["messages"], other["messages"]);
}

#[tokio::test(start_paused = true)]
async fn bad_configuration_is_reported() {
    let c = ProxyConfig::new(
        ProxyMode::History,
        "nope".into(),
        "http://127.0.0.1:1".into(),
    );
    let err = spawn(local(), c).await.unwrap_err().to_string();
    assert!(err.contains("--primary"), "{err}");
    let mut c = ProxyConfig::new(
        ProxyMode::History,
        "http://127.0.0.1:1".into(),
        "http://127.0.0.1:2".into(),
    );
    c.events_path = Some("/nonexistent-dir/events.jsonl".into());
    let err = spawn(local(), c).await.unwrap_err().to_string();
    assert!(err.contains("--events"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn the_primary_is_retried_once_after_a_short_retry_after_or_a_500() {
    let limited = |after: Option<&'static str>| {
        Step::Json(
            429,
            error_body("slow down", "rate_limit_error", None),
            after,
        )
    };
    for (first, retried) in [
        (limited(Some("0.2")), true),
        (err(500), true),
        (limited(Some("5")), false),
        (limited(None), false),
        (err(503), false),
    ] {
        let (p, primary) = mock(vec![first, ok("from primary")]).await;
        let (f, fallback) = mock(vec![ok("from fallback")]).await;
        let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
        let (got, body) = post(&proxy, &conversation()).await;
        let event = only_event(&state);
        assert_eq!(got, 200);
        if retried {
            assert_eq!(text_of(&body), "from primary");
            assert_eq!(primary.seen().len(), 2);
            assert!(fallback.seen().is_empty());
            assert_eq!(
                (event.primary_attempts, event.reason.to_string().as_str()),
                (2, "none")
            );
        } else {
            assert_eq!(text_of(&body), "from fallback");
            assert_eq!(primary.seen().len(), 1, "no retry: fail over at once");
            assert_eq!(event.primary_attempts, 1);
        }
    }
    // Retry-After is waited in full.
    let (p, primary) = mock(vec![limited(Some("0.2")), ok("from primary")]).await;
    let (f, _fallback) = mock(vec![ok("from fallback")]).await;
    let (proxy, _state) = start(config(ProxyMode::History, &p, &f)).await;
    post(&proxy, &conversation()).await;
    assert!(gaps(&primary.seen())[0] >= Duration::from_millis(200));
    // Off: the tree alone.
    let (p, primary) = mock(vec![err(500), ok("from primary")]).await;
    let (f, _fallback) = mock(vec![ok("from fallback")]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.behaviour.same_route_retries = 0;
    let (proxy, _state) = start(c).await;
    let (_, body) = post(&proxy, &conversation()).await;
    assert_eq!(
        (text_of(&body).as_str(), primary.seen().len()),
        ("from fallback", 1)
    );
}

#[tokio::test(start_paused = true)]
async fn context_length_goes_to_the_larger_context_route_when_there_is_one() {
    let too_long = Step::Json(
        400,
        error_body(
            "maximum context length exceeded",
            "invalid_request_error",
            Some("context_length_exceeded"),
        ),
        None,
    );
    let (p, primary) = mock(vec![too_long.clone()]).await;
    let (f, fallback) = mock(vec![ok("unused")]).await;
    let (big, wide) = mock(vec![ok("from the large model")]).await;
    let mut c = config(ProxyMode::History, &p, &f);
    c.behaviour.context_fallback = Some(big.url());
    c.behaviour.context_model = Some("large-model".into());
    let (proxy, state) = start(c).await;
    let (got, body) = post(&proxy, &conversation()).await;
    assert_eq!(
        (got, text_of(&body).as_str()),
        (200, "from the large model")
    );
    assert_eq!(primary.seen().len(), 1, "no same-model retry");
    assert!(fallback.seen().is_empty());
    assert_eq!(wide.seen()[0].body["model"], "large-model");
    let event = only_event(&state);
    assert_eq!(event.reason.to_string(), "context_length_exceeded");
    assert_eq!(event.model_actual.as_deref(), Some("large-model"));
    // Without one, the 400 passes through as the tree says.
    let (p, _primary) = mock(vec![too_long]).await;
    let (proxy, _state) = start(config(ProxyMode::History, &p, &f)).await;
    let (got, body) = post(&proxy, &conversation()).await;
    assert_eq!(got, 400);
    assert!(body.contains("context_length_exceeded"));
    assert!(fallback.seen().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_fallback_gets_max_tokens_and_its_parameters() {
    let (p, _primary) = mock(vec![err(503)]).await;
    let (f, fallback) = mock(vec![ok("x")]).await;
    let mut c = config(ProxyMode::Stateless, &p, &f);
    c.behaviour.fallback_max_tokens = Some(64);
    c.behaviour
        .fallback_params
        .insert("enable_thinking".into(), json!(false));
    let (proxy, _state) = start(c).await;
    post(&proxy, &conversation()).await;
    let body = &fallback.seen()[0].body;
    assert_eq!(
        (body["max_tokens"].clone(), body["enable_thinking"].clone()),
        (json!(64), json!(false))
    );
}

#[tokio::test(start_paused = true)]
async fn health_names_an_upstream_that_fails() {
    let (p, _primary) = mock(vec![ok("x")]).await;
    let (f, _fallback) = mock(vec![ok("x")]).await;
    let get = |url: String| async move {
        let r = reqwest::get(format!("{url}/health")).await.unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    let (proxy, _state) = start(config(ProxyMode::History, &p, &f)).await;
    let (status, body) = get(proxy.url()).await;
    assert_eq!((status, body["status"].clone()), (200, json!("ok")));
    let c = ProxyConfig::new(ProxyMode::History, p.url(), "http://127.0.0.1:1".into());
    let (proxy, _state) = start(c).await;
    let (status, body) = get(proxy.url()).await;
    assert_eq!(status, 503);
    assert_eq!(body["fallback"], "unhealthy: unreachable");
    assert_eq!(body["primary"], "ok");
}
