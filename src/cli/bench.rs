//! The flags of `bench`: measurements of the systems themselves rather
//! than of their answers; `bench overhead` is what each system adds over a
//! direct call to the same simulated upstream when nothing fails.

use super::SystemOptions;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// The measurements of `bench`.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// What each system adds over a direct call to the same simulated
    /// upstream when nothing fails: a no-gateway baseline measured first
    /// and interleaved with the systems in a seeded random order, repeated
    /// trials, added p50 and p99 with 95 % intervals at each concurrency,
    /// plain (to the last byte) and streamed (to the first data event),
    /// and each gateway process's peak memory and CPU when its PID is
    /// known. The reference proxies run as processes of their own.
    Overhead(OverheadArgs),
}

/// Arguments of `bench overhead`.
#[derive(Debug, Args)]
pub struct OverheadArgs {
    /// Which systems are measured: --systems FILE, or the flags of `run`.
    #[command(flatten)]
    pub systems: SystemOptions,
    /// How they are measured.
    #[command(flatten)]
    pub measure: OverheadOptions,
    /// Master seed (the order of the trials).
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Report directory (overhead.md, overhead.json). Default:
    /// reports/overhead-<UTC timestamp>. A directory that holds files is
    /// refused unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an existing, non-empty --out directory.
    #[arg(long)]
    pub force: bool,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How an overhead measurement runs; `grade --overhead` uses the defaults.
#[derive(Debug, Clone, Args)]
pub struct OverheadOptions {
    /// Clients sending at once, comma-separated, each a closed loop (its
    /// next request when its last one is answered). The lowest is the
    /// floor a point is rig-limited against.
    #[arg(long, value_delimiter = ',', default_value = "1,64", value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub concurrency: Vec<u16>,
    /// Plain, streamed or both, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_enum,
        default_value = "plain,stream"
    )]
    pub modes: Vec<ModeArg>,
    /// Trials of each (system, concurrency, mode), interleaved.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub trials: u32,
    /// Measured requests per trial (pooled over the trials, 200 x 5 bounds
    /// a p99 from both sides at 95 %).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(10..=1_000_000))]
    pub requests: u32,
    /// Warm-up requests per trial, left out of the figures (at least one
    /// per client).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmup: u32,
    /// The simulated upstream's fixed time to first token (no jitter): a
    /// provider's wait, so that the rig idles between requests as it would.
    #[arg(long, default_value = "10ms", value_parser = humantime::parse_duration)]
    pub upstream_delay: Duration,
    /// Deadline of one request; a later answer is a failure.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub deadline: Duration,
    /// A gateway's process, to read its memory and CPU from /proc:
    /// NAME=PID, repeatable (the process and every process below it are
    /// read). The reference proxies' processes are known without it.
    #[arg(long = "pid", value_name = "NAME=PID", value_parser = name_pid)]
    pub pids: Vec<(String, u32)>,
}

/// A mode of `--modes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// `stream: false`, latency to the last byte.
    Plain,
    /// `stream: true`, latency to the first data event.
    Stream,
}

impl From<ModeArg> for cb_overhead::schedule::Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Plain => Self::Plain,
            ModeArg::Stream => Self::Stream,
        }
    }
}

/// `NAME=PID`.
pub(super) fn name_pid(text: &str) -> Result<(String, u32), String> {
    let (name, pid) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=PID (e.g. --pid litellm=12345)"))?;
    let pid = pid
        .trim()
        .parse::<u32>()
        .map_err(|_| format!("`{pid}` in --pid {name}=… is not a process id"))?;
    if name.trim().is_empty() {
        return Err(format!("--pid ={pid} names no system"));
    }
    Ok((name.trim().to_string(), pid))
}
