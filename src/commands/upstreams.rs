//! `upstreams`: serve a simulated primary and fallback for any gateway until
//! Ctrl-C.

use crate::cli::UpstreamsArgs;
use std::process::ExitCode;

/// `upstreams`: validate the arguments and serve until Ctrl-C.
pub async fn upstreams(args: UpstreamsArgs) -> anyhow::Result<ExitCode> {
    let config = crate::config::upstreams_config(args)?;
    // Every client connection is a descriptor: at thousands of requests in
    // flight the default soft limit (often 1,024) is too low, so raise it to
    // the hard maximum, as `run` does.
    let _ = crate::driver::gate::open_file_limit();
    crate::upstream::standalone::serve_until_ctrl_c(config).await?;
    Ok(ExitCode::SUCCESS)
}
