//! The driver's own HTTP/1.1 client for `http://` systems: a bare `hyper`
//! connection per request in flight, kept alive in a small pool, so that
//! thousands of requests in flight each hold as little as hyper allows.
//!
//! Measured with heaptrack at 4,000 requests in flight through reqwest
//! (`scripts/scale-memory`, README "At scale"): the connection's read
//! buffer (8 KiB, hyper's adaptive floor), reqwest's and hyper-util's
//! boxed futures and connector (about 7 KiB) and the request body, kept
//! for a retry until the response came (3.5 KiB), were about 18 KiB of
//! the 39 KiB the driver's side of a request held. Here the read buffer is
//! [`READ_BUFFER`] exactly (`read_buf_exact_size`), the body is freed
//! once hyper has written it, and a request is one connection task and
//! the caller's future.
//!
//! The bounds stay those of [`crate::send`]: the caller's deadline wraps
//! connect, send and read; the size cap is applied to what is read; a
//! redirect is never followed (hyper's connection API has no redirects);
//! no proxy is read from the environment. An `https://` system, or a URL
//! with user information, goes through reqwest instead (TLS, basic auth).

use bytes::Bytes;
use http::header::{HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::{Builder, SendRequest};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// Bytes a connection reads at once, and the largest response head it
/// accepts (hyper's exact read size bounds both): a chat answer's head is
/// well under 1 KiB, a large body takes more reads of this size rather
/// than a larger buffer, and a head above 4 KiB is an error
/// ("message head is too large").
pub const READ_BUFFER: usize = 4096;

/// Idle connections kept per system; more are closed.
const MAX_IDLE_PER_HOST: usize = 512;

/// An idle connection older than this is closed rather than reused: 2 s,
/// before the 5 s keep-alive of common gateway servers (uvicorn, Node)
/// closes it under a request that reuses it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a request goes: the address to connect to and the request line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// `host:port` to connect to (port 80 when the URL has none).
    pub authority: String,
    /// The `Host` header.
    pub host: HeaderValue,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: Uri,
}

impl Address {
    /// The address of a plain `http://` URL without user information;
    /// `None` for anything else (which goes through reqwest).
    pub fn of(url: &str) -> Option<Self> {
        let uri: Uri = url.parse().ok()?;
        if uri.scheme_str() != Some("http") {
            return None;
        }
        let authority = uri.authority()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let port = authority.port_u16().unwrap_or(80);
        let host = HeaderValue::from_str(authority.as_str()).ok()?;
        let path = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .ok()?;
        Some(Address {
            authority: format!("{}:{port}", authority.host()),
            host,
            path,
        })
    }
}

/// Why a plain exchange failed before a response was read to its end.
#[derive(Debug)]
pub enum PlainError {
    /// The TCP connection or the HTTP handshake failed.
    Connect(String),
    /// The request could not be sent or its response head not read.
    Request(String),
    /// The response body broke off.
    Body(String),
}

impl PlainError {
    /// The reason, as the driver's client words a transport failure.
    pub fn reason(&self) -> String {
        match self {
            PlainError::Connect(cause) => format!("{}: {cause}", crate::CONNECT_FAILED),
            PlainError::Request(cause) => format!("request failed: {cause}"),
            PlainError::Body(cause) => format!("response body broken off: {cause}"),
        }
    }
}

/// The innermost cause of an error, as the reason's detail.
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    cause
}

struct Idle {
    sender: SendRequest<Full<Bytes>>,
    since: Instant,
}

/// The pool of idle connections, by `host:port`.
#[derive(Clone, Default)]
pub struct PlainPool {
    idle: Arc<Mutex<HashMap<String, Vec<Idle>>>>,
}

impl std::fmt::Debug for PlainPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainPool").finish_non_exhaustive()
    }
}

/// A response whose body is read with [`Connection::chunk`]; the
/// connection goes back to the pool once the body was read to its end.
pub struct Connection {
    pool: PlainPool,
    authority: String,
    sender: Option<SendRequest<Full<Bytes>>>,
    body: Incoming,
    keep_alive: bool,
}

impl Connection {
    /// The next chunk of the body, `None` at its end.
    ///
    /// # Errors
    /// When the body breaks off.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, PlainError> {
        use http_body_util::BodyExt as _;
        loop {
            match self.body.frame().await {
                None => {
                    self.give_back();
                    return Ok(None);
                }
                Some(Err(e)) => return Err(PlainError::Body(innermost(&e))),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if !data.is_empty() {
                            return Ok(Some(data));
                        }
                    }
                }
            }
        }
    }

    fn give_back(&mut self) {
        let Some(sender) = self.sender.take() else {
            return;
        };
        if !self.keep_alive || sender.is_closed() {
            return;
        }
        let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(self.authority.clone()).or_default();
        if list.len() < MAX_IDLE_PER_HOST {
            list.push(Idle {
                sender,
                since: Instant::now(),
            });
        }
    }
}

impl PlainPool {
    /// An idle connection to `authority` still fit for a request.
    fn checkout(&self, authority: &str) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.get_mut(authority)?;
        while let Some(entry) = list.pop() {
            if entry.since.elapsed() < IDLE_TIMEOUT && !entry.sender.is_closed() {
                return Some(entry.sender);
            }
        }
        None
    }

    /// A new connection to `authority`, its task spawned.
    async fn connect(authority: &str) -> Result<SendRequest<Full<Bytes>>, PlainError> {
        let tcp = TcpStream::connect(authority)
            .await
            .map_err(|e| PlainError::Connect(innermost(&e)))?;
        let _ = tcp.set_nodelay(true);
        let (sender, connection) = Builder::new()
            .read_buf_exact_size(Some(READ_BUFFER))
            .handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| PlainError::Connect(innermost(&e)))?;
        tokio::spawn(async move {
            // Ends when the server closes or the sender is dropped idle.
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// Sends a POST of `body` (JSON) with `headers` to `address` and
    /// returns the response head and its body reader.
    ///
    /// # Errors
    /// A connection, handshake or request failure.
    pub async fn post(
        &self,
        address: &Address,
        headers: &[(String, cb_base::secret::Secret)],
        body: Vec<u8>,
    ) -> Result<(Response<()>, Connection), PlainError> {
        let mut request = Request::post(address.path.clone())
            .header(HOST, address.host.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(ACCEPT, HeaderValue::from_static("*/*"));
        for (name, value) in headers {
            if let Some(value) = value.header_value() {
                request = request.header(name.as_str(), value);
            }
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| PlainError::Request(innermost(&e)))?;
        // Connecting is boxed: its state is needed only until the
        // handshake, and inline it would grow every request's future for
        // as long as the request is in flight.
        let mut sender = match self.checkout(&address.authority) {
            Some(sender) => sender,
            None => Box::pin(Self::connect(&address.authority)).await?,
        };
        if sender.ready().await.is_err() {
            sender = Box::pin(Self::connect(&address.authority)).await?;
        }
        let response = sender.send_request(request).await.map_err(|e| {
            if e.is_parse_too_large() {
                PlainError::Request(format!(
                    "the response head is too large: over {READ_BUFFER} bytes, the limit of \
                     the driver's plain http:// client"
                ))
            } else {
                PlainError::Request(innermost(&e))
            }
        })?;
        let keep_alive = response
            .headers()
            .get(http::header::CONNECTION)
            .is_none_or(|v| !v.as_bytes().eq_ignore_ascii_case(b"close"))
            && response.version() == http::Version::HTTP_11;
        let (parts, body) = response.into_parts();
        Ok((
            Response::from_parts(parts, ()),
            Connection {
                pool: self.clone(),
                authority: address.authority.clone(),
                sender: Some(sender),
                body,
                keep_alive,
            },
        ))
    }
}

#[cfg(test)]
mod tests;
