//! Streams through a real proxy: relayed as they arrive, held until their
//! first token (a late one fails over before anything reaches the
//! client), continued from the fallback after a cut or a stall, and
//! completed with `data: [DONE]` when they end after their finish reason.

use super::*;

#[tokio::test(start_paused = true)]
async fn streaming_failover_then_piped_as_it_arrives() {
    let gate = Arc::new(Notify::new());
    let (p, _primary) = mock(vec![err(503)]).await;
    let (f, fallback) = mock(vec![Step::Sse(
        sse(&["Your sister ", "is Oriane."]),
        Some(gate.clone()),
    )])
    .await;
    let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
    let mut request = conversation();
    request["stream"] = json!(true);
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .json(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(fallback.seen()[0].body["stream"], json!(true));
    let mut chunks = response.bytes_stream();
    // The first event reaches the client while the upstream still holds the
    // rest back: the proxy pipes, it does not buffer.
    let first = tokio::time::timeout(Duration::from_secs(2), chunks.next())
        .await
        .expect("first chunk is piped before the stream ends")
        .unwrap()
        .unwrap();
    let mut all = String::from_utf8(first.to_vec()).unwrap();
    assert!(all.contains("Your sister"));
    gate.notify_one();
    while let Some(chunk) = chunks.next().await {
        all.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
    }
    // A complete stream: assembling it fails without `data: [DONE]`.
    let text = assemble(&read_all(all.as_bytes())).unwrap().text;
    assert_eq!(text, "Your sister is Oriane.");
    let event = only_event(&state);
    assert!(event.stream);
    assert_eq!(
        (event.reason.to_string().as_str(), event.status),
        ("status_503", 200)
    );
}

#[tokio::test(start_paused = true)]
async fn streaming_from_the_primary() {
    let (p, _primary) = mock(vec![Step::Sse(sse(&["a", "b"]), None)]).await;
    let (f, fallback) = mock(vec![ok("unused")]).await;
    let (proxy, _state) = start(config(ProxyMode::Stateless, &p, &f)).await;
    let mut request = conversation();
    request["stream"] = json!(true);
    let (got, body) = post(&proxy, &request).await;
    assert_eq!(got, 200);
    assert_eq!(assemble(&read_all(body.as_bytes())).unwrap().text, "ab");
    assert!(fallback.seen().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_late_first_token_fails_over_before_anything_reaches_the_client() {
    let role = format!(
        "data: {}\n\n",
        chunk_body(
            "s",
            "m",
            0,
            json!({"role": "assistant", "content": ""}),
            None
        )
    );
    let mut late = vec![role];
    late.extend(sse(&["too ", "late"]));
    let never = Arc::new(Notify::new());
    let (p, _primary) = mock(vec![Step::Sse(late, Some(never))]).await;
    let (f, _fallback) = mock(vec![Step::Sse(sse(&["from ", "fallback"]), None)]).await;
    let (proxy, state) = start(quick_streams(&p, &f)).await;
    let (got, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(got, 200);
    assert_eq!(streamed_text(&body).unwrap(), "from fallback");
    assert_eq!(only_event(&state).reason.to_string(), "first_token_timeout");
}

#[tokio::test(start_paused = true)]
async fn a_cut_or_stalled_stream_is_continued_from_the_fallback_without_a_seam() {
    // Cut after "one two ": the fallback continues the prefill.
    let (p, _primary) = mock(vec![Step::Sse(cut_sse(&["one ", "two "]), None)]).await;
    let (f, fallback) = mock(vec![Step::Sse(sse(&["three."]), None)]).await;
    let (proxy, state) = start(quick_streams(&p, &f)).await;
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "one two three.");
    let messages = fallback.seen()[0].body["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last, json!({"role": "assistant", "content": "one two "}));
    let event = only_event(&state);
    assert_eq!(event.continuation.as_deref(), Some("prefill"));
    assert_eq!(
        (event.reason.to_string().as_str(), event.fallback_attempts),
        ("stream_broken", 1)
    );
    // Silent after "one ": a stall, continued the same way.
    let never = Arc::new(Notify::new());
    let (p, _primary) = mock(vec![Step::Sse(sse(&["one ", "two "]), Some(never))]).await;
    let (f, _fallback) = mock(vec![Step::Sse(sse(&["two ", "three."]), None)]).await;
    let (proxy, _state) = start(quick_streams(&p, &f)).await;
    let began = Instant::now();
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "one two three.");
    assert!(began.elapsed() < Duration::from_secs(2));
}

#[tokio::test(start_paused = true)]
async fn a_fallback_that_rejects_a_prefill_gets_a_clean_restart_or_the_client_a_clean_error() {
    let rejected = Step::Json(
        400,
        error_body("no assistant prefill", "invalid_request_error", None),
        None,
    );
    let (p, _primary) = mock(vec![Step::Sse(cut_sse(&["one ", "two "]), None)]).await;
    let (f, fallback) = mock(vec![
        rejected.clone(),
        Step::Sse(sse(&["one ", "two ", "three."]), None),
    ])
    .await;
    let (proxy, state) = start(quick_streams(&p, &f)).await;
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(
        streamed_text(&body).unwrap(),
        "one two three.",
        "no duplicated text"
    );
    assert_eq!(fallback.seen().len(), 2);
    let event = only_event(&state);
    assert_eq!(
        event.continuation.as_deref(),
        Some("prefill rejected, restart")
    );
    assert_eq!(event.fallback_attempts, 2);
    assert!(
        event.latency_fallback_ms.is_some(),
        "a restart after 2 fallback attempts has a fallback latency"
    );
    // A restart that does not begin with the text sent: a clean error
    // event, never the 400 and never a complete-looking stream.
    let (p, _primary) = mock(vec![Step::Sse(cut_sse(&["one ", "two "]), None)]).await;
    let (f, _fallback) = mock(vec![rejected, Step::Sse(sse(&["uno ", "dos."]), None)]).await;
    let (proxy, state) = start(quick_streams(&p, &f)).await;
    let (got, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(got, 200);
    assert!(streamed_text(&body).is_err(), "{body}");
    assert!(
        body.contains("stream_broken") && !body.contains("no assistant prefill"),
        "{body}"
    );
    assert!(only_event(&state)
        .continuation
        .unwrap()
        .starts_with("failed"));
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_ends_after_its_finish_reason_gets_its_terminator() {
    let mut events = cut_sse(&["a"]);
    events.push(format!(
        "data: {}\n\n",
        chunk_body("s", "m", 0, json!({}), Some("stop"))
    ));
    let (p, _primary) = mock(vec![Step::Sse(events, None)]).await;
    let (f, fallback) = mock(vec![ok("unused")]).await;
    let (proxy, _state) = start(quick_streams(&p, &f)).await;
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "a");
    assert!(fallback.seen().is_empty());
}

#[tokio::test(start_paused = true)]
async fn usage_after_a_continuation_counts_what_the_client_received() {
    // "one two " (8 characters, 2 tokens) reached the client from the
    // primary; the fallback continues with "three." and counts the
    // prefill as prompt.
    let (p, _primary) = mock(vec![Step::Sse(cut_sse(&["one ", "two "]), None)]).await;
    let mut events = sse(&["three."]);
    let usage = r#"data: {"id":"s","object":"chat.completion.chunk","created":0,"model":"fb","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":2,"total_tokens":52}}"#;
    events.insert(events.len() - 1, format!("{usage}\n\n"));
    let (f, _fallback) = mock(vec![Step::Sse(events, None)]).await;
    let mut c = quick_streams(&p, &f);
    c.fallback_model = Some("fb-model".into());
    let (proxy, state) = start(c).await;
    let (_, body) = post(&proxy, &streaming(conversation())).await;
    assert_eq!(streamed_text(&body).unwrap(), "one two three.");
    let trace = read_all(body.as_bytes());
    let usage = trace
        .events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
        .find_map(|v| v.get("usage").cloned())
        .unwrap();
    assert_eq!(
        usage,
        json!({"prompt_tokens": 48, "completion_tokens": 4, "total_tokens": 52})
    );
    let event = only_event(&state);
    assert_eq!(event.model_actual.as_deref(), Some("fb-model"));
    assert!(event.latency_fallback_ms.is_some(), "{event:?}");
}
