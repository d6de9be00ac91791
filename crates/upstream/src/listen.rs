//! Serving a simulated upstream with a handle on each connection's socket,
//! so that a scripted fault can reset a connection for real (a TCP RST
//! before any byte of a response) instead of merely closing it.
//!
//! Each accepted connection is a [`Stream`]: the TCP stream and a flag the
//! handler can raise through the connection's [`Socket`] (carried to it as
//! connection info). When the connection is closed with the flag up,
//! `SO_LINGER` is set to zero first, so the kernel answers the close with
//! a reset; nothing else about the connection changes. The flag costs a
//! few bytes a connection, where a duplicate of the descriptor (the way
//! this was done before) cost a second open file per connection: at 8,000
//! requests in flight that was 8,000 descriptors more in the harness.

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use axum::Router;
use cb_wire::server::ServerHandle;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// A handle on one accepted connection (`None` for a connection accepted
/// some other way, which cannot be reset).
#[derive(Debug, Clone)]
pub struct Socket(Option<Arc<AtomicBool>>);

impl Socket {
    /// Makes the connection end with a reset (RST) instead of an orderly
    /// close when it is closed. Returns whether that could be arranged.
    pub fn reset_on_close(&self) -> bool {
        self.0.as_ref().is_some_and(|flag| {
            flag.store(true, Ordering::Relaxed);
            true
        })
    }
}

/// An accepted connection whose close can be made a reset.
#[derive(Debug)]
pub struct Stream {
    tcp: TcpStream,
    reset: Arc<AtomicBool>,
}

impl Stream {
    /// `SO_LINGER` zero when the handler asked for a reset, so that the
    /// close is one.
    fn linger_if_asked(&self) {
        if self.reset.load(Ordering::Relaxed) {
            let _ = socket2::SockRef::from(&self.tcp).set_linger(Some(Duration::ZERO));
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.linger_if_asked();
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.linger_if_asked();
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// A TCP listener whose connections are [`Stream`]s (accept errors are
/// handled as axum handles them for a plain listener).
#[derive(Debug)]
pub struct ResettableListener(TcpListener);

impl Listener for ResettableListener {
    type Io = Stream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (tcp, addr) = Listener::accept(&mut self.0).await;
        // Small exchanges on kept-alive connections must not wait for
        // Nagle's algorithm (as every server of the harness does).
        let _ = tcp.set_nodelay(true);
        let stream = Stream {
            tcp,
            reset: Arc::new(AtomicBool::new(false)),
        };
        (stream, addr)
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

impl Connected<IncomingStream<'_, ResettableListener>> for Socket {
    fn connect_info(stream: IncomingStream<'_, ResettableListener>) -> Self {
        Socket(Some(Arc::clone(&stream.io().reset)))
    }
}

/// Binds `addr` and serves `router` with a [`Socket`] per connection until
/// the handle is shut down.
///
/// # Errors
/// When the address cannot be bound (in use, not local, no permission).
pub async fn serve(addr: SocketAddr, router: Router) -> std::io::Result<ServerHandle> {
    let listener = cb_wire::server::bind(addr).await?;
    let addr = listener.local_addr()?;
    let listener = ResettableListener(listener);
    Ok(ServerHandle::spawn(addr, |stop| async move {
        let service = router.into_make_service_with_connect_info::<Socket>();
        let _ = axum::serve(listener, service)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    }))
}
