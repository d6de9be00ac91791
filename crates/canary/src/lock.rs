//! One canary per state file: an exclusive advisory lock (`flock`, through
//! `fs4`) on `<state>.lock`, held for the whole run, with the holder's pid,
//! host and start time written into the file so that a second canary (or an
//! operator) can be told who holds it.
//!
//! The kernel drops the lock when its holder exits, however it exits, so a
//! lock file left behind by a dead canary is not a stale lock: the next
//! canary takes it at once and writes itself in. (Advisory locks are not
//! reliable on every network file system: keep the state on a local disk.)

use fs4::fs_std::FileExt as _;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

/// Who holds a state lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// When it took the lock (RFC 3339, wall clock).
    pub started: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {}, since {}",
            self.pid, self.host, self.started
        )
    }
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error(
        "another canary holds the state file {state} ({holder}; lock {lock}); one canary runs per \
         state file: stop that one, or give this one another --state. To release a route while \
         it runs, use `canary release ROUTE --state {state}`"
    )]
    Held {
        /// The state file.
        state: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// Who holds it, as it wrote itself in (or "unknown holder").
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock the canary state file {state} through {lock}: {source}; check that the folder is writable and on a local disk")]
    Io {
        /// The state file.
        state: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The lock file of `state`: `state.json` -> `state.json.lock`.
pub fn lock_path(state: &Path) -> PathBuf {
    let mut name = state.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A held state lock; dropping it releases the lock.
#[derive(Debug)]
pub struct StateLock {
    _file: File,
    path: PathBuf,
}

impl StateLock {
    /// Takes the lock of `state` now, or says who holds it.
    ///
    /// # Errors
    /// [`LockError::Held`] naming the holder; [`LockError::Io`] when the
    /// lock file cannot be used.
    pub fn acquire(state: &Path, started: &str) -> Result<Self, LockError> {
        let lock = lock_path(state);
        let io = |source| LockError::Io {
            state: state.to_path_buf(),
            lock: lock.clone(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .map_err(io)?;
        if !file.try_lock_exclusive().map_err(io)? {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = serde_json::from_str::<Holder>(&text)
                .map(|h| h.to_string())
                .unwrap_or_else(|_| "unknown holder".to_string());
            return Err(LockError::Held {
                state: state.to_path_buf(),
                lock,
                holder,
            });
        }
        let me = Holder {
            pid: std::process::id(),
            host: host_name(),
            started: started.to_string(),
        };
        let text = serde_json::to_string(&me).unwrap_or_default();
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(StateLock {
            _file: file,
            path: lock,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// This machine's name (Linux's `/proc`, else `$HOSTNAME`, else
/// `unknown host`).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first_and_a_dropped_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let first = StateLock::acquire(&state, "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(first.path(), lock_path(&state));
        let err = StateLock::acquire(&state, "later").unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id()))
                && err.contains("2026-01-01T00:00:00Z")
                && err.contains("--state"),
            "{err}"
        );
        drop(first);
        let _again = StateLock::acquire(&state, "now").unwrap();
    }
}
