//! Scale (issue 41): whether the harness costs the same per conversation at
//! any size, what it spends per HTTP request against the wire's own cost,
//! and whether a long-lived `upstreams` holds memory for the work it did.
//!
//! 1. **CPU per conversation** of `run --runs 1 --fast-forward` (both
//!    built-in systems) on generated datasets of 1,000, 10,000 and 100,000
//!    conversations (`CB_BENCH_SIZES=1000,10000` to choose), with its peak
//!    RSS; the largest size's figure over the 10,000 one is the ratio to
//!    watch (goal: within 20 %).
//! 2. **CPU per HTTP request** of the main job, `run --runs 5`: its CPU
//!    over the requests it made (the driver's, from `turns.csv`, and the
//!    upstreams', from `attempts.csv`), beside the wire's own cost measured
//!    in the same process run: a plain client (reqwest, 64 connections)
//!    sending 20,000 requests to the simulated upstream (`instant`, no
//!    fault) in this process, so that the client's and the server's CPU
//!    are both counted, as they are in a run (goal: the ratio at most 2).
//!    Both are measured in [`ROUNDS`] alternating rounds and the medians
//!    compared: the wire's own figure moves by half from one round to the
//!    next on this machine, so a single ratio says little.
//! 3. **`upstreams` memory**: its RSS after 10,000 and after 500,000
//!    requests from the same plain client (goal: within 20 MB).
//!
//! The binary is the one cargo builds for the bench (release), run as a
//! child; CPU and peak RSS come from `/usr/bin/time` when present, else
//! CPU only from `/proc/self/stat`. Linux only. The figures are ratios on
//! one machine: an absolute figure says little on a shared one.
//!
//! Run with `cargo bench --bench scale` (about 20 minutes with the 100,000
//! size on 2 cores; `CB_BENCH_PARTS=2,3` runs only parts 2 and 3).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::{bail, ensure, Context};
use continuity_bench::dataset::{Conversation, Dataset, BUILTIN_DATASETS};
use continuity_bench::faults::{FaultPlan, FaultProfile};
use continuity_bench::openai::{ChatMessage, ChatRequest};
use continuity_bench::upstream::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext};
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_continuity-bench");
/// A profile that faults only turn 11 (the last turn of the longest
/// conversations; `upstreams` refuses a profile that reaches no turn): the
/// bench sends turn 1, so no fault fires.
const NO_FAULT: &str = "name = \"none\"\nturns = [11]\n[modes.api_error]\nweight = 1\n";
/// Concurrent connections of the plain client.
const CONNECTIONS: u64 = 64;
/// Requests of the wire measurement.
const WIRE_REQUESTS: u64 = 20_000;
/// Alternating rounds of part 2 (the main job, then the wire).
const ROUNDS: usize = 5;

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let sizes: Vec<u64> = std::env::var("CB_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,10000,100000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .context("CB_BENCH_SIZES: counts, comma-separated")
        })
        .collect::<anyhow::Result<_>>()?;
    let parts = std::env::var("CB_BENCH_PARTS").unwrap_or_else(|_| "1,2,3".into());
    let part = |n: &str| parts.split(',').any(|p| p.trim() == n);
    println!("scale: {BIN}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let request = first_request()?;

    let mut per = Vec::new();
    if part("1") {
        println!("\n1. CPU per conversation, run --runs 1 --fast-forward, both built-in systems");
    }
    for &n in sizes.iter().filter(|_| part("1")) {
        let data = dir.path().join(format!("d{n}.jsonl"));
        let out = Command::new(BIN)
            .args(["generate", "--conversations", &n.to_string(), "--out"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        ensure!(out.success(), "generate {n} failed");
        let report = dir.path().join(format!("r{n}"));
        let t = timed(
            Command::new(BIN)
                .args([
                    "run",
                    "--runs",
                    "1",
                    "--fast-forward",
                    "--quiet",
                    "--dataset",
                ])
                .arg(&data)
                .arg("--out")
                .arg(&report),
        )?;
        let ms = t.cpu * 1000.0 / n as f64;
        println!(
            "  {n:>7} conversations: {:.1} s CPU, {ms:.2} ms per conversation, peak RSS {}, {:.1} s wall",
            t.cpu,
            t.rss_mb.map_or_else(|| "n/a".into(), |m| format!("{m:.0} MB")),
            t.wall
        );
        per.push((n, ms));
        std::fs::remove_file(&data)?;
        std::fs::remove_dir_all(&report)?;
    }
    if let (Some((_, base)), Some((n, last))) = (per.iter().find(|(n, _)| *n == 10_000), per.last())
    {
        println!(
            "  at {n} against 10000: {:.2} times the CPU per conversation (goal: at most 1.20)",
            last / base
        );
    }

    if part("2") {
        main_job(dir.path(), &runtime, &request)?;
    }
    if part("3") {
        println!("\n3. upstreams RSS, plain client, no fault, instant latency");
        runtime.block_on(upstreams_memory(dir.path(), &request))?;
    }
    Ok(())
}

/// Part 2: the main job's CPU per request against the wire's, in
/// [`ROUNDS`] alternating rounds; the medians are the figures.
fn main_job(dir: &Path, runtime: &tokio::runtime::Runtime, request: &str) -> anyhow::Result<()> {
    println!("\n2. CPU per HTTP request of run --runs 5, against the wire's own ({ROUNDS} rounds)");
    let (mut harness, mut wire) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        // A directory of its own each round: a row count is never read
        // from an earlier round's files.
        let report = dir.join(format!("main{round}"));
        let t = timed(
            Command::new(BIN)
                .args(["run", "--runs", "5", "--quiet", "--out"])
                .arg(&report),
        )?;
        let requests = rows(&report.join("turns.csv"))? + rows(&report.join("attempts.csv"))?;
        let per = t.cpu / requests as f64;
        let plain = runtime.block_on(wire_cost(request))?;
        println!(
            "  round {round}: run --runs 5 {:.2} s CPU, {:.1} s wall, {requests} requests, {:.0} µs per request; the wire {:.0} µs; ratio {:.2}",
            t.cpu,
            t.wall,
            per * 1e6,
            plain * 1e6,
            per / plain
        );
        harness.push(per);
        wire.push(plain);
    }
    let (harness, wire) = (median(&mut harness), median(&mut wire));
    println!("  median: run --runs 5 {:.0} µs per request", harness * 1e6);
    println!(
        "  median: the wire (plain client and the upstream, one process) {:.0} µs per request",
        wire * 1e6
    );
    println!(
        "  ratio of the medians: {:.2} (goal: at most 2)",
        harness / wire
    );
    Ok(())
}

/// The median of `values` (sorted in place); the mean of the middle two
/// for an even count.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// What a child cost.
struct Timed {
    cpu: f64,
    wall: f64,
    rss_mb: Option<f64>,
}

/// Runs `cmd` to completion (it must succeed), with its CPU, wall time and
/// peak RSS.
fn timed(cmd: &mut Command) -> anyhow::Result<Timed> {
    let started = Instant::now();
    if Path::new("/usr/bin/time").exists() {
        let out = tempfile::NamedTempFile::new()?;
        let mut wrapped = Command::new("/usr/bin/time");
        wrapped
            .args(["-f", "%U %S %M", "-o"])
            .arg(out.path())
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .stdout(Stdio::null());
        ensure!(wrapped.status()?.success(), "{cmd:?} failed");
        let text = std::fs::read_to_string(out.path())?;
        let f: Vec<f64> = text
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        ensure!(f.len() == 3, "/usr/bin/time wrote {text:?}");
        return Ok(Timed {
            cpu: f[0] + f[1],
            wall: started.elapsed().as_secs_f64(),
            rss_mb: Some(f[2] / 1024.0),
        });
    }
    let before = children_cpu()?;
    ensure!(
        cmd.stdout(Stdio::null()).status()?.success(),
        "{cmd:?} failed"
    );
    Ok(Timed {
        cpu: children_cpu()? - before,
        wall: started.elapsed().as_secs_f64(),
        rss_mb: None,
    })
}

/// Fields of `/proc/self/stat` after the command name: (utime, stime,
/// cutime, cstime) in seconds.
fn stat() -> anyhow::Result<[f64; 4]> {
    let text = std::fs::read_to_string("/proc/self/stat")?;
    let rest = text.rsplit_once(')').context("odd /proc/self/stat")?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3; utime is 14, so index 11 here.
    let tick = 100.0;
    let at = |i: usize| -> anyhow::Result<f64> {
        Ok(f.get(i).context("short stat")?.parse::<f64>()? / tick)
    };
    Ok([at(11)?, at(12)?, at(13)?, at(14)?])
}

fn children_cpu() -> anyhow::Result<f64> {
    let s = stat()?;
    Ok(s[2] + s[3])
}

fn own_cpu() -> anyhow::Result<f64> {
    let s = stat()?;
    Ok(s[0] + s[1])
}

/// Data lines of a CSV file (its header left out).
fn rows(path: &PathBuf) -> anyhow::Result<u64> {
    let file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    Ok(BufReader::new(file).lines().count().saturating_sub(1) as u64)
}

/// Turn 1 of the default dataset's first conversation, as the driver sends it.
fn first_request() -> anyhow::Result<String> {
    let dataset = builtin()?;
    let first = dataset
        .conversations
        .first()
        .and_then(|c| c.turns.first())
        .context("the default dataset has no conversation")?;
    let message = |role: &str, text: &str| ChatMessage::new(role, text);
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
    Ok(serde_json::to_string(&request)?)
}

fn builtin() -> anyhow::Result<Dataset> {
    let builtin = &BUILTIN_DATASETS[0];
    Ok(Dataset::parse(builtin.text, Path::new(builtin.path))?)
}

/// `count` requests of `body` to `url` from [`CONNECTIONS`] tasks; every
/// answer must be a 200.
async fn blast(url: &str, body: &str, count: u64) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS {
        let (client, next, url, body) = (
            client.clone(),
            Arc::clone(&next),
            url.to_string(),
            body.to_string(),
        );
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < count {
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await?;
                let status = r.status();
                let _ = r.bytes().await?;
                if status != 200 {
                    bail!("the upstream answered {status}");
                }
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// CPU per request of a plain client and the simulated upstream, both in
/// this process.
async fn wire_cost(body: &str) -> anyhow::Result<f64> {
    let dataset = builtin()?;
    let profile = FaultProfile::parse(NO_FAULT, "benches/scale.rs")?;
    let turns = dataset
        .conversations
        .iter()
        .map(Conversation::n_turns)
        .collect();
    let ctx = UpstreamContext::new(
        FaultPlan::new(profile, 42, turns),
        ConversationIndex::of_dataset(&dataset),
        LatencyProfile::INSTANT,
        42,
        1,
    );
    let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let pair = start_pair("bench", local, local, ctx).await?;
    let url = format!("{}/v1/chat/completions", pair.primary.url());
    blast(&url, body, 2_000).await?; // warm-up: connections, allocator
    let before = own_cpu()?;
    blast(&url, body, WIRE_REQUESTS).await?;
    let cpu = own_cpu()? - before;
    pair.shutdown().await;
    Ok(cpu / WIRE_REQUESTS as f64)
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

fn rss_mb(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no VmRSS")?;
    Ok(kb / 1024.0)
}

/// The standalone `upstreams`' RSS after 10,000 and after 500,000 requests.
async fn upstreams_memory(dir: &Path, body: &str) -> anyhow::Result<()> {
    let profile = dir.join("none.toml");
    std::fs::write(&profile, NO_FAULT)?;
    let (p, f) = (free_port()?, free_port()?);
    let mut child = Command::new(BIN)
        .args(["upstreams", "--latency", "instant", "--faults"])
        .arg(&profile)
        .args([
            "--primary",
            &format!("127.0.0.1:{p}"),
            "--fallback",
            &format!("127.0.0.1:{f}"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().context("no stdout")?).lines();
    loop {
        let line = lines.next().context("upstreams stopped before serving")??;
        if line.contains("press Ctrl-C") {
            break;
        }
    }
    let url = format!("http://127.0.0.1:{p}/v1/chat/completions");
    let pid = child.id();
    let mut done = 0u64;
    let mut at = Vec::new();
    for target in [10_000u64, 100_000, 250_000, 500_000] {
        blast(&url, body, target - done).await?;
        done = target;
        let rss = rss_mb(pid)?;
        println!("  after {done:>7} requests: {rss:.1} MB");
        at.push(rss);
    }
    child.kill()?;
    child.wait()?;
    if let (Some(first), Some(last)) = (at.first(), at.last()) {
        println!(
            "  growth from 10,000 to 500,000: {:+.1} MB (goal: within 20 MB)",
            last - first
        );
    }
    Ok(())
}
