//! The benchmark's running system and its clients: an upstream pair and a
//! reference proxy in front of it, started where the case places them,
//! checked after the run (every request a plain success through the
//! primary), and the two keep-alive connections of each client, one
//! straight to the upstream and one to the proxy, built the same way.

use super::{NO_FAULT, REQUEST_TIMEOUT, SEED};
use anyhow::{bail, ensure, Context};
use bytes::Bytes;
use continuity_bench::dataset::{Conversation, Dataset};
use continuity_bench::faults::{FaultPlan, FaultProfile, Role};
use continuity_bench::proxy::events::MEMORY_CAP;
use continuity_bench::proxy::{ProxyConfig, ProxyMode, ProxyState};
use continuity_bench::server::ServerHandle;
use continuity_bench::upstream::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;
use tokio::net::TcpStream;
use tokio::runtime::Handle;

/// The benchmark's running system: an upstream pair and a proxy in front
/// of it. Clients open their own [`Paths`].
pub struct Bench {
    ctx: UpstreamContext,
    _upstreams: continuity_bench::upstream::UpstreamPair,
    proxy: ServerHandle,
    proxy_state: ProxyState,
    direct: SocketAddr,
}

impl Bench {
    /// Starts the upstreams on the current runtime and the proxy on
    /// `proxy_runtime` (which may be the same).
    pub async fn start(
        dataset: &Dataset,
        latency: LatencyProfile,
        proxy_runtime: &Handle,
    ) -> anyhow::Result<Self> {
        let profile = FaultProfile::parse(NO_FAULT, "benches/proxy_overhead/main.rs")?;
        let turns = dataset.conversations.iter().map(Conversation::n_turns);
        let plan = FaultPlan::new(profile, SEED, turns.collect());
        let ctx = UpstreamContext::new(
            plan,
            ConversationIndex::of_dataset(dataset),
            latency,
            SEED,
            1,
        );
        let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let upstreams = start_pair("bench", local, local, ctx.clone()).await?;
        let config = ProxyConfig::new(
            ProxyMode::History,
            upstreams.primary.url(),
            upstreams.fallback.url(),
        );
        let (proxy, proxy_state) = proxy_runtime
            .spawn(continuity_bench::proxy::spawn(local, config))
            .await??;
        Ok(Bench {
            direct: upstreams.primary.addr,
            ctx,
            _upstreams: upstreams,
            proxy,
            proxy_state,
        })
    }

    /// A keep-alive connection to the upstream and one to the proxy.
    pub async fn paths(&self) -> anyhow::Result<Paths> {
        Ok(Paths {
            direct: Conn::open(self.direct).await?,
            proxy: Conn::open(self.proxy.addr).await?,
        })
    }

    /// Checks that every request was a plain success through the primary:
    /// `proxied` proxy requests, each with reason `none` (the proxy keeps
    /// the latest [`MEMORY_CAP`] events in memory), and `total` upstream
    /// attempts, all at the primary and all `ok`.
    pub async fn check_and_stop(self, proxied: usize, total: usize) -> anyhow::Result<()> {
        let events = self.proxy_state.take_events();
        let kept = proxied.min(MEMORY_CAP);
        ensure!(
            events.len() == kept,
            "the proxy kept {} events, expected {kept} of {proxied}",
            events.len()
        );
        if let Some(e) = events.iter().find(|e| {
            e.reason != continuity_bench::proxy::events::SwitchReason::None || e.status != 200
        }) {
            bail!("a proxied request did not succeed through the primary: {e:?}");
        }
        let attempts = self.ctx.log.snapshot();
        ensure!(
            attempts.len() == total,
            "the upstreams logged {} attempts, expected {total}",
            attempts.len()
        );
        if let Some(a) = attempts.iter().find(|a| {
            a.role != Role::Primary
                || a.action != continuity_bench::record::AttemptAction::Ok
                || a.status != Some(200)
        }) {
            bail!("an upstream attempt was not a plain primary success: {a:?}");
        }
        self.proxy.shutdown().await;
        Ok(())
    }
}

/// One client's two paths: a connection straight to the upstream and one
/// to the proxy, built the same way.
pub struct Paths {
    direct: Conn,
    proxy: Conn,
}

impl Paths {
    /// Sends `body` on one path; returns the latency (ms) and the body.
    pub async fn send(&mut self, via_proxy: bool, body: &Bytes) -> anyhow::Result<(f64, Bytes)> {
        let conn = if via_proxy {
            &mut self.proxy
        } else {
            &mut self.direct
        };
        let start = Instant::now();
        let (status, bytes) = tokio::time::timeout(REQUEST_TIMEOUT, conn.post(body.clone()))
            .await
            .context("no answer within the request deadline")??;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        ensure!(
            status.is_success(),
            "{} answered {status}: {}",
            if via_proxy {
                "the proxy"
            } else {
                "the upstream"
            },
            String::from_utf8_lossy(&bytes)
        );
        Ok((ms, bytes))
    }
}

/// A keep-alive HTTP/1.1 client connection, driven by the task that sends
/// on it: the client side adds no task hop and no pool, so the measurement
/// is the servers', and the load it puts on the 2 cores is small.
struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    connection: hyper::client::conn::http1::Connection<TokioIo<TcpStream>, Full<Bytes>>,
    host: String,
}

impl Conn {
    async fn open(addr: SocketAddr) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(addr)
            .await
            .with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        Ok(Conn {
            sender,
            connection,
            host: addr.to_string(),
        })
    }

    /// POSTs `body` to `/v1/chat/completions`; returns status and body.
    async fn post(&mut self, body: Bytes) -> anyhow::Result<(hyper::StatusCode, Bytes)> {
        let request = hyper::Request::post("/v1/chat/completions")
            .header(hyper::header::HOST, self.host.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body))?;
        let sender = &mut self.sender;
        let exchange = async move {
            sender.ready().await?;
            let response = sender.send_request(request).await?;
            let status = response.status();
            let bytes = response.into_body().collect().await?.to_bytes();
            anyhow::Ok((status, bytes))
        };
        tokio::select! {
            biased;
            result = exchange => result,
            closed = &mut self.connection => {
                closed?;
                bail!("the server closed the connection")
            }
        }
    }
}
