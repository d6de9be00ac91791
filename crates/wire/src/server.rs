//! Serving an axum router on a bound address, with a handle that stops it.
//!
//! Every server the harness starts (simulated upstreams, reference proxies,
//! the canary endpoint) goes through here, binds where it is told
//! (127.0.0.1 by default) and stops when its handle is shut down or
//! dropped with the run. A hostile or careless client cannot exhaust it
//! ([`Limits`]):
//!
//! - at most [`MAX_CONNECTIONS`] connections are served at once; one more
//!   is answered `503` at once and closed, and counted
//!   ([`ConnectionStats::refused`]);
//! - a connection must send a request's headers within
//!   [`HEADER_READ_TIMEOUT`] of being accepted or of its previous
//!   response (hyper's header-read timer also runs while a kept-alive
//!   connection waits idle for its next request: `proto/h1/conn.rs`
//!   starts it whenever the connection is ready to read a head), so idle,
//!   slowloris and abandoned connections are closed;
//! - a request body silent for [`BODY_READ_TIMEOUT`] between two frames
//!   is cut (the handler sees a body error);
//! - a client that reads nothing for [`WRITE_TIMEOUT`] while the server
//!   has bytes for it (a write that cannot progress that long) is
//!   disconnected, so its response's buffers and whatever feeds them (a
//!   proxy's upstream connection) are freed; counted
//!   ([`ConnectionStats::write_timeouts`]);
//! - each connection's kernel send buffer is fixed at [`SEND_BUFFER`]
//!   (Linux would let it grow to 4 MiB on loopback): what a client that
//!   reads nothing leaves written but unread is bounded there, and so is
//!   what a proxy relayed to it and keeps for a continuation (20 such
//!   clients held 75 MB of a proxy's memory with the kernel's default);
//! - on start, the process's soft open-file limit is raised to its hard
//!   limit, so the cap, not the descriptor table, decides.
//!
//! Each connection carries a [`ResetOnClose`] handle: a handler that arms
//! it makes the connection end with a TCP reset (`SO_LINGER` zero, set on
//! the stream itself when it is shut down or dropped) instead of an
//! orderly close. A flag costs a few bytes a connection, where a duplicate
//! of the descriptor for the handler cost a second open file per
//! connection: at 8,000 requests in flight that was 8,000 descriptors more.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Most connections served at once by one server: 16,384. Far above what
/// a run opens (a few hundred), below what the descriptor table of a
/// default Linux box holds after the soft limit is raised.
pub const MAX_CONNECTIONS: usize = 16_384;

/// Longest wait for a request's headers, on a new connection or an idle
/// kept-alive one: 60 s (twice the 30 s the harness's own clients keep an
/// idle connection, so a client never races the close).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest silence inside a request body: 30 s.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest time a write to a client may make no progress (the client reads
/// nothing and the socket's buffer is full): 30 s. Past it the connection
/// is closed.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the `503` to a connection beyond the cap may take to write.
const REFUSE_WRITE: Duration = Duration::from_secs(1);

/// The answer to a connection beyond the cap.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 123\r\n\r\n{\"error\":{\"message\":\"too many open connections to this server; retry later\",\"type\":\"server_error\",\"code\":\"connection_cap\"}}";

/// The bounds a server keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most connections served at once.
    pub max_connections: usize,
    /// Longest wait for a request's headers (idle keep-alive included).
    pub header_read_timeout: Duration,
    /// Longest silence inside a request body.
    pub body_read_timeout: Duration,
    /// Longest time a write to the client may make no progress.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: MAX_CONNECTIONS,
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
            write_timeout: WRITE_TIMEOUT,
        }
    }
}

/// The kernel send buffer asked for every accepted connection, in bytes.
/// Linux caps the request at `net.core.wmem_max` (212,992 by default) and
/// doubles it for its bookkeeping, so about 416 KiB by default; setting it
/// turns autotuning off for the socket. Far above what a response needs to
/// flow at loopback speed (a 1.2 GB stream goes through in seconds), far
/// below the 4 MiB autotuning would reach for a client that reads
/// nothing; a client far away is limited to that much in flight per round
/// trip, which a streamed answer never nears.
pub const SEND_BUFFER: usize = 256 * 1024;

/// Connection counters of one server, for `/metrics`.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    accepted: AtomicU64,
    refused: AtomicU64,
    open: AtomicU64,
    write_timeouts: AtomicU64,
}

impl ConnectionStats {
    /// Connections served (accepted within the cap) so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Connections answered `503` because the cap was reached.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Connections open now.
    pub fn open(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Connections closed because the client read nothing for the write
    /// timeout ([`Limits::write_timeout`]).
    pub fn write_timeouts(&self) -> u64 {
        self.write_timeouts.load(Ordering::Relaxed)
    }
}

/// A running server. Dropping the handle stops it.
#[derive(Debug)]
pub struct ServerHandle {
    /// The address it is listening on (the real port when bound to port 0).
    pub addr: SocketAddr,
    token: CancellationToken,
    task: Option<JoinHandle<()>>,
    stats: Arc<ConnectionStats>,
}

impl ServerHandle {
    /// Spawns a serving loop on `addr` (already bound) and returns its
    /// handle: `serving` gets the token that asks it to stop gracefully.
    pub fn spawn<F>(addr: SocketAddr, serving: impl FnOnce(CancellationToken) -> F) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let token = CancellationToken::new();
        let task = tokio::spawn(serving(token.clone()));
        ServerHandle {
            addr,
            token,
            task: Some(task),
            stats: Arc::default(),
        }
    }

    /// `http://ADDR`, for clients.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The server's connection counters.
    pub fn stats(&self) -> Arc<ConnectionStats> {
        self.stats.clone()
    }

    /// Stops accepting, lets in-flight requests end, and waits for it (at
    /// most one second, after which the serving loop is aborted; a
    /// connection still busy then ends on its own, when its request does).
    pub async fn shutdown(mut self) {
        self.token.cancel();
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(Duration::from_secs(1), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.token.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Connections a listener queues before it accepts them. Thousands of
/// requests start at once at scale (8,000 conversations against one
/// gateway): with tokio's default of 1,024 the kernel dropped the
/// connections past it, and their retried handshakes, a second or more
/// later, turned into timeouts. The kernel caps it at
/// `net.core.somaxconn` (4,096 on common systems).
pub const LISTEN_BACKLOG: u32 = 16_384;

/// Binds `addr` with a backlog of [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`,
/// as tokio's own bind), with an error that says what to do when it
/// cannot.
///
/// # Errors
/// When the address cannot be bound (in use, not local, no permission).
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    raise_open_file_limit();
    let listen = || {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(LISTEN_BACKLOG)
    };
    listen().map_err(|e: std::io::Error| {
        std::io::Error::new(
            e.kind(),
            format!("cannot listen on {addr}: {e}; choose a free port"),
        )
    })
}

/// Raises the soft open-file limit to the hard one (once is enough; a
/// failure leaves the limit as it was).
fn raise_open_file_limit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rlimit::increase_nofile_limit(u64::MAX);
    });
}

/// Binds `addr` and serves `router` on it with the default [`Limits`]
/// until the handle is shut down. Accepted connections have `TCP_NODELAY`
/// set.
///
/// # Errors
/// When the address cannot be bound (in use, not local, no permission).
pub async fn serve(addr: SocketAddr, router: Router) -> std::io::Result<ServerHandle> {
    serve_with(addr, router, Limits::default(), |_, _| ()).await
}

/// As [`serve`], with `limits`, and `info` made from each accepted
/// connection and its [`ResetOnClose`] handle, handed to its requests as
/// [`ConnectInfo`] (e.g. the handle a fault arms to reset the connection).
///
/// # Errors
/// When the address cannot be bound (in use, not local, no permission).
pub async fn serve_with<I>(
    addr: SocketAddr,
    router: Router,
    limits: Limits,
    info: fn(&TcpStream, &ResetOnClose) -> I,
) -> std::io::Result<ServerHandle>
where
    I: Clone + Send + Sync + 'static,
{
    let listener = bind(addr).await?;
    let addr = listener.local_addr()?;
    let stats = Arc::new(ConnectionStats::default());
    let counters = stats.clone();
    let mut handle = ServerHandle::spawn(addr, move |stop| {
        accept_loop(listener, router, limits, info, counters, stop)
    });
    handle.stats = stats;
    Ok(handle)
}

async fn accept_loop<I>(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    info: fn(&TcpStream, &ResetOnClose) -> I,
    stats: Arc<ConnectionStats>,
    stop: CancellationToken,
) where
    I: Clone + Send + Sync + 'static,
{
    let router = router.layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
        limits.body_read_timeout,
    ));
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(_) => {
                // Out of descriptors or a connection gone before accept:
                // a short pause instead of a busy loop, then on.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let _ = socket2::SockRef::from(&tcp).set_send_buffer_size(SEND_BUFFER);
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            stats.refused.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(refuse(tcp));
            continue;
        };
        stats.accepted.fetch_add(1, Ordering::Relaxed);
        stats.open.fetch_add(1, Ordering::Relaxed);
        let reset = ResetOnClose::default();
        let connection = ConnectInfo(info(&tcp, &reset));
        let tcp = Resettable {
            tcp,
            reset,
            write_timeout: limits.write_timeout,
            stalled: None,
            stats: stats.clone(),
        };
        let router = router.clone();
        let stop = stop.clone();
        let stats = stats.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request: http::Request<_>| {
                request.extensions_mut().insert(connection.clone());
                let mut router = router.clone();
                async move {
                    tower::Service::call(&mut router, request.map(axum::body::Body::new)).await
                }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout);
            let conn = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            stats.open.fetch_sub(1, Ordering::Relaxed);
            drop(slot);
        });
    }
}

/// A handle on one accepted connection: armed, the connection ends with a
/// reset (RST) instead of an orderly close when it is closed.
#[derive(Debug, Clone, Default)]
pub struct ResetOnClose(Arc<AtomicBool>);

impl ResetOnClose {
    /// Makes the connection end with a reset when it is closed.
    pub fn arm(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn armed(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// An accepted connection whose close is a reset once its handle is armed,
/// and whose writes fail once one has made no progress for the write
/// timeout.
struct Resettable {
    tcp: TcpStream,
    reset: ResetOnClose,
    write_timeout: Duration,
    /// Running while a write waits on a full socket buffer.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    stats: Arc<ConnectionStats>,
}

impl Resettable {
    /// After a write that returned `Pending`: starts the write timer (once
    /// per stall) and fails the write when it has run out.
    fn stall<T>(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<T>> {
        let limit = self.write_timeout;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                self.stalled = None;
                self.stats.write_timeouts.fetch_add(1, Ordering::Relaxed);
                Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the client read nothing for {} ms (the write timeout)",
                        limit.as_millis()
                    ),
                )))
            }
        }
    }

    /// A write's result, with the write timer kept: progress stops it.
    fn timed<T>(
        &mut self,
        polled: Poll<std::io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<T>> {
        match polled {
            Poll::Pending => self.stall(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }

    fn linger_if_armed(&self) {
        if self.reset.armed() {
            let _ = self.tcp.set_zero_linger();
        }
    }
}

impl Drop for Resettable {
    fn drop(&mut self) {
        self.linger_if_armed();
    }
}

impl AsyncRead for Resettable {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Resettable {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.tcp).poll_write(cx, buf);
        self.timed(polled, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs);
        self.timed(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.linger_if_armed();
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// Answers a connection beyond the cap with a `503` and closes it.
async fn refuse(mut tcp: TcpStream) {
    let _ = tokio::time::timeout(REFUSE_WRITE, async {
        let _ = tcp.write_all(REFUSED).await;
        let _ = tcp.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests;
