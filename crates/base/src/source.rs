//! Where an input file comes from: a file the user named, or a copy
//! compiled into the binary, so that every command works from any
//! directory and after `cargo install` with no path argument.
//!
//! A path that exists is read from disk. A path that does not exist but
//! names a built-in file (`storm`, `storm.toml` or
//! `fault_profiles/storm.toml`) is the built-in copy, so the commands the
//! README shows work outside the repository too. Anything else is an error
//! that lists what is built in.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A file compiled into the binary.
#[derive(Debug, PartialEq, Eq)]
pub struct BuiltIn {
    /// Its path in the repository, e.g. `fault_profiles/paper.toml`.
    pub path: &'static str,
    /// Its text.
    pub text: &'static str,
}

impl BuiltIn {
    /// Its file name without extension (`paper`).
    pub fn stem(&self) -> &'static str {
        let name = self.path.rsplit('/').next().unwrap_or(self.path);
        name.split('.').next().unwrap_or(name)
    }

    /// Whether `arg` names it: its path, its file name or its stem.
    fn is_named_by(&self, arg: &Path) -> bool {
        let arg = arg.to_string_lossy();
        let name = self.path.rsplit('/').next().unwrap_or(self.path);
        arg == self.path || arg == name || arg == self.stem()
    }
}

/// Where an input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in copy.
    BuiltIn(&'static BuiltIn),
    /// A file on disk.
    File(PathBuf),
}

/// An input that names neither a file nor a built-in one.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {path}: no such file, and no built-in {what} of that name (built in: {builtins}); pass an existing file or one of those names")]
pub struct SourceError {
    /// The flag that named it.
    pub flag: &'static str,
    /// What was given.
    pub path: String,
    /// What kind of file (`dataset`, `fault profile`).
    pub what: &'static str,
    /// The built-in names, comma-separated.
    pub builtins: String,
}

impl Source {
    /// Resolves `arg` of `flag` against `builtins`; `None` is `default`.
    ///
    /// # Errors
    /// [`SourceError`] when `arg` is neither a file nor a built-in name.
    pub fn resolve(
        arg: Option<&Path>,
        flag: &'static str,
        what: &'static str,
        builtins: &'static [BuiltIn],
        default: &'static BuiltIn,
    ) -> Result<Source, SourceError> {
        let Some(arg) = arg else {
            return Ok(Source::BuiltIn(default));
        };
        if arg.exists() {
            return Ok(Source::File(arg.to_path_buf()));
        }
        builtins
            .iter()
            .find(|b| b.is_named_by(arg))
            .map(Source::BuiltIn)
            .ok_or_else(|| SourceError {
                flag,
                path: arg.display().to_string(),
                what,
                builtins: builtins
                    .iter()
                    .map(BuiltIn::stem)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// How reports name it: the path, with "(built in)" for a built-in copy.
    pub fn label(&self) -> String {
        match self {
            Source::BuiltIn(b) => format!("{} (built in)", b.path),
            Source::File(p) => p.display().to_string(),
        }
    }

    /// The path errors name (the repository path for a built-in copy).
    pub fn path(&self) -> PathBuf {
        match self {
            Source::BuiltIn(b) => PathBuf::from(b.path),
            Source::File(p) => p.clone(),
        }
    }

    /// Its text.
    ///
    /// # Errors
    /// When the file cannot be read.
    pub fn text(&self) -> std::io::Result<Cow<'static, str>> {
        match self {
            Source::BuiltIn(b) => Ok(Cow::Borrowed(b.text)),
            Source::File(p) => std::fs::read_to_string(p).map(Cow::Owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static BUILTINS: [BuiltIn; 2] = [
        BuiltIn {
            path: "test_profiles/paper.toml",
            text: "name = \"paper\"",
        },
        BuiltIn {
            path: "test_profiles/storm.toml",
            text: "name = \"storm\"",
        },
    ];

    fn resolve(arg: Option<&str>) -> Result<Source, SourceError> {
        Source::resolve(
            arg.map(Path::new),
            "--faults",
            "fault profile",
            &BUILTINS,
            &BUILTINS[0],
        )
    }

    #[test]
    fn no_argument_is_the_default_and_names_resolve_to_built_ins() {
        assert_eq!(
            resolve(None).unwrap().label(),
            "test_profiles/paper.toml (built in)"
        );
        for name in ["storm", "storm.toml", "test_profiles/storm.toml"] {
            let s = resolve(Some(name)).unwrap();
            assert_eq!(s.text().unwrap(), "name = \"storm\"", "{name}");
        }
    }

    #[test]
    fn an_existing_file_wins_and_an_unknown_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("storm.toml");
        std::fs::write(&file, "mine").unwrap();
        let s = resolve(Some(file.to_str().unwrap())).unwrap();
        assert_eq!(s, Source::File(file));
        assert_eq!(s.text().unwrap(), "mine");
        let err = resolve(Some("strom")).unwrap_err().to_string();
        assert!(
            err.contains("--faults strom") && err.contains("paper, storm"),
            "{err}"
        );
    }
}
