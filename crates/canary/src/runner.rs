//! The `canary` command's work, in the library so tests run it in process:
//! take the state lock (one canary per state file: a second one stops at
//! once naming the holder), claim the report directory, start the simulated
//! endpoint (offline) or address the real one, discover the routes, check
//! the control, then run rounds. Each round: list the routes again (unless
//! `--routes` fixed them), re-read the runtime list, ask the machine which
//! language each route gets, probe every route, run the quarantine rules
//! (the reviewed and runtime lists' routes are out of production for the
//! floor), apply the operators' pending requests, append the decisions to
//! the log, save the state atomically, write the merged ignore list, notify,
//! and print the round's summary. A round in which no route could be scored
//! is an alert; a 401 or 403 from the endpoint stops the run at once (a bad
//! key is not a provider fault). At the end (the rounds asked for, or
//! Ctrl-C, which abandons the round in progress), the report of what
//! finished.
//!
//! The clock: under `--no-wait` rounds run back to back and the machine's
//! clock advances by `--interval` per round from [`NO_WAIT_START`] (or from
//! the state file's last round plus the interval), never from the wall
//! clock, so a rerun decides the same; otherwise each round runs at wall
//! time and the next starts `--interval` after it began.

use super::clock::Timestamp;
use super::discover::{self, DiscoverError, Route};
use super::endpoint::SimEndpoint;
use super::ignore::{self, IgnoreError, IgnoreList, ListKind};
use super::language::Language;
use super::lock::{LockError, StateLock};
use super::machine::Machine;
use super::notify::Notifier;
use super::output::render_round;
use super::prober::{ProbeTarget, Prober, ProberSettings};
use super::record::{LogRecord, RecordKind};
use super::report::{
    exporters, CanaryReport, ClockInfo, EndpointInfo, EndpointKind, FilesInfo, RoundsInfo, Tally,
};
use super::requests::apply_requests;
use super::state::{self, ClockKind, IgnoreOutputs, StateError};
use super::summary::summarise;
use crate::config::{display_url, CanaryConfig, CanaryEndpoint};
use cb_base::secret::Secret;
use cb_contracts::ContractSettings;
use cb_report::dir::OutDir;
use cb_report::dir::{claim_given, claim_unique, DirError};
use cb_report::ReportError;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Where the `--no-wait` clock starts without a state file:
/// 2025-01-01T00:00:00Z.
pub const NO_WAIT_START: i64 = 1_735_689_600;

/// Deadline of the route listing request.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a canary run stopped.
#[derive(Debug, thiserror::Error)]
pub enum CanaryError {
    /// The report directory cannot be used.
    #[error(transparent)]
    Dir(#[from] DirError),
    /// The routes could not be listed.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// `--control` is not among the discovered routes.
    #[error("--control {control:?} is not one of the routes the endpoint lists ({routes}); name one of them, or give the routes with --routes")]
    Control {
        /// The control given.
        control: String,
        /// The routes listed, comma-separated.
        routes: String,
    },
    /// The simulated endpoint could not start.
    #[error("cannot start the simulated endpoint on 127.0.0.1: {0}; free a local port or pass --endpoint")]
    Simulated(std::io::Error),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The contracts could not be configured.
    #[error("{0}")]
    Contracts(#[from] cb_contracts::SettingsError),
    /// The state file.
    #[error(transparent)]
    State(#[from] StateError),
    /// An ignore list.
    #[error(transparent)]
    Ignore(#[from] IgnoreError),
    /// The decision log could not be appended to.
    #[error("cannot append to the decision log {path}: {source}; check the --log path and that its folder is writable")]
    Log {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A manual release was refused.
    #[error(transparent)]
    Release(#[from] super::machine::ReleaseError),
    /// Another canary holds the state, or the lock cannot be used.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The operator request folder cannot be used.
    #[error(transparent)]
    Request(super::requests::RequestError),
    /// The endpoint refused the key.
    #[error("the endpoint answered HTTP {status} to the key in the environment variable {var} ({detail}): a refused key is not a provider fault, so the canary stops; put a valid key in {var} (or name another variable with --key-env)")]
    KeyRefused {
        /// 401 or 403.
        status: u16,
        /// The key's variable.
        var: String,
        /// What the endpoint said, redacted.
        detail: String,
    },
    /// The report could not be written.
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// The files of a run, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFiles {
    /// The report directory.
    pub dir: PathBuf,
    /// The state file.
    pub state: PathBuf,
    /// The decision log.
    pub log: PathBuf,
    /// The ignore list written.
    pub ignore: PathBuf,
}

impl OutputFiles {
    fn resolve(config: &CanaryConfig, dir: &Path) -> Self {
        let or =
            |given: &Option<PathBuf>, name: &str| given.clone().unwrap_or_else(|| dir.join(name));
        OutputFiles {
            dir: dir.to_path_buf(),
            state: or(&config.state, "state.json"),
            log: or(&config.log, "decisions.jsonl"),
            ignore: or(&config.ignore_out, "ignore.json"),
        }
    }
}

/// What a run did.
#[derive(Debug)]
pub struct CanaryOutcome {
    /// The report written.
    pub report: CanaryReport,
    /// The files.
    pub files: OutputFiles,
    /// Whether Ctrl-C stopped it.
    pub interrupted: bool,
    /// Rounds in which at least one route (the control excepted) was
    /// scored; a run whose every round scored nothing exits non-zero.
    pub rounds_scored: u64,
}

/// The wall clock as a [`Timestamp`] (the clock of a run that waits).
pub fn wall_now() -> Timestamp {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    Timestamp::from_unix(secs).unwrap_or_else(|_| no_wait_start())
}

fn no_wait_start() -> Timestamp {
    Timestamp::from_unix(NO_WAIT_START).unwrap_or_else(|_| wall_now())
}

/// Appends `records` to the log, one JSON line each, redacted.
pub(crate) fn append_log(path: &Path, records: &[LogRecord]) -> Result<(), CanaryError> {
    if records.is_empty() {
        return Ok(());
    }
    let mut text = String::new();
    for r in records {
        text.push_str(&r.to_json_line().map_err(|e| CanaryError::Log {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?);
    }
    let text = cb_base::secret::redact_owned(text);
    let failed = |source| CanaryError::Log {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(failed)?;
    file.write_all(text.as_bytes()).map_err(failed)?;
    file.flush().map_err(failed)
}

/// Runs the canary as `config` says, printing each round's summary with
/// `print`, until the rounds asked for are done or `cancel` fires.
///
/// # Errors
/// [`CanaryError`]: a file, the endpoint or the routes cannot be used
/// (before the first probe), or a file cannot be written after a round.
pub async fn execute(
    config: &CanaryConfig,
    cancel: CancellationToken,
    print: &mut (dyn FnMut(&str) + Send),
) -> Result<CanaryOutcome, CanaryError> {
    let started_at = wall_now().to_string();
    // With --state given, the lock comes first: a second canary stops at
    // once, before it claims a report directory.
    let early = match &config.state {
        Some(path) => Some(StateLock::acquire(path, &started_at)?),
        None => None,
    };
    let dir = match &config.out {
        OutDir::Default(path) => claim_unique(path)?,
        OutDir::Given { path, force } => claim_given(path, *force)?,
    };
    let files = OutputFiles::resolve(config, &dir);
    let _lock = match early {
        Some(lock) => lock,
        None => StateLock::acquire(&files.state, &started_at)?,
    };
    let mut machine = Machine::from_state(state::load_or_default(&files.state)?);
    let notifier = Notifier::new(config.notify.clone(), config.webhook.clone())
        .map_err(CanaryError::Client)?;

    let client = cb_client::driver_client().map_err(|e| CanaryError::Client(e.to_string()))?;
    let (sim, base, headers) = match &config.endpoint {
        CanaryEndpoint::Simulated(sim) => {
            let endpoint = SimEndpoint::start(sim.clone())
                .await
                .map_err(CanaryError::Simulated)?;
            let url = endpoint.url();
            (Some(endpoint), url, Vec::new())
        }
        CanaryEndpoint::Remote {
            url, authorization, ..
        } => (
            None,
            url.clone(),
            vec![("Authorization".to_string(), authorization.clone())],
        ),
    };
    if let Some(sim) = &sim {
        // The first listing is the first round's.
        sim.begin_round(machine.state().rounds + 1);
    }
    let mut routes = resolve_routes(config, &client, &base, &headers, sim.as_ref(), &mut *print)
        .await
        .map_err(|e| key_refused(config, e))?;
    if let Some(control) = &config.policy.control {
        if !routes.iter().any(|r| &r.id == control) {
            return Err(CanaryError::Control {
                control: control.clone(),
                routes: routes
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let contracts = ContractSettings {
        ttft_limit: config.ttft_limit,
        ..ContractSettings::default()
    };
    let prober = Prober::new(
        client.clone(),
        ProbeTarget {
            chat_url: cb_base::url::join(&base, "/chat/completions"),
            headers: headers.clone(),
            model: config.model.clone(),
            probes: config.probes.clone(),
        },
        &contracts,
        ProberSettings {
            deadline: config.probe_timeout,
            max_response_bytes: config.max_response_bytes,
            concurrency: config.concurrency,
            repeats: config.repeats,
            seed: config.seed,
        },
    )?;

    let power = match super::power::rates::measured_once() {
        Ok(measured) => {
            let floors = super::power::floors(config.repeats, config.interval, measured);
            print(&format!(
                "power: at --repeats {}, one round every {}, a route is quarantined within 24 h \
                 with chance ≥ 90 % when at least this share of its replies breaks a contract: \
                 {}. `canary power` shows the rest, and the budget a rarer defect needs.\n",
                config.repeats,
                super::clock::human_span(config.interval),
                super::power::floors_line(&floors)
            ));
            floors
        }
        Err(e) => {
            print(&format!(
                "warning: the detection power could not be worked out ({e}); the rounds go on\n"
            ));
            Vec::new()
        }
    };

    let start = if config.no_wait {
        machine
            .state()
            .last_round_at
            .map_or_else(no_wait_start, |t| t.plus(config.interval))
    } else {
        wall_now()
    };
    let mode = config.policy.mode();
    let mut runtime = match &config.runtime {
        Some(path) => ignore::read_list(path, ListKind::Runtime)?,
        None => Vec::new(),
    };
    machine.set_context(
        if config.no_wait {
            ClockKind::Simulated
        } else {
            ClockKind::Wall
        },
        IgnoreOutputs {
            ignore_out: files.ignore.clone(),
            reviewed: config.reviewed.clone(),
            runtime: config.runtime.clone(),
        },
    );
    let mut tally = Tally::new(&routes, config.policy.control.as_deref());
    let mut ignore_list = IgnoreList::merged(&config.reviewed, &runtime, &machine, start, mode);
    let mut interrupted = false;
    let mut rounds_scored = 0u64;
    loop {
        if config.rounds.is_some_and(|n| tally.completed >= n) {
            break;
        }
        if cancel.is_cancelled() {
            interrupted = true;
            break;
        }
        let began = tokio::time::Instant::now();
        let now = if config.no_wait {
            let steps = u32::try_from(tally.completed).unwrap_or(u32::MAX);
            start.plus(config.interval.saturating_mul(steps))
        } else {
            wall_now()
        };
        let number = machine.state().rounds + 1;
        if let Some(sim) = &sim {
            sim.begin_round(number);
        }
        // Routes are discovered every round: a new route is probed from its
        // first round, a route gone from the listing leaves the round (and
        // the floor). A listing that fails after the first keeps the last.
        if config.routes.is_none() && tally.completed > 0 {
            match resolve_routes(config, &client, &base, &headers, sim.as_ref(), &mut *print).await
            {
                Ok(listed) => routes = listed,
                Err(e) => {
                    let e = key_refused(config, e);
                    if matches!(e, CanaryError::KeyRefused { .. }) {
                        return Err(e);
                    }
                    print(&format!("warning: {e}; probing the routes listed before\n"));
                }
            }
        }
        if let Some(path) = &config.runtime {
            match ignore::read_list(path, ListKind::Runtime) {
                Ok(list) => runtime = list,
                Err(e) => print(&format!(
                    "warning: {e}; keeping the runtime list read before\n"
                )),
            }
        }
        let asked: Vec<(Route, Language)> = routes
            .iter()
            .map(|r| (r.clone(), machine.language_in(&r.id, &config.languages)))
            .collect();
        let probes = tokio::select! {
            _ = cancel.cancelled() => {
                interrupted = true;
                print(&format!("interrupted: round {number} abandoned, nothing of it is kept\n"));
                break;
            }
            probes = prober.round(&asked, number) => probes,
        };
        if let CanaryEndpoint::Remote { key_env, .. } = &config.endpoint {
            if let Some((status, detail)) = probes.iter().find_map(|p| p.key_refused.clone()) {
                return Err(CanaryError::KeyRefused {
                    status,
                    var: key_env.clone(),
                    detail,
                });
            }
        }
        let evidence: Vec<_> = probes.iter().map(|p| p.evidence.clone()).collect();
        let excluded = config.reviewed.iter().chain(&runtime).cloned().collect();
        let mut decisions = machine.round_excluding(now, &evidence, &config.policy, &excluded);
        match no_route_scored(&decisions) {
            Some(reason) => {
                let text = format!("no route scored: {reason}");
                print(&format!("alert: {text}\n"));
                let record = LogRecord::new(
                    now,
                    decisions.round,
                    "*",
                    RecordKind::NoRouteScored,
                    mode,
                    text,
                );
                decisions.records.push(record);
            }
            None => rounds_scored += 1,
        }
        // Operators' requests, after the round and before anything is
        // written: what this round saves keeps them.
        let (released, problems) = apply_requests(&files.state, &mut machine, now);
        decisions.records.extend(released);
        for problem in problems {
            print(&format!("warning: {problem}\n"));
        }
        append_log(&files.log, &decisions.records)?;
        state::save(&files.state, machine.state())?;
        ignore_list = IgnoreList::merged(&config.reviewed, &runtime, &machine, now, mode);
        ignore_list.write(&files.ignore)?;
        tally.add(&probes, &decisions);
        let summary = summarise(&machine, &decisions);
        print(&render_round(&summary, &decisions));
        for failure in notifier.send_all(&decisions.records).await {
            print(&format!("warning: {failure}; the canary goes on\n"));
        }
        let more = config.rounds.is_none_or(|n| tally.completed < n);
        if !config.no_wait && more {
            tokio::select! {
                _ = cancel.cancelled() => {
                    interrupted = true;
                    break;
                }
                _ = tokio::time::sleep_until(began + config.interval) => {}
            }
        }
    }

    let report = CanaryReport {
        tool: cb_base::TOOL.to_string(),
        version: cb_base::VERSION.to_string(),
        probe_set_version: config.probes.version.clone(),
        endpoint: match &config.endpoint {
            CanaryEndpoint::Simulated(sim) => EndpointInfo {
                kind: EndpointKind::Simulated,
                url: None,
                transient_rate: Some(sim.transient_rate),
            },
            CanaryEndpoint::Remote { url, .. } => EndpointInfo {
                kind: EndpointKind::Remote,
                url: Some(display_url(url)),
                transient_rate: None,
            },
        },
        model: config.model.clone(),
        seed: config.seed,
        mode,
        policy: config.policy.clone(),
        ttft_limit_ms: duration_ms(config.ttft_limit),
        probe_timeout_ms: duration_ms(config.probe_timeout),
        clock: ClockInfo {
            no_wait: config.no_wait,
            interval_secs: config.interval.as_secs(),
            first_round_at: tally.first.map(|(_, t)| t),
            last_round_at: tally.last.map(|(_, t)| t),
        },
        rounds: RoundsInfo {
            requested: config.rounds,
            completed: tally.completed,
            first: tally.first.map(|(n, _)| n),
            last: tally.last.map(|(n, _)| n),
        },
        interrupted,
        requests: tally.requests,
        repeats: config.repeats,
        power,
        weak_probe_rounds: tally.weak_probe_rounds,
        routes: tally.rows(&machine, mode),
        decisions: tally.decisions.clone(),
        ignore: ignore_list,
        files: FilesInfo {
            state: files.state.display().to_string(),
            log: files.log.display().to_string(),
            ignore_out: files.ignore.display().to_string(),
            reviewed: config.reviewed_source.clone(),
            runtime: config.runtime.as_ref().map(|p| p.display().to_string()),
        },
    };
    cb_report::write_files(&files.dir, &report, &exporters())?;
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    Ok(CanaryOutcome {
        report,
        files,
        interrupted,
        rounds_scored,
    })
}

/// A discovery error that is the endpoint refusing the key, as
/// [`CanaryError::KeyRefused`]; any other error as it is.
fn key_refused(config: &CanaryConfig, error: DiscoverError) -> CanaryError {
    match (&error, &config.endpoint) {
        (
            DiscoverError::Status {
                status: status @ (401 | 403),
                body,
                ..
            },
            CanaryEndpoint::Remote { key_env, .. },
        ) => CanaryError::KeyRefused {
            status: *status,
            var: key_env.clone(),
            detail: body.clone(),
        },
        _ => CanaryError::Discover(error),
    }
}

/// Why no route (the control excepted) was scored this round, if none was.
fn no_route_scored(decisions: &super::machine::RoundDecisions) -> Option<String> {
    let routes: Vec<_> = decisions.routes.iter().filter(|r| !r.control).collect();
    if routes.is_empty() {
        return Some("no route was probed (none listed)".to_string());
    }
    if routes.iter().any(|r| r.frozen.is_none()) {
        return None;
    }
    let mut reasons: Vec<String> = routes
        .iter()
        .filter_map(|r| r.frozen.as_ref().map(|f| f.to_string()))
        .collect();
    reasons.sort();
    reasons.dedup();
    let first = reasons.first().cloned().unwrap_or_default();
    Some(match reasons.len() {
        1 => format!("every route: {first}"),
        n => format!("every route frozen, {n} distinct reasons, first: {first}"),
    })
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The routes to probe: `--routes` (with the simulated endpoint's provider
/// names when offline), else the endpoint's listing, each entry it refused
/// said as an alert.
async fn resolve_routes(
    config: &CanaryConfig,
    client: &reqwest::Client,
    base: &str,
    headers: &[(String, Secret)],
    sim: Option<&SimEndpoint>,
    print: &mut (dyn FnMut(&str) + Send),
) -> Result<Vec<Route>, DiscoverError> {
    if let Some(names) = &config.routes {
        return Ok(names
            .iter()
            .map(|name| Route {
                id: name.clone(),
                provider_name: sim
                    .and_then(|s| s.config().route(name))
                    .map(|r| r.provider_name.clone()),
            })
            .collect());
    }
    discover::discover(
        client,
        base,
        &config.model,
        headers,
        DISCOVERY_TIMEOUT.min(config.probe_timeout.saturating_mul(4)),
        config.max_response_bytes,
    )
    .await
    .map_err(|e| e.redacted(display_url))
    .map(|listing| {
        for refused in &listing.refused {
            print(&format!("alert: route listing: {refused}\n"));
        }
        listing.routes
    })
}
