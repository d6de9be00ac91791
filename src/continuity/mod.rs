//! The `run` suite: the continuity experiment. Load the dataset and fault
//! plan, start the systems under test, replay every run through the driver
//! with one collector, score, summarise and write the report. Ctrl-C (the
//! cancellation token) stops the replay and the report of what finished is
//! still written.
//!
//! The suite owns its rows ([`record`]), its summary ([`summary`]) and its
//! report ([`report`]); it reuses the shared layers (systems, driver,
//! upstreams, scoring, stats, report machinery) and nothing imports it but
//! the `run` and `report` commands.

mod assemble;
mod collect;
pub mod record;
pub mod report;
pub mod summary;

pub use assemble::run_notes;

use crate::config::{ResolvedConfig, RunConfig};
use crate::dataset::Dataset;
use crate::driver::{self, DriverOptions};
use crate::faults::{FaultPlan, FaultProfile};
use crate::scoring::AnchorIndex;
use crate::systems::{driver_client, Systems, SystemsSpec, SYSTEM_PROMPT};
use crate::upstream::{ConversationIndex, UpstreamContext};
use anyhow::Context;
use assemble::assemble;
use collect::{collect, judge_undetermined, mark_bleed, progress_bar};
use report::ReportData;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Longest wait at the end of a run for upstream attempts still in flight
/// to be recorded (see [`AttemptLog::settle`]).
const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// Longest answer excerpt kept in events.csv.
const EXCERPT_CHARS: usize = 160;

/// What a finished (or interrupted) run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Where the report was written.
    pub report_dir: PathBuf,
    /// Everything the report was made from.
    pub data: ReportData,
    /// Whether Ctrl-C cut the run short.
    pub interrupted: bool,
    /// Wall time of the replay.
    pub wall: Duration,
}

/// Runs the whole benchmark described by `config`.
///
/// # Errors
/// When the dataset or fault profile cannot be loaded, a server cannot be
/// started, a system does not answer before the run, or the report cannot be
/// written.
pub async fn execute(config: &RunConfig, cancel: CancellationToken) -> anyhow::Result<RunOutcome> {
    let dataset = Arc::new(Dataset::load(&config.dataset)?);
    let profile = FaultProfile::load(&config.faults)?;
    let turns: Vec<usize> = dataset.conversations.iter().map(|c| c.n_turns()).collect();
    let plan = FaultPlan::new(profile, config.seed, turns);
    let ctx = UpstreamContext::new(
        plan,
        ConversationIndex::of_dataset(&dataset),
        config.latency,
        config.seed,
        1,
    );
    let client = driver_client()?;
    let spec = SystemsSpec {
        systems: &config.systems,
        attempt_timeout: config.attempt_timeout,
        request_timeout: config.request_timeout,
        seed: config.seed,
    };
    let systems = Systems::start(spec, &ctx, &client).await?;
    let names = systems.names();
    let resolved = config.resolved(dataset.conversations.len() as u32, names.clone());

    let options = DriverOptions {
        concurrency: config.concurrency,
        replay: config.replay,
        request_timeout: config.request_timeout,
        model: config.systems.model.clone(),
        stream: config.stream,
        system_prompt: SYSTEM_PROMPT.to_string(),
        seed: config.seed,
    };
    let judge = match &config.judge {
        Some(judge) => Some(crate::judge::start(judge, config.seed).await?),
        None => None,
    };
    let anchors = Arc::new(AnchorIndex::new(&dataset));
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for run in 1..=config.runs {
        if cancel.is_cancelled() {
            break;
        }
        ctx.set_run(run);
        let progress = progress_bar(
            config,
            run,
            systems.targets.len() * dataset.conversations.len(),
        );
        let (tx, rx) = mpsc::channel(256);
        let collector = tokio::spawn(collect(
            rx,
            Arc::clone(&dataset),
            Arc::clone(&anchors),
            names.clone(),
            progress,
        ));
        driver::run_once(
            run,
            &systems.targets,
            Arc::clone(&dataset),
            &options,
            client.clone(),
            cancel.clone(),
            tx,
        )
        .await;
        outcomes.extend(
            collector
                .await
                .context("the collector stopped unexpectedly")?,
        );
    }
    let interrupted = cancel.is_cancelled();
    mark_bleed(&mut outcomes, &dataset, &anchors);
    if let Some(judge) = &judge {
        judge_undetermined(&mut outcomes, &dataset, judge.judge.as_ref()).await;
    }
    let wall = started.elapsed();
    // A held TIMEOUT is recorded when the upstream sees the gateway go
    // away, which can be just after the gateway's answer reached the driver.
    ctx.log.settle(SETTLE_WAIT).await;
    let attempts = ctx.log.snapshot();
    let resolved = ResolvedConfig {
        interrupted,
        ..resolved
    };
    let data = assemble(&resolved, &dataset, &ctx.plan, outcomes, attempts);
    report::write_report(&config.out, &data)?;
    Ok(RunOutcome {
        report_dir: config.out.clone(),
        data,
        interrupted,
        wall,
    })
}
