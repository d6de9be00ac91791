//! Binary entry point: parse the command line, run it in the library, map the
//! outcome to an exit code. Everything else lives in the library so tests can
//! call it in process.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = continuity_bench::cli::Cli::parse();
    match continuity_bench::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", continuity_bench::describe_error(&err));
            ExitCode::from(2)
        }
    }
}
