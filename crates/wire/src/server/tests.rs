//! The server's bounds on real loopback connections: the cap answers
//! `503` and counts it, idle connections are closed by the header-read
//! timer (virtual time), and a good request is served beside a thousand
//! idle ones.

use super::*;
use axum::routing::get;
use tokio::io::AsyncReadExt;

fn router() -> Router {
    Router::new().route("/", get(|| async { "ok" }))
}

fn local() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// Sends a GET on a new connection and returns what came back.
async fn get_on(addr: SocketAddr) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    out
}

/// Waits until `stats` shows `open` connections (a poll of the counter,
/// bounded: the count decides).
async fn until_open(stats: &ConnectionStats, open: u64) {
    for _ in 0..10_000 {
        if stats.open() >= open {
            return;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("only {} of {open} connections open", stats.open());
}

#[tokio::test]
async fn beyond_the_cap_a_connection_is_answered_503_and_counted() {
    let limits = Limits {
        max_connections: 2,
        ..Limits::default()
    };
    let server = serve_with(local(), router(), limits, |_, _| ())
        .await
        .unwrap();
    let stats = server.stats();
    let _a = TcpStream::connect(server.addr).await.unwrap();
    let _b = TcpStream::connect(server.addr).await.unwrap();
    until_open(&stats, 2).await;
    let reply = get_on(server.addr).await;
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(reply.contains("connection_cap"), "{reply}");
    assert_eq!(stats.refused(), 1);
    drop((_a, _b));
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_is_closed_by_the_header_read_timer() {
    let server = serve(local(), router()).await.unwrap();
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    let began = tokio::time::Instant::now();
    let mut buf = [0u8; 64];
    // Nothing sent: the server closes it (virtual time runs on).
    let n = idle.read(&mut buf).await.unwrap_or(0);
    assert_eq!(n, 0, "closed without an answer");
    assert!(began.elapsed() >= HEADER_READ_TIMEOUT);
    // A kept-alive connection idle after its answer is closed the same way.
    let mut kept = TcpStream::connect(server.addr).await.unwrap();
    kept.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    while !String::from_utf8_lossy(&answer).ends_with("ok") {
        let n = kept.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the answer");
        answer.extend_from_slice(&buf[..n]);
    }
    let idle_from = tokio::time::Instant::now();
    assert_eq!(kept.read(&mut buf).await.unwrap_or(0), 0);
    assert!(idle_from.elapsed() >= HEADER_READ_TIMEOUT);
}

#[tokio::test]
async fn a_good_request_is_served_beside_a_thousand_idle_connections() {
    let server = serve(local(), router()).await.unwrap();
    let stats = server.stats();
    let mut idle = Vec::new();
    for _ in 0..1000 {
        idle.push(TcpStream::connect(server.addr).await.unwrap());
    }
    until_open(&stats, 1000).await;
    let reply = get_on(server.addr).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with("ok"), "{reply}");
    assert_eq!(stats.refused(), 0);
}
