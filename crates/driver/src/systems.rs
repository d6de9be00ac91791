//! Starting the systems under test, shared by every suite: an upstream
//! pair and a reference proxy per built-in system, an upstream pair per
//! external gateway, and the preflight request that proves each one
//! answers before the work starts.

use crate::spec::{SystemsConfig, FALLBACK_MODEL};
use anyhow::Context;
use cb_client::{send, SendOptions, SystemKind, Target};
use cb_proxy::{self, ProxyBehaviour, ProxyConfig, ProxyMode};
use cb_upstream::{self, UpstreamContext, UpstreamPair};
use cb_wire::server::ServerHandle;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

/// The system prompt every driver request starts with.
pub const SYSTEM_PROMPT: &str = "You are a helpful assistant. Answer briefly.";

/// Deadline of one preflight request.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(10);

/// What starting the systems under test takes, from `run` or `semantics`.
#[derive(Debug, Clone, Copy)]
pub struct SystemsSpec<'a> {
    /// Which systems.
    pub systems: &'a SystemsConfig,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Overall deadline of the built-in proxies.
    pub request_timeout: Duration,
    /// Master seed (the built-in proxies' backoff jitter derives from it).
    pub seed: u64,
    /// The API the driver speaks; the preflight speaks it too.
    pub api: cb_client::Api,
}

/// How the built-in reference proxies are configured beyond the spec: the
/// behaviour every proxy gets ([`ProxyBehaviour`], defaults as the `proxy`
/// command documents them) and, when set, a larger-context route on each
/// system's own fallback upstream with this model id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuiltinProxyOptions {
    /// Retries, stream limits, continuation and what the fallback needs.
    pub behaviour: ProxyBehaviour,
    /// Route `context_length_exceeded` to the system's fallback upstream
    /// with this model id.
    pub context_model_on_fallback: Option<String>,
}

impl BuiltinProxyOptions {
    /// The built-in proxies of `run`: the documented defaults without the
    /// same-route retry. A run's planned fault hits every primary attempt
    /// of its turn, so a retry could only add an attempt and its wait
    /// before the same failover; without it a run's attempts, latencies
    /// and retry-storm figures stay comparable with earlier reports.
    pub fn for_run() -> Self {
        BuiltinProxyOptions {
            behaviour: ProxyBehaviour {
                same_route_retries: 0,
                ..ProxyBehaviour::default()
            },
            context_model_on_fallback: None,
        }
    }
}

/// The systems under test, started, with the servers kept alive until this
/// is dropped.
pub struct Systems {
    /// Where to send each system's requests, in start order.
    pub targets: Vec<Target>,
    pairs: Vec<UpstreamPair>,
    proxies: Vec<ServerHandle>,
}

impl Systems {
    /// Starts an upstream pair (serving `ctx`) and a reference proxy per
    /// built-in system, an upstream pair per external gateway, and sends
    /// each system a preflight request with `client`.
    ///
    /// # Errors
    /// A server that cannot start, or a system that does not answer its
    /// preflight (with the configuration a gateway must have).
    pub async fn start(
        spec: SystemsSpec<'_>,
        ctx: &UpstreamContext,
        client: &reqwest::Client,
    ) -> anyhow::Result<Self> {
        Self::start_with(spec, &BuiltinProxyOptions::for_run(), ctx, client).await
    }

    /// As [`Systems::start`], with the built-in proxies configured by
    /// `builtin`.
    ///
    /// # Errors
    /// As [`Systems::start`].
    pub async fn start_with(
        spec: SystemsSpec<'_>,
        builtin: &BuiltinProxyOptions,
        ctx: &UpstreamContext,
        client: &reqwest::Client,
    ) -> anyhow::Result<Self> {
        let mut systems = Systems {
            targets: Vec::new(),
            pairs: Vec::new(),
            proxies: Vec::new(),
        };
        if spec.systems.builtin {
            start_builtin(&spec, builtin, ctx, &mut systems).await?;
        }
        start_gateways(&spec, ctx, &mut systems).await?;
        for target in &systems.targets {
            let wait = match target.kind {
                SystemKind::Gateway => spec.systems.gateway_wait,
                SystemKind::Builtin(_) => Duration::ZERO,
            };
            let options = spec.systems.send_options(PREFLIGHT_TIMEOUT);
            preflight(
                client,
                target,
                target.model(&spec.systems.model),
                spec.api,
                options,
                wait,
            )
            .await
            .map_err(|e| match gateway_hint(&spec, target) {
                Some(hint) => e.context(hint),
                None => e,
            })?;
        }
        Ok(systems)
    }

    /// Stops every server at once (each lets its requests end, at most a
    /// second): the proxies, whose pools of connections to the upstreams go
    /// with them, and the upstreams. What their connections held is freed
    /// as each one ends.
    pub async fn shutdown(self) {
        let proxies =
            futures::future::join_all(self.proxies.into_iter().map(ServerHandle::shutdown));
        let pairs = futures::future::join_all(self.pairs.into_iter().map(UpstreamPair::shutdown));
        futures::future::join(proxies, pairs).await;
    }

    /// Each system's upstream ports (primary, fallback), in the order of
    /// [`Systems::targets`]: what a gateway that names the upstream it
    /// used (`x-litellm-model-api-base`) is held to.
    pub fn upstream_ports(&self) -> Vec<(u16, u16)> {
        self.pairs
            .iter()
            .map(|p| (p.primary.addr.port(), p.fallback.addr.port()))
            .collect()
    }

    /// The systems' names, in start order.
    pub fn names(&self) -> Vec<String> {
        self.targets.iter().map(|t| t.name.clone()).collect()
    }
}

/// Starts an upstream pair and a proxy for each built-in system.
async fn start_builtin(
    config: &SystemsSpec<'_>,
    builtin: &BuiltinProxyOptions,
    ctx: &UpstreamContext,
    systems: &mut Systems,
) -> anyhow::Result<()> {
    let local: SocketAddr = ([127, 0, 0, 1], 0).into();
    for mode in ProxyMode::ALL {
        let name = mode.as_str();
        let pair = cb_upstream::start_pair(name, local, local, ctx.clone())
            .await
            .with_context(|| format!("cannot start the simulated upstreams of {name}"))?;
        let mut proxy_config = ProxyConfig::new(mode, pair.primary.url(), pair.fallback.url());
        proxy_config.fallback_model = Some(FALLBACK_MODEL.to_string());
        proxy_config.attempt_timeout = config.attempt_timeout;
        proxy_config.deadline = config.request_timeout;
        proxy_config.seed = cb_base::seed::derive(config.seed, "proxy", mode as u64);
        proxy_config.behaviour = builtin.behaviour.clone();
        proxy_config.behaviour.fallback_dialect = config.systems.fallback_dialect;
        if let Some(model) = &builtin.context_model_on_fallback {
            proxy_config.behaviour.context_fallback = Some(pair.fallback.url());
            proxy_config.behaviour.context_model = Some(model.clone());
        }
        let (handle, _state) = cb_proxy::spawn(local, proxy_config)
            .await
            .with_context(|| format!("cannot start the {name} reference proxy"))?;
        systems.targets.push(Target {
            name: name.to_string(),
            kind: SystemKind::Builtin(mode),
            url: handle.url(),
            headers: Vec::new(),
            model: None,
        });
        systems.pairs.push(pair);
        systems.proxies.push(handle);
    }
    Ok(())
}

/// Starts an upstream pair on the documented ports for each external
/// gateway and prints where the gateway must send its traffic.
async fn start_gateways(
    config: &SystemsSpec<'_>,
    ctx: &UpstreamContext,
    systems: &mut Systems,
) -> anyhow::Result<()> {
    for gateway in &config.systems.gateways {
        let primary: SocketAddr = ([127, 0, 0, 1], gateway.primary_port).into();
        let fallback: SocketAddr = ([127, 0, 0, 1], gateway.fallback_port).into();
        let pair = cb_upstream::start_pair(&gateway.name, primary, fallback, ctx.clone()).await.with_context(|| {
            format!(
                "cannot start the upstreams of gateway {:?} on ports {} and {}; free them or choose others with \
                 --upstream-ports {}=PRIMARY,FALLBACK",
                gateway.name, gateway.primary_port, gateway.fallback_port, gateway.name
            )
        })?;
        cb_base::secret::eprintln!(
            "gateway {} at {}: primary upstream http://{}/v1, fallback upstream http://{}/v1, model {:?}",
            gateway.name, cb_base::url::display_url(&gateway.url), pair.primary.addr, pair.fallback.addr,
            gateway.model.as_deref().unwrap_or(&config.systems.model)
        );
        systems.targets.push(Target {
            name: gateway.name.clone(),
            kind: SystemKind::Gateway,
            url: gateway.url.clone(),
            headers: gateway.headers.clone(),
            model: gateway.model.clone(),
        });
        systems.pairs.push(pair);
    }
    Ok(())
}

/// What an external gateway must be configured to do, for error messages.
fn gateway_hint(config: &SystemsSpec<'_>, target: &Target) -> Option<String> {
    let g = config
        .systems
        .gateways
        .iter()
        .find(|g| g.name == target.name)?;
    Some(format!(
        "gateway {:?} must listen at {} and route model {:?} to the primary upstream http://127.0.0.1:{}/v1, \
         failing over to http://127.0.0.1:{}/v1 on 429, 5xx and timeouts (see examples/gateways/)",
        g.name, cb_base::url::display_url(&g.url), g.model.as_deref().unwrap_or(&config.systems.model),
        g.primary_port, g.fallback_port
    ))
}

/// Sends one request that matches no conversation and insists on a usable
/// answer, so that a system that is down or misconfigured stops the run
/// before it starts rather than scoring 0 %.
///
/// A gateway that is still starting gets `wait` to come up (retried every
/// half second). The reply is bounded and redacted as every exchange is.
async fn preflight(
    client: &reqwest::Client,
    target: &Target,
    model: &str,
    api: cb_client::Api,
    options: SendOptions,
    wait: Duration,
) -> anyhow::Result<()> {
    let request = cb_wire::openai::ChatRequest {
        model: model.to_string(),
        messages: vec![cb_wire::openai::ChatMessage::new(
            "user",
            "continuity-bench preflight: please reply.",
        )],
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    let give_up = Instant::now() + wait;
    let responses = cb_wire::responses::request_body(
        model,
        "",
        cb_wire::responses::input_items(&request.messages),
        None,
    );
    let (request, responses) = (&request, &responses);
    let send = |client, target| async move {
        match api {
            cb_client::Api::Chat => send(client, target, request, options).await,
            cb_client::Api::Responses => {
                cb_client::send_responses(client, target, responses, options).await
            }
        }
    };
    let mut reply = send(client, target).await;
    if let Some(error) = reply.error.as_deref().filter(|_| !wait.is_zero()) {
        // Said once, so that a wait of a minute is not a silent one.
        cb_base::secret::eprintln!(
            "system {:?} at {} did not answer yet ({error}); retrying for up to {} (--gateway-wait)",
            target.name,
            cb_base::url::display_url(&target.url),
            humantime::format_duration(wait)
        );
    }
    while reply.error.is_some() && Instant::now() < give_up {
        // A retry interval of the preflight, bounded by `give_up`: the answer decides.
        tokio::time::sleep(Duration::from_millis(500)).await;
        reply = send(client, target).await;
    }
    match reply.error {
        None => Ok(()),
        Some(error) => anyhow::bail!(
            "system {:?} at {} did not answer a preflight request: {error}. Check that it is running and \
             configured to use its upstreams, then run again.",
            target.name,
            cb_base::url::display_url(&target.url)
        ),
    }
}
