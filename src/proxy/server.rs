//! The proxy HTTP server.

use super::ProxyConfig;
use crate::server::ServerHandle;
use axum::Router;
use std::net::SocketAddr;

/// State of one proxy.
#[derive(Debug, Clone)]
pub struct ProxyState {
    /// Its configuration.
    pub config: ProxyConfig,
}

/// The router of a proxy.
pub fn router(_state: ProxyState) -> Router {
    todo!()
}

/// Starts a proxy on `listen`.
pub async fn spawn(_listen: SocketAddr, _config: ProxyConfig) -> std::io::Result<ServerHandle> {
    todo!()
}
