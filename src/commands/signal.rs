//! The one way every command hears that it must stop: SIGINT (Ctrl-C) or
//! SIGTERM (`timeout`, systemd, Docker, CI), treated alike. The command
//! stops, writes its files, and exits 130 after SIGINT (128 + 2) or 143
//! after SIGTERM (128 + 15); a second signal ends the process at once.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Which signal asked the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Stop {
    /// The exit status of a command stopped by it: 130 or 143.
    pub const fn exit_code(self) -> u8 {
        match self {
            Stop::Interrupt => 130,
            Stop::Terminate => 143,
        }
    }

    /// Its name, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "Ctrl-C",
            Stop::Terminate => "SIGTERM",
        }
    }
}

/// Waits for SIGINT or SIGTERM and says which came.
///
/// # Errors
/// When the signal handlers cannot be installed.
pub async fn stop_signal() -> std::io::Result<Stop> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        tokio::select! {
            _ = int.recv() => Ok(Stop::Interrupt),
            _ = term.recv() => Ok(Stop::Terminate),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await.map(|()| Stop::Interrupt)
    }
}

/// Which signal stopped a command, once one did (shared with the task
/// that waits for it).
#[derive(Debug, Clone, Default)]
pub struct Stopped(Arc<AtomicU8>);

impl Stopped {
    /// The signal that came, if one did.
    pub fn signal(&self) -> Option<Stop> {
        match self.0.load(Ordering::SeqCst) {
            1 => Some(Stop::Interrupt),
            2 => Some(Stop::Terminate),
            _ => None,
        }
    }

    /// The exit status of a command stopped early: the signal's, else
    /// `default` (130: the suite says it was interrupted).
    pub fn exit_code_or(&self, default: u8) -> u8 {
        self.signal().map_or(default, Stop::exit_code)
    }

    fn set(&self, stop: Stop) {
        let code = match stop {
            Stop::Interrupt => 1,
            Stop::Terminate => 2,
        };
        self.0.store(code, Ordering::SeqCst);
    }
}

/// Cancels `cancel` on the first SIGINT or SIGTERM (saying `what` happens
/// now); a second one ends the process at once with its exit status.
pub fn stop_on_signal(cancel: CancellationToken, what: &'static str) -> Stopped {
    let stopped = Stopped::default();
    let seen = stopped.clone();
    tokio::spawn(async move {
        let Ok(first) = stop_signal().await else {
            return;
        };
        seen.set(first);
        crate::secret::eprintln!(
            "\ninterrupted by {}: {what} (Ctrl-C or SIGTERM again to quit at once)",
            first.name()
        );
        cancel.cancel();
        if let Ok(second) = stop_signal().await {
            std::process::exit(i32::from(second.exit_code()));
        }
    });
    stopped
}
