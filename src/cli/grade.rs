//! The flags of `grade`: the systems (a systems file, or the same flags as
//! `run`), how much of each suite to run, where the page goes, and the
//! thresholds CI holds it to.

use super::{ContractOptions, LatencyArg, SystemOptions};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `grade`.
#[derive(Debug, Args)]
pub struct GradeArgs {
    /// Which systems are under test: --systems FILE, or the flags of `run`.
    #[command(flatten)]
    pub systems: SystemOptions,
    /// Runs of each continuity profile (paper, then degraded).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Run the whole semantics catalogue with its full times (about 2
    /// minutes per system) instead of the fast profile (the default, about
    /// 20 s per system; the same cases and checks).
    #[arg(long)]
    pub full: bool,
    /// Run only these semantics cases, comma-separated ids. Default: every
    /// case.
    #[arg(long, value_name = "IDS")]
    pub cases: Option<String>,
    /// After the catalogue, the load phase (`semantics --load`): this many
    /// requests (100 when the flag has no value) at once at a rate-limited
    /// primary; the page shows the attempts per request and how bunched
    /// the retries are.
    #[arg(long, num_args = 0..=1, default_missing_value = "100", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub load: Option<u32>,
    /// Which upstreams the load phase rate-limits (`primary-limited` or
    /// `all-limited`; see `semantics --help`).
    #[arg(long, default_value = "primary-limited", value_parser = super::semantics::load_fault, requires = "load")]
    pub load_fault: cb_semantics::load::LoadFault,
    /// After the catalogue, `bench overhead` over the same systems with its
    /// defaults (C = 1 and 64, plain and streamed; 5 trials of 200
    /// requests unless --overhead-trials, --overhead-requests): the page shows what each system adds over a direct call
    /// to the same upstream, and its process's memory and CPU, beside its
    /// continuity and scorecard.
    #[arg(long)]
    pub overhead: bool,
    /// With --overhead: trials of each (system, concurrency, mode), as
    /// `bench overhead --trials` (fewer keeps a page of many systems short;
    /// the intervals say what it costs).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100), requires = "overhead")]
    pub overhead_trials: u32,
    /// With --overhead: measured requests per trial, as `bench overhead
    /// --requests`.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(10..=1_000_000), requires = "overhead")]
    pub overhead_requests: u32,
    /// With --overhead: a gateway's process, NAME=PID, repeatable, to read
    /// its memory and CPU (see `bench overhead --help`).
    #[arg(long = "pid", value_name = "NAME=PID", value_parser = super::bench::name_pid, requires = "overhead")]
    pub pids: Vec<(String, u32)>,
    /// Whose reading of a stream the catalogue's verdicts take
    /// (`openai-sdk` or `strict`; see `semantics --help`).
    #[arg(long, default_value = "openai-sdk", value_parser = super::semantics::client_profile)]
    pub client: cb_wire::sse::ClientProfile,
    /// Dataset (JSONL) of the continuity runs; the help lists the built-in
    /// ones.
    #[arg(long, help = super::builtins::dataset_help(" of the continuity runs"))]
    pub dataset: Option<PathBuf>,
    /// Conversations in flight at once in the continuity runs.
    #[arg(long, default_value_t = 100)]
    pub concurrency: usize,
    /// Latency model of the simulated upstreams in the continuity runs.
    #[arg(long, value_enum, default_value_t = LatencyArg::Fast)]
    pub latency: LatencyArg,
    /// Master seed of everything random.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// The grade directory: report.html, report.md, summary.json, and the
    /// suites' reports in paper/, degraded/ and semantics/. Default:
    /// reports/grade-<UTC timestamp>, made unique with a suffix. A
    /// directory that holds files is refused (a report is never
    /// overwritten) unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an existing, non-empty --out directory (its report files,
    /// and those of its suites' directories, are replaced).
    #[arg(long)]
    pub force: bool,
    /// Exit 1 unless every system but the negative controls meets these
    /// thresholds: comma-separated KEY=VALUE, with cpr=P and clean-cpr=P
    /// (paper profile, at least P %), semantics-fail=N (at most N scored
    /// cases fail) and violations=P (degraded profile: no contract broken
    /// by more than P % of the answers it decided). A figure that is n/a
    /// does not meet its threshold. Example: cpr=95,semantics-fail=0.
    #[arg(long, value_name = "KEY=VALUE,...")]
    pub fail_under: Option<String>,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// The answer contracts.
    #[command(flatten)]
    pub contracts: ContractOptions,
}
