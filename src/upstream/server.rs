//! The upstream HTTP server.

use super::UpstreamContext;
use crate::faults::Role;
use crate::server::ServerHandle;
use axum::Router;
use std::net::SocketAddr;

/// State of one upstream.
#[derive(Debug, Clone)]
pub struct UpstreamState {
    /// System the upstream belongs to.
    pub system: String,
    /// Primary or fallback.
    pub role: Role,
    /// What all upstreams share.
    pub ctx: UpstreamContext,
}

/// The router of one upstream.
pub fn router(_state: UpstreamState) -> Router {
    todo!()
}

/// A running pair.
#[derive(Debug)]
pub struct UpstreamPair {
    /// The primary.
    pub primary: ServerHandle,
    /// The fallback.
    pub fallback: ServerHandle,
}

/// Starts a pair for `system`.
pub async fn start_pair(
    _system: &str,
    _primary: SocketAddr,
    _fallback: SocketAddr,
    _ctx: UpstreamContext,
) -> std::io::Result<UpstreamPair> {
    todo!()
}
