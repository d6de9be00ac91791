//! `upstreams`: serve a simulated primary and fallback for any gateway until
//! Ctrl-C or SIGTERM, then write the attempts file.

use crate::cli::UpstreamsArgs;
use std::process::ExitCode;

/// `upstreams`: validate the arguments (the attempts file's directory
/// included) and serve until Ctrl-C (exit 130) or SIGTERM (exit 143), the
/// attempts file written either way.
pub async fn upstreams(args: UpstreamsArgs) -> anyhow::Result<ExitCode> {
    use super::signal::Signals;
    use anyhow::Context as _;
    let config = crate::config::upstreams_config(args)?;
    // Before the banner: a SIGTERM right after it must not kill the process.
    let mut signals = Signals::install().context("cannot listen for Ctrl-C or SIGTERM")?;
    let stop = crate::upstream::standalone::serve_until(config, signals.next()).await?;
    Ok(ExitCode::from(stop.exit_code()))
}
