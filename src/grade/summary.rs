//! The result type of `grade`: one documented structure that `summary.json`
//! serialises and that `report.html` and `report.md` are rendered from, so
//! `report DIR` renders the page again from that file alone. Its JSON form
//! is checked against `schema/grade.schema.json` in a test.

use cb_base::record::AttemptAction;
use cb_base::Role;
use cb_continuity::summary::ContractRate;
use cb_semantics::case::Severity;
use cb_semantics::verdict::Verdict;
use cb_stats::{Interval, Rate};
use serde::{Deserialize, Serialize};

/// Marks a `summary.json` written by `grade` (a run's has no `kind`).
pub const GRADE_KIND: &str = "grade";

/// What a `summary.json` is: written `"grade"` ([`GRADE_KIND`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryKind {
    /// A grade's.
    Grade,
}

/// Which kind of system was graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GradedKind {
    /// A built-in reference proxy.
    Builtin,
    /// A gateway at a URL.
    Gateway,
}

impl GradedKind {
    /// `builtin` or `gateway`, as the summary writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            GradedKind::Builtin => "builtin",
            GradedKind::Gateway => "gateway",
        }
    }
}

/// Everything a grade concluded, per system, with the counts behind every
/// rate and the evidence behind every scorecard cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeSummary {
    /// Always [`SummaryKind::Grade`].
    pub kind: SummaryKind,
    /// The tool that wrote it.
    pub tool: String,
    /// Its version.
    pub version: String,
    /// The master seed every random choice derives from.
    pub seed: u64,
    /// When it was written (UTC, RFC 3339).
    pub written_at: String,
    /// The systems file the systems came from, if one.
    pub systems_file: Option<String>,
    /// Whether Ctrl-C or SIGTERM cut the grade short (the figures cover
    /// what finished).
    pub interrupted: bool,
    /// Which signal cut it short, when one did (`sigint` or `sigterm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<crate::stop::Stop>,
    /// The continuity runs: the `paper` profile, then `degraded`.
    pub profiles: Vec<ProfileRun>,
    /// The semantics catalogue's profile (`fast` or `full`), `None` when it
    /// did not run.
    pub semantics_profile: Option<String>,
    /// Whose reading of a stream the catalogue's verdicts took
    /// (`--client`); `None` when it did not run (or in a grade written
    /// before the field, which read streams as neither SDK does).
    #[serde(default)]
    pub semantics_client: Option<cb_wire::sse::ClientProfile>,
    /// The semantics report's directory, relative to the grade directory.
    pub semantics_dir: Option<String>,
    /// The cases of the catalogue that ran, in catalogue order.
    pub cases: Vec<CaseInfo>,
    /// One entry per system, in the order of the systems file.
    pub systems: Vec<GradeSystem>,
    /// `--fail-under`, checked: `None` when none was given.
    pub gate: Option<GateOutcome>,
    /// `--overhead`: what each system adds over a direct call to the same
    /// simulated upstream (`bench overhead`); `None` when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<cb_overhead::OverheadReport>,
    /// The overhead report's directory, relative to the grade directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_dir: Option<String>,
}

/// One continuity run of the grade.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRun {
    /// The fault profile's name (`paper`, `degraded`).
    pub profile: String,
    /// Its report directory, relative to the grade directory.
    pub dir: String,
    /// Runs replayed.
    pub runs: u32,
    /// Conversations of the dataset.
    pub conversations: u32,
    /// Whether Ctrl-C cut it short.
    pub interrupted: bool,
}

/// A case of the semantics catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseInfo {
    /// Its id (`401`, `stream-cut`, ...).
    pub case: String,
    /// What the upstreams do.
    pub upstream: String,
    /// What passes.
    pub passes: String,
    /// Whether it counts in the scorecard.
    pub scored: bool,
}

/// Everything measured for one system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeSystem {
    /// Its name.
    pub name: String,
    /// Built in or a gateway.
    pub kind: GradedKind,
    /// A gateway's base URL.
    pub url: Option<String>,
    /// The notes of the systems file.
    pub notes: String,
    /// A negative control, left out of `--fail-under`.
    pub control: bool,
    /// Per continuity profile, in the order of `profiles`.
    pub continuity: Vec<ContinuityFigures>,
    /// The semantics scorecard; `None` when the catalogue did not run.
    pub scorecard: Option<Scorecard>,
    /// What it said about who answered, held against the attempt log
    /// (semantics' honesty card); `None` when the catalogue did not run
    /// (and in summaries written before it existed).
    #[serde(default)]
    pub honesty: Option<cb_semantics::honesty::HonestyCard>,
    /// The semantics load phase (`--load`); `None` when it did not run.
    #[serde(default)]
    pub load: Option<cb_semantics::load::LoadFigures>,
    /// Per case, in the order of `cases`.
    pub cases: Vec<CaseEvidence>,
    /// What could not be measured for it, in words.
    pub unmeasured: Vec<String>,
}

/// One system under one continuity profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContinuityFigures {
    /// The profile.
    pub profile: String,
    /// Planned events (runs × faulted conversations).
    pub planned: u64,
    /// Failover events: the denominator of CPR.
    pub events: u64,
    /// CPR: preserved / failover events, pooled Wilson.
    pub cpr: Rate,
    /// The clustered (by conversation) bootstrap interval on CPR.
    pub cpr_clustered: Option<Interval>,
    /// Clean CPR: preserved with no answer contract broken from the event
    /// turn on / failover events.
    pub clean_cpr: Rate,
    /// Answered 2xx / failover events.
    pub availability: Rate,
    /// Per answer contract, over every delivered answer.
    pub contracts: Vec<ContractRate>,
    /// Event-turn latency per conversation length (failover events).
    pub latency_by_length: Vec<LengthLatency>,
    /// The same per fault mode, modes in report order; empty in a grade
    /// written before the field.
    #[serde(default)]
    pub latency_by_mode: Vec<ModeLatency>,
    /// Whether the upstream attempts looked like a retry storm.
    pub storm: bool,
    /// The system's warning, when few planned events reached the fault.
    pub warning: Option<String>,
    /// What happened past the fault (the `outage` profile); absent when the
    /// profile measured nothing past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_fault: Option<cb_continuity::summary::past::PastFault>,
}

/// Event-turn latency per conversation length, for the failover events
/// of one fault mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeLatency {
    /// The fault mode.
    pub fault_mode: cb_faults::FaultMode,
    /// Per length, lengths in order.
    pub by_length: Vec<LengthLatency>,
}

/// Event-turn latency of the conversations of one length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthLatency {
    /// Conversation length, turns.
    pub turns: u32,
    /// Events of that length.
    pub n: u64,
    /// Median, milliseconds.
    pub median_ms: f64,
    /// 95th percentile (type 7), milliseconds.
    pub p95_ms: f64,
}

fn applicable() -> bool {
    true
}

/// The semantics verdicts of one system, counted (semantics' own).
pub use cb_semantics::report::Scorecard;

/// One case for one system, with the evidence from the attempt log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseEvidence {
    /// The case id.
    pub case: String,
    /// How the case went.
    pub verdict: Verdict,
    /// Whether it counts in the scorecard.
    pub scored: bool,
    /// Why, when it is not `pass`.
    pub reason: String,
    /// Every check, measured against its bound.
    pub checks: Vec<CheckEvidence>,
    /// Facts no check rules on.
    pub notes: Vec<String>,
    /// The case's requests: what the client got and what the upstreams saw.
    pub requests: Vec<RequestEvidence>,
}

/// One check of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckEvidence {
    /// The check's id.
    pub check: String,
    /// How the check counts.
    pub severity: Severity,
    /// Whether it held (false when it did not apply).
    pub passed: bool,
    /// Whether what it measures happened; one that did not apply is
    /// neither held nor broken. Summaries written before this field read
    /// as applicable.
    #[serde(default = "applicable")]
    pub applicable: bool,
    /// What was measured.
    pub value: String,
    /// What it was held to.
    pub bound: String,
}

/// One request of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestEvidence {
    /// What the client got, in words (status, answer or error, latency).
    pub client: String,
    /// Every attempt the upstreams logged for it, in arrival order.
    pub attempts: Vec<AttemptEvidence>,
}

/// One upstream attempt of the attempt log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptEvidence {
    /// Which upstream.
    pub role: Role,
    /// Attempt number at that upstream, from 1.
    pub attempt: u32,
    /// Arrival, milliseconds after the request was sent.
    pub at_ms: f64,
    /// Status answered (`None`: no status, a reset or a hold).
    pub status: Option<u16>,
    /// What the upstream did, as its attempt log records it.
    pub action: AttemptAction,
    /// What the upstream did, in words (`answer`, `error 503`, `reset
    /// before headers`, ...).
    pub detail: String,
    /// The model id it received.
    pub model: String,
}

/// `--fail-under`, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateOutcome {
    /// The flag's value as given.
    pub spec: String,
    /// Every threshold against every system it applies to.
    pub checks: Vec<GateCheck>,
}

impl GateOutcome {
    /// Whether every check held.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// One threshold for one system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateCheck {
    /// The system.
    pub system: String,
    /// The threshold, as written (`cpr>=95`).
    pub threshold: String,
    /// What was measured (`n/a` when nothing was).
    pub measured: String,
    /// Whether it held (`n/a` never holds).
    pub passed: bool,
}
