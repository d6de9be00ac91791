//! Both upstreams behind one host and port (an aggregator behind one URL),
//! served by an upstream that reads a kept-alive connection's second
//! request and closes it without an answer: a pooled connection is stale
//! the moment it is reused. The cut stream's continuation goes to the
//! fallback on a fresh connection every time, so it never meets one.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads one request (head and a Content-Length body); `None` at end of
/// file. Returns the request line and the body.
async fn read_request(conn: &mut TcpStream) -> Option<(String, String)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = conn.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let line = head.lines().next().unwrap_or_default().to_string();
    let body = String::from_utf8_lossy(&data[head_end..head_end + length]).to_string();
    Some((line, body))
}

/// A chunked event-stream response of `parts`, terminated when `end`.
fn chunked(parts: &[String], end: bool) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for p in parts {
        out.extend_from_slice(format!("{:x}\r\n{p}\r\n", p.len()).as_bytes());
    }
    if end {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

/// What the one-port upstream saw.
#[derive(Default)]
struct Seen {
    /// "primary" or "fallback", per request answered.
    answered: Vec<&'static str>,
    /// Requests that came second on a kept-alive connection (read, then
    /// the connection closed without an answer).
    reused: usize,
}

/// Serves `/p/...` (the primary: a stream cut after two words) and
/// `/f/...` (the fallback: the whole stream) on one port; every connection
/// answers one request, and ends its second by closing without a byte.
async fn one_port() -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind(local()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let Some((line, _)) = read_request(&mut conn).await else {
                    return;
                };
                let primary = line.contains(" /p/");
                log.lock()
                    .unwrap()
                    .answered
                    .push(if primary { "primary" } else { "fallback" });
                let reply = if primary {
                    chunked(&cut_sse(&["Your ", "sister "]), false)
                } else {
                    chunked(&sse(&["Your ", "sister ", "is ", "Oriane."]), true)
                };
                if conn.write_all(&reply).await.is_err() || primary {
                    // The cut stream: the connection ends mid-body.
                    return;
                }
                // A second request on this connection is read, then the
                // connection closes without an answer.
                if read_request(&mut conn).await.is_some() {
                    log.lock().unwrap().reused += 1;
                }
            });
        }
    });
    (addr, seen)
}

/// The cut-stream case with both upstreams on one port, 20 times: every
/// stream ends whole, continued from the fallback, and no fallback request
/// went out on a kept-alive connection (with a pooled fallback, the second
/// continuation would reuse the first's connection and meet the close:
/// "the fallback could not be reached").
#[tokio::test]
async fn the_fallback_never_meets_a_stale_pooled_connection() {
    let (addr, seen) = one_port().await;
    let mut c = ProxyConfig::new(
        ProxyMode::History,
        format!("http://{addr}/p"),
        format!("http://{addr}/f"),
    );
    c.attempt_timeout = Duration::from_secs(2);
    c.deadline = Duration::from_secs(8);
    let (proxy, _state) = start(c).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for run in 0..20 {
        let body = client
            .post(format!("{}/v1/chat/completions", proxy.url()))
            .json(&streaming(conversation()))
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap_or_default();
        let text = streamed_text(&body);
        assert_eq!(
            text.as_deref(),
            Ok("Your sister is Oriane."),
            "run {run}: {body}"
        );
    }
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.reused, 0,
        "a request went out on a kept-alive connection"
    );
    let fallback = seen.answered.iter().filter(|a| **a == "fallback").count();
    assert_eq!(
        fallback, 20,
        "one continuation per cut stream: {:?}",
        seen.answered
    );
}
