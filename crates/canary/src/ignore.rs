//! The canary's output: the routes to keep user traffic away from, as
//! `{"provider": {"ignore": [...]}}`, ready to merge into an OpenRouter
//! request (`--ignore-out FILE`). It is the union, sorted and deduplicated,
//! of three lists: the reviewed built-in list (`--reviewed FILE` replaces
//! it), the runtime list a person edits (`--runtime FILE`), and the canary's
//! active quarantines, which enter only when enforcing.
//!
//! A list file is one route per line (`#` starts a comment, blank lines are
//! skipped), or JSON: an array of names, or this module's own output shape,
//! so a written ignore list can be fed back as a runtime list.

use super::clock::Timestamp;
use super::machine::Machine;
use super::policy::Mode;
use super::state::write_atomic;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// The reviewed built-in list, compiled in.
const BUILTIN_REVIEWED: &str = include_str!("reviewed_ignore.txt");

/// Which input list a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// The reviewed list (`--reviewed`).
    Reviewed,
    /// The runtime list a person edits (`--runtime`).
    Runtime,
}

impl ListKind {
    fn flag(self) -> &'static str {
        match self {
            ListKind::Reviewed => "--reviewed",
            ListKind::Runtime => "--runtime",
        }
    }
}

impl fmt::Display for ListKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ListKind::Reviewed => "reviewed ignore list",
            ListKind::Runtime => "runtime ignore list",
        })
    }
}

/// Why an ignore list could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum IgnoreError {
    /// The file could not be read.
    #[error("cannot read the {kind} {path}: {source}; check the path given to {flag}", flag = kind.flag())]
    Read {
        /// Which list.
        kind: ListKind,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a route name.
    #[error(
        "the {kind} {path}, line {line}: `{text}` is not a route name; write one route per line \
         with no spaces inside a name, `#` starts a comment"
    )]
    Line {
        /// Which list.
        kind: ListKind,
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending line.
        text: String,
    },
    /// The file looks like JSON but is not of an accepted shape.
    #[error(
        "the {kind} {path} is not a JSON array of route names nor {{\"provider\": {{\"ignore\": \
         [...]}}}} ({source}); fix the JSON or write one route per line"
    )]
    Json {
        /// Which list.
        kind: ListKind,
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The output could not be written.
    #[error("cannot write the ignore list {path}: {source}; check the --ignore-out path and that its folder is writable")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The output shape: `{"provider": {"ignore": [...]}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreList {
    /// The `provider` object of an OpenRouter request.
    pub provider: ProviderIgnore,
}

/// `provider.ignore`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderIgnore {
    /// Route names, sorted and deduplicated.
    pub ignore: Vec<String>,
}

impl IgnoreList {
    /// The union of `lists`, sorted and deduplicated.
    pub fn union<'a>(lists: impl IntoIterator<Item = &'a str>) -> Self {
        let names: BTreeSet<&str> = lists.into_iter().collect();
        IgnoreList {
            provider: ProviderIgnore {
                ignore: names.into_iter().map(str::to_string).collect(),
            },
        }
    }

    /// The merged output: the reviewed and runtime lists, plus the machine's
    /// quarantines still running at `now` when `mode` enforces.
    pub fn merged(
        reviewed: &[String],
        runtime: &[String],
        machine: &Machine,
        now: Timestamp,
        mode: Mode,
    ) -> Self {
        let quarantined = machine.active_quarantines(now);
        let active = quarantined
            .iter()
            .filter(|_| mode == Mode::Enforce)
            .map(|(name, _)| *name);
        IgnoreList::union(
            reviewed
                .iter()
                .chain(runtime)
                .map(String::as_str)
                .chain(active),
        )
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Writes the list to `path` atomically.
    ///
    /// # Errors
    /// [`IgnoreError::Write`] naming the file.
    pub fn write(&self, path: &Path) -> Result<(), IgnoreError> {
        write_atomic(path, self.to_json().as_bytes()).map_err(|source| IgnoreError::Write {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The reviewed built-in list.
///
/// # Errors
/// Only if the compiled-in file is malformed (a test keeps it well-formed).
pub fn builtin_reviewed() -> Result<Vec<String>, IgnoreError> {
    parse_list(
        BUILTIN_REVIEWED,
        ListKind::Reviewed,
        Path::new("<built-in>"),
    )
}

/// Reads one input list file.
///
/// # Errors
/// [`IgnoreError`] naming the file and the fix.
pub fn read_list(path: &Path, kind: ListKind) -> Result<Vec<String>, IgnoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| IgnoreError::Read {
        kind,
        path: path.to_path_buf(),
        source,
    })?;
    parse_list(&text, kind, path)
}

/// Parses an input list; `path` only names it in errors.
///
/// # Errors
/// A line that is not a route name, or JSON of another shape.
pub fn parse_list(text: &str, kind: ListKind, path: &Path) -> Result<Vec<String>, IgnoreError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return parse_json(trimmed, kind, path);
    }
    let mut names = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        if !is_route_name(content) {
            return Err(IgnoreError::Line {
                kind,
                path: path.to_path_buf(),
                line: index + 1,
                text: line.to_string(),
            });
        }
        names.push(content.to_string());
    }
    Ok(names)
}

fn parse_json(text: &str, kind: ListKind, path: &Path) -> Result<Vec<String>, IgnoreError> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        Names(Vec<String>),
        Output(IgnoreList),
    }
    let shape: Shape = serde_json::from_str(text).map_err(|source| IgnoreError::Json {
        kind,
        path: path.to_path_buf(),
        source,
    })?;
    let names = match shape {
        Shape::Names(n) => n,
        Shape::Output(o) => o.provider.ignore,
    };
    for (index, name) in names.iter().enumerate() {
        if !is_route_name(name) {
            return Err(IgnoreError::Line {
                kind,
                path: path.to_path_buf(),
                line: index + 1,
                text: name.clone(),
            });
        }
    }
    Ok(names)
}

fn is_route_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::RouteEvidence;
    use crate::evidence::{ContractName, Outcome, ProbeEvidence, ProbeKind};
    use crate::policy::Policy;

    fn junk(route: &str) -> RouteEvidence {
        let mut e = RouteEvidence::new(route);
        let junk = Outcome::fail("junk");
        e.probes = vec![ProbeEvidence::new(
            ProbeKind::Roleplay,
            [(ContractName::JunkPrefix, junk)],
        )];
        e
    }

    fn healthy(route: &str) -> RouteEvidence {
        let mut e = RouteEvidence::new(route);
        e.probes = vec![ProbeEvidence::new(
            ProbeKind::Roleplay,
            [(ContractName::JunkPrefix, Outcome::Pass)],
        )];
        e
    }

    /// A machine with `bad` quarantined (decided under `policy`).
    fn machine_with_quarantine(policy: &Policy) -> (Machine, Timestamp) {
        let mut m = Machine::new();
        let t0 = Timestamp::from_unix(1_700_000_000).unwrap();
        let evidence = vec![junk("bad"), healthy("x"), healthy("y")];
        m.round(t0, &evidence, policy);
        let t1 = t0.plus(std::time::Duration::from_secs(1800));
        m.round(t1, &evidence, policy);
        assert_eq!(m.active_quarantines(t1).len(), 1);
        (m, t1)
    }

    #[test]
    fn the_union_is_sorted_deduplicated_and_of_the_documented_shape() {
        let l = IgnoreList::union(["b", "a", "b", "c/x"]);
        let v: serde_json::Value = serde_json::from_str(&l.to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"provider": {"ignore": ["a", "b", "c/x"]}})
        );
        assert_eq!(
            IgnoreList::default().to_json(),
            "{\n  \"provider\": {\n    \"ignore\": []\n  }\n}\n"
        );
    }

    #[test]
    fn quarantines_enter_only_when_enforcing() {
        let policy = Policy::default();
        let (m, now) = machine_with_quarantine(&policy);
        let reviewed = vec!["old".to_string()];
        let runtime = vec!["manual".to_string(), "old".to_string()];
        let observe = IgnoreList::merged(&reviewed, &runtime, &m, now, Mode::Observe);
        assert_eq!(observe.provider.ignore, ["manual", "old"]);
        let enforce = IgnoreList::merged(&reviewed, &runtime, &m, now, Mode::Enforce);
        assert_eq!(enforce.provider.ignore, ["bad", "manual", "old"]);
        let later = now.plus(crate::clock::DAY);
        let expired = IgnoreList::merged(&reviewed, &runtime, &m, later, Mode::Enforce);
        assert_eq!(expired.provider.ignore, ["manual", "old"]);
    }

    #[test]
    fn text_lists_skip_comments_and_blank_lines() {
        let names = parse_list(
            "# header\n\nprovider-a\n  b/fp8   # flaky since May\n",
            ListKind::Runtime,
            Path::new("rt.txt"),
        )
        .unwrap();
        assert_eq!(names, ["provider-a", "b/fp8"]);
        assert!(builtin_reviewed().unwrap().is_empty());
    }

    #[test]
    fn json_lists_in_both_shapes_are_accepted() {
        let p = Path::new("x.json");
        assert_eq!(
            parse_list(r#"["a","b"]"#, ListKind::Runtime, p).unwrap(),
            ["a", "b"]
        );
        let written = IgnoreList::union(["z", "y"]).to_json();
        assert_eq!(
            parse_list(&written, ListKind::Runtime, p).unwrap(),
            ["y", "z"]
        );
    }

    #[test]
    fn bad_lists_name_the_file_the_line_and_the_fix() {
        let err = parse_list("ok\ntwo words\n", ListKind::Runtime, Path::new("rt.txt"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rt.txt") && err.contains("line 2") && err.contains("one route per line"),
            "{err}"
        );
        let err = parse_list(
            r#"{"provider": {"order": []}}"#,
            ListKind::Reviewed,
            Path::new("rv.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("rv.json") && err.contains("reviewed"), "{err}");
        let err = read_list(Path::new("/no/such/list.txt"), ListKind::Runtime)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/no/such/list.txt") && err.contains("--runtime"),
            "{err}"
        );
    }

    #[test]
    fn the_written_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ignore.json");
        let l = IgnoreList::union(["b", "a"]);
        l.write(&path).unwrap();
        let back: IgnoreList =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back, l);
        let err = l
            .write(&dir.path().join("missing/ignore.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--ignore-out"), "{err}");
    }
}
