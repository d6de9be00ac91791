//! `proxy`: serve one reference gateway until Ctrl-C or SIGTERM.

use crate::cli::ProxyArgs;
use anyhow::Context;
use std::process::ExitCode;

/// `proxy`: serves a reference gateway until Ctrl-C (exit 130) or SIGTERM
/// (exit 143), letting requests in flight end first.
pub async fn proxy(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let listen = args.listen;
    let exit_on_stdin_eof = args.exit_on_stdin_eof;
    // Every client connection is a descriptor: at thousands of requests in
    // flight the default soft limit (often 1,024) is too low, so raise it to
    // the hard maximum, as `run` does.
    let _ = crate::driver::gate::open_file_limit();
    let config = crate::config::proxy_config(args)?;
    // Before the banner: a SIGTERM right after it must not kill the process.
    let mut signals =
        super::signal::Signals::install().context("cannot listen for Ctrl-C or SIGTERM")?;
    let mode = config.mode.as_str();
    let (handle, state) = crate::proxy::spawn(listen, config.clone())
        .await
        .with_context(|| format!("cannot start the {mode} proxy on --listen {listen}"))?;
    crate::secret::println!(
        "{mode} proxy listening on {url}/v1/chat/completions (metrics at {url}/metrics, health at {url}/health); \
         primary {primary}, fallback {fallback}; Ctrl-C or SIGTERM stops it",
        url = handle.url(),
        primary = crate::proxy::display_url(&config.primary_url),
        fallback = crate::proxy::display_url(&config.fallback_url),
    );
    // The start-up check: a fallback that cannot serve is said now, not
    // when the primary first fails (GET /health says it again later).
    let (primary, fallback) = state.health().await;
    for (role, health) in [("primary", primary), ("fallback", fallback)] {
        if !health.ok {
            crate::secret::eprintln!(
                "warning: the {role} does not list its models ({}); GET {}/health reports its state",
                health.detail,
                handle.url()
            );
        }
    }
    let stdin_closed = async {
        if exit_on_stdin_eof {
            // Bounded: each read returns data, the end or an error.
            let _ = tokio::task::spawn_blocking(|| {
                let mut buf = [0u8; 256];
                let mut stdin = std::io::stdin();
                while let Ok(n) = std::io::Read::read(&mut stdin, &mut buf) {
                    if n == 0 {
                        break;
                    }
                }
            })
            .await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let code = tokio::select! {
        stop = signals.next() => stop.exit_code(),
        () = stdin_closed => 0,
    };
    handle.shutdown().await;
    Ok(ExitCode::from(code))
}
