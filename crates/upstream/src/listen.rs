//! Serving a simulated upstream with a handle on each connection's socket,
//! so that a scripted fault can reset a connection for real (a TCP RST
//! before any byte of a response) instead of merely closing it.
//!
//! Each accepted connection gets a [`Socket`]: a duplicate of its file
//! descriptor, carried to the handler as connection info. Setting
//! `SO_LINGER` to zero on it makes the kernel answer the close of the
//! connection with a reset; nothing else about the connection changes.

use axum::Router;
use cb_wire::server::{Limits, ServerHandle};
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

/// A handle on one accepted connection's socket (a duplicated descriptor;
/// `None` when the descriptor could not be duplicated).
#[derive(Debug, Clone)]
pub struct Socket(Option<Arc<OwnedFd>>);

impl Socket {
    /// Makes the connection end with a reset (RST) instead of an orderly
    /// close when it is closed. Returns whether that could be arranged.
    pub fn reset_on_close(&self) -> bool {
        self.0.as_ref().is_some_and(|fd| {
            socket2::SockRef::from(fd.as_ref())
                .set_linger(Some(Duration::ZERO))
                .is_ok()
        })
    }
}

impl Socket {
    /// The handle on an accepted connection.
    fn of(tcp: &TcpStream) -> Self {
        Socket(tcp.as_fd().try_clone_to_owned().ok().map(Arc::new))
    }
}

/// Binds `addr` and serves `router` with a [`Socket`] per connection until
/// the handle is shut down, within the server's [`Limits`] (a connection
/// cap, header-read and body timeouts: [`cb_wire::server`]).
///
/// # Errors
/// When the address cannot be bound (in use, not local, no permission).
pub async fn serve(addr: SocketAddr, router: Router) -> std::io::Result<ServerHandle> {
    cb_wire::server::serve_with(addr, router, Limits::default(), Socket::of).await
}
