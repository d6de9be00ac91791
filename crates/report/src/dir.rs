//! Claiming the directory a report goes to, before any work starts: it is
//! created and written to first, so an unwritable path fails at once, and
//! a report that exists is never overwritten by accident.

use std::path::{Path, PathBuf};

/// Where a run's report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutDir {
    /// The default, `reports/<UTC timestamp>`: made unique with a suffix
    /// (`-2`, `-3`, ...) when it exists, so no report is ever overwritten.
    Default(PathBuf),
    /// `--out`: refused when it exists and is not empty, unless `force`.
    Given {
        /// The directory.
        path: PathBuf,
        /// `--force`: write into it even if it holds files.
        force: bool,
    },
}

impl OutDir {
    /// The directory the report is asked to go to (before a suffix).
    pub fn path(&self) -> &Path {
        match self {
            OutDir::Default(p) | OutDir::Given { path: p, .. } => p,
        }
    }

    /// The directory above it (where a judge cache is kept by default).
    pub fn parent(&self) -> PathBuf {
        self.path()
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }
}

/// `reports/<UTC timestamp>`, e.g. `reports/2026-11-29T18-34-50Z`.
pub fn default_report_dir(now_utc: time::OffsetDateTime) -> PathBuf {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]-[minute]-[second]Z");
    let stamp = now_utc
        .format(&format)
        .unwrap_or_else(|_| "run".to_string());
    PathBuf::from("reports").join(stamp)
}

/// Most suffixes tried for a default directory that exists.
const MAX_SUFFIX: u32 = 1000;

/// File written and removed to prove a claimed directory is writable.
const PROBE: &str = ".continuity-bench-probe";

/// Why a report directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// It cannot be created or written to.
    #[error("cannot write the report directory {}: {source}; choose a writable --out", path.display())]
    Unwritable {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `--out` names a directory that holds files.
    #[error("--out {} already holds files; choose a new directory, or pass --force to replace its report files", path.display())]
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// `--out` names something that is not a directory.
    #[error("--out {} exists and is not a directory; choose a directory", path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// Every suffixed name is taken.
    #[error("{} and {MAX_SUFFIX} suffixed names after it exist; pass --out", path.display())]
    Exhausted {
        /// The base name.
        path: PathBuf,
    },
}

fn unwritable(path: &Path) -> impl FnOnce(std::io::Error) -> DirError + '_ {
    move |source| DirError::Unwritable {
        path: path.to_path_buf(),
        source,
    }
}

/// Proves `dir` is writable by writing and removing a small file.
fn probe(dir: &Path) -> Result<(), DirError> {
    let file = dir.join(PROBE);
    std::fs::write(&file, b"probe").map_err(unwritable(dir))?;
    std::fs::remove_file(&file).map_err(unwritable(dir))
}

/// Creates a fresh directory named `base`, or `base-2`, `base-3`, ... when
/// it exists, and returns it. Creation is atomic, so two runs started in the
/// same second get two directories.
///
/// # Errors
/// [`DirError`] when the parent cannot be created or written.
pub fn claim_unique(base: &Path) -> Result<PathBuf, DirError> {
    if let Some(parent) = base.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(unwritable(parent))?;
    }
    for k in 1..=MAX_SUFFIX {
        let candidate = if k == 1 {
            base.to_path_buf()
        } else {
            let mut name = base.as_os_str().to_owned();
            name.push(format!("-{k}"));
            PathBuf::from(name)
        };
        match std::fs::create_dir(&candidate) {
            Ok(()) => {
                probe(&candidate)?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(unwritable(&candidate)(e)),
        }
    }
    Err(DirError::Exhausted {
        path: base.to_path_buf(),
    })
}

/// Claims `path` given with `--out`: created when missing; an existing one
/// must be empty unless `force`.
///
/// # Errors
/// [`DirError`] naming the directory and the fix.
pub fn claim_given(path: &Path, force: bool) -> Result<PathBuf, DirError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => {
            return Err(DirError::NotADirectory {
                path: path.to_path_buf(),
            })
        }
        Ok(_) => {
            let mut entries = std::fs::read_dir(path).map_err(unwritable(path))?;
            if !force && entries.next().is_some() {
                return Err(DirError::NotEmpty {
                    path: path.to_path_buf(),
                });
            }
        }
        Err(_) => std::fs::create_dir_all(path).map_err(unwritable(path))?,
    }
    probe(path)?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("reports/2026-12-01T10-00-00Z");
        let a = claim_unique(&base).unwrap();
        let b = claim_unique(&base).unwrap();
        assert_eq!(a, base);
        assert_eq!(b, dir.path().join("reports/2026-12-01T10-00-00Z-2"));
        assert!(b.is_dir() && std::fs::read_dir(&b).unwrap().next().is_none());
    }

    #[test]
    fn a_given_directory_with_files_needs_force() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        assert_eq!(claim_given(&out, false).unwrap(), out);
        std::fs::write(out.join("summary.json"), "{}").unwrap();
        let err = claim_given(&out, false).unwrap_err().to_string();
        assert!(err.contains("--force"), "{err}");
        assert!(claim_given(&out, true).is_ok());
        let file = out.join("summary.json");
        assert!(matches!(
            claim_given(&file, true),
            Err(DirError::NotADirectory { .. })
        ));
    }

    #[test]
    fn an_unwritable_path_fails_before_any_work() {
        let err = claim_given(Path::new("/proc/x"), false).unwrap_err();
        assert!(matches!(err, DirError::Unwritable { .. }), "{err}");
        assert!(err.to_string().contains("/proc/x"));
    }
}
