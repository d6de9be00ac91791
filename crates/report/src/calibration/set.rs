//! The one loader of labelled sets: JSONL, one case a line, blank lines
//! skipped, every case checked as it is read (ids unique, then the case's
//! own rules), so that a broken set fails with its file, its line and what
//! to change, never with a calibration of half a file.

use cb_base::source::Source;
use serde::de::DeserializeOwned;
use std::collections::HashSet;
use std::path::PathBuf;

/// A case of a labelled set, as one line of its file holds it.
pub trait LabelledCase: DeserializeOwned {
    /// What the set is called in messages ("contract calibration").
    const SET: &'static str;
    /// The fields of a case, listed when a line does not parse.
    const FIELDS: &'static str;

    /// The case's id, unique in its set.
    fn id(&self) -> &str;

    /// What is wrong with this well-formed case and how to fix it, or
    /// `None` when nothing is.
    fn problem(&self) -> Option<&'static str>;
}

/// Why a labelled set could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The file could not be read.
    #[error("cannot read {set} set {}: {source}; pass an existing JSONL file with --cases", path.display())]
    Io {
        /// What the set is called ([`LabelledCase::SET`]).
        set: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a case.
    #[error("{file}:{line}: not a {set} case: {source}; fix the line (fields: {fields})")]
    Parse {
        /// What the set is called.
        set: &'static str,
        /// The file, as reports name it.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The fields a case has ([`LabelledCase::FIELDS`]).
        fields: &'static str,
        /// The cause.
        source: serde_json::Error,
    },
    /// A case is well-formed JSON but breaks a rule of its set.
    #[error("{file}:{line}: case {id}: {problem}")]
    Invalid {
        /// The file, as reports name it.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The case id.
        id: String,
        /// What is wrong and how to fix it.
        problem: &'static str,
    },
    /// The file holds no case.
    #[error("{set} set {file} holds no case; add one JSON case per line")]
    Empty {
        /// What the set is called.
        set: &'static str,
        /// The file, as reports name it.
        file: String,
    },
}

/// Reads and checks the labelled set `source` (a file, or a built-in copy);
/// errors name it as [`Source::label`] does.
///
/// # Errors
/// [`CalibrationError`] naming the file, and the line to fix.
pub fn load<C: LabelledCase>(source: &Source) -> Result<Vec<C>, CalibrationError> {
    let text = source.text().map_err(|cause| CalibrationError::Io {
        set: C::SET,
        path: source.path(),
        source: cause,
    })?;
    parse(&text, &source.label())
}

/// Parses and checks labelled cases from JSONL `text`; `file` names it in
/// errors. Blank lines are skipped.
///
/// # Errors
/// [`CalibrationError`] with the line to fix.
pub fn parse<C: LabelledCase>(text: &str, file: &str) -> Result<Vec<C>, CalibrationError> {
    let mut cases = Vec::new();
    let mut ids = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let case: C = serde_json::from_str(raw).map_err(|source| CalibrationError::Parse {
            set: C::SET,
            file: file.to_string(),
            line,
            fields: C::FIELDS,
            source,
        })?;
        let problem = if ids.insert(case.id().to_string()) {
            case.problem()
        } else {
            Some("duplicate id; give every case its own id")
        };
        if let Some(problem) = problem {
            return Err(CalibrationError::Invalid {
                file: file.to_string(),
                line,
                id: case.id().to_string(),
                problem,
            });
        }
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(CalibrationError::Empty {
            set: C::SET,
            file: file.to_string(),
        });
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::path::Path;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Case {
        id: String,
        note: String,
    }

    impl LabelledCase for Case {
        const SET: &'static str = "test";
        const FIELDS: &'static str = "id, note";
        fn id(&self) -> &str {
            &self.id
        }
        fn problem(&self) -> Option<&'static str> {
            self.note
                .is_empty()
                .then_some("`note` must say why the label is right")
        }
    }

    const GOOD: &str = r#"{"id": "a", "note": "why"}"#;

    #[test]
    fn reads_cases_in_file_order_and_skips_blank_lines() {
        let text = format!("\n{GOOD}\n\n{}\n", GOOD.replace("\"a\"", "\"b\""));
        let cases: Vec<Case> = parse(&text, "x.jsonl").unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_fix() {
        let err = parse::<Case>(&format!("{GOOD}\n{{nope\n"), "x.jsonl").unwrap_err();
        assert!(matches!(err, CalibrationError::Parse { line: 2, .. }));
        let text = err.to_string();
        assert!(
            text.starts_with("x.jsonl:2: not a test case:") && text.ends_with("(fields: id, note)"),
            "{text}"
        );
        let err = parse::<Case>(&format!("{GOOD}\n\n{GOOD}\n"), "x.jsonl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.jsonl:3: case a: duplicate id; give every case its own id"
        );
        let err = parse::<Case>(r#"{"id": "a", "note": ""}"#, "x.jsonl").unwrap_err();
        assert!(err
            .to_string()
            .ends_with("`note` must say why the label is right"));
        let err = parse::<Case>("\n", "x.jsonl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "test set x.jsonl holds no case; add one JSON case per line"
        );
        let missing = Source::File(Path::new("/no/such/file.jsonl").to_path_buf());
        let err = load::<Case>(&missing).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read test set /no/such/file.jsonl:") && err.contains("--cases"),
            "{err}"
        );
    }

    #[test]
    fn a_file_and_a_built_in_copy_read_alike() {
        static BUILT_IN: cb_base::source::BuiltIn = cb_base::source::BuiltIn {
            path: "sets/test.jsonl",
            text: GOOD,
        };
        let cases: Vec<Case> = load(&Source::BuiltIn(&BUILT_IN)).unwrap();
        assert_eq!(cases.len(), 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.jsonl");
        std::fs::write(&path, GOOD).unwrap();
        let cases: Vec<Case> = load(&Source::File(path)).unwrap();
        assert_eq!(cases[0].note, "why");
    }
}
