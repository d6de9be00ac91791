//! Operator actions for a running canary: `canary release ROUTE` cannot
//! take the state lock while a canary holds it, so it leaves a request, one
//! small JSON file in `<state>.requests/` (written atomically), and the
//! running canary applies every pending request at the end of its next
//! round, before it saves the state and writes the ignore list, then
//! deletes the files. A request left when no canary runs is applied by the
//! next one at its start.

use super::clock::Timestamp;
use super::machine::Machine;
use super::record::LogRecord;
use super::state::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One operator action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Lift the route's quarantine.
    Release {
        /// The route.
        route: String,
    },
}

/// Why the requests could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the canary's request folder {path}: {source}; check that the state file's folder is writable")]
pub struct RequestError {
    /// The folder or file.
    pub path: PathBuf,
    /// The I/O error.
    pub source: std::io::Error,
}

/// The request folder of `state`: `state.json` -> `state.json.requests`.
pub fn requests_dir(state: &Path) -> PathBuf {
    let mut name = state.as_os_str().to_owned();
    name.push(".requests");
    PathBuf::from(name)
}

/// Leaves `request` for the canary holding `state`; returns its file.
///
/// # Errors
/// [`RequestError`] when the folder or the file cannot be written.
pub fn submit(state: &Path, request: &Request) -> Result<PathBuf, RequestError> {
    let dir = requests_dir(state);
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RequestError { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(failed(&dir))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = dir.join(format!("{nanos:032}-{}.json", std::process::id()));
    let text = serde_json::to_string(request).unwrap_or_default();
    write_atomic(&path, text.as_bytes()).map_err(failed(&path))?;
    Ok(path)
}

/// The pending requests of `state`, oldest first, with their files (a file
/// that is not a request is reported with the reason, and left alone).
pub fn pending(state: &Path) -> (Vec<(PathBuf, Request)>, Vec<String>) {
    let dir = requests_dir(state);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for path in files {
        match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Request>(&t).map_err(|e| e.to_string()))
        {
            Ok(request) => out.push((path, request)),
            Err(e) => problems.push(format!(
                "ignoring the request file {}: {e}; delete it",
                path.display()
            )),
        }
    }
    (out, problems)
}

/// Deletes an applied request's file.
///
/// # Errors
/// [`RequestError`] when it cannot be removed.
pub fn done(path: &Path) -> Result<(), RequestError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RequestError {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Applies every pending operator request to `machine` at `now` (the
/// running canary, holding the lock). Returns the records, and lines for a
/// person about requests that could not be applied.
pub fn apply_requests(
    state_path: &Path,
    machine: &mut Machine,
    now: Timestamp,
) -> (Vec<LogRecord>, Vec<String>) {
    let (pending, mut problems) = pending(state_path);
    let mut records = Vec::new();
    for (file, request) in pending {
        match request {
            Request::Release { route } => match machine.release(&route, now) {
                Ok(record) => records.push(record),
                Err(e) => problems.push(format!("operator request {}: {e}", file.display())),
            },
        }
        if let Err(e) = done(&file) {
            problems.push(e.to_string());
        }
    }
    (records, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_come_back_oldest_first_and_go_once_done() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        assert!(pending(&state).0.is_empty());
        for route in ["a", "b"] {
            submit(
                &state,
                &Request::Release {
                    route: route.into(),
                },
            )
            .unwrap();
        }
        std::fs::write(requests_dir(&state).join("zz.json"), "{nope").unwrap();
        let (found, problems) = pending(&state);
        let routes: Vec<&Request> = found.iter().map(|(_, r)| r).collect();
        assert_eq!(
            routes,
            [
                &Request::Release { route: "a".into() },
                &Request::Release { route: "b".into() }
            ]
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        for (path, _) in &found {
            done(path).unwrap();
        }
        assert!(pending(&state).0.is_empty());
    }
}
