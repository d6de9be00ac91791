//! The `run` command's orchestration: load the dataset and fault plan, start
//! an upstream pair and a reference proxy per built-in system, replay every
//! run through the driver with one collector, score, summarise and write the
//! report. Ctrl-C (the cancellation token) stops the replay and the report of
//! what finished is still written.

use crate::config::{ResolvedConfig, RunConfig, FALLBACK_MODEL};
use crate::dataset::Dataset;
use crate::driver::{self, ConversationOutcome, DriverOptions, Target};
use crate::faults::{FaultPlan, FaultProfile, Role};
use crate::proxy::{self, ProxyConfig, ProxyMode};
use crate::record::{AttemptRecord, EventRecord, TurnRecord};
use crate::report::{self, ReportData};
use crate::scoring::{score_fast, AnchorIndex, Judge, Scored, Verdict, VerdictMethod};
use crate::server::ServerHandle;
use crate::summary::summarize;
use crate::upstream::{
    self, AttemptLog, ConversationIndex, LatencyProfile, UpstreamContext, UpstreamPair,
};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The system prompt every driver request starts with.
pub const SYSTEM_PROMPT: &str = "You are a helpful assistant. Answer briefly.";

/// Deadline of one preflight request.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(10);

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

/// The built-in systems: the two reference proxies.
const BUILTIN: [ProxyMode; 2] = [ProxyMode::Stateless, ProxyMode::History];

/// Servers kept alive for the duration of the run.
struct Systems {
    targets: Vec<Target>,
    _pairs: Vec<UpstreamPair>,
    _proxies: Vec<ServerHandle>,
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
    let plan = Arc::new(FaultPlan::new(profile, config.seed, turns));
    let latency = LatencyProfile::from_name(config.latency)
        .with_context(|| format!("unknown latency profile {:?}", config.latency))?;
    let run_cell = Arc::new(AtomicU32::new(1));
    let ctx = UpstreamContext {
        plan: Arc::clone(&plan),
        index: Arc::new(ConversationIndex::new(&dataset)),
        latency,
        seed: config.seed,
        run: Arc::clone(&run_cell),
        log: AttemptLog::default(),
        epoch: Instant::now(),
    };
    let mut systems = Systems {
        targets: Vec::new(),
        _pairs: Vec::new(),
        _proxies: Vec::new(),
    };
    if config.builtin {
        start_builtin(config, &ctx, &mut systems).await?;
    }
    start_gateways(config, &ctx, &mut systems).await?;
    let client = driver_client()?;
    for target in &systems.targets {
        let wait = if config.gateways.iter().any(|g| g.name == target.name) {
            config.gateway_wait
        } else {
            Duration::ZERO
        };
        preflight(&client, target, &config.model, wait)
            .await
            .map_err(|e| match gateway_hint(config, target) {
                Some(hint) => e.context(hint),
                None => e,
            })?;
    }
    let names: Vec<String> = systems.targets.iter().map(|t| t.name.clone()).collect();
    let resolved = config.resolved(dataset.conversations.len() as u32, names.clone());

    let options = DriverOptions {
        concurrency: config.concurrency,
        replay: config.replay,
        request_timeout: config.request_timeout,
        model: config.model.clone(),
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
        run_cell.store(run, Ordering::SeqCst);
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
    if let Some(judge) = &judge {
        judge_undetermined(&mut outcomes, &dataset, judge.judge.as_ref()).await;
    }
    let wall = started.elapsed();
    let attempts = ctx.log.snapshot();
    let resolved = ResolvedConfig {
        interrupted,
        ..resolved
    };
    let data = assemble(&resolved, &dataset, &plan, outcomes, attempts);
    report::write_report(&config.out, &data)?;
    Ok(RunOutcome {
        report_dir: config.out.clone(),
        data,
        interrupted,
        wall,
    })
}

/// Starts an upstream pair and a proxy for each built-in system.
async fn start_builtin(
    config: &RunConfig,
    ctx: &UpstreamContext,
    systems: &mut Systems,
) -> anyhow::Result<()> {
    let local: SocketAddr = ([127, 0, 0, 1], 0).into();
    for mode in BUILTIN {
        let name = mode.as_str();
        let pair = upstream::start_pair(name, local, local, ctx.clone())
            .await
            .with_context(|| format!("cannot start the simulated upstreams of {name}"))?;
        let mut proxy_config = ProxyConfig::new(mode, pair.primary.url(), pair.fallback.url());
        proxy_config.fallback_model = Some(FALLBACK_MODEL.to_string());
        proxy_config.attempt_timeout = config.attempt_timeout;
        proxy_config.deadline = config.request_timeout;
        proxy_config.seed = crate::seed::derive(config.seed, "proxy", mode as u64);
        let (handle, _state) = proxy::spawn(local, proxy_config)
            .await
            .with_context(|| format!("cannot start the {name} reference proxy"))?;
        systems.targets.push(Target {
            name: name.to_string(),
            url: handle.url(),
            headers: Vec::new(),
        });
        systems._pairs.push(pair);
        systems._proxies.push(handle);
    }
    Ok(())
}

/// Starts an upstream pair on the documented ports for each external
/// gateway and prints where the gateway must send its traffic.
async fn start_gateways(
    config: &RunConfig,
    ctx: &UpstreamContext,
    systems: &mut Systems,
) -> anyhow::Result<()> {
    for gateway in &config.gateways {
        let primary: SocketAddr = ([127, 0, 0, 1], gateway.primary_port).into();
        let fallback: SocketAddr = ([127, 0, 0, 1], gateway.fallback_port).into();
        let pair = upstream::start_pair(&gateway.name, primary, fallback, ctx.clone()).await.with_context(|| {
            format!(
                "cannot start the upstreams of gateway {:?} on ports {} and {}; free them or choose others with \
                 --upstream-ports {}=PRIMARY,FALLBACK",
                gateway.name, gateway.primary_port, gateway.fallback_port, gateway.name
            )
        })?;
        eprintln!(
            "gateway {} at {}: primary upstream http://{}/v1, fallback upstream http://{}/v1, model {:?}",
            gateway.name, gateway.url, pair.primary.addr, pair.fallback.addr, config.model
        );
        let headers = gateway
            .headers
            .iter()
            .map(|(h, v)| (h.clone(), v.0.clone()))
            .collect();
        systems.targets.push(Target {
            name: gateway.name.clone(),
            url: gateway.url.clone(),
            headers,
        });
        systems._pairs.push(pair);
    }
    Ok(())
}

/// What an external gateway must be configured to do, for error messages.
fn gateway_hint(config: &RunConfig, target: &Target) -> Option<String> {
    let g = config.gateways.iter().find(|g| g.name == target.name)?;
    Some(format!(
        "gateway {:?} must listen at {} and route model {:?} to the primary upstream http://127.0.0.1:{}/v1, \
         failing over to http://127.0.0.1:{}/v1 on 429, 5xx and timeouts (see examples/gateways/)",
        g.name, g.url, config.model, g.primary_port, g.fallback_port
    ))
}

/// The HTTP client of the driver: no proxy from the environment, no retries,
/// a connection pool large enough for the workers. Idle connections are
/// dropped after 2 s, before the 5 s keep-alive of common gateway servers
/// (uvicorn, Node) closes them under a request that reuses one.
fn driver_client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(512)
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .context("cannot build the HTTP client")
}

/// Sends one request that matches no conversation and insists on a usable
/// answer, so that a system that is down or misconfigured stops the run
/// before it starts rather than scoring 0 %.
///
/// A gateway that is still starting gets `wait` to come up (retried every
/// half second).
async fn preflight(
    client: &reqwest::Client,
    target: &Target,
    model: &str,
    wait: Duration,
) -> anyhow::Result<()> {
    let request = crate::openai::ChatRequest {
        model: model.to_string(),
        messages: vec![crate::openai::ChatMessage::new(
            "user",
            "continuity-bench preflight: please reply.",
        )],
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    let give_up = Instant::now() + wait;
    let mut reply = driver::client::send(client, target, &request, PREFLIGHT_TIMEOUT).await;
    while reply.error.is_some() && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(500)).await;
        reply = driver::client::send(client, target, &request, PREFLIGHT_TIMEOUT).await;
    }
    match reply.error {
        None => Ok(()),
        Some(error) => anyhow::bail!(
            "system {:?} at {} did not answer a preflight request: {error}. Check that it is running and \
             configured to use its upstreams, then run again.",
            target.name,
            target.url
        ),
    }
}

fn progress_bar(config: &RunConfig, run: u32, total: usize) -> ProgressBar {
    if config.quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("run {prefix} [{bar:30}] {pos}/{len} conversations · {msg}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(format!("{run}/{}", config.runs));
    bar
}

/// A finished conversation with the verdict on its final turn.
struct Collected {
    outcome: ConversationOutcome,
    scored: Scored,
}

/// The single collector: folds finished conversations, scores their final
/// turn and ticks the progress bar with the running CPR per system.
async fn collect(
    mut rx: mpsc::Receiver<ConversationOutcome>,
    dataset: Arc<Dataset>,
    anchors: Arc<AnchorIndex>,
    names: Vec<String>,
    progress: ProgressBar,
) -> Vec<Collected> {
    let mut collected = Vec::new();
    let mut tally = vec![(0u64, 0u64); names.len()];
    while let Some(outcome) = rx.recv().await {
        let conversation = &dataset.conversations[outcome.conversation];
        let scored = score_outcome(conversation, &outcome.turns, &anchors);
        let entry = &mut tally[outcome.system];
        entry.1 += 1;
        if scored.verdict == Verdict::Preserved {
            entry.0 += 1;
        }
        progress.inc(1);
        let status: Vec<String> = names
            .iter()
            .zip(&tally)
            .map(|(name, (kept, all))| {
                format!(
                    "{name} CPR {:.1} %",
                    100.0 * *kept as f64 / (*all).max(1) as f64
                )
            })
            .collect();
        progress.set_message(status.join(" · "));
        collected.push(Collected { outcome, scored });
    }
    progress.finish();
    collected
}

/// Judge requests in flight at once.
const JUDGE_CONCURRENCY: usize = 8;

/// Hands the answers the fast path left undetermined to the judge, a few at
/// a time. A judge that fails leaves the verdict undetermined (with the
/// judge's reason); it never stops the run.
async fn judge_undetermined(collected: &mut [Collected], dataset: &Dataset, judge: &dyn Judge) {
    use futures::StreamExt;
    let pending: Vec<usize> = (0..collected.len())
        .filter(|&i| {
            let c = &collected[i];
            c.scored.verdict == Verdict::Undetermined
                && c.scored.method == VerdictMethod::FastPath
                && c.outcome
                    .turns
                    .last()
                    .is_some_and(|t| t.is_final && t.error.is_none())
        })
        .collect();
    let judged: Vec<(usize, Scored)> = futures::stream::iter(pending)
        .map(|i| {
            let c = &collected[i];
            let conversation = &dataset.conversations[c.outcome.conversation];
            let answer = c
                .outcome
                .turns
                .last()
                .map(|t| t.answer.as_str())
                .unwrap_or_default();
            async move { (i, judge.judge(conversation, answer).await) }
        })
        .buffer_unordered(JUDGE_CONCURRENCY)
        .collect()
        .await;
    for (i, scored) in judged {
        collected[i].scored = scored;
    }
}

/// Scores a replayed conversation: the final turn's answer, or an error when
/// the conversation broke before (or at) it.
fn score_outcome(
    conversation: &crate::dataset::Conversation,
    turns: &[TurnRecord],
    anchors: &AnchorIndex,
) -> Scored {
    match turns.last() {
        Some(last) if last.is_final && last.error.is_none() => {
            score_fast(conversation, Some(&last.answer), anchors)
        }
        Some(last) => Scored {
            verdict: Verdict::Error,
            method: VerdictMethod::FastPath,
            reason: if last.is_final {
                last.error.clone().unwrap_or_default()
            } else {
                format!(
                    "conversation broke at turn {}: {}",
                    last.turn,
                    last.error.clone().unwrap_or_default()
                )
            },
            bleed_from: Vec::new(),
        },
        None => Scored {
            verdict: Verdict::Error,
            method: VerdictMethod::FastPath,
            reason: "no request was sent".to_string(),
            bleed_from: Vec::new(),
        },
    }
}

/// Builds the report data: turn rows, one event per faulted final turn with
/// its attempts, and the summary.
fn assemble(
    resolved: &ResolvedConfig,
    dataset: &Dataset,
    plan: &FaultPlan,
    mut collected: Vec<Collected>,
    attempts: Vec<AttemptRecord>,
) -> ReportData {
    collected.sort_by_key(|c| (c.outcome.run, c.outcome.system, c.outcome.conversation));
    let mut final_attempts: HashMap<(u32, &str, &str, u32), (u32, u32)> = HashMap::new();
    for a in &attempts {
        let counts = final_attempts
            .entry((a.run, a.system.as_str(), a.conversation.as_str(), a.turn))
            .or_default();
        match a.role {
            Role::Primary => counts.0 += 1,
            Role::Fallback => counts.1 += 1,
        }
    }
    let mut events = Vec::new();
    for c in &collected {
        let o = &c.outcome;
        let conversation = &dataset.conversations[o.conversation];
        let Some(fault_mode) = plan.final_turn_mode(o.run, o.conversation) else {
            continue;
        };
        let last = o.turns.last();
        let n = conversation.n_turns() as u32;
        let system = &resolved.systems[o.system];
        let (primary_attempts, fallback_attempts) = final_attempts
            .get(&(o.run, system.as_str(), conversation.id.as_str(), n))
            .copied()
            .unwrap_or_default();
        events.push(EventRecord {
            run: o.run,
            system: system.clone(),
            conversation: conversation.id.clone(),
            turns: n,
            fault_mode,
            client_status: last.and_then(|t| t.status),
            latency_ms: last.map(|t| t.latency_ms).unwrap_or_default(),
            verdict: c.scored.verdict,
            method: c.scored.method,
            reason: c.scored.reason.clone(),
            bleed_from: c.scored.bleed_from.join(";"),
            answer_excerpt: last
                .map(|t| t.answer.chars().take(EXCERPT_CHARS).collect())
                .unwrap_or_default(),
            primary_attempts,
            fallback_attempts,
        });
    }
    let turns: Vec<TurnRecord> = collected
        .into_iter()
        .flat_map(|c| c.outcome.turns)
        .collect();
    let summary = summarize(
        &report::summary_context(resolved, run_notes(resolved.interrupted)),
        &events,
        &attempts,
    );
    ReportData {
        config: resolved.clone(),
        turns,
        events,
        attempts,
        summary,
    }
}

/// The notes every report of a run carries: what the figures mean.
pub fn run_notes(interrupted: bool) -> Vec<String> {
    let mut notes = vec![
        "The upstreams are simulated: the model answers only from the messages it receives, so a fallback \
         that is not sent the history cannot answer the probe. With this model the CPR gap between `stateless` \
         and `history` is by construction; it is a calibration of the harness, not a finding about gateways."
            .to_string(),
        "What the run does test: faults happen on the wire (the primary really holds the connection past the \
         proxy's timeout, really answers 503 with an error body, really answers 429 with Retry-After); the \
         gateway's error classification and failover path fire; the history reaches the fallback intact; \
         answers carry no other conversation's facts; and what forwarding the history costs in latency."
            .to_string(),
    ];
    if interrupted {
        notes.push("The run was interrupted (Ctrl-C): the figures cover only the conversations that finished.".into());
    }
    notes
}
