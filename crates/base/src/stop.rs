//! Which signal stopped a command: SIGINT (Ctrl-C) or SIGTERM (`timeout`,
//! systemd, Docker, CI). The command line's signal handler sets it; a
//! suite reads it to say in its report what cut the run short, and the
//! command exits with its status (130 or 143).

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Which signal asked the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stop {
    /// SIGINT (Ctrl-C).
    #[serde(rename = "sigint")]
    Interrupt,
    /// SIGTERM.
    #[serde(rename = "sigterm")]
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

    /// Its name, for messages: `Ctrl-C` or `SIGTERM`.
    pub const fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "Ctrl-C",
            Stop::Terminate => "SIGTERM",
        }
    }

    /// The name of what stopped a run that was `interrupted`, `by` a known
    /// signal or not (an interruption whose signal is not recorded, as in
    /// a report written before this was kept, is called Ctrl-C).
    pub fn name_of(by: Option<Stop>) -> &'static str {
        by.unwrap_or(Stop::Interrupt).name()
    }
}

/// Which signal stopped a command, once one did (shared between the task
/// that waits for it and the work it stops). Cheap to clone.
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
    /// `default`.
    pub fn exit_code_or(&self, default: u8) -> u8 {
        self.signal().map_or(default, Stop::exit_code)
    }

    /// Records `stop` (the first signal wins).
    pub fn set(&self, stop: Stop) {
        let code = match stop {
            Stop::Interrupt => 1,
            Stop::Terminate => 2,
        };
        let _ = self
            .0
            .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_is_kept_with_its_name_and_status() {
        let stopped = Stopped::default();
        assert_eq!(stopped.signal(), None);
        assert_eq!(stopped.exit_code_or(7), 7);
        stopped.clone().set(Stop::Terminate);
        stopped.set(Stop::Interrupt);
        assert_eq!(stopped.signal(), Some(Stop::Terminate));
        assert_eq!(stopped.exit_code_or(130), 143);
        assert_eq!(Stop::name_of(stopped.signal()), "SIGTERM");
        assert_eq!(Stop::name_of(None), "Ctrl-C");
        assert_eq!(
            serde_json::to_string(&Stop::Terminate).unwrap(),
            "\"sigterm\""
        );
    }
}
