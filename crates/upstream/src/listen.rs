//! Serving a simulated upstream with a handle on each connection's socket,
//! so that a scripted fault can reset a connection for real (a TCP RST
//! before any byte of a response) instead of merely closing it.
//!
//! Each accepted connection gets a [`Socket`]: the server's
//! [`ResetOnClose`] handle on it, carried to the handler as connection
//! info. Armed, it makes the close of the connection a reset (`SO_LINGER`
//! zero); nothing else about the connection changes, and it costs no
//! second descriptor (a duplicate of each connection's descriptor did:
//! 8,000 more open files at 8,000 requests in flight).

use axum::Router;
use cb_wire::server::{Limits, ResetOnClose, ServerHandle};
use std::net::SocketAddr;
use tokio::net::TcpStream;

/// A handle on one accepted connection.
#[derive(Debug, Clone)]
pub struct Socket(ResetOnClose);

impl Socket {
    /// Makes the connection end with a reset (RST) instead of an orderly
    /// close when it is closed. Returns whether that could be arranged.
    pub fn reset_on_close(&self) -> bool {
        self.0.arm();
        true
    }
}

impl Socket {
    /// The handle on an accepted connection.
    fn of(_: &TcpStream, reset: &ResetOnClose) -> Self {
        Socket(reset.clone())
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
