//! `proxy`: serve one reference gateway until Ctrl-C.

use crate::cli::ProxyArgs;
use anyhow::Context;
use std::process::ExitCode;

/// `proxy`: serves a reference gateway until Ctrl-C.
pub async fn proxy(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let listen = args.listen;
    let config = crate::config::proxy_config(args)?;
    let mode = config.mode.as_str();
    let (handle, _state) = crate::proxy::spawn(listen, config.clone())
        .await
        .with_context(|| format!("cannot start the {mode} proxy on --listen {listen}"))?;
    crate::secret::println!(
        "{mode} proxy listening on {url}/v1/chat/completions (metrics at {url}/metrics); \
         primary {primary}, fallback {fallback}; Ctrl-C stops it",
        url = handle.url(),
        primary = config.primary_url,
        fallback = config.fallback_url,
    );
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")?;
    handle.shutdown().await;
    Ok(ExitCode::SUCCESS)
}
