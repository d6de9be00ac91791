//! The result type of a run: one documented structure that `summary.json`
//! serialises, `summary.md` and the plots render, and the stdout table prints.
//! Its JSON form is checked against `schema/summary.schema.json` in a test.
//!
//! [`summarize`] builds it from the recorded rows with the
//! pure functions of [`cb_stats`]; the upstream attempts and retry storms
//! ([`attempts`]) and CLO ([`clo`]) are built beside it.

pub mod attempts;
pub mod build;
pub mod clo;
pub mod delivery;
pub mod past;
#[cfg(test)]
mod tests;

pub use build::{summarize, SummaryContext};

use super::record::Stage;
use cb_contracts::ContractName;
use cb_driver::{Bound, Shard};
pub use cb_stats::Rate;
use cb_stats::{Distribution, Interval};
use serde::{Deserialize, Serialize};

/// Everything a run concluded, with the counts behind every rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Name and version of the tool that produced this summary.
    pub tool: String,
    /// Tool version.
    pub version: String,
    /// The master seed every random choice derives from.
    pub seed: u64,
    /// Whether Ctrl-C or SIGTERM cut the run short (the figures cover what
    /// finished).
    pub interrupted: bool,
    /// Which signal cut it short, when one did (`sigint` or `sigterm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<cb_base::stop::Stop>,
    /// Number of runs.
    pub runs: u32,
    /// Number of conversations in the dataset.
    pub conversations: u32,
    /// The dataset file replayed.
    pub dataset: String,
    /// The fault profile file used.
    pub fault_profile: String,
    /// Confidence level of every interval (0.95).
    pub confidence: f64,
    /// How percentiles are computed ("type 7, linear interpolation between
    /// closest ranks, as numpy's default").
    pub percentile_method: String,
    /// Bootstrap resamples used for the clustered interval.
    pub bootstrap_resamples: u32,
    /// One entry per system under test, in the order they were given.
    pub systems: Vec<SystemSummary>,
    /// Continuity latency overhead (`history` minus `stateless`), when both
    /// reference systems ran.
    pub clo: Option<CloSummary>,
    /// Plain-language notes on what the figures mean (for example, that with
    /// the simulated model the CPR gap is by construction).
    pub notes: Vec<String>,
    /// The share of the conversations this summary covers, for a shard
    /// (`run --shard K/N`: every N-th conversation by index, from K);
    /// absent for a whole run and for a merged report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// For a report made by `report merge`: how many shards it joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_shards: Option<u32>,
    /// Requests in flight at once in each process that replayed: one
    /// entry for a run, one per shard for a merged report.
    #[serde(default)]
    pub requests_in_flight: Vec<InFlight>,
}

/// How many requests one process had in flight at once, against what
/// `--concurrency` asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// The shard the process replayed (`None`: the whole run).
    pub shard: Option<Shard>,
    /// Conversations asked to be in flight at once (`--concurrency`).
    pub concurrency: usize,
    /// Conversations the process replayed per run, over all systems: no
    /// more than these can be in flight.
    pub jobs: usize,
    /// The cap the open-file limit, the memory budget or `--max-in-flight`
    /// set, when it was below `concurrency`.
    pub cap: Option<usize>,
    /// Which limit set the cap.
    pub bound: Option<Bound>,
    /// The most requests in flight at once, measured (`None` in a report
    /// written before it was measured).
    pub peak: Option<usize>,
}

/// A rate for one group (a fault mode, a conversation length, a run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRate {
    /// The group's key ("TIMEOUT", "9", "run 2").
    pub key: String,
    /// The rate within the group.
    pub rate: Rate,
}

/// Counts of each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictCounts {
    /// Answers that used the anchor.
    pub preserved: u64,
    /// Answers that did not.
    pub lost: u64,
    /// No usable answer.
    pub error: u64,
    /// A judge was needed and could not decide.
    pub undetermined: u64,
    /// Verdicts decided by the fast path.
    pub by_fast_path: u64,
    /// Verdicts decided by the judge.
    pub by_judge: u64,
}

/// One answer that contained another conversation's anchor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BleedExample {
    /// Run index.
    pub run: u32,
    /// The conversation whose answer leaked.
    pub conversation: String,
    /// The turn of the answer.
    pub turn: u32,
    /// The conversation(s) whose anchor appeared, `;`-separated.
    pub anchor_of: String,
    /// The start of the answer.
    pub answer_excerpt: String,
}

/// Context bleed found in one system's answers, on every turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BleedSummary {
    /// Failover events whose final answer contained another conversation's
    /// anchor.
    pub events: u64,
    /// Answers checked, on every turn of every conversation.
    pub answers: u64,
    /// Answers, on any turn, that contained another conversation's anchor.
    pub answers_bleeding: u64,
    /// Bleeding answers per turn number: (turn, answers), turns in order,
    /// only turns with at least one.
    pub by_turn: Vec<(u32, u64)>,
    /// Up to ten examples, final answers first.
    pub examples: Vec<BleedExample>,
}

/// One answer contract over every answer a system delivered (a 2xx).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractRate {
    /// The contract.
    pub contract: ContractName,
    /// Answers it applied to.
    pub applied: u64,
    /// Of those, answers too short or ambiguous to judge: counted here, not
    /// in the rate.
    pub undetermined: u64,
    /// Answers that broke it / answers it decided (applied minus
    /// undetermined), with the pooled Wilson interval.
    pub broken: Rate,
}

/// How many planned events reached each stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounts {
    /// The fault fired at the faulted upstream: these enter CPR.
    pub failover: u64,
    /// The conversation ended before the faulted turn.
    pub broke_before: u64,
    /// The faulted upstream never saw the faulted turn.
    pub not_exercised: u64,
}

impl StageCounts {
    /// Every planned event, whatever its stage.
    pub fn total(&self) -> u64 {
        self.failover + self.broke_before + self.not_exercised
    }
}

/// One reason events stopped short of `failover`, with how many did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageReason {
    /// The stage (`broke_before` or `not_exercised`).
    pub stage: Stage,
    /// Why, in words.
    pub reason: String,
    /// Events with this stage and reason.
    pub events: u64,
}

/// Upstream attempts spent on the event turn of each failover event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptSummary {
    /// Mean requests the primary saw per event.
    pub primary_mean: f64,
    /// Mean requests the fallback saw per event.
    pub fallback_mean: f64,
    /// Most requests (both upstreams) any single event cost.
    pub max_per_event: u32,
    /// Histogram of total attempts per event: (attempts, events).
    pub per_event: Vec<(u32, u64)>,
    /// 429 responses the fallback sent on event turns.
    pub fallback_429s: u64,
    /// Milliseconds between consecutive attempts of one event (any upstream).
    pub gaps_ms: Distribution,
    /// Retries sent to an upstream sooner than the `Retry-After` of the 429
    /// it had just answered.
    pub early_retries: u64,
    /// Whether this looks like a retry storm: an event cost more than
    /// [`attempts::STORM_MAX_ATTEMPTS`] upstream attempts, or a retry came
    /// before the `Retry-After` asked.
    pub storm: bool,
    /// Why `storm` is set, in plain words; empty when it is not.
    pub storm_reasons: Vec<String>,
}

/// Everything measured for one system under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemSummary {
    /// The system's name.
    pub name: String,
    /// Planned events by the stage they reached (runs × conversations the
    /// plan faults, finished before any Ctrl-C).
    pub stages: StageCounts,
    /// The commonest reasons events stopped short of `failover`, commonest
    /// first.
    pub stage_reasons: Vec<StageReason>,
    /// Set when fewer than [`build::MIN_FAILOVER_SHARE`] of the planned
    /// events reached the fault: the figures below then describe few
    /// events, and this says why.
    pub warning: Option<String>,
    /// Failover events: the denominator of CPR and of every figure built on
    /// it (`stages.failover`).
    pub events: u64,
    /// Verdict counts over failover events.
    pub verdicts: VerdictCounts,
    /// Continuity Preservation Rate: preserved / failover events, pooled
    /// Wilson.
    pub cpr: Rate,
    /// The honest interval on CPR: seeded cluster bootstrap over
    /// conversations (runs of the same conversation are not independent);
    /// `None` without failover events.
    pub cpr_clustered: Option<Interval>,
    /// Failover events answered 2xx / failover events.
    pub availability: Rate,
    /// Preserved / failover events answered 2xx.
    pub conditional_cpr: Rate,
    /// Conversation survival, counting everything: planned events whose
    /// conversation ended with the anchor recalled / all planned events,
    /// whatever their stage.
    pub survival: Rate,
    /// CPR of each run.
    pub cpr_per_run: Vec<GroupRate>,
    /// Lowest CPR of any run (`None` without failover events).
    pub cpr_run_min: Option<f64>,
    /// Highest CPR of any run.
    pub cpr_run_max: Option<f64>,
    /// CPR per fault mode at the faulted upstream.
    pub cpr_by_fault: Vec<GroupRate>,
    /// CPR per conversation length (turns).
    pub cpr_by_length: Vec<GroupRate>,
    /// Clean CPR: failover events preserved with no answer contract broken
    /// from the event turn on / failover events.
    pub clean_cpr: Rate,
    /// Per answer contract, the answers it applied to and the share that
    /// broke it.
    pub contracts: Vec<ContractRate>,
    /// A stream's time to first content token, on every answered turn
    /// (empty when nothing was streamed), milliseconds.
    pub ttft_ms: Distribution,
    /// Context bleed.
    pub bleed: BleedSummary,
    /// Upstream attempts per failover event.
    pub attempts: AttemptSummary,
    /// End-to-end client latency of the event turn of failover events,
    /// milliseconds.
    pub event_latency_ms: Distribution,
    /// What reached the fallback (system messages, tool results, user
    /// turns), with a diagnosis when a share is below 100 %; `None` when
    /// the upstreams could not compare (summaries written before it).
    #[serde(default)]
    pub fallback_delivery: Option<delivery::Delivery>,
    /// What happened past the fault (outage profiles, later probes, tool
    /// calls); `None` when the run measured nothing past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_fault: Option<past::PastFault>,
}

/// Continuity latency overhead: per (run, conversation) that is a failover
/// event answered 2xx under both reference systems, event-turn latency under
/// `history` minus under `stateless`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloSummary {
    /// The system subtracted from ("history").
    pub treatment: String,
    /// The system subtracted ("stateless").
    pub baseline: String,
    /// The differences, milliseconds.
    pub delta_ms: Distribution,
    /// The differences by conversation length (the history grows with it).
    pub by_length: Vec<CloByLength>,
}

/// CLO for the conversations of one length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloByLength {
    /// Conversation length, turns.
    pub turns: u32,
    /// The differences, milliseconds.
    pub delta_ms: Distribution,
}
