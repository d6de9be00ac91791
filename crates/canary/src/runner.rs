//! The `canary` command's work, in the library so tests run it in process:
//! claim the report directory, start the simulated endpoint (offline) or
//! address the real one, discover the routes, check the control, then run
//! rounds. Each round: ask the machine which language each route gets,
//! probe every route, run the quarantine rules, append the decisions to the
//! log, save the state atomically, write the merged ignore list, and print
//! the round's summary. At the end (the rounds asked for, or Ctrl-C, which
//! abandons the round in progress), the report of what finished.
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
use super::machine::Machine;
use super::output::{decision_line, render_round};
use super::probe::PROBE_SET_VERSION;
use super::prober::{ProbeTarget, Prober, ProberSettings};
use super::record::LogRecord;
use super::report::{
    exporters, CanaryReport, ClockInfo, EndpointInfo, EndpointKind, FilesInfo, RoundsInfo, Tally,
};
use super::state::{self, StateError};
use super::summary::summarise;
use crate::config::{CanaryConfig, CanaryEndpoint, CanaryReleaseConfig};
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
fn append_log(path: &Path, records: &[LogRecord]) -> Result<(), CanaryError> {
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
    let dir = match &config.out {
        OutDir::Default(path) => claim_unique(path)?,
        OutDir::Given { path, force } => claim_given(path, *force)?,
    };
    let files = OutputFiles::resolve(config, &dir);
    let mut machine = Machine::from_state(state::load_or_default(&files.state)?);

    let client = cb_systems::driver_client().map_err(|e| CanaryError::Client(e.to_string()))?;
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
    let routes = resolve_routes(config, &client, &base, &headers, sim.as_ref()).await?;
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
        client,
        ProbeTarget {
            chat_url: format!("{base}/chat/completions"),
            headers,
            model: config.model.clone(),
        },
        &contracts,
        ProberSettings {
            deadline: config.probe_timeout,
            max_response_bytes: config.max_response_bytes,
            concurrency: config.concurrency,
        },
    )?;

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
    let mut tally = Tally::new(&routes, config.policy.control.as_deref());
    let mut ignore_list = IgnoreList::merged(&config.reviewed, &runtime, &machine, start, mode);
    let mut interrupted = false;
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
        let asked: Vec<(Route, Language)> = routes
            .iter()
            .map(|r| (r.clone(), machine.language_for(&r.id)))
            .collect();
        let probes = tokio::select! {
            _ = cancel.cancelled() => {
                interrupted = true;
                print(&format!("interrupted: round {number} abandoned, nothing of it is kept\n"));
                break;
            }
            probes = prober.round(&asked) => probes,
        };
        let evidence: Vec<_> = probes.iter().map(|p| p.evidence.clone()).collect();
        let decisions = machine.round(now, &evidence, &config.policy);
        append_log(&files.log, &decisions.records)?;
        state::save(&files.state, machine.state())?;
        if let Some(path) = &config.runtime {
            match ignore::read_list(path, ListKind::Runtime) {
                Ok(list) => runtime = list,
                Err(e) => print(&format!(
                    "warning: {e}; keeping the runtime list read before\n"
                )),
            }
        }
        ignore_list = IgnoreList::merged(&config.reviewed, &runtime, &machine, now, mode);
        ignore_list.write(&files.ignore)?;
        tally.add(&probes, &decisions);
        let summary = summarise(&machine, &decisions);
        print(&render_round(&summary, &decisions));
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
        probe_set_version: PROBE_SET_VERSION.to_string(),
        endpoint: match &config.endpoint {
            CanaryEndpoint::Simulated(sim) => EndpointInfo {
                kind: EndpointKind::Simulated,
                url: None,
                transient_rate: Some(sim.transient_rate),
            },
            CanaryEndpoint::Remote { url, .. } => EndpointInfo {
                kind: EndpointKind::Remote,
                url: Some(url.clone()),
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
    })
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The routes to probe: `--routes` (with the simulated endpoint's provider
/// names when offline), else the endpoint's listing.
async fn resolve_routes(
    config: &CanaryConfig,
    client: &reqwest::Client,
    base: &str,
    headers: &[(String, Secret)],
    sim: Option<&SimEndpoint>,
) -> Result<Vec<Route>, CanaryError> {
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
    Ok(discover::discover(
        client,
        base,
        &config.model,
        headers,
        DISCOVERY_TIMEOUT.min(config.probe_timeout.saturating_mul(4)),
        config.max_response_bytes,
    )
    .await?)
}

/// `canary release`: lifts `config.route`'s quarantine in the state file at
/// `now`, saves the state and appends the release to the log. Returns the
/// record and its line for a person.
///
/// # Errors
/// The state file cannot be read or written, the route is unknown or not
/// quarantined, or the log cannot be appended to.
pub fn release(
    config: &CanaryReleaseConfig,
    now: Timestamp,
) -> Result<(LogRecord, String), CanaryError> {
    let mut machine = Machine::from_state(state::load(&config.state)?);
    let now = machine
        .state()
        .last_round_at
        .map_or(now, |last| last.max(now));
    let record = machine.release(&config.route, now)?;
    state::save(&config.state, machine.state())?;
    if let Some(log) = &config.log {
        append_log(log, std::slice::from_ref(&record))?;
    }
    let line = decision_line(&record);
    Ok((record, line))
}
