//! One function per subcommand: validate the arguments into a typed
//! configuration, call the library, print the outcome.

use crate::cli::Command;
use std::process::ExitCode;

/// Runs one subcommand.
///
/// # Errors
/// Whatever stops the subcommand.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(_args) => todo!("run"),
        Command::Generate(_args) => todo!("generate"),
        Command::Upstreams(_args) => todo!("upstreams"),
        Command::Proxy(_args) => todo!("proxy"),
        Command::Report(_args) => todo!("report"),
    }
}
