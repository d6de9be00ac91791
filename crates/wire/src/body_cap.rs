//! A server's cap on request bodies, answered with one `413` that names the
//! cap and how to raise it.
//!
//! A body whose `Content-Length` is over the cap (an absurd one included,
//! up to `u64::MAX`) is refused from the header alone, before a byte of it
//! is read, so a client announcing 30 MB costs the server nothing. A body
//! without a length (chunked) is read up to the cap and then refused: the
//! router's `DefaultBodyLimit` is set to the same cap, and its terse `413`
//! is replaced by this one.

use crate::openai::error_body;
use crate::openai::frame::error_response;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use http::{header, StatusCode};

/// A body cap: its size and the flag that sets it (`None`: fixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyCap {
    /// Largest body accepted, in bytes.
    pub bytes: usize,
    /// Who this server is, for the message (`"the upstream"`).
    pub server: &'static str,
    /// The flag that raises it, when there is one.
    pub flag: Option<&'static str>,
}

impl BodyCap {
    /// The message of the `413`, naming the cap and the flag.
    pub fn message(&self, announced: Option<u64>) -> String {
        let size = announced.map_or_else(
            || "the request body is".to_string(),
            |n| format!("the request body ({n} bytes) is"),
        );
        let raise = self.flag.map_or_else(
            || "send a smaller request".to_string(),
            |f| format!("send a smaller request or raise it with {f}"),
        );
        format!(
            "{size} over {}'s cap of {} bytes ({}); {raise}",
            self.server,
            self.bytes,
            human(self.bytes)
        )
    }

    /// `router` with this cap on every route.
    pub fn layer<S>(self, router: Router<S>) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        router
            .layer(axum::middleware::from_fn(
                move |req: Request, next: Next| refuse_over(self, req, next),
            ))
            .layer(DefaultBodyLimit::max(self.bytes))
    }

    fn too_large(&self, announced: Option<u64>) -> Response {
        error_response(
            413,
            &error_body(
                &self.message(announced),
                "invalid_request_error",
                Some("request_too_large"),
            ),
            None,
        )
    }
}

/// `n` bytes in MiB or KiB, for a message.
fn human(n: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n % MIB == 0 {
        format!("{} MiB", n / MIB)
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

async fn refuse_over(cap: BodyCap, req: Request, next: Next) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > cap.bytes as u64) {
        return cap.too_large(announced);
    }
    let response = next.run(req).await;
    // The extractor's own refusal of a body that outgrew the cap.
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/plain"))
    {
        return cap.too_large(None);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use axum::routing::post;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const CAP: BodyCap = BodyCap {
        bytes: 1024,
        server: "the upstream",
        flag: Some("--max-body-bytes"),
    };

    /// Serves the capped echo of a body's length; sends `head` then
    /// `body` on a real connection and returns the status and the reply.
    async fn exchange(head: &str, body: &[u8]) -> (u16, String) {
        let router = CAP
            .layer(Router::new().route("/", post(|b: Bytes| async move { b.len().to_string() })));
        let server = crate::server::serve("127.0.0.1:0".parse().unwrap(), router)
            .await
            .unwrap();
        let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        tcp.write_all(
            format!("POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n{head}\r\n").as_bytes(),
        )
        .await
        .unwrap();
        // A peer that refuses early may close before all is sent.
        let _ = tcp.write_all(body).await;
        let mut reply = Vec::new();
        let _ = tcp.read_to_end(&mut reply).await;
        let reply = String::from_utf8_lossy(&reply).into_owned();
        let status = reply
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, reply)
    }

    #[tokio::test]
    async fn an_announced_length_over_the_cap_is_refused_before_reading() {
        for length in ["1025", "30000000", "18446744073709551613"] {
            // No body is sent: only the header can have refused it.
            let (status, reply) = exchange(&format!("content-length: {length}\r\n"), b"").await;
            assert_eq!(status, 413, "{length}: {reply}");
            assert!(
                reply.contains("--max-body-bytes")
                    && reply.contains("cap of 1024 bytes")
                    && reply.contains(&format!("({length} bytes)")),
                "{reply}"
            );
        }
    }

    #[tokio::test]
    async fn a_chunked_body_over_the_cap_gets_the_same_413() {
        let chunk = format!("320\r\n{}\r\n", "x".repeat(800));
        let body = format!("{chunk}{chunk}0\r\n\r\n");
        let (status, reply) = exchange("transfer-encoding: chunked\r\n", body.as_bytes()).await;
        assert_eq!(status, 413, "{reply}");
        assert!(
            reply.contains("request_too_large") && reply.contains("--max-body-bytes"),
            "{reply}"
        );
        let (status, reply) =
            exchange("content-length: 1024\r\n", "x".repeat(1024).as_bytes()).await;
        assert_eq!(status, 200, "{reply}");
        assert!(reply.ends_with("1024"), "{reply}");
    }

    #[tokio::test]
    async fn the_largest_lengths_are_refused_by_hyper_itself() {
        // u64::MAX and one below are not a length to hyper 1.12: 431.
        for length in ["18446744073709551615", "18446744073709551614"] {
            let (status, reply) = exchange(&format!("content-length: {length}\r\n"), b"").await;
            assert_eq!(status, 431, "{length}: {reply}");
        }
    }

    #[tokio::test]
    async fn a_garbled_length_is_refused_by_hyper_without_a_panic() {
        for length in ["-1", "1e300", "abc", "99999999999999999999999"] {
            let (status, reply) = exchange(&format!("content-length: {length}\r\n"), b"abc").await;
            assert_eq!(status, 400, "{length}: {reply}");
        }
    }
}
