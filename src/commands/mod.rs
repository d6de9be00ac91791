//! One module per subcommand: each validates its arguments into a typed
//! configuration, calls the library and prints the outcome. [`dispatch`]
//! picks the module.

mod canary;
mod contracts;
mod generate;
mod grade;
mod judge;
mod merge;
pub mod overhead;
mod proxy;
mod report;
mod run;
mod semantics;
pub mod signal;
mod upstreams;

use crate::cli::Command;
use std::process::ExitCode;

/// Runs one subcommand.
///
/// # Errors
/// Whatever stops the subcommand.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(&args).await,
        Command::Generate(args) => generate::generate_command(&args),
        Command::Upstreams(args) => upstreams::upstreams(args).await,
        Command::Proxy(args) => proxy::proxy(args).await,
        Command::Judge(args) => judge::judge(args).await,
        Command::Semantics(args) => semantics::semantics(&args).await,
        Command::Grade(args) => grade::grade(&args).await,
        Command::Report(args) => match (args.action, args.dir) {
            (Some(crate::cli::ReportAction::Merge(merge)), _) => merge::merge(&merge),
            (None, Some(dir)) => report::report(&dir, crate::cli::table_columns(args.wide)),
            (None, None) => {
                anyhow::bail!("report needs a report directory, or `report merge DIR...`")
            }
        },
        Command::Contracts(args) => contracts::contracts(&args),
        Command::Canary(args) => canary::canary(&args).await,
        Command::Bench(args) => match &args.command {
            crate::cli::BenchCommand::Overhead(args) => overhead::overhead(args).await,
        },
    }
}
