//! A pooled keep-alive connection the upstream had already closed: the
//! request went out on it, and the upstream's end of the connection was
//! gone (it closes idle connections, or restarted), so it read end of file
//! before any byte of a response. That request never reached the upstream
//! as a request, and another connection would have carried it: the proxy
//! sends it again, once, on a fresh connection ([`Clients::send`]), and
//! counts it (`continuity_proxy_stale_connection_retries_total`). hyper
//! already resends a request the pool knew to be closed before writing it
//! (`retry_canceled_requests`); this is the case it cannot know: the close
//! arrived while the request was being written.
//!
//! Only that shape is retried: the connection closed cleanly (end of file,
//! hyper's `IncompleteMessage`) with no response byte. A reset, a refused
//! or failed connection, a timeout, or any response at all is the
//! upstream's answer, and goes to the failover as before.

use reqwest::{Client, RequestBuilder, Response};
use std::error::Error as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The upstream clients: `pooled` for every request, `fresh` (no idle
/// connection kept) for the one resend after a stale connection.
#[derive(Debug, Clone)]
pub struct Clients {
    /// Keeps idle connections per upstream.
    pub pooled: Client,
    /// Opens a new connection for every request.
    pub fresh: Client,
    /// Requests sent again on a fresh connection.
    resent: Arc<AtomicU64>,
}

impl Clients {
    /// Both clients, from the one hardened builder.
    ///
    /// # Errors
    /// When a client cannot be built.
    pub fn new(pooled: Client, fresh: reqwest::ClientBuilder) -> Result<Self, reqwest::Error> {
        Ok(Clients {
            pooled,
            fresh: fresh.pool_max_idle_per_host(0).build()?,
            resent: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Requests sent again on a fresh connection so far.
    pub fn resent(&self) -> u64 {
        self.resent.load(Ordering::Relaxed)
    }

    /// Sends the request `build` makes with the pooled client; when the
    /// connection it went out on turns out closed before any response
    /// byte ([`stale`]), builds it again with the fresh client and sends
    /// that, once.
    ///
    /// # Errors
    /// The error of the last send.
    pub async fn send(
        &self,
        build: impl Fn(&Client) -> RequestBuilder,
    ) -> Result<Response, reqwest::Error> {
        match build(&self.pooled).send().await {
            Err(e) if stale(&e) => {
                self.resent.fetch_add(1, Ordering::Relaxed);
                build(&self.fresh).send().await
            }
            other => other,
        }
    }
}

/// Whether `e` is a connection that closed cleanly before any byte of a
/// response: not a timeout, not a failure to connect, and hyper's
/// `IncompleteMessage` somewhere in its causes.
pub fn stale(e: &reqwest::Error) -> bool {
    if e.is_timeout() || e.is_connect() {
        return false;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = e.source();
    while let Some(c) = cause {
        if c.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
        {
            return true;
        }
        cause = c.source();
    }
    false
}
