//! The flags of `run` and of `report DIR`, which re-renders what a run
//! wrote.

use super::{ContractOptions, JudgeOptions, LatencyArg, ProviderOptions, SystemOptions};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of runs; each replays every conversation through every system
    /// under a fault schedule of its own.
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Conversations in flight at once, across all systems.
    #[arg(long, default_value_t = 100)]
    pub concurrency: usize,
    /// Most requests in flight at once, across all systems; a conversation
    /// whose next request finds no room waits for it. Default: what the
    /// open-file limit and this process's memory room allow (64 MiB with the
    /// built-in systems, 288 MiB with external gateways alone; a request
    /// costs about 160 KiB here for the built-in systems and 36 KiB for each
    /// external gateway, summed over the run's systems); the open-file
    /// limit caps it either way.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_in_flight: Option<u64>,
    /// Dataset (JSONL); the help lists the built-in ones.
    #[arg(long, help = super::builtins::dataset_help(""))]
    pub dataset: Option<PathBuf>,
    /// Fault profile (TOML); the help lists the built-in ones.
    #[arg(long, help = super::builtins::faults_help())]
    pub faults: Option<PathBuf>,
    /// Master seed of the fault schedule, latency jitter, backoff and bootstrap.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Latency model of the simulated upstreams.
    #[arg(long, value_enum, default_value_t = LatencyArg::Fast)]
    pub latency: LatencyArg,
    /// Send only the final turn, with the dataset's scripted history, instead
    /// of replaying every turn live.
    #[arg(long)]
    pub fast_forward: bool,
    /// Ask every system for streamed answers (server-sent events), read
    /// as `--client` reads them: a stream that breaks off, a malformed
    /// chunk or an error chunk is an error with its reason; one that ends
    /// cleanly without `data: [DONE]` is the answer to `openai-sdk` (what
    /// came, with its finish reason if any) and an error to `strict`.
    #[arg(long)]
    pub stream: bool,
    /// Whose reading of a stream decides whether it is an answer:
    /// `openai-sdk` (the official OpenAI SDKs: a body that ends cleanly is
    /// a complete answer, with or without `data: [DONE]` or a finish
    /// reason) or `strict` (only `data: [DONE]` completes a stream).
    /// Recorded in config.json and named in summary.md.
    #[arg(long, default_value = "openai-sdk", value_parser = super::semantics::client_profile)]
    pub client: cb_wire::sse::ClientProfile,
    /// Per-attempt timeout of the built-in proxies: how long they wait for an
    /// upstream's response headers before failing over (default 1s, 5s
    /// with --latency realistic, whose answers take over a second, and 20s
    /// with a --provider, which is also the deadline of each request to it).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub attempt_timeout: Option<std::time::Duration>,
    /// Deadline of every request the driver sends.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub request_timeout: std::time::Duration,
    /// Report directory. Default: reports/<UTC timestamp>, made unique with
    /// a suffix when it exists. An existing directory that is not empty is
    /// refused unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an existing, non-empty --out directory (its report files
    /// are replaced).
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print every column of the results table (it is cut to fit 100
    /// terminal columns by default; the report files keep every column).
    #[arg(long)]
    pub wide: bool,
    /// Exit with status 1 when the CPR of `--fail-system` is below this
    /// percentage (0-100).
    #[arg(long)]
    pub fail_under_cpr: Option<f64>,
    /// The system `--fail-under-cpr` checks (default: history).
    #[arg(long)]
    pub fail_system: Option<String>,
    /// Which systems are under test.
    #[command(flatten)]
    pub systems: SystemOptions,
    /// A real provider behind the upstreams (pass-through with faults).
    #[command(flatten)]
    pub providers: ProviderOptions,
    /// With a --provider that is not on this machine: a run whose estimated
    /// tokens (input and output, printed before the run) exceed this does
    /// not start without --yes.
    #[arg(long, value_name = "N", default_value_t = crate::continuity::cost::DEFAULT_COST_LIMIT_TOKENS)]
    pub cost_limit_tokens: u64,
    /// Start a run against a paid --provider even when its estimate is above
    /// --cost-limit-tokens.
    #[arg(long)]
    pub yes: bool,
    /// The LLM judge for answers the fast path cannot decide.
    #[command(flatten)]
    pub judge: JudgeOptions,
    /// The answer contracts.
    #[command(flatten)]
    pub contracts: ContractOptions,
    /// Replay only shard K of N: every N-th conversation by index, from K
    /// (K counts from 0, as a Kubernetes Indexed Job's
    /// $JOB_COMPLETION_INDEX). The seed, the fault plan and the verdicts
    /// are those a whole run gives the same conversations; `report merge`
    /// joins the N directories into one report. Default: the whole run.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::driver::Shard>,
}

/// The results table's columns: every one with `--wide`, else those that
/// fit 100 terminal columns.
pub fn table_columns(wide: bool) -> crate::continuity::report::Columns {
    if wide {
        crate::continuity::report::Columns::All
    } else {
        crate::continuity::report::Columns::Fit
    }
}

/// Arguments of `report`: a report directory to re-render, or `merge`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReportArgs {
    /// What else `report` does.
    #[command(subcommand)]
    pub action: Option<ReportAction>,
    /// A report directory written by `run` or by `grade`.
    #[arg(required = true)]
    pub dir: Option<PathBuf>,
    /// Print every column of the results table (it is cut to fit 100
    /// terminal columns by default; the report files keep every column).
    #[arg(long)]
    pub wide: bool,
}

/// The subcommands of `report`.
#[derive(Debug, clap::Subcommand)]
pub enum ReportAction {
    /// Join the shard directories of one run (`run --shard K/N`, one per
    /// shard, from any machines) into one report: the rows concatenated in
    /// conversation order, every figure computed again from them. Refuses
    /// (exit 2) shards of different seeds, datasets, fault profiles,
    /// versions or settings, an interrupted shard, and a shard missing or
    /// given twice, naming the directory.
    Merge(MergeArgs),
}

/// Arguments of `report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard directories, in any order: every shard of the run, once.
    #[arg(required = true, num_args = 1.., value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where the merged report goes. Default: reports/<UTC timestamp>,
    /// made unique with a suffix when it exists. An existing directory
    /// that is not empty is refused unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an existing, non-empty --out directory.
    #[arg(long)]
    pub force: bool,
    /// Print every column of the results table (it is cut to fit 100
    /// terminal columns by default; the report files keep every column).
    #[arg(long)]
    pub wide: bool,
}
