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
pub mod config;
mod contracts;
pub mod cost;
#[cfg(test)]
mod dataset_at_scale;
pub mod merge;
pub mod order;
pub mod past;
pub mod record;
pub mod report;
pub mod shard;
pub mod summary;

pub use assemble::run_notes;

use crate::config::{RequestsInFlight, ResolvedConfig, RunConfig};
use anyhow::Context;
use assemble::{assemble, Roster};
use cb_client::{driver_client, SystemKind};
use cb_dataset::Dataset;
use cb_driver::{self as driver, gate, DriverOptions, GatePlan, RequestGate};
use cb_driver::{Systems, SystemsSpec, SYSTEM_PROMPT};
use cb_faults::{FaultPlan, FaultProfile};
use cb_report::dir::OutDir;
use cb_scoring::AnchorIndex;
use cb_upstream::provider::{PassThrough, Providers};
use cb_upstream::{ConversationIndex, UpstreamContext};
use collect::{collect, judge_undetermined, mark_bleed, progress_bar};
use report::ReportData;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Longest wait at the end of a run for upstream attempts still in flight
/// to be recorded (see [`cb_upstream::AttemptLog::settle`]).
const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// The same wait after Ctrl-C, kept short so the tool exits promptly.
const SETTLE_WAIT_INTERRUPTED: Duration = Duration::from_millis(200);

/// Longest answer excerpt kept in events.csv.
const EXCERPT_CHARS: usize = 160;

/// What a finished (or interrupted) run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Where the report was written; `None` when Ctrl-C came before any
    /// conversation finished (nothing to report).
    pub report_dir: Option<PathBuf>,
    /// Everything the report was made from (`None` as above).
    pub data: Option<ReportData>,
    /// Whether Ctrl-C cut the run short.
    pub interrupted: bool,
    /// Wall time from `started` (the start of the command) to the end.
    pub wall: Duration,
}

/// The inputs of a run, loaded and checked before any server starts.
struct Inputs {
    dataset: Arc<Dataset>,
    plan: FaultPlan,
    /// SHA-256 of the dataset's and the fault profile's bytes.
    digests: (String, String),
}

/// Loads the dataset and fault profile and checks that the profile means
/// something for them: its faulted turns occur in the dataset, and a
/// TIMEOUT hold outlasts the built-in proxies' attempt timeout.
fn load_inputs(config: &RunConfig) -> anyhow::Result<Inputs> {
    let dataset = Arc::new(Dataset::from_source(&config.dataset)?);
    let profile = FaultProfile::from_source(&config.faults)?;
    if config.systems.builtin {
        profile.check_hold(config.attempt_timeout)?;
    }
    if !config.systems.gateways.is_empty() {
        if let Some(warning) = profile.hold_warning() {
            eprintln!("{warning}");
        }
    }
    if config.shard.is_empty(dataset.conversations.len()) {
        anyhow::bail!(
            "--shard {}: the dataset has {} conversations, so shard {} of {} has none; split it into at most {} shards",
            config.shard,
            dataset.conversations.len(),
            config.shard.index,
            config.shard.count,
            dataset.conversations.len()
        );
    }
    // The plan is made for the whole dataset whatever the shard, so that
    // conversation i gets the fault a whole run gives it.
    let turns: Vec<usize> = dataset.conversations.iter().map(|c| c.n_turns()).collect();
    check_sent_turns(config, &profile, &turns)?;
    let plan = FaultPlan::new(profile, config.seed, turns);
    let reach = plan.check_reach()?;
    if reach.is_partial() {
        eprintln!("note: {reach}");
    }
    let digest = |source: &cb_base::source::Source, flag: &str| {
        shard::sha256(source).with_context(|| format!("cannot read {} {}", flag, source.label()))
    };
    let digests = (
        digest(&config.dataset, "--dataset")?,
        digest(&config.faults, "--faults")?,
    );
    Ok(Inputs {
        dataset,
        plan,
        digests,
    })
}

/// Refuses a fast-forward run whose fault profile faults a turn before a
/// conversation's final one: fast-forward sends only the final turn, so
/// such a fault never happens and every event would read as broken
/// before it.
fn check_sent_turns(
    config: &RunConfig,
    profile: &FaultProfile,
    turns: &[usize],
) -> anyhow::Result<()> {
    if config.replay != driver::Replay::FastForward {
        return Ok(());
    }
    let unsent = turns
        .iter()
        .find_map(|&n| profile.turns.turns_in(n).into_iter().find(|&t| t < n));
    if let Some(turn) = unsent {
        anyhow::bail!(
            "--fast-forward sends only each conversation's final turn, but the fault profile faults turn {turn} ({}), which is never sent; drop --fast-forward, or use a profile that faults the final turn",
            profile.turns
        );
    }
    Ok(())
}

/// The room for requests in flight under this process's open-file limit
/// (raised to its maximum first) and its memory budget (or
/// `--max-in-flight`); a capped plan is announced before the run.
fn request_gate(config: &RunConfig) -> anyhow::Result<(GatePlan, Arc<RequestGate>)> {
    let mut kinds = Vec::new();
    if config.systems.builtin {
        kinds.extend(cb_proxy::ProxyMode::ALL.map(SystemKind::Builtin));
    }
    kinds.extend(config.systems.gateways.iter().map(|_| SystemKind::Gateway));
    let plan = GatePlan::new(
        config.concurrency,
        &kinds,
        gate::open_file_limit(),
        config.max_in_flight,
    )?;
    if let Some(line) = plan.describe(config.concurrency) {
        cb_base::secret::eprintln!("{line}");
    }
    let gate = Arc::new(RequestGate::new(&plan));
    Ok((plan, gate))
}

/// Prints what the run costs at the provider and refuses to start a paid
/// run above `--cost-limit-tokens` without `--yes`; a provider on this
/// machine is free.
fn price(
    config: &RunConfig,
    dataset: &Dataset,
    plan: &FaultPlan,
    providers: &Providers,
) -> anyhow::Result<()> {
    let mut systems = Vec::new();
    if config.systems.builtin {
        systems.extend(cb_proxy::ProxyMode::ALL.map(|mode| match mode {
            cb_proxy::ProxyMode::Stateless => cost::Forwarding::LastMessage,
            cb_proxy::ProxyMode::History => cost::Forwarding::History,
        }));
    }
    systems.extend(
        config
            .systems
            .gateways
            .iter()
            .map(|_| cost::Forwarding::History),
    );
    let estimate = cost::estimate(cost::CostInputs {
        dataset,
        plan,
        runs: config.runs,
        replay: config.replay,
        systems: &systems,
        system_prompt: SYSTEM_PROMPT,
    });
    cb_base::secret::eprintln!("{}", providers.resolved().answered_by());
    cb_base::secret::eprintln!("{}", estimate.describe(config.runs));
    let free = providers.all_loopback();
    if free {
        cb_base::secret::eprintln!("the provider runs on this machine: no cost limit applies");
    }
    cost::gate(&estimate, config.cost_limit_tokens, config.yes, free)?;
    Ok(())
}

/// The responder that forwards to `providers`, each request bounded by the
/// proxies' attempt timeout and the response size cap.
fn pass_through(
    config: &RunConfig,
    providers: &Providers,
) -> anyhow::Result<Arc<dyn cb_upstream::Responder>> {
    Ok(Arc::new(PassThrough::new(
        providers,
        config.attempt_timeout,
        config.systems.max_response_bytes,
    )?))
}

/// Creates the report directory (unique by default; `--out` must be empty
/// unless `--force`) and proves it writable, before any request.
fn claim_out(config: &RunConfig) -> anyhow::Result<PathBuf> {
    Ok(match &config.out {
        OutDir::Default(base) => cb_report::dir::claim_unique(base)?,
        OutDir::Given { path, force } => cb_report::dir::claim_given(path, *force)?,
    })
}

/// Adds what reached each fallback to the summary, and with a squeezed
/// fallback what each failover event turned into.
fn fill_delivery(data: &mut report::ReportData, ctx: &UpstreamContext) {
    let survivals = ctx.log.take_survivals();
    summary::delivery::fill(
        &mut data.summary.systems,
        data.config.fallback_dialect,
        &survivals,
        &ctx.log.rejections(),
    );
    if ctx
        .plan
        .profile()
        .and_then(|p| p.fallback_context_tokens)
        .is_none()
    {
        return;
    }
    for system in &mut data.summary.systems {
        let events: Vec<(u32, String, u32, bool)> = data
            .events
            .iter()
            .filter(|e| e.system == system.name && e.stage == record::Stage::Failover)
            .map(|e| {
                let answered = e.client_status.is_some_and(|s| (200..300).contains(&s));
                (e.run, e.conversation.clone(), e.turn, answered)
            })
            .collect();
        let counts = summary::delivery::squeeze(&system.name, &events, &survivals, &data.attempts);
        if let Some(d) = system.fallback_delivery.as_mut() {
            d.squeeze = Some(counts);
        }
    }
}

/// Runs the whole benchmark described by `config`, in phases: inputs and
/// the report directory are checked first; then the systems start; then
/// the replay, the scoring and the report. Ctrl-C (`cancel`) in any phase
/// stops it promptly: before any conversation finished nothing is written;
/// after, the report of what finished is, marked interrupted. `started` is
/// when the command started, so the wall time covers the whole process.
///
/// # Errors
/// When the dataset or fault profile cannot be loaded or means nothing, the
/// report directory cannot be used, a server cannot be started, a system
/// does not answer before the run, a replay worker panicked (the replay is
/// stopped, the systems shut down and no report is written), or the report
/// cannot be written.
pub async fn execute(
    config: &RunConfig,
    cancel: CancellationToken,
    started: Instant,
) -> anyhow::Result<RunOutcome> {
    let Inputs {
        dataset,
        plan,
        digests,
    } = load_inputs(config)?;
    let gate = request_gate(config)?;
    let responder = match &config.providers {
        Some(providers) => {
            price(config, &dataset, &plan, providers)?;
            Some(pass_through(config, providers)?)
        }
        None => None,
    };
    let out = claim_out(config)?;
    let nothing = |out: &Path| {
        // Nothing finished: leave no empty report directory behind.
        let _ = std::fs::remove_dir(out);
        RunOutcome {
            report_dir: None,
            data: None,
            interrupted: true,
            wall: started.elapsed(),
        }
    };
    let index = ConversationIndex::of_dataset(&dataset);
    let mut ctx = match responder {
        Some(responder) => UpstreamContext::with_responder(plan, index, responder, 1),
        None => UpstreamContext::new(plan, index, config.latency, config.seed, 1),
    }
    .with_clients(cb_upstream::survived::ClientView {
        dataset: Arc::clone(&dataset),
        system_prompt: SYSTEM_PROMPT.to_string(),
    });
    let client = driver_client()?;
    let spec = SystemsSpec {
        systems: &config.systems,
        attempt_timeout: config.attempt_timeout,
        request_timeout: config.request_timeout,
        seed: config.seed,
        api: config.systems.api,
    };
    let systems = tokio::select! {
        systems = Systems::start(spec, &ctx, &client) => systems?,
        () = cancel.cancelled() => return Ok(nothing(&out)),
    };
    let names = systems.names();
    let resolved = ResolvedConfig {
        dataset_sha256: Some(digests.0.clone()),
        fault_profile_sha256: Some(digests.1.clone()),
        ..config.resolved(dataset.conversations.len() as u32, names.clone())
    };

    let options = DriverOptions {
        concurrency: config.concurrency,
        replay: config.replay,
        request_timeout: config.request_timeout,
        max_response_bytes: config.systems.max_response_bytes,
        model: config.systems.model.clone(),
        stream: config.stream,
        client: config.client,
        system_prompt: SYSTEM_PROMPT.to_string(),
        seed: config.seed,
        gate: Arc::clone(&gate.1),
        shard: config.shard,
        api: config.systems.api,
    };
    let judge = match &config.judge {
        Some(judge) => Some(cb_scoring::judge::start(judge, config.seed).await?),
        None => None,
    };
    let anchors = Arc::new(AnchorIndex::new(&dataset));
    // Room for every attempt up front: a request per turn sent, a quarter
    // more for failovers and retries. A run with a planned event on every
    // conversation outgrows it and the list doubles once (at 100,000
    // fast-forward conversations, 400,000 rows against 250,000); room
    // reserved from the planned events instead left that run's peak where
    // it was (docs/benchmarks.md).
    let sent: usize = config
        .shard
        .conversations(dataset.conversations.len())
        .map(|i| dataset.conversations[i].n_turns())
        .map(|n| n - driver::replay::first_sent(config.replay, n))
        .sum();
    ctx.log.reserve(
        sent.saturating_mul(systems.targets.len())
            .saturating_mul(config.runs as usize)
            / 4
            * 5,
    );
    // One finished conversation per system and conversation of the
    // shard, every run; the runs overlap (see `driver::run_all`).
    let per_run = systems.targets.len() * config.shard.len(dataset.conversations.len());
    let n = dataset.conversations.len();
    // Per run: which conversations have a planned event, and which of
    // those hold a connection (a TIMEOUT).
    let (planned, held): (Vec<Vec<bool>>, Vec<Vec<bool>>) = (1..=config.runs)
        .map(|run| {
            (0..n)
                .map(|i| match ctx.plan.event(run, i) {
                    Some(e) => (true, e.mode == cb_faults::FaultMode::Timeout),
                    None => (false, false),
                })
                .unzip()
        })
        .unzip();
    let runs: Vec<driver::RunOf<'_>> = held
        .iter()
        .zip(1..)
        .map(|(held, run)| driver::RunOf { run, held })
        .collect();
    ctx.set_run(1);
    for i in config.shard.conversations(n) {
        ctx.set_conversation_run(i, 1);
    }
    let (tx, rx) = mpsc::channel(256);
    let collector = tokio::spawn(collect(
        rx,
        Arc::clone(&dataset),
        Arc::clone(&anchors),
        names.clone(),
        planned,
        progress_bar(config, per_run * config.runs as usize),
        per_run * config.runs as usize,
    ));
    let on_change: driver::OnRunChange = {
        let ctx = ctx.clone();
        Arc::new(move |change| match change {
            driver::RunChange::Conversation(i, run) => ctx.set_conversation_run(i, run),
            driver::RunChange::Earliest(run) => ctx.set_run(run),
        })
    };
    let replayed = driver::run_all(
        &runs,
        &systems.targets,
        Arc::clone(&dataset),
        &options,
        cb_client::DriverClient::new(client.clone()),
        cancel.clone(),
        tx,
        on_change,
    )
    .await;
    let collected = collector.await;
    if let Err(panic) = replayed {
        // What was delivered is incomplete and the cut conversations would
        // read as stopped by Ctrl-C: no report is better than a false one.
        systems.shutdown().await;
        let _ = std::fs::remove_dir(&out);
        anyhow::bail!(
            "{panic}; no report was written. Please report it with the command and its --seed"
        );
    }
    let mut outcomes = collected.context("the collector stopped unexpectedly")?;
    if outcomes.iter().all(|c| c.outcome.turns.is_empty()) && cancel.is_cancelled() {
        return Ok(nothing(&out));
    }
    // The replay is over. A held TIMEOUT is recorded when the upstream sees
    // the gateway go away, which can be just after the gateway's answer
    // reached the driver (and what is still in flight is taken as it
    // stands either way); then the servers stop, so that their connections
    // and pools are freed before the rows are gathered and the text work
    // below starts.
    let settle = if cancel.is_cancelled() {
        SETTLE_WAIT_INTERRUPTED
    } else {
        SETTLE_WAIT
    };
    ctx.log.settle(settle).await;
    systems.shutdown().await;
    drop(client);
    let attempts = ctx.log.take_all();
    mark_bleed(&mut outcomes, &dataset, &anchors, &cancel);
    contracts::check_answers(
        &mut outcomes,
        &dataset,
        &config.contracts,
        contracts::Sent {
            system_prompt: SYSTEM_PROMPT,
            replay: config.replay,
            stream: config.stream,
            model: &config.systems.model,
        },
        &cancel,
    );
    if let Some(judge) = &judge {
        judge_undetermined(&mut outcomes, &dataset, judge.judge.as_ref(), &cancel).await;
    }
    // Scoring is done: the anchor index and the dataset are not needed
    // any more (the report reads the conversations' ids and lengths only),
    // and only what turns.csv holds of each answer is kept. Freed before
    // the report's rows are built, whose memory then takes their place.
    drop(anchors);
    let roster = Roster::of(&dataset);
    ctx.clients = None;
    drop(dataset);
    for c in &mut outcomes {
        for turn in &mut c.outcome.turns {
            turn.bound_answer();
        }
    }
    let interrupted = cancel.is_cancelled();
    let resolved = ResolvedConfig {
        interrupted,
        interrupted_by: config.stopped.signal().filter(|_| interrupted),
        requests_in_flight: RequestsInFlight {
            open_file_limit: gate.0.open_file_limit,
            cap: gate.0.cap,
            bound: gate.0.bound,
            peak: Some(gate.1.peak()),
        },
        ..resolved
    };
    let mut data = assemble(&resolved, &roster, &ctx.plan, outcomes, attempts);
    fill_delivery(&mut data, &ctx);
    report::write_report(&out, &data)?;
    if !config.shard.is_whole() {
        shard::ShardManifest::new(
            config.shard,
            config.seed,
            roster.ids(),
            digests.0,
            digests.1,
        )
        .write(&out)?;
    }
    Ok(RunOutcome {
        report_dir: Some(out),
        data: Some(data),
        interrupted,
        wall: started.elapsed(),
    })
}
