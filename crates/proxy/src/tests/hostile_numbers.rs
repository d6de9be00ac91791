//! Absurd numbers from an upstream, written byte for byte on a raw TCP
//! connection (no HTTP library in between to tidy them): a
//! `Content-Length` of `u64::MAX`, far past the body, negative, `1e300`
//! or a word, on a plain answer and on a stream; and `usage` counts of
//! `u64::MAX`, `-1`, `1e300` and strings in a continued stream. None may
//! panic the request or hand the client an empty reply: a bad length
//! fails the attempt (the fallback answers), absurd counts are clamped.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An upstream that answers every request with `reply`, as written, and
/// closes the connection.
async fn raw_upstream(reply: String) -> ServerHandle {
    let listener = tokio::net::TcpListener::bind(local()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    ServerHandle::spawn(addr, move |stop| async move {
        loop {
            let (mut tcp, _) = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => accepted.unwrap(),
            };
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tcp.write_all(reply.as_bytes()).await;
                let _ = tcp.shutdown().await;
            });
        }
    })
}

/// The absurd `Content-Length` values.
const LENGTHS: [&str; 5] = ["18446744073709551615", "99999999999", "-1", "1e300", "many"];

#[tokio::test(start_paused = true)]
async fn an_absurd_content_length_on_a_plain_answer_fails_over() {
    let body = answer("from primary").to_string();
    for length in LENGTHS {
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n{body}"
        );
        let p = raw_upstream(reply).await;
        let (f, fallback) = mock(vec![ok("from fallback")]).await;
        let (proxy, state) = start(config(ProxyMode::History, &p, &f)).await;
        let (got, reply) = post(&proxy, &conversation()).await;
        assert_eq!(
            (got, text_of(&reply).as_str()),
            (200, "from fallback"),
            "{length}: {reply}"
        );
        assert_eq!(fallback.seen().len(), 1, "{length}");
        let event = only_event(&state);
        // Recorded as what it is: neither passed through ("none") nor
        // waited out until a timeout (the stall the issue reported).
        assert!(
            !["none", "timeout"].contains(&event.reason.to_string().as_str()),
            "{length}: {}",
            event.reason
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_absurd_content_length_on_a_stream_fails_over() {
    let events = sse(&["from ", "primary"]).concat();
    for length in LENGTHS {
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {length}\r\n\r\n{events}"
        );
        let p = raw_upstream(reply).await;
        let (f, _) = mock(vec![Step::Sse(sse(&["from ", "fallback"]), None)]).await;
        let (proxy, state) = start(quick_streams(&p, &f)).await;
        let (got, reply) = post(&proxy, &streaming(conversation())).await;
        assert_eq!(got, 200, "{length}: {reply}");
        let text = streamed_text(&reply);
        // Before any byte reached the client: the fallback's whole answer;
        // a length hyper read past (99999999999) was relayed, then broke
        // and was continued. Never an empty or broken stream.
        assert!(
            matches!(text.as_deref(), Ok("from fallback" | "from primary")),
            "{length}: {text:?} {reply}"
        );
        assert!(!state.events_snapshot().is_empty(), "{length}");
    }
}

#[tokio::test(start_paused = true)]
async fn absurd_usage_counts_in_a_continuation_are_clamped() {
    let absurd = [
        json!(u64::MAX),
        json!(-1),
        json!(1e300),
        json!("12"),
        json!(null),
    ];
    for value in absurd {
        let (p, _) = mock(vec![Step::Sse(cut_sse(&["Her ", "name "]), None)]).await;
        let mut events = sse(&["is ", "Oriane."]);
        let last = events.len() - 1;
        events.insert(
            last,
            format!(
                "data: {}\n\n",
                json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "m",
                       "choices": [],
                       "usage": {"prompt_tokens": value, "completion_tokens": value, "total_tokens": value}})
            ),
        );
        let (f, _) = mock(vec![Step::Sse(events, None)]).await;
        let (proxy, _) = start(quick_streams(&p, &f)).await;
        let (got, reply) = post(&proxy, &streaming(conversation())).await;
        assert_eq!(got, 200, "{value}: {reply}");
        assert_eq!(
            streamed_text(&reply).as_deref(),
            Ok("Her name is Oriane."),
            "{value}: {reply}"
        );
        let usage = reply
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find_map(|v| v.get("usage").cloned())
            .unwrap_or(Value::Null);
        assert!(
            usage.is_object(),
            "{value}: the usage chunk reached the client: {reply}"
        );
        if value == json!(u64::MAX) {
            // Clamped to u32::MAX, the parts added without wrapping.
            assert_eq!(usage["completion_tokens"], json!(u32::MAX), "{usage}");
            assert_eq!(usage["total_tokens"], json!(u32::MAX), "{usage}");
        } else {
            // Not a count: passed through untouched, never rewritten.
            assert_eq!(usage["completion_tokens"], value, "{usage}");
        }
    }
}
