//! continuity-bench: measures whether an LLM gateway keeps a conversation
//! alive when its primary provider fails. The binary is a thin shell over
//! [`run`]; everything is here so tests can call it in process.

pub mod cli;
pub mod commands;
pub mod config;
pub mod contracts;
pub mod dataset;
pub mod degrade;
pub mod driver;
pub mod faults;
pub mod harness;
pub mod judge;
pub mod openai;
pub mod proxy;
pub mod record;
pub mod report;
pub mod scoring;
pub mod seed;
pub mod semantics;
pub mod server;
pub mod stats;
pub mod summary;
pub mod upstream;

use std::process::ExitCode;

/// Runs a parsed command line and returns the process exit code.
///
/// # Errors
/// Any error that stops the command, with a message that says what to do.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(commands::dispatch(cli.command))
}
