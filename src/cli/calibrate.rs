//! The flags of the calibration tools: `contracts calibrate` and `judge
//! calibrate`, each measured against a labelled set.

use super::JudgeOptions;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Arguments of `contracts`.
#[derive(Debug, Args)]
pub struct ContractsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ContractsCommand,
}

/// Subcommands of `contracts`.
#[derive(Debug, Subcommand)]
pub enum ContractsCommand {
    /// Run every contract on the labelled replies, the development part
    /// then the held-out part, and print for each, per contract, the cases
    /// it applies to, its coverage (the share of labelled cases it
    /// decided), its agreement with the labels, its false-positive rate on
    /// clean replies, and what it left undetermined, then the same per
    /// conversation language. Exits 1 when a contract misses its goals on
    /// either part (no false positive, agreement of at least 95 % on what
    /// it decides, coverage of at least 85 %).
    Calibrate(ContractsCalibrateArgs),
}

/// Arguments of `contracts calibrate`.
#[derive(Debug, Args)]
pub struct ContractsCalibrateArgs {
    /// The development part: labelled replies (JSONL) the thresholds were
    /// tuned on. Default: the built-in
    /// datasets/contracts-calibration-dev.jsonl.
    #[arg(long)]
    pub cases: Option<PathBuf>,
    /// The held-out part: labelled replies (JSONL) written after the
    /// thresholds were frozen. Default: the built-in
    /// datasets/contracts-calibration-heldout.jsonl.
    #[arg(long)]
    pub held_out: Option<PathBuf>,
    /// A labelled set of your own (JSONL, the same fields), scored alone
    /// instead of the two built-in parts: for instance the catalog-built
    /// set `python3 scripts/catalog-calibration.py --out FILE` writes from
    /// the installed gettext catalogs.
    #[arg(long, conflicts_with_all = ["cases", "held_out"])]
    pub set: Option<PathBuf>,
}

/// Arguments of `judge`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: JudgeCommand,
}

/// Subcommands of `judge`.
#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Score the labelled calibration set with the fast path alone and with
    /// fast path plus judge; print agreement, Cohen's kappa and confusion
    /// matrices. Exits 1 if the fast path decided any case wrongly.
    Calibrate(CalibrateArgs),
}

/// Arguments of `judge calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The judge to calibrate (none: fast path only).
    #[command(flatten)]
    pub judge: JudgeOptions,
    /// Labelled cases (JSONL). Default: the built-in copy of
    /// datasets/judge-calibration.jsonl, so the command works from any
    /// directory.
    #[arg(long)]
    pub cases: Option<PathBuf>,
    /// Master seed of the judge's retry backoff jitter.
    #[arg(long, default_value_t = crate::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Judge requests in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
}
