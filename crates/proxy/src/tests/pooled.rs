//! Both upstreams behind one host and port (an aggregator behind one URL),
//! served by an upstream that closes every kept-alive connection when its
//! next request arrives: the proxy's pooled connections are stale the
//! moment it reuses them. A request that went out on one is sent again,
//! once, on a fresh connection; a reset or a refused connection is not.

use super::*;
use crate::stale::{stale, Clients};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the one-port upstream ends a connection's second request.
#[derive(Clone, Copy, PartialEq)]
enum Second {
    /// Reads it and closes cleanly (a stale kept-alive connection).
    Close,
    /// Reads it and resets the connection.
    Reset,
}

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

/// Serves `/p/...` (the primary: a plain answer, or a stream cut after two
/// words) and `/f/...` (the fallback: whole answers) on one port; every
/// connection answers one request and ends its second as `second` says.
/// Counts the requests each upstream answered.
async fn one_port(second: Second) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind(local()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answered = Arc::new(Mutex::new(Vec::new()));
    let log = answered.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let Some((line, body)) = read_request(&mut conn).await else {
                    return;
                };
                let primary = line.contains(" /p/");
                let stream = body.contains("\"stream\":true");
                log.lock().unwrap().push(format!(
                    "{} {}",
                    if primary { "primary" } else { "fallback" },
                    if stream { "stream" } else { "plain" }
                ));
                let reply = match (primary, stream) {
                    (true, true) => chunked(&cut_sse(&["Your ", "sister "]), false),
                    (false, true) => chunked(&sse(&["Your ", "sister ", "is ", "Oriane."]), true),
                    (_, false) => {
                        let body = answer("Your sister is Oriane.").to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                        .into_bytes()
                    }
                };
                if conn.write_all(&reply).await.is_err() || (primary && stream) {
                    // The cut stream: the connection ends mid-body.
                    return;
                }
                // The next request on this connection finds it closed.
                if read_request(&mut conn).await.is_some() && second == Second::Reset {
                    let _ = conn.set_zero_linger();
                }
            });
        }
    });
    (addr, answered)
}

async fn post_stream(proxy: &ServerHandle) -> String {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .json(&streaming(conversation()))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap_or_default()
}

/// The cut-stream case with both upstreams on one port, 20 times: every
/// reuse of a pooled connection meets a closed one, and every stream
/// still ends whole, continued from the fallback.
#[tokio::test]
async fn a_stale_pooled_connection_is_retried_once_on_a_fresh_one() {
    let (addr, answered) = one_port(Second::Close).await;
    let mut c = ProxyConfig::new(
        ProxyMode::History,
        format!("http://{addr}/p"),
        format!("http://{addr}/f"),
    );
    c.attempt_timeout = Duration::from_secs(2);
    c.deadline = Duration::from_secs(8);
    let (proxy, state) = start(c).await;
    for run in 0..20 {
        // Two plain requests at once leave two kept-alive connections in
        // the proxy's pool.
        let plain = conversation();
        let (a, b) = tokio::join!(post(&proxy, &plain), post(&proxy, &plain));
        assert_eq!((a.0, b.0), (200, 200), "run {run}: {a:?} {b:?}");
        let body = post_stream(&proxy).await;
        let text = streamed_text(&body);
        assert!(
            text.as_deref().is_ok_and(|t| t.contains("Oriane")),
            "run {run}: {text:?} from {body}"
        );
    }
    let resent = state.core_stale_retries();
    assert!(resent >= 40, "{resent} requests sent again");
    let metrics = reqwest::get(format!("{}/metrics", proxy.url()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(&format!(
            "continuity_proxy_stale_connection_retries_total {resent}\n"
        )),
        "{metrics}"
    );
    let log = answered.lock().unwrap().clone();
    assert_eq!(
        log.iter().filter(|l| *l == "fallback stream").count(),
        20,
        "each cut stream continued from the fallback once: {log:?}"
    );
}

/// The detector's controls: a clean close before any response byte is
/// stale; a reset, a refused connection and a timeout are not.
#[tokio::test]
async fn only_a_clean_close_before_any_response_is_stale() {
    let body = conversation().to_string();
    let send = |client: &reqwest::Client, url: String| {
        client
            .post(url)
            .header("content-type", "application/json")
            .body(body.clone())
            .timeout(Duration::from_secs(2))
    };
    for (second, expected) in [(Second::Close, true), (Second::Reset, false)] {
        let (addr, _) = one_port(second).await;
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let url = format!("http://{addr}/p/v1/chat/completions");
        send(&client, url.clone())
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let err = send(&client, url.clone()).send().await.unwrap_err();
        assert_eq!(stale(&err), expected, "{err:?}");
        // Through the pair of clients, the stale one is sent again and
        // answered; the reset one is not.
        let clients = Clients::new(
            reqwest::Client::builder().no_proxy().build().unwrap(),
            reqwest::Client::builder().no_proxy(),
        )
        .unwrap();
        clients
            .send(|c| send(c, url.clone()))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let again = clients.send(|c| send(c, url.clone())).await;
        assert_eq!(again.is_ok(), expected, "{again:?}");
        assert_eq!(clients.resent(), u64::from(expected));
    }
    let refused = {
        let l = TcpListener::bind(local()).await.unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        addr
    };
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let err = send(&client, format!("http://{refused}/p/v1/chat/completions"))
        .send()
        .await
        .unwrap_err();
    assert!(!stale(&err), "{err:?}");
}
