//! The bare connections against a raw server that counts its connections
//! and writes the response heads it is told to: reuse, `Connection:
//! close`, the idle limit, an oversized head, and addressing.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server on 127.0.0.1 that answers every request on a connection with
/// `head` and the body `ok`, and counts the connections it accepted.
async fn server(head: &'static str) -> (Address, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    // One request: the head, then its content-length body.
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match tcp.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let text = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                    let length: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < end + 4 + length {
                        match tcp.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..end + 4 + length);
                    let response = format!("{head}content-length: 2\r\n\r\nok");
                    if tcp.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let address = Address::of(&format!("http://{addr}/v1/chat/completions")).unwrap();
    (address, accepted)
}

/// One POST read to its end: the status and the body.
async fn post(pool: &PlainPool, address: &Address) -> Result<(u16, Vec<u8>), PlainError> {
    let (response, mut connection) = pool.post(address, &[], b"{}".to_vec()).await?;
    let mut body = Vec::new();
    while let Some(chunk) = connection.chunk().await? {
        body.extend_from_slice(&chunk);
    }
    Ok((response.status().as_u16(), body))
}

#[tokio::test(start_paused = true)]
async fn a_kept_alive_connection_is_reused_and_a_closed_one_is_not() {
    let (address, accepted) = server("HTTP/1.1 200 OK\r\n").await;
    let pool = PlainPool::default();
    for _ in 0..3 {
        assert_eq!(post(&pool, &address).await.unwrap(), (200, b"ok".to_vec()));
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "one connection, reused");

    let (address, accepted) = server("HTTP/1.1 200 OK\r\nconnection: close\r\n").await;
    for _ in 0..3 {
        assert_eq!(post(&pool, &address).await.unwrap().0, 200);
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        3,
        "closed ones are not kept"
    );
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_past_the_idle_limit_is_not_reused() {
    let (address, accepted) = server("HTTP/1.1 200 OK\r\n").await;
    let pool = PlainPool::default();
    post(&pool, &address).await.unwrap();
    tokio::time::advance(IDLE_TIMEOUT + Duration::from_millis(1)).await;
    post(&pool, &address).await.unwrap();
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_response_head_over_the_read_buffer_is_an_error() {
    let big: &'static str = Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\nx-padding: {}\r\n",
            "p".repeat(READ_BUFFER)
        )
        .into_boxed_str(),
    );
    let (address, _) = server(big).await;
    let err = post(&PlainPool::default(), &address).await.unwrap_err();
    let reason = err.reason();
    assert!(
        reason.starts_with("request failed:") && reason.contains("too large"),
        "{reason}"
    );
}

#[tokio::test]
async fn nothing_listening_is_a_connection_failure() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let address = Address::of(&format!("http://127.0.0.1:{port}/v1/chat/completions")).unwrap();
    let err = post(&PlainPool::default(), &address).await.unwrap_err();
    assert!(
        err.reason().starts_with("connection failed:"),
        "{}",
        err.reason()
    );
}

#[test]
fn only_plain_http_without_user_information_is_addressed_here() {
    let a = Address::of("http://127.0.0.1:18080/v1/chat/completions").unwrap();
    assert_eq!(a.authority, "127.0.0.1:18080");
    assert_eq!(a.host, "127.0.0.1:18080");
    assert_eq!(a.path, "/v1/chat/completions");
    let a = Address::of("http://gateway/prefix/v1/chat/completions?x=1").unwrap();
    assert_eq!(
        (a.authority.as_str(), a.path.to_string().as_str()),
        ("gateway:80", "/prefix/v1/chat/completions?x=1")
    );
    assert_eq!(
        Address::of("https://openrouter.ai/api/v1/chat/completions"),
        None
    );
    assert_eq!(
        Address::of("http://user:pw@gateway/v1/chat/completions"),
        None
    );
    assert_eq!(Address::of("not a url"), None);
}

#[test]
fn a_transport_failure_is_worded_as_the_client_words_it() {
    assert_eq!(
        PlainError::Connect("Connection refused (os error 111)".into()).reason(),
        "connection failed: Connection refused (os error 111)"
    );
    assert!(PlainError::Body("x".into())
        .reason()
        .starts_with("response body broken off"));
}
