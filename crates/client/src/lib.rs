//! The client side of every exchange with a system under test, shared by
//! the driver, the catalogue and the canary: who a system is ([`Target`]),
//! the one hardened HTTP client builder of the workspace ([`hardened`]: no
//! proxy from the environment, no redirects), and one chat-completions
//! exchange with a deadline ([`send`]): what came back, when its first byte
//! and (for a stream) its first content token arrived, and the reason there
//! is no usable answer when there is none. A request with `stream: true` is
//! read as server-sent events ([`sse`]), chunk by chunk, to the end. Plain
//! `http://` systems go through bare connections ([`plain`]), the least
//! memory a request in flight can hold; `room` is the shared memory bound
//! for large bodies.
//!
//! A system under test may be hostile, so the exchange is bounded: a
//! redirect is not followed (it is an error naming the status and the
//! `Location`), a body larger than [`SendOptions::max_response_bytes`] is an
//! error and is not read further (the connection is dropped), and
//! everything read is redacted ([`cb_base::secret::redact`]) before it is
//! kept or cut into an excerpt, so an echoed header value never gets past
//! this crate.

mod encoding;
pub mod plain;
mod room;
pub use cb_wire::sse;

use anyhow::Context as _;
use cb_base::reference::ProxyMode;
use cb_base::secret::{redact, redact_owned, Secret};
use cb_wire::content::content_text;
use cb_wire::openai::ChatRequest;
use encoding::{DecodeError, Decoder, Encoding};
use plain::{Address, Connection, PlainPool};
use room::{reserve_large, Room, SMALL_BODY};
use serde_json::Value;
use sse::{assemble, Assembled, StreamTrace, TraceReader};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

pub use cb_wire::DEFAULT_MAX_RESPONSE_BYTES;

/// How one exchange is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendOptions {
    /// Deadline of the whole exchange: request sent to last byte read.
    pub deadline: Duration,
    /// Largest response body read; a larger one is an error and reading
    /// stops there (`--max-response-bytes`).
    pub max_response_bytes: u64,
}

impl SendOptions {
    /// `deadline` with the default size cap.
    pub fn new(deadline: Duration) -> Self {
        SendOptions {
            deadline,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

pub use cb_base::api::Api;

/// The endpoint's path of `api` under `/v1`.
fn api_path(api: Api) -> &'static str {
    match api {
        Api::Chat => "/chat/completions",
        Api::Responses => cb_wire::responses::PATH,
    }
}

/// What kind of system a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemKind {
    /// A built-in reference proxy.
    Builtin(ProxyMode),
    /// An external gateway given with `--gateway`.
    Gateway,
}

/// A system under test: a name and an OpenAI-compatible base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The system's name in reports.
    pub name: String,
    /// Built-in or external.
    pub kind: SystemKind,
    /// Base URL, e.g. `http://127.0.0.1:8080` (the driver appends
    /// `/v1/chat/completions`).
    pub url: String,
    /// Extra request headers (name, value), e.g. `Authorization`. Values
    /// stay [`Secret`] up to the socket.
    pub headers: Vec<(String, Secret)>,
    /// The model id this system is asked for when it names models its own
    /// way (`--gateway-model`); `None`: the run's `--model`.
    pub model: Option<String>,
}

impl Target {
    /// The model id to ask this system for: its own, or `default` (the
    /// run's `--model`).
    pub fn model<'a>(&'a self, default: &'a str) -> &'a str {
        self.model.as_deref().unwrap_or(default)
    }
}

/// What one request produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exchange {
    /// HTTP status, if a response arrived.
    pub status: Option<u16>,
    /// The assistant text, if the response was a usable 2xx completion.
    pub answer: Option<String>,
    /// Why there is no usable answer.
    pub error: Option<String>,
    /// Request sent to last byte received (or failure), milliseconds.
    pub latency_ms: f64,
    /// Request sent to response headers, milliseconds, if they came.
    pub ttfb_ms: Option<f64>,
    /// A stream's request sent to its first non-empty content token,
    /// milliseconds, if one came.
    pub ttft_ms: Option<f64>,
    /// `choices[0].finish_reason` of the answer, if it carried one.
    pub finish_reason: Option<String>,
    /// The `model` the answer names, if it names one.
    pub model: Option<String>,
    /// Whether the answer carried a `usage` block.
    pub usage: bool,
    /// Its `completion_tokens`, when it had a number there.
    pub completion_tokens: Option<u32>,
    /// Its `prompt_tokens`, when it had a number there.
    pub prompt_tokens: Option<u32>,
    /// The `model` values the answer names, in order: one for a plain
    /// body; for a stream, a run of chunks naming the same one kept once,
    /// the last chunk's last, empty names skipped (at most
    /// [`cb_wire::sse::MAX_MODELS`]). Redacted.
    pub models: Vec<String>,
    /// The response headers in which a gateway says how it routed the
    /// request (which target answered, how many fallbacks it tried), as
    /// (lowercase name, value): see [`routing_header`]. Bounded and
    /// redacted; empty for a response that was refused before its body.
    pub routing: Vec<(String, String)>,
    /// The wait an error response stated before a retry, in milliseconds,
    /// wherever it stated it (`Retry-After`, `retry-after-ms`, the
    /// `x-ratelimit-reset-*` headers, the body: [`cb_wire::stated_wait`]);
    /// `None` for a 2xx or an error that states none.
    pub stated_wait_ms: Option<u64>,
    /// What a stream sent, event by event, and the lines that were not
    /// events; `None` for a plain response.
    pub stream: Option<StreamTrace>,
    /// The top-level `provider` field of a 2xx body (or of the first stream
    /// chunk carrying one): which provider an aggregator such as
    /// OpenRouter says served the request. Redacted like everything read.
    pub provider: Option<String>,
    /// The `id` of a Responses answer, which the next turn sends as
    /// `previous_response_id`.
    pub response_id: Option<String>,
}

impl Exchange {
    /// Keeps what an assembled stream says beside its text (first token,
    /// finish reason, models, usage) and returns the text.
    fn take_stream(&mut self, a: Assembled) -> String {
        self.ttft_ms = a.first_content_ms;
        self.finish_reason = a.finish_reason;
        self.model = a.model.map(redact_owned);
        self.models = a.models.into_iter().map(redact_owned).collect();
        self.usage = a.usage;
        self.completion_tokens = a.completion_tokens;
        self.prompt_tokens = a.prompt_tokens;
        a.text
    }

    /// This exchange as the client `profile` reads it. [`send`] reads a
    /// stream strictly (only `data: [DONE]` completes it); a 2xx stream
    /// whose body ended cleanly without an answer under that reading is
    /// read again as `profile` does (to the official SDKs a clean end is
    /// the end of the answer, whatever came), and its answer or its
    /// reason replaces the strict one. A plain body, a status or a body
    /// that broke off reads alike under every profile and is left as it
    /// is. What is read again is redacted again.
    pub fn read_as(&mut self, profile: sse::ClientProfile) {
        let success = self.status.is_some_and(|s| (200..300).contains(&s));
        if !success || self.answer.is_some() || profile == sse::ClientProfile::Strict {
            return;
        }
        let Some(trace) = self.stream.take() else {
            return;
        };
        match profile.assemble(&trace) {
            Ok(a) => {
                let text = self.take_stream(a);
                self.answer = Some(redact_owned(text));
                self.error = None;
            }
            Err(reason) => self.error = Some(redact_owned(reason)),
        }
        self.stream = Some(trace);
    }
}

/// Longest excerpt of an error body kept in a reason.
const BODY_EXCERPT: usize = 200;

/// Longest excerpt of a redirect's `Location` kept in a reason.
const LOCATION_EXCERPT: usize = 120;

/// The one way the workspace builds an HTTP client: no proxy from the
/// environment (a harness on loopback must never send a key through a
/// proxy it was not told of), no redirects (following one turns a POST
/// into a GET and can carry a secret header to another server; a 3xx
/// reaches the caller, which makes it an error), and no Nagle delay. Each
/// caller adds its own timeouts and pool bounds.
pub fn hardened() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
}

/// The HTTP client of the driver: [`hardened`], no retries, a connection
/// pool large enough for the workers. Idle connections are dropped after
/// 2 s, before the 5 s keep-alive of common gateway servers (uvicorn, Node)
/// closes them under a request that reuses one.
///
/// # Errors
/// When the TLS backend cannot be initialised.
pub fn driver_client() -> anyhow::Result<reqwest::Client> {
    hardened()
        .pool_max_idle_per_host(512)
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .context("cannot build the HTTP client")
}

/// The client of the driver's replay: plain `http://` systems through the
/// bare connections of [`plain`] (the least memory a request in
/// flight can hold), anything else through [`driver_client`]'s reqwest
/// client. The same bounds apply to both.
#[derive(Debug, Clone)]
pub struct DriverClient {
    tls: reqwest::Client,
    plain: PlainPool,
    /// The chat URL and plain address of each base URL sent to, worked out
    /// once rather than parsed again for every request (a run has a few
    /// targets; at most [`MAX_ROUTES`] are kept).
    routes: Arc<Mutex<Vec<Route>>>,
}

/// Base URLs whose route [`DriverClient`] keeps; past them, a route is
/// worked out for each request, as before.
const MAX_ROUTES: usize = 64;

/// Where requests to one base URL go.
#[derive(Debug, Clone)]
struct Route {
    base: String,
    api: Api,
    url: String,
    address: Option<Address>,
}

impl Route {
    fn of(base: &str, api: Api) -> Self {
        let url = cb_base::url::under_v1(base, api_path(api));
        let address = Address::of(&url);
        Route {
            base: base.to_string(),
            api,
            url,
            address,
        }
    }
}

impl DriverClient {
    /// A client sending `https://` (and user-information) URLs through
    /// `tls`, which should be a [`driver_client`].
    pub fn new(tls: reqwest::Client) -> Self {
        DriverClient {
            tls,
            plain: PlainPool::default(),
            routes: Arc::default(),
        }
    }

    /// The route of `base`, from the memo when it is there.
    fn route(&self, base: &str, api: Api) -> Route {
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(route) = routes.iter().find(|r| r.base == base && r.api == api) {
            return route.clone();
        }
        let route = Route::of(base, api);
        if routes.len() < MAX_ROUTES {
            routes.push(route.clone());
        }
        route
    }
}

/// A response whose body is being read, from either transport.
enum Source {
    Reqwest(reqwest::Response),
    Plain(Connection),
}

impl Source {
    async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, String> {
        match self {
            Source::Reqwest(response) => response.chunk().await.map_err(|e| transport_reason(&e)),
            Source::Plain(connection) => connection.chunk().await.map_err(|e| e.reason()),
        }
    }
}

/// A response's head: what is decided before its body is read.
struct Head {
    status: u16,
    content_length: Option<u64>,
    location: Option<String>,
    routing: Vec<(String, String)>,
    /// The wait the headers state, for a non-2xx.
    header_wait: Option<Duration>,
    /// The `Content-Encoding` to undo, if one this client decodes.
    encoding: Option<Encoding>,
}

impl Head {
    fn of(status: http::StatusCode, headers: &http::HeaderMap) -> Self {
        Head {
            status: status.as_u16(),
            content_length: headers
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok()),
            location: headers
                .get(http::header::LOCATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            routing: routing_headers(headers),
            header_wait: (!status.is_success())
                .then(|| cb_wire::stated_wait(headers, None, std::time::SystemTime::now()))
                .flatten()
                .map(|w| w.wait),
            encoding: Encoding::of(
                headers
                    .get(http::header::CONTENT_ENCODING)
                    .and_then(|v| v.to_str().ok()),
            ),
        }
    }
}

/// Most routing headers kept from one response.
pub const MAX_ROUTING_HEADERS: usize = 8;

/// Longest routing header value kept, in characters.
const ROUTING_VALUE_CHARS: usize = 120;

/// Whether a response header (by its lowercase name) is one in which a
/// gateway reports how it routed the request: LiteLLM's
/// `x-litellm-attempted-fallbacks`, Portkey's
/// `x-portkey-last-used-option-index`, Cloudflare's `cf-aig-step`, and any
/// header whose name speaks of a fallback, an attempt or retry, or the
/// model or provider that served. Kept so that what the gateway says can
/// be held against what the upstreams saw.
pub fn routing_header(name: &str) -> bool {
    const WORDS: [&str; 8] = [
        "fallback",
        "attempt",
        "retries",
        "option-index",
        "served",
        "provider",
        "model",
        "step",
    ];
    let standard = matches!(name, "content-type" | "content-length" | "date" | "server");
    // A provider's own headers relayed under a prefix (LiteLLM's
    // `llm_provider-*`) say nothing about the gateway's routing.
    let relayed = name.starts_with("llm_provider-");
    !standard && !relayed && WORDS.iter().any(|w| name.contains(w))
}

/// Ends of the routing header names whose values a reader can hold
/// against the attempt log, by what they state (the reader is
/// `cb_semantics::honesty::read_routing`).
pub mod routing_names {
    /// The model that served (`x-served-model`, `x-model-used`).
    pub const SERVED_MODEL: &[&str] = &["served-model", "model-used", "model-name"];
    /// Whole names that state the model that served: a provider's own
    /// (`openai-model`). A plain `x-model` is not read: some proxies echo
    /// the requested alias in it.
    pub const SERVED_MODEL_EXACT: &[&str] = &["openai-model"];
    /// The serving upstream's base URL.
    pub const API_BASE: &[&str] = &["api-base", "api_base", "base-url", "upstream-url"];
    /// A flag that a fallback answered.
    pub const FALLBACK_USED: &[&str] = &["fallback-used", "fallback_used", "-fallback"];
    /// A count of fallbacks attempted.
    pub const FALLBACKS_ATTEMPTED: &[&str] = &[
        "attempted-fallbacks",
        "fallback-count",
        "fallbacks-attempted",
    ];
    /// The index of the target that answered.
    pub const INDEX: &[&str] = &[
        "option-index",
        "fallback-index",
        "target-index",
        "provider-index",
        "deployment-index",
        "route-index",
        "aig-step",
    ];

    /// Whether a header (by its lowercase name) is one of those above.
    pub fn judged(name: &str) -> bool {
        SERVED_MODEL_EXACT.contains(&name)
            || [
                SERVED_MODEL,
                API_BASE,
                FALLBACK_USED,
                FALLBACKS_ATTEMPTED,
                INDEX,
            ]
            .iter()
            .any(|ends| ends.iter().any(|e| name.ends_with(e)))
    }
}

/// The routing headers of `headers` (see [`routing_header`]), bounded and
/// redacted: those a reader can judge ([`routing_names::judged`]) first,
/// so that a flood of other routing-like headers cannot push them out of
/// the bound, each group in the order it came.
fn routing_headers(headers: &http::HeaderMap) -> Vec<(String, String)> {
    let (judged, other): (Vec<_>, Vec<_>) = headers
        .iter()
        .filter(|(name, _)| routing_header(name.as_str()))
        .partition(|(name, _)| routing_names::judged(name.as_str()));
    judged
        .into_iter()
        .chain(other)
        .take(MAX_ROUTING_HEADERS)
        .map(|(name, value)| {
            let value: String = String::from_utf8_lossy(value.as_bytes())
                .chars()
                .take(ROUTING_VALUE_CHARS)
                .collect();
            (name.as_str().to_string(), redact_owned(value))
        })
        .collect()
}

/// What the body reading produced.
struct Body {
    status: u16,
    ttfb_ms: f64,
    routing: Vec<(String, String)>,
    header_wait: Option<Duration>,
    bytes: Vec<u8>,
    stream: Option<StreamTrace>,
    /// The room reserved for a large body, held until it is parsed.
    _room: Option<Room>,
}

/// What came back: a body read to its end, or a response whose body was
/// not (or not wholly) read, with the reason.
enum Received {
    Whole(Body),
    Refused {
        status: u16,
        ttfb_ms: f64,
        reason: String,
    },
}

fn since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Sends `request` to `target` (its base URL with `/v1/chat/completions`
/// appended) and waits at most `options.deadline` for the whole response,
/// reading at most `options.max_response_bytes` of it.
pub async fn send(
    client: &reqwest::Client,
    target: &Target,
    request: &ChatRequest,
    options: SendOptions,
) -> Exchange {
    let url = cb_base::url::under_v1(&target.url, "/chat/completions");
    send_to(client, &url, &target.headers, request, options).await
}

/// A Responses request (`body`, plain) to `target`'s `/v1/responses`,
/// with the bounds of [`send`]; the answer is read as a response object.
pub async fn send_responses(
    client: &reqwest::Client,
    target: &Target,
    body: &serde_json::Value,
    options: SendOptions,
) -> Exchange {
    let url = cb_base::url::under_v1(&target.url, api_path(Api::Responses));
    exchange(
        Outgoing::Reqwest(with_headers(client.post(url).json(body), &target.headers)),
        Api::Responses,
        false,
        options,
    )
    .await
}

/// [`send`] to a full chat-completions URL (for an API whose chat path is
/// not `/v1/chat/completions` under a base, such as OpenRouter's
/// `https://openrouter.ai/api/v1/chat/completions`), with `headers` (values
/// stay [`Secret`] up to the socket). The same bounds apply.
pub async fn send_to(
    client: &reqwest::Client,
    url: &str,
    headers: &[(String, Secret)],
    request: &ChatRequest,
    options: SendOptions,
) -> Exchange {
    exchange(
        Outgoing::Reqwest(with_headers(client.post(url).json(request), headers)),
        Api::Chat,
        request.stream,
        options,
    )
    .await
}

/// [`send`] of a request already serialized as JSON (`body`, asking for a
/// stream when `stream`) through the driver's client: the driver
/// serializes each request and drops it before sending, so that thousands
/// of requests in flight hold their bytes once, not the request besides
/// (and a plain connection frees them once written). The same bounds
/// apply.
pub async fn send_body(
    client: &DriverClient,
    target: &Target,
    body: Vec<u8>,
    stream: bool,
    options: SendOptions,
) -> Exchange {
    send_body_to(client, target, Api::Chat, body, stream, options).await
}

/// [`send_body`] to the endpoint of `api`. A Responses answer is read as
/// a response object: its text is the answer, its `id` is
/// [`Exchange::response_id`] (plain answers only: the driver sends no
/// streamed Responses request).
pub async fn send_body_to(
    client: &DriverClient,
    target: &Target,
    api: Api,
    body: Vec<u8>,
    stream: bool,
    options: SendOptions,
) -> Exchange {
    let Route { url, address, .. } = client.route(&target.url, api);
    let request = match address {
        Some(address) => Outgoing::Plain {
            pool: &client.plain,
            address,
            headers: &target.headers,
            body,
        },
        None => Outgoing::Reqwest(
            with_headers(client.tls.post(url), &target.headers)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body),
        ),
    };
    exchange(request, api, stream, options).await
}

/// A request ready to be sent, on either transport.
enum Outgoing<'a> {
    Reqwest(reqwest::RequestBuilder),
    Plain {
        pool: &'a PlainPool,
        address: Address,
        headers: &'a [(String, Secret)],
        body: Vec<u8>,
    },
}

impl Outgoing<'_> {
    /// Sends it and waits for the response head.
    async fn send(self) -> Result<(Head, Source), String> {
        match self {
            Outgoing::Reqwest(builder) => {
                let response = builder.send().await.map_err(|e| transport_reason(&e))?;
                let head = Head::of(response.status(), response.headers());
                Ok((head, Source::Reqwest(response)))
            }
            Outgoing::Plain {
                pool,
                address,
                headers,
                body,
            } => {
                let (response, connection) = pool
                    .post(&address, headers, body)
                    .await
                    .map_err(|e| e.reason())?;
                let head = Head::of(response.status(), response.headers());
                Ok((head, Source::Plain(connection)))
            }
        }
    }
}

/// `builder` with `headers` added (values stay [`Secret`] to the socket).
fn with_headers(
    mut builder: reqwest::RequestBuilder,
    headers: &[(String, Secret)],
) -> reqwest::RequestBuilder {
    for (name, value) in headers {
        if let Some(value) = value.header_value() {
            builder = builder.header(name, value);
        }
    }
    builder
}

/// One bounded exchange of a built request.
async fn exchange(request: Outgoing<'_>, api: Api, stream: bool, options: SendOptions) -> Exchange {
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        options.deadline,
        receive(request, stream, options.max_response_bytes, started),
    )
    .await;
    let mut exchange = Exchange {
        latency_ms: since(started),
        ..Exchange::default()
    };
    let body = match outcome {
        Err(_) => {
            exchange.error = Some(format!(
                "no complete response within {} ms",
                options.deadline.as_millis()
            ));
            return exchange;
        }
        Ok(Err(reason)) => {
            exchange.error = Some(redact_owned(reason));
            return exchange;
        }
        Ok(Ok(Received::Refused {
            status,
            ttfb_ms,
            reason,
        })) => {
            exchange.status = Some(status);
            exchange.ttfb_ms = Some(ttfb_ms);
            exchange.error = Some(redact_owned(reason));
            return exchange;
        }
        Ok(Ok(Received::Whole(body))) => body,
    };
    exchange.status = Some(body.status);
    exchange.ttfb_ms = Some(body.ttfb_ms);
    exchange.routing = body.routing;
    if !(200..300).contains(&body.status) {
        let empty = http::HeaderMap::new();
        let wait = body.header_wait.or_else(|| {
            cb_wire::stated_wait(&empty, Some(&body.bytes), std::time::SystemTime::now())
                .map(|w| w.wait)
        });
        exchange.stated_wait_ms = wait.map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX));
    }
    if (200..300).contains(&body.status) {
        exchange.provider = match &body.stream {
            Some(trace) => stream_provider(trace),
            None => serde_json::from_slice::<Value>(&body.bytes)
                .ok()
                .as_ref()
                .and_then(provider_field),
        }
        .map(redact_owned);
    }
    let answer = match body.stream {
        Some(trace) => {
            let assembled = assemble(&trace);
            exchange.stream = Some(trace);
            assembled.map(|a| exchange.take_stream(a))
        }
        None if api == Api::Responses => {
            responses_answer(body.status, &body.bytes).map(|(text, id, model)| {
                exchange.response_id = Some(redact_owned(id));
                exchange.model = model.map(redact_owned);
                exchange.models = exchange.model.iter().cloned().collect();
                text
            })
        }
        None => plain_answer(body.status, &body.bytes).map(|plain| {
            exchange.finish_reason = plain.finish_reason;
            exchange.models = plain
                .model
                .iter()
                .filter(|m| !m.trim().is_empty())
                .cloned()
                .collect();
            exchange.model = plain.model;
            exchange.usage = plain.usage;
            exchange.completion_tokens = plain.completion_tokens;
            exchange.prompt_tokens = plain.prompt_tokens;
            plain.text
        }),
    };
    // Redacted again as a whole: a secret split across two stream chunks
    // is whole only here.
    match answer {
        // An empty 200 is an answer the client received (the `empty`
        // contract names it), not a transport failure.
        Ok(text) => exchange.answer = Some(redact_owned(text)),
        Err(reason) => exchange.error = Some(redact_owned(reason)),
    }
    exchange
}

/// Sends the request and reads the response: a redirect is refused before
/// its body, a body over `cap` bytes (announced or read) as soon as it is
/// known; dropping the response then closes the connection.
async fn receive(
    request: Outgoing<'_>,
    stream: bool,
    cap: u64,
    started: Instant,
) -> Result<Received, String> {
    let (head, mut response) = request.send().await?;
    let status = head.status;
    let ttfb_ms = since(started);
    let refused = |reason| {
        Ok(Received::Refused {
            status,
            ttfb_ms,
            reason,
        })
    };
    if (300..400).contains(&status) {
        return refused(redirect_reason(status, head.location.as_deref()));
    }
    if head.content_length.is_some_and(|n| n > cap) {
        return refused(too_large_reason(cap));
    }
    let streamed = stream && (200..300).contains(&status);
    let mut reader = streamed.then(TraceReader::new);
    let announced = head.content_length.unwrap_or(0);
    let mut room = None;
    if announced > SMALL_BODY {
        room = reserve_large(cap).await;
    }
    // Unannounced, start at 16 KiB: doubling then lands on SMALL_BODY
    // exactly, so a body waiting for room holds no more than that.
    let initial = if announced > 0 { announced } else { 16 * 1024 };
    let mut bytes = Vec::with_capacity(if streamed { 0 } else { initial as usize });
    let (mut read, mut decoded) = (0u64, 0u64);
    // A compressed body is decoded as it arrives (see `encoding`); the
    // decoded bytes count against the cap like the rest.
    let mut decoder = head.encoding.map(|e| Decoder::new(e, cap));
    // A compressed chunk may inflate to the cap at once: its room is taken
    // before it is decoded.
    if decoder.is_some() && room.is_none() {
        room = reserve_large(cap).await;
    }
    let decode_failed = |e: DecodeError| match e {
        DecodeError::TooLarge => too_large_reason(cap),
        DecodeError::Invalid(reason) => reason,
    };
    let mut ended = false;
    while !ended {
        let chunk = match response.chunk().await? {
            Some(chunk) => {
                read = read.saturating_add(chunk.len() as u64);
                if read > cap {
                    return refused(too_large_reason(cap));
                }
                match decoder.as_mut() {
                    Some(d) => match d.feed(&chunk) {
                        Ok(decoded) => bytes::Bytes::from(decoded),
                        Err(e) => return refused(decode_failed(e)),
                    },
                    None => chunk,
                }
            }
            None => {
                ended = true;
                match decoder.take().map(Decoder::finish) {
                    Some(Ok(decoded)) => bytes::Bytes::from(decoded),
                    Some(Err(e)) => return refused(decode_failed(e)),
                    None => break,
                }
            }
        };
        decoded = decoded.saturating_add(chunk.len() as u64);
        if read.max(decoded) > SMALL_BODY && room.is_none() {
            room = reserve_large(cap).await;
        }
        match reader.as_mut() {
            Some(reader) => reader.feed(&chunk, since(started)),
            None => bytes.extend_from_slice(&chunk),
        }
    }
    Ok(Received::Whole(Body {
        status,
        ttfb_ms,
        routing: head.routing,
        header_wait: head.header_wait,
        bytes,
        stream: reader.map(|r| r.finish(since(started))),
        _room: room,
    }))
}

/// The top-level `provider` string of a response body or stream chunk.
fn provider_field(json: &Value) -> Option<String> {
    json.get("provider")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The `provider` of the first stream chunk that names one.
fn stream_provider(trace: &StreamTrace) -> Option<String> {
    trace
        .events
        .iter()
        .take_while(|e| e.data != "[DONE]")
        .filter(|e| e.data.contains("\"provider\""))
        .find_map(|e| {
            serde_json::from_str::<Value>(&e.data)
                .ok()
                .as_ref()
                .and_then(provider_field)
        })
}

/// The reason of a 3xx: the status and (an excerpt of) where it pointed.
fn redirect_reason(status: u16, location: Option<&str>) -> String {
    let target = match location {
        Some(location) => format!("to {}", cut(&redact(location), LOCATION_EXCERPT)),
        None => "without a Location".to_string(),
    };
    format!(
        "HTTP {status} redirect {target}: redirects are not followed (a redirected POST loses its body and \
         could carry the request's headers to another server); give --gateway the URL that answers"
    )
}

/// The reason of a body over the cap.
fn too_large_reason(cap: u64) -> String {
    format!("response larger than {cap} bytes (--max-response-bytes); stopped reading it")
}

/// What a plain (non-streamed) response body carried.
#[derive(Debug)]
struct Plain {
    text: String,
    finish_reason: Option<String>,
    model: Option<String>,
    usage: bool,
    completion_tokens: Option<u32>,
    prompt_tokens: Option<u32>,
}

/// The text, id and model of a Responses body (as the OpenAI SDK's
/// `response.output_text` reads it: every `output_text` part of every
/// message item, joined).
fn responses_answer(status: u16, body: &[u8]) -> Result<(String, String, Option<String>), String> {
    if !(200..300).contains(&status) {
        return Err(format!("HTTP {status}: {}", excerpt(body)));
    }
    let json = serde_json::from_slice::<Value>(body)
        .map_err(|e| format!("malformed response body ({e}): {}", excerpt(body)))?;
    let id = json
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no id in the response: {}", excerpt(body)))?;
    let text = cb_wire::responses::output_text(&json)
        .ok_or_else(|| format!("no output_text in the response: {}", excerpt(body)))?;
    let model = json
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((text, id.to_string(), model))
}

/// The text, finish reason, model and usage of a plain response body.
fn plain_answer(status: u16, body: &[u8]) -> Result<Plain, String> {
    if !(200..300).contains(&status) {
        return Err(format!("HTTP {status}: {}", excerpt(body)));
    }
    let json = serde_json::from_slice::<Value>(body)
        .map_err(|e| format!("malformed response body ({e}): {}", excerpt(body)))?;
    let field = "choices[0].message.content";
    let content = json
        .pointer("/choices/0/message/content")
        .ok_or_else(|| format!("no {field} in body: {}", excerpt(body)))?;
    let text = content_text(content, field)?
        .ok_or_else(|| format!("{field} is null (no text): {}", excerpt(body)))?;
    let finish_reason = json
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Plain {
        text,
        finish_reason,
        model: json
            .get("model")
            .and_then(Value::as_str)
            .map(|m| redact(m).into_owned()),
        usage: json.get("usage").is_some_and(Value::is_object),
        completion_tokens: json
            .pointer("/usage/completion_tokens")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        prompt_tokens: json
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
    })
}

/// How a reason begins when the client could not connect at all: nothing
/// reached the system (it stopped, or never started).
pub const CONNECT_FAILED: &str = "connection failed";

/// A transport error as a reason. reqwest's own message names the URL; the
/// reason keeps only the kind and the innermost cause.
fn transport_reason(e: &reqwest::Error) -> String {
    let kind = if e.is_connect() {
        CONNECT_FAILED
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "response body broken off"
    } else {
        "request failed"
    };
    let mut cause = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = Some(s.to_string());
        source = s.source();
    }
    format!(
        "{kind}: {}",
        cause.unwrap_or_else(|| "no detail".to_string())
    )
}

/// An excerpt of a body for a reason, redacted before it is cut so that it
/// never ends in half a secret.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    cut(&redact(&text), BODY_EXCERPT).replace(['\n', '\r'], " ")
}

/// The first `max` characters of `text`, with `…` when it was longer.
fn cut(text: &str, max: usize) -> String {
    let mut cut: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests;
