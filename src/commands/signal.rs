//! The one way every command hears that it must stop: SIGINT (Ctrl-C) or
//! SIGTERM (`timeout`, systemd, Docker, CI), treated alike. The command
//! stops, writes its files, and exits 130 after SIGINT (128 + 2) or 143
//! after SIGTERM (128 + 15); a second signal ends the process at once.

use tokio_util::sync::CancellationToken;

pub use crate::stop::{Stop, Stopped};

/// The command's handlers of SIGINT and SIGTERM, installed at once (so a
/// signal that comes before the first wait is not lost: once installed,
/// neither signal kills the process by default any more).
#[derive(Debug)]
pub struct Signals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs both handlers.
    ///
    /// # Errors
    /// When a handler cannot be installed.
    pub fn install() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Signals {
                int: signal(SignalKind::interrupt())?,
                term: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Signals {})
        }
    }

    /// Waits for the next SIGINT or SIGTERM and says which came.
    pub async fn next(&mut self) -> Stop {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.int.recv() => Stop::Interrupt,
                _ = self.term.recv() => Stop::Terminate,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Stop::Interrupt
        }
    }
}

/// Installs the handlers and waits for SIGINT or SIGTERM.
///
/// # Errors
/// When the handlers cannot be installed.
pub async fn stop_signal() -> std::io::Result<Stop> {
    Ok(Signals::install()?.next().await)
}

/// Cancels `cancel` on the first SIGINT or SIGTERM (saying `what` happens
/// now); a second one ends the process at once with its exit status.
pub fn stop_on_signal(cancel: CancellationToken, what: &'static str) -> Stopped {
    let stopped = Stopped::default();
    let seen = stopped.clone();
    let Ok(mut signals) = Signals::install() else {
        crate::secret::eprintln!("warning: cannot listen for Ctrl-C or SIGTERM");
        return stopped;
    };
    tokio::spawn(async move {
        let first = signals.next().await;
        seen.set(first);
        crate::secret::eprintln!(
            "\ninterrupted by {}: {what} (Ctrl-C or SIGTERM again to quit at once)",
            first.name()
        );
        cancel.cancel();
        let second = signals.next().await;
        std::process::exit(i32::from(second.exit_code()));
    });
    stopped
}
