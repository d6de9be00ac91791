//! Serving an axum router on a bound address, with a handle that stops it.
//!
//! Every server the harness starts (simulated upstreams, reference proxies)
//! goes through here, binds where it is told (127.0.0.1 by default) and stops
//! when its handle is shut down or dropped with the run.

use axum::serve::ListenerExt;
use axum::Router;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A running server. Dropping the handle stops it.
#[derive(Debug)]
pub struct ServerHandle {
    /// The address it is listening on (the real port when bound to port 0).
    pub addr: SocketAddr,
    token: CancellationToken,
    task: Option<JoinHandle<()>>,
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
        }
    }

    /// `http://ADDR`, for clients.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets in-flight requests end, and waits for it (at
    /// most one second, after which the serving loop is aborted; a
    /// connection still busy then ends on its own, when its request does).
    pub async fn shutdown(mut self) {
        self.token.cancel();
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(std::time::Duration::from_secs(1), &mut task)
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

/// Binds `addr` and serves `router` on it until the handle is shut down.
/// Accepted connections have `TCP_NODELAY` set.
///
/// # Errors
/// When the address cannot be bound (in use, not local, no permission).
pub async fn serve(addr: SocketAddr, router: Router) -> std::io::Result<ServerHandle> {
    let listener = bind(addr).await?;
    let addr = listener.local_addr()?;
    Ok(ServerHandle::spawn(addr, |stop| async move {
        // Small request/response exchanges on kept-alive connections must
        // not wait for Nagle's algorithm.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let _ = axum::serve(listener, router.into_make_service())
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    }))
}
