//! Driver throughput: how many requests per second the harness's driver
//! sends and reads against the simulated upstream, beside `wrk` on the same
//! endpoint with the same request, in one run (issue 15: the driver must
//! reach at least half of `wrk`'s rate, or it, not the gateway, is what a
//! run at thousands of conversations measures).
//!
//! One simulated upstream (`instant` latency, no fault) serves on
//! 127.0.0.1. The request is turn 1 of the default dataset's first
//! conversation, as the driver sends it (system prompt, then the user's
//! message), not streamed. The driver side is the driver's own HTTP path
//! ([`continuity_bench::client::send`] with [`driver_client`]: body read
//! under the size cap, JSON parsed, the answer extracted) on
//! [`CONNECTIONS`] concurrent tasks for [`SECONDS`] seconds; `wrk` gets the
//! same connection count, two threads and the same duration, with the body
//! posted by a Lua script. Both count only complete responses (the driver
//! counts HTTP 200 only, and the run fails on any other).
//!
//! On a 2-core machine the load generator and the upstream share the
//! cores in both measurements, so the ratio, not the absolute rate, is the
//! figure. `wrk` must be on `PATH` (`apt install wrk`); without it the bench
//! prints the driver's rate and says how to get the comparison.
//!
//! Run with `cargo bench --bench driver_throughput`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::{bail, ensure, Context};
use continuity_bench::client::{driver_client, send, SendOptions, SystemKind, Target};
use continuity_bench::dataset::{Conversation, BUILTIN_DATASETS};
use continuity_bench::faults::{FaultPlan, FaultProfile};
use continuity_bench::openai::{ChatMessage, ChatRequest};
use continuity_bench::upstream::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Concurrent connections of both load generators.
const CONNECTIONS: usize = 64;
/// Threads of each load generator (wrk's `-t`, the driver's runtime
/// workers).
const DRIVER_THREADS: usize = 2;
/// Alternated driver and wrk measurements.
const ROUNDS: usize = 2;
/// Length of each measurement.
const SECONDS: u64 = 10;
/// Master seed of the upstream (no draw matters: nothing is faulted).
const SEED: u64 = 42;
/// A profile whose only planned turn never occurs: no fault fires.
const NO_FAULT: &str = "name = \"none\"\nturns = [99]\n[modes.api_error]\nweight = 1\n";
/// The goal of the issue: the driver reaches this share of `wrk`'s rate.
const GOAL: f64 = 0.5;

fn main() -> anyhow::Result<()> {
    println!(
        "driver_throughput: the driver vs wrk, same simulated upstream, same request, \
         {CONNECTIONS} connections, {SECONDS} s each, {ROUNDS} rounds"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    runtime.block_on(bench())
}

async fn bench() -> anyhow::Result<()> {
    let builtin = &BUILTIN_DATASETS[0];
    let dataset = continuity_bench::dataset::Dataset::parse(builtin.text, Path::new(builtin.path))?;
    let profile = FaultProfile::parse(NO_FAULT, "benches/driver_throughput.rs")?;
    let turns = dataset.conversations.iter().map(Conversation::n_turns);
    let plan = FaultPlan::new(profile, SEED, turns.collect());
    let ctx = UpstreamContext::new(
        plan,
        ConversationIndex::of_dataset(&dataset),
        LatencyProfile::INSTANT,
        SEED,
        1,
    );
    let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let upstreams = start_pair("bench", local, local, ctx.clone()).await?;
    let base = upstreams.primary.url();
    let first = dataset
        .conversations
        .first()
        .and_then(|c| c.turns.first())
        .context("the default dataset has no conversation")?;
    let request = ChatRequest {
        model: continuity_bench::config::DRIVER_MODEL.to_string(),
        messages: vec![
            message("system", continuity_bench::driver::SYSTEM_PROMPT),
            message("user", &first.user),
        ],
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    let body = serde_json::to_string(&request)?;
    println!(
        "endpoint: {base}/v1/chat/completions ({} request bytes)",
        body.len()
    );

    // Alternated rounds, so that a change in the machine's load between
    // the two measurements shows as a spread rather than as a ratio.
    let (mut drivers, mut wrks) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        let driver = driver_on_own_runtime(&base, &request).await?;
        println!("round {round}: driver {driver:>8.0} requests/s");
        drivers.push(driver);
        let seen_before = ctx.log.len();
        let Some(wrk) = wrk_rate(&base, &body).await? else {
            println!(
                "wrk: not found on PATH; install it (`apt install wrk`) to print the comparison"
            );
            upstreams.shutdown().await;
            return Ok(());
        };
        let attempts = ctx.log.len() - seen_before;
        ensure!(
            attempts > 0,
            "wrk reported a rate but the upstream logged none of its requests"
        );
        println!("round {round}: wrk    {wrk:>8.0} requests/s ({attempts} requests logged by the upstream)");
        wrks.push(wrk);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (driver, wrk) = (mean(&drivers), mean(&wrks));
    let ratio = driver / wrk;
    let verdict = if ratio >= GOAL { "met" } else { "NOT met" };
    println!(
        "mean over {ROUNDS} rounds: driver {driver:.0}, wrk {wrk:.0} requests/s; driver / wrk {:.0} % \
         (goal: at least {:.0} %): {verdict}",
        ratio * 100.0,
        GOAL * 100.0
    );
    upstreams.shutdown().await;
    Ok(())
}

fn message(role: &str, text: &str) -> ChatMessage {
    ChatMessage {
        role: role.to_string(),
        content: serde_json::Value::String(text.to_string()),
        tool_calls: None,
        tool_call_id: None,
    }
}

/// [`driver_rate`] on a runtime of its own, as wrk is a process of its
/// own: the upstream keeps its two workers in both measurements.
async fn driver_on_own_runtime(base: &str, request: &ChatRequest) -> anyhow::Result<f64> {
    let (base, request) = (base.to_string(), request.clone());
    tokio::task::spawn_blocking(move || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(DRIVER_THREADS)
            .enable_all()
            .build()
            .context("cannot start the driver's tokio runtime")?
            .block_on(driver_rate(&base, &request))
    })
    .await
    .context("the driver's thread panicked")?
}

/// The driver's rate: [`CONNECTIONS`] tasks sending `request` back to back
/// for [`SECONDS`]; any answer other than a 200 with text fails the bench.
async fn driver_rate(base: &str, request: &ChatRequest) -> anyhow::Result<f64> {
    let client = driver_client()?;
    let target = Arc::new(Target {
        name: "bench".into(),
        kind: SystemKind::Gateway,
        url: base.to_string(),
        headers: Vec::new(),
        model: None,
    });
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let stop = started + Duration::from_secs(SECONDS);
    let mut tasks = Vec::with_capacity(CONNECTIONS);
    for _ in 0..CONNECTIONS {
        let (client, target, done, request) = (
            client.clone(),
            Arc::clone(&target),
            Arc::clone(&done),
            request.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let options = SendOptions::new(Duration::from_secs(10));
            while Instant::now() < stop {
                let exchange = send(&client, &target, &request, options).await;
                if exchange.status != Some(200) || exchange.answer.is_none() {
                    bail!(
                        "the upstream answered {:?}: {:?}",
                        exchange.status,
                        exchange.error
                    );
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }));
    }
    for task in tasks {
        task.await.context("a driver task panicked")??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    // Request counts are far below 2^52: exact in f64.
    #[allow(clippy::cast_precision_loss)]
    Ok(done.load(Ordering::Relaxed) as f64 / elapsed)
}

/// `wrk`'s rate on the same endpoint and body, `None` when `wrk` is not
/// installed. It runs on a blocking thread so the upstream keeps both
/// runtime workers.
async fn wrk_rate(base: &str, body: &str) -> anyhow::Result<Option<f64>> {
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("post.lua");
    let body_literal = serde_json::to_string(body)?;
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = {body_literal}\n\
             done = function(summary, latency, requests)\n  io.write(string.format(\"non-2xx-or-errors %d\\n\", \
             summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))\nend\n"
        ),
    )?;
    let url = format!("{base}/v1/chat/completions");
    let args = [
        format!("-t{DRIVER_THREADS}"),
        format!("-c{CONNECTIONS}"),
        format!("-d{SECONDS}s"),
        "-s".to_string(),
        script.display().to_string(),
        url,
    ];
    let output = tokio::task::spawn_blocking(move || Command::new("wrk").args(args).output())
        .await
        .context("the wrk thread panicked")?;
    let output = match output {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).context("cannot run wrk"),
    };
    let text = String::from_utf8_lossy(&output.stdout);
    ensure!(output.status.success(), "wrk failed: {text}");
    let field = |name: &str| {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(name)
                .map(str::trim)
                .map(str::to_string)
        })
    };
    let errors: u64 = field("non-2xx-or-errors")
        .and_then(|v| v.parse().ok())
        .context("wrk printed no error count")?;
    ensure!(
        errors == 0,
        "wrk saw {errors} errors or non-2xx answers:\n{text}"
    );
    let rate: f64 = field("Requests/sec:")
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("wrk printed no Requests/sec:\n{text}"))?;
    Ok(Some(rate))
}
