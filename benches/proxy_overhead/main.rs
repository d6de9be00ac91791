//! How much latency the reference proxy adds on top of the upstream it
//! forwards to, measured against that same upstream called directly, side by
//! side in one run.
//!
//! Run it (release build; about 25 s once compiled):
//!
//! ```text
//! cargo bench --bench proxy_overhead
//! ```
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
//! # Where things run
//!
//! A proxy adds its own work plus two loopback exchanges. What an exchange
//! costs depends on the machine more than on the proxy: on a VM, waking a
//! thread parked on another core takes tens of microseconds, more than the
//! proxy's own work. The run starts by printing that cost (a blocking
//! ping-pong between two threads) and then measures each case where it
//! measures the proxy rather than the machine's wake-ups:
//!
//! - (a) on **one thread**: client, upstream and proxy share a
//!   current-thread runtime, so neither path pays a cross-core wake-up and
//!   the difference is the proxy's work and its two extra exchanges;
//! - (b) with the **proxy apart**: the proxy on a runtime and thread of its
//!   own, as its own process would be, and the client and upstreams (the
//!   load and the backend) on another, so the proxy does not queue behind
//!   the load it is measured under, nor the load behind it.
//!
//! Both cases are then run again on one **shared** two-worker runtime, the
//! way `continuity-bench run` hosts its proxies, and printed without a
//! target: there cross-core wake-ups and CPU sharing are part of the figure.
//! A filter picks cases by name or placement: `-- sequential`,
//! `-- concurrent`, `-- shared`, `-- apart`.
//!
//! Latency is client-side: from handing the pre-serialised request body to
//! the client until the whole response body has arrived. Each client task
//! holds one keep-alive HTTP/1.1 connection per path, built the same way and
//! driven by the task itself (bare `hyper`, no pool, no extra task), so the
//! load generator stays light and the figure is the servers'. No fault fires
//! (the fault profile targets turn 99, which never occurs), and every
//! request must come back 200 from the primary: the run checks the proxy's
//! switch events and the upstream attempt log before printing anything.
//! Percentiles are type 7 ([`continuity_bench::stats::percentile_type7`]).
//!
//! The cases and the table are here; the running system and its client
//! connections are in `system.rs`, the dataset and request bodies in
//! `dataset.rs`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod dataset;
mod system;

use anyhow::Context;
use bytes::Bytes;
use continuity_bench::openai::{response_text, ChatMessage};
use continuity_bench::stats::percentile_type7;
use continuity_bench::upstream::LatencyProfile;
use dataset::{dataset, request_body, scripted_request};
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use system::Bench;
use tokio::runtime::Handle;

/// Requests per path before measuring, case (a).
const WARMUP: usize = 2_000;
/// Measured requests per path, case (a).
const MEASURED: usize = 20_000;
/// Concurrent conversation tasks, case (b).
const TASKS: usize = 100;
/// Warm-up conversations per task, case (b) (not measured).
const WARMUP_CONVERSATIONS: usize = 1;
/// Measured conversations per task, case (b).
const MEASURED_CONVERSATIONS: usize = 30;
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
    let started = Instant::now();
    println!(
        "proxy_overhead: reference proxy (history mode) vs the same simulated upstream called directly"
    );
    println!(
        "machine: {} cores; all servers and clients in this process on 127.0.0.1",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    println!("load average before: {}", load_average());
    let (rtt50, rtt99) = cross_thread_round_trip()?;
    println!(
        "calibration: blocking loopback ping-pong between two threads, {MEASURED} round trips: p50 {:.1} us, p99 {:.1} us",
        rtt50 * 1000.0,
        rtt99 * 1000.0
    );
    let plan = [
        (Case::Sequential, Placement::OneThread),
        (Case::Concurrent, Placement::ProxyApart),
        (Case::Sequential, Placement::Shared),
        (Case::Concurrent, Placement::Shared),
    ];
    let mut results = Vec::new();
    for (case, placement) in plan {
        if selected(case.name()) || selected(placement.label()) {
            results.push(run_case(case, placement)?);
        }
    }
    println!("load average after: {}", load_average());
    println!();
    print_table(&results);
    println!(
        "\nlatency = client send to last response byte; added = via proxy - direct; percentiles type 7; total time {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The two measured situations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// (a): one request at a time, `instant` profile.
    Sequential,
    /// (b): 100 concurrent conversations, `fast` profile.
    Concurrent,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::Sequential => "(a) sequential, instant",
            Case::Concurrent => "(b) 100 concurrent, fast",
        }
    }
}

/// Where the client, the upstreams and the proxy run (see the module
/// documentation for why each case runs where it does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Everything on one current-thread runtime.
    OneThread,
    /// The proxy on a one-worker runtime of its own; client and upstreams on
    /// a current-thread runtime.
    ProxyApart,
    /// Everything on one two-worker runtime, as `continuity-bench run` hosts
    /// its proxies. Printed without a target.
    Shared,
}

impl Placement {
    fn label(self) -> &'static str {
        match self {
            Placement::OneThread => "one thread",
            Placement::ProxyApart => "proxy apart",
            Placement::Shared => "shared (info)",
        }
    }

    /// The runtime of the client and the upstreams.
    fn main_runtime(self) -> std::io::Result<tokio::runtime::Runtime> {
        match self {
            Placement::OneThread | Placement::ProxyApart => {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            }
            Placement::Shared => tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build(),
        }
    }

    /// The proxy's own runtime, when it has one.
    fn proxy_runtime(self) -> std::io::Result<Option<tokio::runtime::Runtime>> {
        match self {
            Placement::ProxyApart => tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("proxy")
                .enable_all()
                .build()
                .map(Some),
            Placement::OneThread | Placement::Shared => Ok(None),
        }
    }
}

/// Runs `case` with its parts placed as `placement` says. The runtimes are
/// dropped here, outside any of them, once the case has stopped its servers.
fn run_case(case: Case, placement: Placement) -> anyhow::Result<CaseResult> {
    let main = placement
        .main_runtime()
        .context("cannot start the tokio runtime")?;
    let apart = placement
        .proxy_runtime()
        .context("cannot start the proxy's tokio runtime")?;
    let proxy = apart
        .as_ref()
        .map_or_else(|| main.handle().clone(), |rt| rt.handle().clone());
    let result = main.block_on(async move {
        let run = async move {
            match case {
                Case::Sequential => sequential_instant(proxy).await,
                Case::Concurrent => concurrent_fast(proxy).await,
            }
        };
        if placement == Placement::Shared {
            // On the workers, as a client inside a tokio application runs,
            // not on the thread that blocks on the runtime (every hop from
            // there would cross threads).
            tokio::spawn(run).await?
        } else {
            run.await
        }
    });
    drop(apart);
    drop(main);
    let (direct, proxy, samples) = result?;
    let (target_p50, target_p99) = match (case, placement) {
        (_, Placement::Shared) => (None, None),
        (Case::Sequential, _) => (Some(0.1), Some(0.5)),
        (Case::Concurrent, _) => (Some(0.5), None),
    };
    Ok(CaseResult {
        case,
        placement,
        samples,
        direct,
        proxy,
        target_p50,
        target_p99,
    })
}

/// Round-trip time (ms, p50 and p99) of a few bytes over loopback between
/// two threads blocking in `read`: the price of waking a parked thread,
/// which every extra hop of a proxy on its own thread pays.
fn cross_thread_round_trip() -> anyhow::Result<(f64, f64)> {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let addr = listener.local_addr()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut socket, _) = listener.accept()?;
        socket.set_nodelay(true)?;
        let mut buf = [0u8; 64];
        loop {
            let n = socket.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            socket.write_all(&buf[..n])?;
        }
    });
    let mut socket = std::net::TcpStream::connect(addr)?;
    socket.set_nodelay(true)?;
    socket.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    let mut buf = [0u8; 4];
    let mut rtts = Vec::with_capacity(MEASURED);
    for i in 0..WARMUP + MEASURED {
        let start = Instant::now();
        socket.write_all(b"ping")?;
        socket.read_exact(&mut buf)?;
        if i >= WARMUP {
            rtts.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    drop(socket);
    echo.join()
        .map_err(|_| anyhow::anyhow!("the echo thread panicked"))??;
    Ok(p50_p99(rtts))
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

/// Direct and via-proxy (p50, p99) in ms, and the samples per path.
type Measured = ((f64, f64), (f64, f64), usize);

/// Result of one case.
struct CaseResult {
    case: Case,
    placement: Placement,
    samples: usize,
    direct: (f64, f64),
    proxy: (f64, f64),
    /// `None` for rows printed for information.
    target_p50: Option<f64>,
    target_p99: Option<f64>,
}

impl CaseResult {
    fn added(&self) -> (f64, f64) {
        (self.proxy.0 - self.direct.0, self.proxy.1 - self.direct.1)
    }

    /// Whether the targets are met; `None` when the row has none.
    fn met(&self) -> Option<bool> {
        let (p50, p99) = self.added();
        let target = self.target_p50?;
        Some(p50 <= target && self.target_p99.is_none_or(|t| p99 <= t))
    }
}

/// Case (a): one request at a time, `instant` profile. Returns the direct
/// and via-proxy (p50, p99) and the samples per path.
async fn sequential_instant(proxy_runtime: Handle) -> anyhow::Result<Measured> {
    let data = dataset(20);
    let bench = Bench::start(&data, LatencyProfile::INSTANT, &proxy_runtime).await?;
    let bodies: Vec<Bytes> = data
        .conversations
        .iter()
        .flat_map(|c| (1..=c.n_turns()).map(move |t| (c, t)))
        .map(|(c, t)| scripted_request(c, t))
        .collect::<anyhow::Result<_>>()?;
    let mut paths = bench.paths().await?;
    let mut direct = Vec::with_capacity(MEASURED);
    let mut proxy = Vec::with_capacity(MEASURED);
    for i in 0..WARMUP + MEASURED {
        let body = &bodies[i % bodies.len()];
        let proxy_first = i % 2 == 1;
        let (first, _) = paths.send(proxy_first, body).await?;
        let (second, _) = paths.send(!proxy_first, body).await?;
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
    Ok((p50_p99(direct), p50_p99(proxy), MEASURED))
}

/// Case (b): 100 concurrent conversation tasks, `fast` profile. Returns
/// what [`sequential_instant`] returns.
async fn concurrent_fast(proxy_runtime: Handle) -> anyhow::Result<Measured> {
    let per_task = WARMUP_CONVERSATIONS + MEASURED_CONVERSATIONS;
    let data = Arc::new(dataset(TASKS * per_task));
    let bench = Arc::new(Bench::start(&data, LatencyProfile::FAST, &proxy_runtime).await?);
    let mut tasks = Vec::with_capacity(TASKS);
    for task in 0..TASKS {
        let bench = Arc::clone(&bench);
        let data = Arc::clone(&data);
        tasks.push(tokio::spawn(async move {
            let mut paths = bench.paths().await?;
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
                    let (first, first_body) = paths.send(proxy_first, &body).await?;
                    let (second, second_body) = paths.send(!proxy_first, &body).await?;
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
    let samples = direct.len();
    Ok((p50_p99(direct), p50_p99(proxy), samples))
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
        "| {:<24} | {:<13} | {:>7} | {:>19} | {:>19} | {:>17} | {:<25} | {:<4} |",
        "case",
        "placement",
        "n/path",
        "direct p50/p99 ms",
        "via proxy p50/p99",
        "added p50/p99 ms",
        "target (added)",
        "met?"
    );
    let widths = [26, 15, 9, 21, 21, 19, 27, 6];
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    println!("|{}|", rule.join("|"));
    for r in results {
        let (a50, a99) = r.added();
        let target = match (r.target_p50, r.target_p99) {
            (Some(p50), Some(p99)) => format!("p50 <= {p50:.1}, p99 <= {p99:.1} ms"),
            (Some(p50), None) => format!("p50 <= {p50:.1} ms"),
            (None, _) => "none (for information)".to_string(),
        };
        let met = match r.met() {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        println!(
            "| {:<24} | {:<13} | {:>7} | {:>19} | {:>19} | {:>17} | {:<25} | {:<4} |",
            r.case.name(),
            r.placement.label(),
            r.samples,
            format!("{:.3} / {:.3}", r.direct.0, r.direct.1),
            format!("{:.3} / {:.3}", r.proxy.0, r.proxy.1),
            format!("{a50:+.3} / {a99:+.3}"),
            target,
            met
        );
    }
}
