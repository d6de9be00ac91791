//! What a canary run reports at its end: one documented result type,
//! [`CanaryReport`], written as `summary.json` (checked against
//! `schema/canary.schema.json` in a test) and rendered as `report.md`
//! ([`markdown`]). It carries the resolved setup (probe set version, model,
//! endpoint, policy numbers, clock), per route what the rounds of this run
//! observed and the state it ended in, every decision taken, and the ignore
//! list written.
//!
//! It holds no wall-clock time and no measured duration of the run, so a
//! `--no-wait` rerun with the same inputs writes the same report (the
//! evidence quoted in decisions may still carry a measured time to first
//! token).

pub mod markdown;
mod tally;

pub use tally::Tally;

use super::clock::Timestamp;
use super::ignore::IgnoreList;
use super::policy::{Mode, Policy};
use super::record::LogRecord;
use super::summary::RouteStatus;
use cb_contracts::ContractName;
use cb_report::{Exporter, ReportError};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which endpoint was probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointKind {
    /// The built-in simulated endpoint.
    Simulated,
    /// A real OpenRouter-compatible API.
    Remote,
}

/// The endpoint, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndpointInfo {
    /// Simulated or remote.
    pub kind: EndpointKind,
    /// The base URL of a remote endpoint (the simulated one's port changes
    /// every run and is not reported).
    pub url: Option<String>,
    /// The simulated endpoint's transport-error rate on every route.
    pub transient_rate: Option<f64>,
}

/// The state machine's clock over this run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockInfo {
    /// Rounds back to back on a simulated clock (`--no-wait`).
    pub no_wait: bool,
    /// Time between rounds, seconds.
    pub interval_secs: u64,
    /// The clock at this run's first round.
    pub first_round_at: Option<Timestamp>,
    /// The clock at this run's last round.
    pub last_round_at: Option<Timestamp>,
}

/// Rounds of this run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundsInfo {
    /// `--rounds`, when given.
    pub requested: Option<u64>,
    /// Rounds completed by this run.
    pub completed: u64,
    /// The state machine's number of this run's first round (a restarted
    /// canary continues the count of its state file).
    pub first: Option<u64>,
    /// The state machine's number of this run's last round.
    pub last: Option<u64>,
}

/// One contract's verdicts on one route over the run's scored rounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ContractTally {
    /// Rounds it passed on trusted probes.
    pub pass: u64,
    /// Rounds it passed only on a probe marked weak (no evidence of health).
    pub weak_pass: u64,
    /// Rounds it failed.
    pub fail: u64,
    /// Rounds it was undetermined.
    pub undetermined: u64,
}

/// One route over the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteReport {
    /// The route id (endpoint tag, else provider name).
    pub route: String,
    /// The provider name the endpoint listed, when discovered.
    pub provider_name: Option<String>,
    /// Whether it is the positive control (probed, never scored).
    pub control: bool,
    /// Its state at the end of the run.
    pub status: RouteStatus,
    /// The contract of its quarantine, when quarantined.
    pub contract: Option<ContractName>,
    /// Seconds left in quarantine at the last round, when quarantined.
    pub time_left_secs: Option<u64>,
    /// Rounds it was probed in.
    pub rounds_probed: u64,
    /// Rounds scored (not frozen).
    pub rounds_scored: u64,
    /// Rounds in which every contract checked passed on trusted probes.
    pub rounds_clean: u64,
    /// Rounds frozen by a transport error (timeout, 429, 5xx, ...).
    pub rounds_frozen: u64,
    /// Rounds frozen because a reply came from another route.
    pub rounds_pinning_not_honoured: u64,
    /// Requests sent to it.
    pub requests: u64,
    /// Quarantines decided (or, observing, that would be) in this run.
    pub quarantines: u64,
    /// Capacity alerts raised for it in this run.
    pub alerts: u64,
    /// Per contract, its verdicts over the scored rounds.
    pub contracts: BTreeMap<ContractName, ContractTally>,
}

/// Where the run's files are, as given or defaulted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilesInfo {
    /// The state file.
    pub state: String,
    /// The decision log.
    pub log: String,
    /// The ignore list written.
    pub ignore_out: String,
    /// The reviewed list read (`built-in` or a path).
    pub reviewed: String,
    /// The runtime list read, if any.
    pub runtime: Option<String>,
}

/// The report of one canary run (`summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CanaryReport {
    /// `continuity-bench`.
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// [`crate::probe::PROBE_SET_VERSION`].
    pub probe_set_version: String,
    /// The endpoint probed.
    pub endpoint: EndpointInfo,
    /// The model probed.
    pub model: String,
    /// Master seed.
    pub seed: u64,
    /// Observe or enforce.
    pub mode: Mode,
    /// The quarantine rules' numbers and the control.
    pub policy: Policy,
    /// The ttft contract's limit, milliseconds.
    pub ttft_limit_ms: u64,
    /// Deadline of one probe request, milliseconds.
    pub probe_timeout_ms: u64,
    /// The clock.
    pub clock: ClockInfo,
    /// The rounds.
    pub rounds: RoundsInfo,
    /// Whether Ctrl-C stopped the run (the round in progress was abandoned).
    pub interrupted: bool,
    /// Requests sent in all (one per probe copy per route per round, 2 more
    /// per language anomaly).
    pub requests: u64,
    /// Copies of each probe per route and round (`--repeats`).
    pub repeats: crate::probe::Repeats,
    /// Per contract, the rarest defect this budget catches within 24 h with
    /// chance 90 % (`canary power`); empty when the calibration set could
    /// not be read.
    pub power: Vec<crate::power::Floor>,
    /// Rounds in which the filtering probe was weak or unverified.
    pub weak_probe_rounds: u64,
    /// Per route, by name.
    pub routes: Vec<RouteReport>,
    /// Every decision and state change of the run except plain transport
    /// freezes (those are counted per route), in order.
    pub decisions: Vec<LogRecord>,
    /// The ignore list written after the last round.
    pub ignore: IgnoreList,
    /// The files.
    pub files: FilesInfo,
}

/// `summary.json`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SummaryJson;

impl Exporter<CanaryReport> for SummaryJson {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }

    fn render(&self, data: &CanaryReport) -> Result<Vec<u8>, ReportError> {
        let mut bytes = serde_json::to_vec_pretty(data).map_err(|e| ReportError::Render {
            file: "summary.json",
            message: e.to_string(),
        })?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// `report.md`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportMarkdown;

impl Exporter<CanaryReport> for ReportMarkdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }

    fn render(&self, data: &CanaryReport) -> Result<Vec<u8>, ReportError> {
        Ok(markdown::render(data).into_bytes())
    }
}

/// The exporters of a canary report.
pub fn exporters() -> Vec<Box<dyn Exporter<CanaryReport>>> {
    vec![Box::new(ReportMarkdown), Box::new(SummaryJson)]
}

#[cfg(test)]
mod tests;
