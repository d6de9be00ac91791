//! The quarantine machine's state, and its file (`--state FILE`): JSON with a
//! schema version, written atomically (a temporary file in the same folder,
//! synced, then renamed over the old one) after every round, so a crash
//! leaves either the old state or the new one, and a restart continues where
//! the canary stopped with the same decisions an uninterrupted run makes.

use super::clock::Timestamp;
use super::evidence::ContractName;
use super::language::LanguageMemory;
use super::policy::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The state file's schema version; bump it when the shape changes.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything the machine remembers between rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineState {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Rounds completed.
    pub rounds: u64,
    /// When the last round ran.
    pub last_round_at: Option<Timestamp>,
    /// The mode of the last round (a manual release is logged in it).
    pub mode: Mode,
    /// The clock the rounds ran on (`None` in a state written before it
    /// was recorded): a manual release computes the time left on it.
    #[serde(default)]
    pub clock: Option<ClockKind>,
    /// Where the running canary writes its ignore list and what it merges
    /// into it, so that `canary release` rewrites the same file at once.
    #[serde(default)]
    pub outputs: Option<IgnoreOutputs>,
    /// Per route, by name.
    pub routes: BTreeMap<String, RouteState>,
}

/// Which clock a canary's rounds run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// The wall clock (rounds `--interval` apart in real time).
    Wall,
    /// The simulated clock of `--no-wait`: it advances by the interval per
    /// round, and "now" is the last round's time.
    Simulated,
}

/// The ignore list a canary writes, as recorded in its state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreOutputs {
    /// The ignore list written (`--ignore-out`).
    pub ignore_out: PathBuf,
    /// The reviewed list's routes, as read.
    pub reviewed: Vec<String>,
    /// The runtime list's file, re-read on every write.
    pub runtime: Option<PathBuf>,
}

impl Default for MachineState {
    fn default() -> Self {
        MachineState {
            schema_version: SCHEMA_VERSION,
            rounds: 0,
            last_round_at: None,
            mode: Mode::Observe,
            clock: None,
            outputs: None,
            routes: BTreeMap::new(),
        }
    }
}

/// What the machine remembers about one route.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteState {
    /// The active quarantine, tracked in both modes (in observe mode it is
    /// the quarantine that would be in force).
    pub quarantine: Option<Quarantine>,
    /// Per contract, the consecutive scored rounds it failed (the log's
    /// per-contract detail; the quarantine rule reads [`RouteState::streak`]).
    pub failing: BTreeMap<ContractName, FailStreak>,
    /// The consecutive scored rounds in which the route failed any
    /// contract: the run the quarantine rule counts.
    #[serde(default)]
    pub streak: RouteStreak,
    /// Whether the route was missing from the last round (gone from the
    /// listing): its state is kept, and it counts for no floor.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
    /// Consecutive fully passing rounds.
    pub clean_rounds: u32,
    /// Quarantines since the last history reset (the escalation step).
    pub quarantines: u32,
    /// When the last quarantine began.
    pub last_quarantine_at: Option<Timestamp>,
    /// The language probe's re-check.
    pub language: LanguageMemory,
}

/// A quarantine in force (or, in observe mode, that would be).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quarantine {
    /// The contract that failed in the round that decided it (the first
    /// in [`ContractName::ALL`] order).
    pub contract: ContractName,
    /// Every contract failed during the run that led to it.
    #[serde(default)]
    pub contracts: Vec<ContractName>,
    /// When it began.
    pub since: Timestamp,
    /// When it ends unless lifted earlier.
    pub until: Timestamp,
    /// 1 for the first since the last history reset, 2 for the second, ...
    pub step: u32,
    /// The mode it was decided in.
    pub decided_in: Mode,
    /// The evidence it was decided on.
    pub evidence: String,
}

/// A run of consecutive scored rounds in which a route failed some
/// contract (not necessarily the same one each round).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteStreak {
    /// How many rounds in a row.
    pub rounds: u32,
    /// Every contract failed during the run, in [`ContractName::ALL`] order.
    pub contracts: Vec<ContractName>,
    /// The evidence of the most recent failing rounds, oldest first (as many
    /// as the quarantine rule needs).
    pub evidence: Vec<String>,
}

/// A run of consecutive scored rounds failing one contract.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailStreak {
    /// How many rounds in a row.
    pub rounds: u32,
    /// The evidence of the most recent failing rounds, oldest first (as many
    /// as the quarantine rule needs).
    pub evidence: Vec<String>,
}

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file exists but could not be read.
    #[error("cannot read the canary state file {path}: {source}; check the --state path and its permissions")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not canary state JSON.
    #[error(
        "the canary state file {path} is not valid canary state ({source}); restore it from a \
         backup, or move it away to start fresh (the quarantine history is then lost)"
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The file was written by another schema version.
    #[error(
        "the canary state file {path} has schema version {found}, this build reads version \
         {expected}; run the continuity-bench version that wrote it, or move the file away to \
         start fresh"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
    /// The state could not be written.
    #[error("cannot write the canary state file {path}: {source}; check that its folder exists and is writable")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Reads a state file.
///
/// # Errors
/// [`StateError`] naming the file: unreadable, not JSON of this shape, or
/// another schema version.
pub fn load(path: &Path) -> Result<MachineState, StateError> {
    let bytes = std::fs::read(path).map_err(|source| StateError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &bytes)
}

/// Reads a state file, or returns a fresh state when the file does not exist.
///
/// # Errors
/// As [`load`], except for a missing file.
pub fn load_or_default(path: &Path) -> Result<MachineState, StateError> {
    match std::fs::read(path) {
        Ok(bytes) => parse(path, &bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(MachineState::default()),
        Err(source) => Err(StateError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses state bytes, checking the version before the shape.
fn parse(path: &Path, bytes: &[u8]) -> Result<MachineState, StateError> {
    #[derive(Deserialize)]
    struct Header {
        schema_version: u32,
    }
    let bad = |source| StateError::Parse {
        path: path.to_path_buf(),
        source,
    };
    let header: Header = serde_json::from_slice(bytes).map_err(bad)?;
    if header.schema_version != SCHEMA_VERSION {
        return Err(StateError::Version {
            path: path.to_path_buf(),
            found: header.schema_version,
            expected: SCHEMA_VERSION,
        });
    }
    serde_json::from_slice(bytes).map_err(bad)
}

/// Writes the state to `path` atomically (pretty JSON, trailing newline).
///
/// # Errors
/// [`StateError::Write`] naming the file.
pub fn save(path: &Path, state: &MachineState) -> Result<(), StateError> {
    let mut bytes = serde_json::to_vec_pretty(state).map_err(|e| StateError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    bytes.push(b'\n');
    write_atomic(path, &bytes).map_err(|source| StateError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path` through a synced temporary file in the same
/// folder renamed over `path`: readers see the old file or the new one,
/// never half of one.
///
/// # Errors
/// The I/O error of creating, writing, syncing or renaming.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".canary-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MachineState {
        let mut s = MachineState {
            rounds: 7,
            last_round_at: Some(Timestamp::from_unix(1_000).unwrap()),
            mode: Mode::Enforce,
            ..MachineState::default()
        };
        let mut r = RouteState {
            quarantine: Some(Quarantine {
                contract: ContractName::Schema,
                contracts: vec![ContractName::Schema],
                since: Timestamp::from_unix(1_000).unwrap(),
                until: Timestamp::from_unix(87_400).unwrap(),
                step: 1,
                decided_in: Mode::Enforce,
                evidence: "missing field".into(),
            }),
            quarantines: 1,
            ..RouteState::default()
        };
        r.failing.insert(
            ContractName::Schema,
            FailStreak {
                rounds: 2,
                evidence: vec!["a".into(), "b".into()],
            },
        );
        s.routes.insert("b".into(), r);
        s.routes.insert("a".into(), RouteState::default());
        s
    }

    #[test]
    fn save_then_load_gives_the_same_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        save(&path, &sample()).unwrap();
        assert_eq!(load(&path).unwrap(), sample());
        save(&path, &MachineState::default()).unwrap();
        assert_eq!(load(&path).unwrap(), MachineState::default());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("state.json")]);
    }

    #[test]
    fn a_missing_file_is_a_fresh_start_only_for_load_or_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.json");
        assert_eq!(load_or_default(&path).unwrap(), MachineState::default());
        let err = load(&path).unwrap_err();
        assert!(matches!(err, StateError::Read { .. }));
        assert!(err.to_string().contains("none.json"));
    }

    #[test]
    fn a_bad_file_is_an_error_naming_it_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "{not json").unwrap();
        let err = load_or_default(&path).unwrap_err().to_string();
        assert!(
            err.contains("state.json") && err.contains("move it away"),
            "{err}"
        );

        std::fs::write(&path, r#"{"schema_version": 1, "rounds": "many"}"#).unwrap();
        assert!(matches!(load(&path), Err(StateError::Parse { .. })));

        std::fs::write(&path, r#"{"schema_version": 99}"#).unwrap();
        let err = load(&path).unwrap_err();
        assert!(matches!(
            err,
            StateError::Version {
                found: 99,
                expected: 1,
                ..
            }
        ));
        assert!(err.to_string().contains("schema version 99"));
    }

    #[test]
    fn writing_into_a_missing_folder_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/state.json");
        let err = save(&path, &sample()).unwrap_err().to_string();
        assert!(
            err.contains("state.json") && err.contains("writable"),
            "{err}"
        );
    }
}
