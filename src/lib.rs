//! continuity-bench: measures whether an LLM gateway keeps a conversation
//! alive when its primary provider fails. The binary is a thin shell over
//! [`run`]; everything is here so tests can call it in process.

pub use cb_base::{record, secret, seed, source, stop, url};
pub use cb_canary as canary;
pub use cb_client as client;
pub use cb_continuity as continuity;
pub use cb_contracts as contracts;
pub use cb_dataset as dataset;
pub use cb_degrade as degrade;
pub use cb_dialect as dialect;
pub use cb_driver as driver;
pub use cb_faults as faults;
pub use cb_overhead as overhead;
pub use cb_proxy as proxy;
pub use cb_proxy::policy;
pub use cb_report as report;
pub use cb_scoring as scoring;
pub use cb_scoring::judge;
pub use cb_semantics as semantics;
pub use cb_stats as stats;
pub use cb_upstream as upstream;
pub use cb_wire::{openai, responses, server, sse};

pub mod cli;
pub mod commands;
pub mod config;
pub mod grade;

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

/// An error and its causes as one line, each cause said once: a cause whose
/// text the message already contains (an I/O error quoted in it) is not
/// repeated.
pub fn describe_error(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_quoted_in_the_message_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let err = anyhow::Error::new(faults::FaultError::Io {
            path: "x.toml".into(),
            source: io,
        })
        .context("cannot start the run");
        let text = describe_error(&err);
        assert_eq!(text.matches("No such file").count(), 1, "{text}");
        assert!(text.starts_with("cannot start the run: cannot read fault profile x.toml"));
    }
}
