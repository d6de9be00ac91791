//! `proxy`: serve one reference gateway until Ctrl-C.

use crate::cli::{ProxyArgs, ProxyModeArg};
use crate::proxy::{ProxyConfig, ProxyMode};
use anyhow::Context;
use std::process::ExitCode;

/// The reference-proxy configuration of `proxy` arguments.
pub fn proxy_config(args: ProxyArgs) -> ProxyConfig {
    let mode = match args.mode {
        ProxyModeArg::Stateless => ProxyMode::Stateless,
        ProxyModeArg::History => ProxyMode::History,
    };
    let mut config = ProxyConfig::new(mode, args.primary, args.fallback);
    config.primary_model = args.primary_model;
    config.fallback_model = args.fallback_model;
    config.attempt_timeout = args.attempt_timeout;
    config.deadline = args.deadline;
    config.fallback_429_retries = args.fallback_retries;
    config.seed = args.seed;
    config.events_path = args.events;
    config
}

/// `proxy`: serves a reference gateway until Ctrl-C.
pub async fn proxy(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let listen = args.listen;
    let config = proxy_config(args);
    let mode = config.mode.as_str();
    let (handle, _state) = crate::proxy::spawn(listen, config.clone())
        .await
        .with_context(|| format!("cannot start the {mode} proxy on --listen {listen}"))?;
    println!(
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
