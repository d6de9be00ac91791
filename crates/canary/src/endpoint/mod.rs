//! The built-in simulated OpenRouter-compatible endpoint, so that `canary`
//! runs anywhere with no key and no network: served on 127.0.0.1:0 by the
//! command when no `--endpoint` is given, and by tests.
//!
//! It speaks the two calls the canary makes, in OpenRouter's shapes:
//! `GET /models/{author}/{slug}/endpoints` (route discovery, [`discovery`])
//! and `POST /chat/completions` ([`chat`]), which honours
//! `provider.order`, `allow_fallbacks`, `only` and `ignore`, and names the
//! route that served in the top-level `provider` field, streamed and not.
//!
//! Its routes ([`routes`]) are seeded: most healthy, one prefixing junk in
//! about 19 of 20 replies, one mixing languages, one with a slow first
//! token, one breaking the schema, one that filters the roleplay probe (the
//! default positive control), one with frequent 429/5xx. Every degradation
//! is real bytes on the wire, made by the shared transforms of
//! `cb_degrade`; the endpoint decides from the request it
//! received (the route from `provider.order`, the probe from the content),
//! never from a field only the harness sends.
//!
//! Randomness comes from `cb_base::seed::rng` only, keyed by the master seed,
//! the route, what was asked, the round and the count of such requests to
//! the route in that round: the
//! command tells the endpoint which round it runs ([`SimEndpoint::begin_round`],
//! the endpoint's clock), so that a restarted canary sees the same replies
//! an uninterrupted one would, whatever the concurrency across routes.

pub mod chat;
pub mod discovery;
mod reply;
pub mod routes;
mod wire;

pub use routes::{Behaviour, SimRoute, DEFAULT_CONTROL};

use axum::routing::{get, post};
use axum::Router;
use cb_wire::server::ServerHandle;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Default time-to-first-token limit when probing the simulated endpoint
/// (a real endpoint gets the contract default, 10 s).
///
/// Chosen so that no verdict depends on how loaded the machine is: a
/// healthy simulated route sends its first token at once (a few
/// milliseconds, some tens on a loaded 2-core machine), far below 1 s;
/// the slow route sleeps twice the limit before its first token, and the
/// time measured by the prober can only be longer than the sleep, never
/// shorter. The price is the slow route's 2 s in every round.
pub const SIM_TTFT_LIMIT: Duration = Duration::from_secs(1);

/// How the simulated endpoint behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Master seed of every draw.
    pub seed: u64,
    /// The routes, in discovery order.
    pub routes: Vec<SimRoute>,
    /// How late the slow route sends its first content token (streams).
    pub slow_first_token: Duration,
    /// Share of requests, on every route, answered with a transport error
    /// (429, 500, 502, 503 or a held connection), drawn per request.
    pub transient_rate: f64,
    /// How long a simulated timeout holds the connection without a byte
    /// before answering 504 (the prober gives up at its deadline first).
    pub timeout_hold: Duration,
}

impl SimConfig {
    /// The seeded default routes, with the slow route's first token at
    /// twice `ttft_limit` and timeouts held for twice `probe_timeout`.
    pub fn new(seed: u64, ttft_limit: Duration, probe_timeout: Duration) -> Self {
        SimConfig {
            seed,
            routes: routes::default_routes(),
            slow_first_token: ttft_limit.saturating_mul(2),
            transient_rate: 0.0,
            timeout_hold: probe_timeout.saturating_mul(2),
        }
    }

    /// The route with tag `tag`.
    pub fn route(&self, tag: &str) -> Option<&SimRoute> {
        self.routes.iter().find(|r| r.tag == tag)
    }
}

/// The endpoint's shared state: its configuration and its clock.
#[derive(Debug)]
pub struct SimState {
    config: SimConfig,
    round: AtomicU64,
    counters: Mutex<HashMap<(String, String), u64>>,
}

impl SimState {
    /// A state at round 0.
    pub fn new(config: SimConfig) -> Self {
        SimState {
            config,
            round: AtomicU64::new(0),
            counters: Mutex::new(HashMap::new()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The round the endpoint is in.
    pub fn round(&self) -> u64 {
        self.round.load(Ordering::SeqCst)
    }

    /// Starts round `round`: every route's request count starts again.
    pub fn begin_round(&self, round: u64) {
        self.round.store(round, Ordering::SeqCst);
        self.counters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The generator of the next request `route` answers this round with
    /// content `key` (what was asked: see [`chat::request_key`]). Keyed by
    /// content as well as route, so that the probes of one route, sent at
    /// once and arriving in any order, each get the same draws every time.
    pub fn draw(&self, route: &str, key: &str) -> ChaCha8Rng {
        let round = self.round.load(Ordering::SeqCst);
        let index = {
            let mut counters = self.counters.lock().unwrap_or_else(|e| e.into_inner());
            let n = counters
                .entry((route.to_string(), key.to_string()))
                .or_insert(0);
            let index = *n;
            *n += 1;
            index
        };
        cb_base::seed::rng(
            self.config.seed,
            &format!("canary-sim/{route}/{key}"),
            round.saturating_mul(1 << 20).saturating_add(index),
        )
    }
}

/// The endpoint's routes on `state`.
pub fn router(state: Arc<SimState>) -> Router {
    Router::new()
        .route(
            "/models/{author}/{slug}/endpoints",
            get(discovery::endpoints),
        )
        .route("/chat/completions", post(chat::completions))
        .with_state(state)
}

/// A running simulated endpoint.
#[derive(Debug)]
pub struct SimEndpoint {
    server: ServerHandle,
    state: Arc<SimState>,
}

impl SimEndpoint {
    /// Serves `config` on 127.0.0.1 at a free port.
    ///
    /// # Errors
    /// When no local port can be bound.
    pub async fn start(config: SimConfig) -> std::io::Result<Self> {
        let state = Arc::new(SimState::new(config));
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let server = cb_wire::server::serve(addr, router(state.clone())).await?;
        Ok(SimEndpoint { server, state })
    }

    /// The base URL, as `--endpoint` takes it (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Tells the endpoint which round the canary runs next.
    pub fn begin_round(&self, round: u64) {
        self.state.begin_round(round);
    }

    /// The configuration served.
    pub fn config(&self) -> &SimConfig {
        self.state.config()
    }

    /// Stops the server.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

#[cfg(test)]
mod tests;
