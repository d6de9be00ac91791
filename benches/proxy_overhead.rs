//! How much latency the reference proxy adds on top of the upstream it
//! forwards to, measured against that same upstream called directly, side by
//! side in one run.
//!
//! Run it (release build; about 10 s once compiled):
//!
//! ```text
//! cargo bench --bench proxy_overhead
//! ```
//!
//! A filter runs one case only: `cargo bench --bench proxy_overhead --
//! sequential` or `... -- concurrent`.
//!
//! Two cases, each with its own simulated upstream pair and reference proxy
//! (`history` mode) started in this process on 127.0.0.1:
//!
//! - (a) `sequential/instant`: one request at a time, `instant` latency
//!   profile; 2000 warm-up then 20000 measured requests per path. Direct and
//!   via-proxy requests alternate (and alternate which goes first), so both
//!   see the same machine state.
//! - (b) `concurrent/fast`: 100 tasks, each replaying multi-turn
//!   conversations with the `fast` profile; every turn is sent once directly
//!   and once through the proxy (order alternating), so both paths see the
//!   same load, the same bodies and the same upstream.
//!
//! Latency is client-side: from handing the pre-serialised request body to
//! the client until the whole response body has arrived. Both paths use their
//! own keep-alive `reqwest` client with identical settings. No fault fires
//! (the fault profile targets turn 99, which never occurs), and every
//! request must come back 200 from the primary: the run checks the proxy's
//! switch events and the upstream attempt log before printing anything.
//! Percentiles are type 7 ([`continuity_bench::stats::percentile_type7`]).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::{bail, ensure, Context};
use bytes::Bytes;
use continuity_bench::dataset::{Anchor, Category, Conversation, Dataset, Turn, TurnKind};
use continuity_bench::faults::{FaultPlan, FaultProfile, Role};
use continuity_bench::openai::{response_text, ChatMessage, ChatRequest};
use continuity_bench::proxy::{ProxyConfig, ProxyMode, ProxyState};
use continuity_bench::server::ServerHandle;
use continuity_bench::stats::percentile_type7;
use continuity_bench::upstream::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests per path before measuring, case (a).
const WARMUP: usize = 2_000;
/// Measured requests per path, case (a).
const MEASURED: usize = 20_000;
/// Concurrent conversation tasks, case (b).
const TASKS: usize = 100;
/// Warm-up conversations per task, case (b) (not measured).
const WARMUP_CONVERSATIONS: usize = 1;
/// Measured conversations per task, case (b).
const MEASURED_CONVERSATIONS: usize = 8;
/// Turns per conversation.
const TURNS: usize = 10;
/// Master seed of the simulated upstreams.
const SEED: u64 = 42;
/// Deadline of every benchmark request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// A profile that never fires: it faults turn 99 and conversations have 10.
const NO_FAULT: &str = "name = \"none\"\nturns = [99]\n[modes.api_error]\nweight = 1\n";
/// The system prompt of every request.
const SYSTEM_PROMPT: &str = "You are a helpful assistant. Answer briefly.";

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    runtime.block_on(async {
        let started = Instant::now();
        println!(
            "proxy_overhead: reference proxy (history mode) vs the same simulated upstream called directly"
        );
        println!(
            "machine: {} cores; tokio workers: {}; all servers and clients in this process on 127.0.0.1",
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            tokio::runtime::Handle::current().metrics().num_workers(),
        );
        println!("load average before: {}", load_average());
        let mut results = Vec::new();
        // Each case runs as a task on the runtime's workers, as a client
        // inside a tokio application does, not on the thread that blocks on
        // the runtime (every hop from there would cross threads).
        if selected("sequential") {
            results.push(tokio::spawn(sequential_instant()).await??);
        }
        if selected("concurrent") {
            results.push(tokio::spawn(concurrent_fast()).await??);
        }
        println!("load average after: {}", load_average());
        println!();
        print_table(&results);
        println!(
            "\nlatency = client send to last response byte; added = via proxy - direct; percentiles type 7; total time {:.1} s",
            started.elapsed().as_secs_f64()
        );
        Ok(())
    })
}

/// The 1, 5 and 15 minute load averages (Linux), to say how busy the
/// machine was: other processes competing for the cores inflate both paths
/// and, under load, the proxy's extra hop more.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Whether the case named `name` runs: every case when no filter is given
/// on the command line (`cargo bench --bench proxy_overhead -- concurrent`),
/// otherwise the cases whose name contains a filter.
fn selected(name: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

/// Result of one case.
struct CaseResult {
    name: &'static str,
    samples: usize,
    direct: (f64, f64),
    proxy: (f64, f64),
    target_p50: f64,
    target_p99: Option<f64>,
}

impl CaseResult {
    fn added(&self) -> (f64, f64) {
        (self.proxy.0 - self.direct.0, self.proxy.1 - self.direct.1)
    }

    fn met(&self) -> bool {
        let (p50, p99) = self.added();
        p50 <= self.target_p50 && self.target_p99.is_none_or(|t| p99 <= t)
    }
}

/// The benchmark's running system: an upstream pair, a proxy in front of it,
/// and one keep-alive client per path.
struct Bench {
    ctx: UpstreamContext,
    _upstreams: continuity_bench::upstream::UpstreamPair,
    proxy: ServerHandle,
    proxy_state: ProxyState,
    direct_url: String,
    proxy_url: String,
    direct_client: reqwest::Client,
    proxy_client: reqwest::Client,
}

impl Bench {
    async fn start(dataset: &Dataset, latency: LatencyProfile) -> anyhow::Result<Self> {
        let profile = FaultProfile::parse(NO_FAULT, "benches/proxy_overhead.rs")?;
        let turns = dataset.conversations.iter().map(Conversation::n_turns);
        let plan = FaultPlan::new(profile, SEED, turns.collect());
        let ctx = UpstreamContext::new(plan, ConversationIndex::new(dataset), latency, SEED, 1);
        let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let upstreams = start_pair("bench", local, local, ctx.clone()).await?;
        let config = ProxyConfig::new(
            ProxyMode::History,
            upstreams.primary.url(),
            upstreams.fallback.url(),
        );
        let (proxy, proxy_state) = continuity_bench::proxy::spawn(local, config).await?;
        Ok(Bench {
            direct_url: format!("{}/v1/chat/completions", upstreams.primary.url()),
            proxy_url: format!("{}/v1/chat/completions", proxy.url()),
            ctx,
            _upstreams: upstreams,
            proxy,
            proxy_state,
            direct_client: client()?,
            proxy_client: client()?,
        })
    }

    /// Sends `body` on one path; returns the latency (ms) and the body.
    async fn send(&self, via_proxy: bool, body: &Bytes) -> anyhow::Result<(f64, Bytes)> {
        let (client, url) = if via_proxy {
            (&self.proxy_client, &self.proxy_url)
        } else {
            (&self.direct_client, &self.direct_url)
        };
        let start = Instant::now();
        let response = client
            .post(url.as_str())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone())
            .send()
            .await?;
        let status = response.status();
        let bytes = response.bytes().await?;
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

    /// Checks that every request was a plain success through the primary:
    /// `proxied` proxy requests, each with reason `none`, and `total`
    /// upstream attempts, all at the primary and all `ok`.
    async fn check_and_stop(self, proxied: usize, total: usize) -> anyhow::Result<()> {
        let events = self.proxy_state.take_events();
        ensure!(
            events.len() == proxied,
            "the proxy recorded {} events, expected {proxied}",
            events.len()
        );
        if let Some(e) = events
            .iter()
            .find(|e| e.reason != "none" || e.status != 200)
        {
            bail!("a proxied request did not succeed through the primary: {e:?}");
        }
        let attempts = self.ctx.log.snapshot();
        ensure!(
            attempts.len() == total,
            "the upstreams logged {} attempts, expected {total}",
            attempts.len()
        );
        if let Some(a) = attempts
            .iter()
            .find(|a| a.role != Role::Primary || a.action != "ok" || a.status != Some(200))
        {
            bail!("an upstream attempt was not a plain primary success: {a:?}");
        }
        self.proxy.shutdown().await;
        Ok(())
    }
}

/// A keep-alive client; both paths get one built here, so settings match.
fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(256)
        .pool_idle_timeout(Duration::from_secs(60))
        .timeout(REQUEST_TIMEOUT)
        .build()
}

/// A small hand-made dataset: `n` ten-turn conversations, each recognisable
/// by its first user message.
fn dataset(n: usize) -> Dataset {
    let conversations = (0..n)
        .map(|i| {
            let value = format!("Oriane-{i}");
            let turns = (1..=TURNS)
                .map(|t| {
                    let (kind, user, assistant) = if t == 1 {
                        (
                            TurnKind::Anchor,
                            format!("Conversation {i}: my sister's name is {value}. Please remember it."),
                            Some("Noted, I will remember your sister's name.".to_string()),
                        )
                    } else if t == TURNS {
                        (TurnKind::Probe, "What is my sister called?".to_string(), None)
                    } else {
                        (
                            TurnKind::Filler,
                            format!(
                                "Turn {t}: can you suggest a short recipe with lentils, \
                                 tomatoes and cumin that takes under thirty minutes?"
                            ),
                            Some(
                                "Simmer red lentils with chopped tomatoes, cumin and garlic \
                                 for twenty minutes, then season and serve with bread."
                                    .to_string(),
                            ),
                        )
                    };
                    Turn {
                        kind,
                        user,
                        assistant,
                        distractor: None,
                    }
                })
                .collect();
            Conversation {
                id: format!("c{i:03}"),
                anchor: Anchor {
                    category: Category::PersonName,
                    subject: "sister's name".to_string(),
                    variants: vec![value.clone()],
                    value,
                },
                turns,
            }
        })
        .collect();
    Dataset { conversations }
}

/// The request of `turn` (from 1) of `conversation` in live replay, with the
/// scripted replies as history.
fn scripted_request(conversation: &Conversation, turn: usize) -> anyhow::Result<Bytes> {
    let mut messages = vec![ChatMessage::new("system", SYSTEM_PROMPT)];
    for (i, t) in conversation.turns[..turn].iter().enumerate() {
        messages.push(ChatMessage::new("user", &t.user));
        if i + 1 < turn {
            messages.push(ChatMessage::new(
                "assistant",
                t.assistant.as_deref().unwrap_or_default(),
            ));
        }
    }
    request_body(messages)
}

fn request_body(messages: Vec<ChatMessage>) -> anyhow::Result<Bytes> {
    let request = ChatRequest {
        model: "sim-model".to_string(),
        messages,
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    Ok(Bytes::from(serde_json::to_vec(&request)?))
}

/// Case (a): one request at a time, `instant` profile.
async fn sequential_instant() -> anyhow::Result<CaseResult> {
    let data = dataset(20);
    let bench = Bench::start(&data, LatencyProfile::INSTANT).await?;
    let bodies: Vec<Bytes> = data
        .conversations
        .iter()
        .flat_map(|c| (1..=c.n_turns()).map(move |t| (c, t)))
        .map(|(c, t)| scripted_request(c, t))
        .collect::<anyhow::Result<_>>()?;
    let mut direct = Vec::with_capacity(MEASURED);
    let mut proxy = Vec::with_capacity(MEASURED);
    for i in 0..WARMUP + MEASURED {
        let body = &bodies[i % bodies.len()];
        let proxy_first = i % 2 == 1;
        let (first, _) = bench.send(proxy_first, body).await?;
        let (second, _) = bench.send(!proxy_first, body).await?;
        if i >= WARMUP {
            let (d, p) = if proxy_first {
                (second, first)
            } else {
                (first, second)
            };
            direct.push(d);
            proxy.push(p);
        }
    }
    let n = WARMUP + MEASURED;
    bench.check_and_stop(n, 2 * n).await?;
    println!("(a) done: {MEASURED} measured requests per path after {WARMUP} warm-up");
    Ok(CaseResult {
        name: "(a) sequential, instant",
        samples: MEASURED,
        direct: p50_p99(direct),
        proxy: p50_p99(proxy),
        target_p50: 0.1,
        target_p99: Some(0.5),
    })
}

/// Case (b): 100 concurrent conversation tasks, `fast` profile.
async fn concurrent_fast() -> anyhow::Result<CaseResult> {
    let per_task = WARMUP_CONVERSATIONS + MEASURED_CONVERSATIONS;
    let data = Arc::new(dataset(TASKS * per_task));
    let bench = Arc::new(Bench::start(&data, LatencyProfile::FAST).await?);
    let mut tasks = Vec::with_capacity(TASKS);
    for task in 0..TASKS {
        let bench = Arc::clone(&bench);
        let data = Arc::clone(&data);
        tasks.push(tokio::spawn(async move {
            let mut direct = Vec::new();
            let mut proxy = Vec::new();
            for k in 0..per_task {
                let conversation = &data.conversations[task * per_task + k];
                let measured = k >= WARMUP_CONVERSATIONS;
                let mut messages = vec![ChatMessage::new("system", SYSTEM_PROMPT)];
                for (t, turn) in conversation.turns.iter().enumerate() {
                    messages.push(ChatMessage::new("user", &turn.user));
                    let body = request_body(messages.clone())?;
                    let proxy_first = (task + k + t) % 2 == 1;
                    let (first, first_body) = bench.send(proxy_first, &body).await?;
                    let (second, second_body) = bench.send(!proxy_first, &body).await?;
                    let (d, p, answer) = if proxy_first {
                        (second, first, second_body)
                    } else {
                        (first, second, first_body)
                    };
                    if measured {
                        direct.push(d);
                        proxy.push(p);
                    }
                    let json: serde_json::Value = serde_json::from_slice(&answer)?;
                    let text = response_text(&json).context("a 200 answer without text")?;
                    messages.push(ChatMessage::new("assistant", &text));
                }
            }
            anyhow::Ok((direct, proxy))
        }));
    }
    let mut direct = Vec::new();
    let mut proxy = Vec::new();
    for task in tasks {
        let (d, p) = task.await??;
        direct.extend(d);
        proxy.extend(p);
    }
    let n = TASKS * per_task * TURNS;
    let bench = Arc::into_inner(bench).context("a task still holds the benchmark")?;
    bench.check_and_stop(n, 2 * n).await?;
    println!(
        "(b) done: {TASKS} tasks x {MEASURED_CONVERSATIONS} measured conversations x {TURNS} turns per path after {WARMUP_CONVERSATIONS} warm-up conversation per task"
    );
    Ok(CaseResult {
        name: "(b) 100 concurrent, fast",
        samples: direct.len(),
        direct: p50_p99(direct),
        proxy: p50_p99(proxy),
        target_p50: 0.5,
        target_p99: None,
    })
}

/// (p50, p99) in ms, type 7.
fn p50_p99(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        percentile_type7(&values, 0.5),
        percentile_type7(&values, 0.99),
    )
}

fn print_table(results: &[CaseResult]) {
    println!(
        "| {:<26} | {:>7} | {:>19} | {:>19} | {:>19} | {:<25} | {:<4} |",
        "case",
        "n/path",
        "direct p50/p99 ms",
        "via proxy p50/p99",
        "added p50/p99 ms",
        "target (added)",
        "met?"
    );
    println!(
        "|{}|{}|{}|{}|{}|{}|{}|",
        "-".repeat(28),
        "-".repeat(9),
        "-".repeat(21),
        "-".repeat(21),
        "-".repeat(21),
        "-".repeat(27),
        "-".repeat(6)
    );
    for r in results {
        let (a50, a99) = r.added();
        let target = match r.target_p99 {
            Some(p99) => format!("p50 <= {:.1}, p99 <= {:.1} ms", r.target_p50, p99),
            None => format!("p50 <= {:.1} ms", r.target_p50),
        };
        println!(
            "| {:<26} | {:>7} | {:>19} | {:>19} | {:>19} | {:<25} | {:<4} |",
            r.name,
            r.samples,
            format!("{:.3} / {:.3}", r.direct.0, r.direct.1),
            format!("{:.3} / {:.3}", r.proxy.0, r.proxy.1),
            format!("{a50:+.3} / {a99:+.3}"),
            target,
            if r.met() { "yes" } else { "NO" }
        );
    }
}
