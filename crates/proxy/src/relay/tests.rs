//! Unit tests of the relay: how its lines are read, how a continuation is
//! spliced onto the text sent, and the bound on a line without an end.

use super::continuation::{error_event, rewrite, with_prefill, Joined, Splice};
use super::read::{Event, Kind, Read, Relayed, Upstream};
use bytes::Bytes;
use cb_wire::sse::SseReader;
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;
use tokio::time::Instant;

/// What the relay makes of one line of an upstream's stream.
fn kind_of(bytes: &[u8]) -> Kind {
    let mut reader = SseReader::default();
    reader.feed(bytes);
    reader.end();
    let line = Relayed::of(reader.next_line().expect("a line"));
    assert_eq!(line.raw, bytes, "the bytes are relayed as they came");
    line.kind
}

fn event_of(bytes: &[u8]) -> Event {
    match kind_of(bytes) {
        Kind::Event(e) => e,
        other => panic!("not an event: {other:?}"),
    }
}

#[test]
fn lines_are_read_as_the_relay_reads_them() {
    assert_eq!(kind_of(b"data: [DONE]\n"), Kind::Done);
    assert_eq!(kind_of(b": keep-alive\n"), Kind::Other);
    assert_eq!(kind_of(b"\n"), Kind::Other);
    assert_eq!(kind_of(b"data: {\"choices\": [\n"), Kind::Malformed);
    assert_eq!(kind_of(b"data: \xff\n"), Kind::Malformed);
    let e = event_of(b"data: {\"choices\":[{\"delta\":{\"content\":\"hi \"}}]}\n");
    assert_eq!(
        (e.content.as_str(), e.token(), e.finish),
        ("hi ", true, false)
    );
    let e =
        event_of(b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n");
    assert!(!e.token(), "a role chunk carries no token");
    let e = event_of(b"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n");
    assert!(e.token(), "reasoning is a token");
    assert!(event_of(b"data: {\"error\":{\"message\":\"x\"}}\n").error);
}

/// The edge cases the relay read apart from the driver, now read as
/// the driver reads them: content that is not text breaks the stream
/// (it used to go on as a chunk without a token, which no client could
/// read), text parts are a token (they used to be none), and only a
/// string finish reason finishes an answer (any non-null one did).
#[test]
fn a_chunk_is_read_as_the_driver_reads_it() {
    assert_eq!(
        kind_of(b"data: {\"choices\":[{\"delta\":{\"content\":42}}]}\n"),
        Kind::Malformed
    );
    let parts = event_of(
        b"data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}]}\n",
    );
    assert!(parts.token() && parts.content == "hi");
    let odd = event_of(b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":1}]}\n");
    assert!(!odd.finish);
    // An error chunk is an error, whatever its content holds.
    let error = event_of(
        b"data: {\"error\":{\"message\":\"x\"},\"choices\":[{\"delta\":{\"content\":7}}]}\n",
    );
    assert!(error.error);
}

#[test]
fn a_restart_drops_exactly_the_text_sent() {
    let mut s = Splice::Skip("one two ".into());
    assert!(matches!(s.join("one "), Joined::Send(c) if c.is_empty()));
    assert!(matches!(s.join("two three "), Joined::Send(c) if c == "three "));
    assert!(matches!(s.join("four"), Joined::Send(c) if c == "four"));
    let mut s = Splice::Skip("one two ".into());
    assert!(matches!(s.join("uno "), Joined::Mismatch));
}

#[test]
fn a_prefill_continuation_passes_and_an_ignored_prefill_is_dropped() {
    let echo = || Splice::Echo {
        sent: "one two ".into(),
        seen: String::new(),
        held: Vec::new(),
    };
    // A real continuation: new text at once.
    let mut s = echo();
    assert!(matches!(s.join("three "), Joined::FlushHeld(h, c) if h.is_empty() && c == "three "));
    // A continuation that starts like the text sent, then diverges: the
    // held start is new text and goes out before the rest.
    let mut s = echo();
    assert!(matches!(s.join("one"), Joined::Hold(_)));
    if let Splice::Echo { held, .. } = &mut s {
        held.push(Bytes::from_static(b"data: one\n\n"));
    }
    assert!(
        matches!(s.join(" more"), Joined::FlushHeld(h, c) if h.len() == 1 && c == " more"),
        "the held event is handed back with the new text"
    );
    // The fallback ignored the prefill and starts over: held, dropped.
    let mut s = echo();
    assert!(matches!(s.join("one "), Joined::Hold(_)));
    assert!(matches!(s.join("two three "), Joined::DropHeld(c) if c == "three "));
    let mut s = echo();
    assert!(matches!(s.join("one "), Joined::Hold(_)));
    assert!(matches!(s.join("two "), Joined::DropHeld(c) if c.is_empty()));
}

#[tokio::test(start_paused = true)]
async fn a_line_without_end_past_the_cap_is_a_broken_stream() {
    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
    let endless = futures::stream::iter((0..40).map(move |_| Ok(chunk.clone()))).boxed();
    let mut upstream = Upstream::new(endless, crate::REQUEST_MEMORY);
    let deadline = Instant::now() + Duration::from_secs(10);
    assert!(matches!(
        upstream.next_line(None, deadline).await,
        Read::Broke
    ));
    let mut short = Upstream::new(
        futures::stream::iter([Ok(Bytes::from_static(b"data: x\n"))]).boxed(),
        64,
    );
    assert!(matches!(
        short.next_line(None, deadline).await,
        Read::Line(_)
    ));
    // Past a budget below the line cap, the same line is past the budget.
    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
    let endless = futures::stream::iter((0..40).map(move |_| Ok(chunk.clone()))).boxed();
    let mut upstream = Upstream::new(endless, 128 * 1024);
    assert!(matches!(
        upstream.next_line(None, deadline).await,
        Read::OverBudget
    ));
}

#[test]
fn rewritten_events_lose_the_role_and_empty_ones_go() {
    let role = json!({"choices": [{"delta": {"role": "assistant", "content": ""}}]});
    assert_eq!(rewrite(role, ""), None);
    let piece = json!({"choices": [{"delta": {"content": "abc"}}]});
    let out = rewrite(piece, "c").unwrap();
    assert_eq!(
        out,
        Bytes::from("data: {\"choices\":[{\"delta\":{\"content\":\"c\"}}]}\n\n")
    );
    let finish = json!({"choices": [{"delta": {}, "finish_reason": "stop"}]});
    assert!(rewrite(finish, "").is_some());
    assert_eq!(
        with_prefill(&json!({"messages": []}), "so far")["messages"][0]["role"],
        "assistant"
    );
}

/// The proxy's own error event is the one OpenAI error body, and a client
/// reads it as an error in the stream.
#[test]
fn the_clean_error_event_is_an_openai_error() {
    let event = error_event("the stream broke");
    assert_eq!(
        event,
        cb_wire::openai::frame::error_event(
            "the stream broke",
            "proxy_error",
            Some("stream_broken")
        )
    );
    let read = cb_wire::sse::assemble(&cb_wire::sse::read_all(&event)).unwrap_err();
    assert_eq!(read, "error in the stream after 1 chunks: the stream broke");
    assert!(event.starts_with(b"data: {\"error\":{\"code\":\"stream_broken\""));
}

/// Comments and blank lines before the first token are held as one piece
/// (the client gets the same bytes), so a stream of tiny lines holds about
/// its bytes, not a line's bookkeeping per 4 bytes; past the budget it is
/// refused all the same.
#[tokio::test]
async fn comments_before_the_first_token_are_held_once_and_counted() {
    let deadline = Instant::now() + Duration::from_secs(60);
    let pings: Vec<u8> = b": ping\n\n:\n\n\n".repeat(4096);
    let token = b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n".to_vec();
    // The bytes come in pieces that cut lines anywhere.
    let stream = |bytes: Vec<u8>| {
        let pieces: Vec<_> = bytes
            .chunks(997)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        futures::stream::iter(pieces).boxed()
    };
    let all = [pings.clone(), token.clone()].concat();
    let opened = super::open(stream(all.clone()), None, deadline, pings.len() * 2)
        .await
        .expect("opens within the budget");
    let head: Vec<u8> = opened.head.iter().flat_map(|l| l.raw.to_vec()).collect();
    // Up to the token's line; its blank line is read with the rest.
    assert!(
        head == all[..all.len() - 1],
        "the client gets the bytes as they came"
    );
    assert!(opened.head.len() <= 3, "{} pieces held", opened.head.len());
    // The same comments past a budget smaller than they are.
    let refused = super::open(stream(all), None, deadline, pings.len() / 2).await;
    assert_eq!(refused.err(), Some(super::NotOpened::OverBudget));
}
