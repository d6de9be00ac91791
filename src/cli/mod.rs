//! Command-line types (clap derive) and nothing else. Values are validated
//! into typed configurations by `config`; no clap type goes past it.
//!
//! The command line and its subcommands are here; each command's flags sit
//! in a file of their own (`run`, `semantics`, `canary`, `serve` for the
//! smaller commands, `calibrate` for the calibration tools), and the groups
//! of flags several commands flatten into theirs in `options`.
//!
//! The doc comments of the flags are their `--help` text, read in a
//! terminal: `<UTC timestamp>` and bare URLs are meant as written there.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

mod bench;
mod builtins;
mod calibrate;
mod canary;
mod grade;
mod options;
mod run;
mod semantics;
mod serve;

pub use bench::{BenchArgs, BenchCommand, ModeArg, OverheadArgs, OverheadOptions};
pub use calibrate::{
    CalibrateArgs, ContractsArgs, ContractsCalibrateArgs, ContractsCommand, JudgeArgs, JudgeCommand,
};
pub use canary::{CanaryAction, CanaryArgs, CanaryPowerArgs, CanaryReleaseArgs, CanaryRunArgs};
pub use grade::GradeArgs;
pub use options::{
    ApiArg, ContractOptions, JudgeOptions, LatencyArg, ProviderOptions, SystemOptions,
};
pub use run::{table_columns, MergeArgs, ReportAction, ReportArgs, RunArgs};
pub use semantics::SemanticsArgs;
pub use serve::{ContinuationArg, GenerateArgs, ProxyArgs, ProxyModeArg, UpstreamsArgs};

use clap::{Parser, Subcommand};

/// Measures whether an LLM gateway keeps a conversation alive when its
/// primary provider fails.
#[derive(Debug, Parser)]
#[command(name = "continuity-bench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// Parsed once at start; the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay the dataset through the systems under test while their primary
    /// provider fails, score the answers and write a report.
    Run(RunArgs),
    /// Write a seeded synthetic dataset as JSONL, one conversation a line.
    Generate(GenerateArgs),
    /// Serve a pair of simulated upstreams (primary and fallback) for use
    /// with any gateway, until Ctrl-C.
    Upstreams(UpstreamsArgs),
    /// Serve a reference gateway (stateless or history) until Ctrl-C.
    Proxy(ProxyArgs),
    /// Run the failover-semantics catalogue through every system, on the
    /// wire: error statuses, resets, silent routes, slow, cut, stalled and
    /// malformed streams, context length, content filter, prefill
    /// rejection, a flapping primary, both upstreams failing, model ids,
    /// required parameters and fallback health. Prints a table and a
    /// scorecard per system; exits 1 when a scored case fails.
    Semantics(SemanticsArgs),
    /// Grade every system of a systems file in one go: the continuity
    /// benchmark under the paper and the degraded profiles and the
    /// semantics catalogue (fast by default), written as one self-contained
    /// report.html with report.md and summary.json; exits 1 when
    /// --fail-under is not met.
    Grade(GradeArgs),
    /// Re-render a report directory from its files: a run's summary.json,
    /// summary.md and plots from its CSV files, or a grade's report.html
    /// and report.md from its summary.json; `report merge DIR...` joins
    /// the shards of a run.
    Report(ReportArgs),
    /// LLM judge tools: measure how far the fast-path scorer and a judge
    /// agree with hand labels.
    Judge(JudgeArgs),
    /// Answer-contract tools: measure each contract against a labelled
    /// calibration set.
    Contracts(ContractsArgs),
    /// Probe every route of a model pinned (fallbacks off), check each reply
    /// against the answer contracts, and quarantine routes that degrade
    /// (observe only unless --enforce). Offline by default, against a
    /// built-in simulated endpoint; `canary release ROUTE` lifts a
    /// quarantine by hand.
    Canary(CanaryArgs),
    /// Measure the systems themselves rather than their answers: `bench
    /// overhead` is the latency each adds over a direct call to the same
    /// simulated upstream when nothing fails, with its process's memory
    /// and CPU.
    Bench(BenchArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
