//! `bench overhead`: what each system under test adds over a direct call to
//! the same simulated upstream when nothing fails, measured the same way
//! for every system on the same machine in the same run.
//!
//! The pieces, each in its own module:
//! - [`schedule`]: trials interleaved in a seeded random order, the
//!   no-gateway baseline first;
//! - [`load`]: one slot's closed-loop load, plain or streamed;
//! - [`process`]: a gateway process's CPU and memory from `/proc`;
//! - [`figures`]: quantiles, added latency with intervals, rig-limited
//!   points;
//! - [`render`]: the tables;
//! - [`subjects`]: starting the upstreams, the reference proxies (each a
//!   process of its own, as a gateway is) and the preflight.

pub mod figures;
pub mod load;
pub mod process;
pub mod render;
pub mod schedule;
pub mod subjects;

use figures::{Key, Point, Pooled};
use schedule::{Mode, Slot, Subject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What to measure and how.
#[derive(Debug, Clone)]
pub struct OverheadConfig {
    /// The systems under test (the reference proxies when `builtin`, and
    /// the external gateways with their upstream ports and headers).
    pub systems: cb_driver::spec::SystemsConfig,
    /// The concurrencies, in the order measured.
    pub concurrency: Vec<usize>,
    /// Plain, streamed or both.
    pub modes: Vec<Mode>,
    /// Trials of each (subject, concurrency, mode).
    pub trials: u32,
    /// Measured requests per slot.
    pub requests: usize,
    /// Requests per slot left out of the figures, first (at least the
    /// concurrency, so that every client's first request is warm-up).
    pub warmup: usize,
    /// The simulated upstream's time to first token (a fixed delay, no
    /// jitter), so that the rig idles between requests as a provider would
    /// make it.
    pub upstream_delay: Duration,
    /// Deadline of one request.
    pub deadline: Duration,
    /// Master seed (the order of the trials).
    pub seed: u64,
    /// PIDs of external gateways' processes, by system name.
    pub pids: Vec<(String, u32)>,
    /// This program, to start the reference proxies as processes of their
    /// own (`proxy --mode …`).
    pub exe: PathBuf,
}

/// A gateway process's cost over the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessFigures {
    /// The system.
    pub system: String,
    /// Its process (the root of the tree read).
    pub pid: u32,
    /// Whether the harness started it (a reference proxy) or was given it.
    pub started_here: bool,
    /// Resident memory before its first slot, KiB (`None`: not read).
    pub rss_before_kib: Option<u64>,
    /// Peak resident memory when the measurement ended (`VmHWM`), KiB.
    pub peak_rss_kib: u64,
    /// Whether the peak was reset when the measurement started (so it is
    /// the measurement's); otherwise it counts from the process's start.
    pub peak_reset: bool,
    /// CPU seconds over its own slots.
    pub cpu_seconds: f64,
    /// Requests sent to it in those slots, warm-up included.
    pub requests: u64,
}

impl ProcessFigures {
    /// CPU milliseconds per 1,000 requests; `None` without a request.
    pub fn cpu_ms_per_1k(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.cpu_seconds * 1e6 / self.requests as f64)
    }
}

/// One slot as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotRecord {
    /// What ran.
    #[serde(flatten)]
    pub slot: Slot,
    /// Measured requests that succeeded.
    pub measured: usize,
    /// Measured requests that failed.
    pub failed: usize,
    /// Warm-up requests that failed: not in the figures, said beside them.
    #[serde(default)]
    pub warmup_failed: usize,
    /// The first warm-up failure's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_failure: Option<String>,
    /// Wall time of the slot, milliseconds.
    pub wall_ms: f64,
}

impl SlotRecord {
    /// What its failed warm-up requests were, in words (unescaped); `None`
    /// when none failed.
    pub fn warmup_note(&self) -> Option<String> {
        (self.warmup_failed > 0).then(|| {
            format!(
                "{} at C = {}, {}, trial {}: {} warm-up request(s) failed, first: {} (left out of the figures; the slot took {:.1} s)",
                self.slot.subject,
                self.slot.concurrency,
                self.slot.mode,
                self.slot.trial,
                self.warmup_failed,
                self.warmup_failure.as_deref().unwrap_or("?"),
                self.wall_ms / 1000.0
            )
        })
    }
}

/// What a measurement found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverheadReport {
    /// Master seed.
    pub seed: u64,
    /// The systems, in the order of the systems file.
    pub systems: Vec<String>,
    /// Concurrencies measured.
    pub concurrency: Vec<usize>,
    /// Modes measured.
    pub modes: Vec<Mode>,
    /// Trials per point.
    pub trials: u32,
    /// Measured requests per slot.
    pub requests: usize,
    /// Warm-up requests per slot (at least the concurrency).
    pub warmup: usize,
    /// The upstream's fixed time to first token, milliseconds.
    pub upstream_delay_ms: f64,
    /// The figures per (concurrency, mode), baseline first.
    pub points: Vec<Point>,
    /// Gateway processes read.
    pub processes: Vec<ProcessFigures>,
    /// Systems without a process reading, and why.
    pub unread: Vec<(String, String)>,
    /// Systems left out because they did not answer their preflight
    /// request, and why (none measured, none charged).
    #[serde(default)]
    pub left_out: Vec<(String, String)>,
    /// Attempts each system sent to its fallback upstream (none should:
    /// nothing fails here).
    pub fallback_attempts: Vec<(String, usize)>,
    /// Every slot, in the order run.
    pub slots: Vec<SlotRecord>,
    /// Stopped by Ctrl-C or SIGTERM before the last slot.
    pub interrupted: bool,
}

impl OverheadReport {
    /// Every (concurrency, mode) measured, in the order of the points,
    /// each once: the tables' headings.
    pub fn measured_at(&self) -> Vec<(usize, Mode)> {
        let mut at: Vec<(usize, Mode)> = self
            .points
            .iter()
            .map(|p| (p.concurrency, p.mode))
            .collect();
        at.dedup();
        at
    }

    /// The point of `subject` at (`concurrency`, `mode`).
    pub fn point(&self, subject: &Subject, concurrency: usize, mode: Mode) -> Option<&Point> {
        self.points
            .iter()
            .find(|p| &p.subject == subject && p.concurrency == concurrency && p.mode == mode)
    }
}

/// Starts the upstreams and systems, measures every slot of the schedule
/// and stops what it started. Stops early, with what finished, when
/// `cancel` fires.
///
/// # Errors
/// A server that cannot start, a system that does not answer its
/// preflight, or a bad configuration.
pub async fn measure(
    config: &OverheadConfig,
    cancel: CancellationToken,
    progress: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<OverheadReport> {
    anyhow::ensure!(
        !config.concurrency.is_empty(),
        "--concurrency lists no value"
    );
    anyhow::ensure!(!config.modes.is_empty(), "--modes lists no mode");
    let mut started = tokio::select! {
        started = subjects::start(config) => started?,
        () = cancel.cancelled() => anyhow::bail!("interrupted while the systems were starting; nothing was measured"),
    };
    let names = started.system_names();
    let slots = schedule::schedule(
        &names,
        &config.concurrency,
        &config.modes,
        config.trials,
        config.seed,
    );
    let mut pooled: BTreeMap<Key, Pooled> = BTreeMap::new();
    let mut records = Vec::with_capacity(slots.len());
    let mut costs: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let before: BTreeMap<String, u64> = started
        .pids()
        .filter_map(|(name, pid)| Some((name.to_string(), process::read(pid)?.rss_kib)))
        .collect();
    let reset: BTreeMap<String, bool> = started
        .pids()
        .map(|(name, pid)| (name.to_string(), process::reset_peak(pid)))
        .collect();
    let total = slots.len();
    for (i, slot) in slots.into_iter().enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        progress(&format!(
            "slot {}/{total}: {} {} at C = {}, trial {}",
            i + 1,
            slot.subject,
            slot.mode,
            slot.concurrency,
            slot.trial
        ));
        let endpoint = started.endpoint(&slot.subject)?;
        let bodies = started.requests_of(config, &slot.subject)?;
        let pid = started.pid(&slot.subject);
        let cpu_before = pid.and_then(process::read).map(|r| r.cpu_seconds);
        let warmup = config.warmup.max(slot.concurrency);
        let clock = std::time::Instant::now();
        let load = load::run_slot(
            endpoint,
            &bodies,
            slot.mode,
            slot.concurrency,
            warmup,
            config.requests,
        );
        let outcome = tokio::select! {
            o = load => o?,
            () = cancel.cancelled() => break,
        };
        let wall_ms = clock.elapsed().as_secs_f64() * 1000.0;
        if let (Some(b), Some(after)) = (cpu_before, pid.and_then(process::read)) {
            // A negative difference (a worker gone before it was reaped)
            // says nothing: the slot is left out of the cost.
            if after.cpu_seconds >= b {
                let cost = costs.entry(slot.subject.name().to_string()).or_default();
                cost.0 += after.cpu_seconds - b;
                cost.1 += outcome.sent as u64;
            }
        }
        let entry = pooled
            .entry((slot.concurrency, slot.mode, slot.subject.clone()))
            .or_default();
        entry.failed += outcome.failed;
        if entry.first_failure.is_none() {
            entry.first_failure.clone_from(&outcome.first_failure);
        }
        records.push(SlotRecord {
            measured: outcome.latencies_ms.len(),
            failed: outcome.failed,
            warmup_failed: outcome.warmup_failed,
            warmup_failure: outcome.first_warmup_failure.clone(),
            wall_ms,
            slot,
        });
        entry.latencies_ms.extend(outcome.latencies_ms);
    }
    let interrupted = records.len() < total;
    let mut processes = Vec::new();
    let mut unread = Vec::new();
    for name in &names {
        let Some(pid) = started.pid(&Subject::System(name.clone())) else {
            unread.push((
                name.clone(),
                "no PID given (--pid NAME=PID): CPU and memory not read".to_string(),
            ));
            continue;
        };
        let Some(end) = process::read(pid) else {
            unread.push((
                name.clone(),
                format!("process {pid} could not be read from /proc"),
            ));
            continue;
        };
        let (cpu_seconds, requests) = costs.get(name).copied().unwrap_or_default();
        processes.push(ProcessFigures {
            system: name.clone(),
            pid,
            started_here: started.started_here(name),
            rss_before_kib: before.get(name).copied(),
            peak_rss_kib: end.peak_rss_kib,
            peak_reset: reset.get(name).copied().unwrap_or(false),
            cpu_seconds,
            requests,
        });
    }
    let fallback_attempts = started.fallback_attempts();
    let left_out = std::mem::take(&mut started.left_out);
    started.stop().await;
    Ok(OverheadReport {
        seed: config.seed,
        points: figures::points(&pooled, &names),
        systems: names,
        concurrency: config.concurrency.clone(),
        modes: config.modes.clone(),
        trials: config.trials,
        requests: config.requests,
        warmup: config.warmup,
        upstream_delay_ms: config.upstream_delay.as_secs_f64() * 1000.0,
        processes,
        unread,
        left_out,
        fallback_attempts,
        slots: records,
        interrupted,
    })
}
