//! JSONL reading and writing of datasets: one conversation per line, checked
//! on load so that a broken file fails with its name and line number instead
//! of producing a run with nonsense in it.

use super::{Conversation, Dataset, Text, TurnKind, BUILTIN_DATASETS};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a dataset could not be read or written. Each message is complete on
/// its own (the underlying cause is part of it, not chained).
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The file could not be read.
    #[error("cannot read dataset {}: {cause} (check the --dataset path)", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// The file could not be written.
    #[error("cannot write dataset {}: {cause} (does the directory exist?)", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// A line is not a valid conversation object.
    #[error("{}:{line}: not a valid conversation: {cause}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Line number, from 1.
        line: usize,
        /// What serde_json found wrong.
        cause: serde_json::Error,
    },
    /// Two conversations share an id.
    #[error(
        "{}:{line}: conversation id {id:?} already used on line {first_line}; ids must be unique",
        path.display()
    )]
    DuplicateId {
        /// The file.
        path: PathBuf,
        /// Line of the second use.
        line: usize,
        /// The id.
        id: String,
        /// Line of the first use.
        first_line: usize,
    },
    /// A conversation has fewer than two turns.
    #[error(
        "{}:{line}: conversation {id:?} has {turns} turn(s); it needs an anchor and a probe at least",
        path.display()
    )]
    TooFewTurns {
        /// The file.
        path: PathBuf,
        /// Line number.
        line: usize,
        /// The id.
        id: String,
        /// Its number of turns.
        turns: usize,
    },
    /// The last turn of a conversation is not a probe.
    #[error(
        "{}:{line}: the last turn of conversation {id:?} is not a probe (\"kind\": \"probe\")",
        path.display()
    )]
    LastNotProbe {
        /// The file.
        path: PathBuf,
        /// Line number.
        line: usize,
        /// The id.
        id: String,
    },
    /// The file holds no conversation.
    #[error("dataset {} holds no conversations; generate one with `continuity-bench generate`", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

impl Dataset {
    /// Loads a JSONL dataset, one conversation per line; blank lines are
    /// skipped.
    ///
    /// # Errors
    /// An unreadable file, a malformed line, a duplicate id, a conversation
    /// with fewer than two turns or without a final probe, or an empty file;
    /// each names the file and line.
    pub fn load(path: &Path) -> Result<Dataset, DatasetError> {
        let io = |cause| DatasetError::Io {
            path: path.to_path_buf(),
            cause,
        };
        // Line by line: the file is never held whole (a quarter of a
        // gigabyte at 100,000 conversations).
        let file = std::fs::File::open(path).map_err(io)?;
        Dataset::read(std::io::BufReader::new(file), path)
    }

    /// Loads a dataset from a file or its built-in copy.
    ///
    /// # Errors
    /// As [`Dataset::load`].
    pub fn from_source(source: &cb_base::source::Source) -> Result<Dataset, DatasetError> {
        if let cb_base::source::Source::File(path) = source {
            return Dataset::load(path);
        }
        let path = source.path();
        let text = source.text().map_err(|cause| DatasetError::Io {
            path: path.clone(),
            cause,
        })?;
        Dataset::parse(&text, &path)
    }

    /// The built-in default dataset ([`DEFAULT_DATASET`](crate::DEFAULT_DATASET), compiled in as
    /// the first of [`BUILTIN_DATASETS`]): what a run replays without
    /// `--dataset`, and the committed 150 conversations tests load.
    ///
    /// # Panics
    /// If the compiled-in file does not parse, which this crate's tests
    /// rule out.
    pub fn builtin_default() -> Dataset {
        let builtin = &BUILTIN_DATASETS[0];
        Dataset::parse(builtin.text, Path::new(builtin.path))
            .expect("the built-in default dataset parses")
    }

    /// Parses JSONL text; `path` only names the source in errors.
    ///
    /// # Errors
    /// As [`Dataset::load`].
    pub fn parse(text: &str, path: &Path) -> Result<Dataset, DatasetError> {
        Dataset::read(text.as_bytes(), path)
    }

    /// Parses JSONL from `reader`, one line at a time; `path` only names
    /// the source in errors.
    ///
    /// # Errors
    /// As [`Dataset::load`].
    pub fn read(mut reader: impl std::io::BufRead, path: &Path) -> Result<Dataset, DatasetError> {
        let mut conversations = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut interner = Interner::default();
        let mut buffer = String::new();
        for line in 1.. {
            buffer.clear();
            let read = reader
                .read_line(&mut buffer)
                .map_err(|cause| DatasetError::Io {
                    path: path.to_path_buf(),
                    cause,
                })?;
            if read == 0 {
                break;
            }
            let raw = buffer.trim_end_matches(['\n', '\r']);
            if raw.trim().is_empty() {
                continue;
            }
            let mut c: Conversation =
                serde_json::from_str(raw).map_err(|cause| DatasetError::Malformed {
                    path: path.to_path_buf(),
                    line,
                    cause,
                })?;
            // Parsed turn by turn, the list grew by doubling: at 10,000
            // conversations the spare room was about 14 MB held all run.
            c.turns.shrink_to_fit();
            if let Some(&first_line) = seen.get(&c.id) {
                return Err(DatasetError::DuplicateId {
                    path: path.to_path_buf(),
                    line,
                    id: c.id,
                    first_line,
                });
            }
            if c.turns.len() < 2 {
                return Err(DatasetError::TooFewTurns {
                    path: path.to_path_buf(),
                    line,
                    turns: c.turns.len(),
                    id: c.id,
                });
            }
            if c.turns.last().map(|t| t.kind) != Some(TurnKind::Probe) {
                return Err(DatasetError::LastNotProbe {
                    path: path.to_path_buf(),
                    line,
                    id: c.id,
                });
            }
            seen.insert(c.id.clone(), line);
            for turn in &mut c.turns {
                interner.share(&mut turn.user);
                if let Some(reply) = &mut turn.assistant {
                    interner.share(reply);
                }
            }
            conversations.push(c);
        }
        if conversations.is_empty() {
            return Err(DatasetError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Dataset { conversations })
    }

    /// The JSONL text, one conversation a line, with a trailing newline.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for c in &self.conversations {
            // Serialising plain structs of strings cannot fail.
            out.push_str(&serde_json::to_string(c).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// Writes [`Dataset::to_jsonl`] to `path`, one conversation at a time
    /// (a dataset of 100,000 conversations is a quarter of a gigabyte of
    /// text, never held in memory twice).
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn write(&self, path: &Path) -> Result<(), DatasetError> {
        let err = |cause| DatasetError::Write {
            path: path.to_path_buf(),
            cause,
        };
        let file = std::fs::File::create(path).map_err(err)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        self.write_jsonl(&mut out).map_err(err)?;
        out.flush().map_err(err)
    }

    /// Writes the JSONL text of [`Dataset::to_jsonl`] to `out`.
    ///
    /// # Errors
    /// Whatever `out` returns.
    pub fn write_jsonl(&self, out: &mut impl Write) -> std::io::Result<()> {
        for c in &self.conversations {
            c.write_line(&mut *out)?;
        }
        Ok(())
    }
}

impl Conversation {
    /// Writes this conversation as one JSONL line (its JSON, then `\n`).
    ///
    /// # Errors
    /// Whatever `out` returns.
    pub fn write_line(&self, out: &mut (impl Write + ?Sized)) -> std::io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.write_all(b"\n")
    }
}

/// The distinct texts of a dataset being read: each turn's message and
/// reply is replaced by the one copy already seen, so that a large
/// dataset, whose turns mostly repeat the sentences of a few pools, keeps
/// each sentence once (at 100,000 conversations, 34 MB of distinct text
/// for 174 MB in all).
#[derive(Debug, Default)]
struct Interner(HashSet<Text>);

impl Interner {
    /// Points `text` at the shared copy of its content.
    fn share(&mut self, text: &mut Text) {
        match self.0.get(&**text) {
            Some(shared) => *text = shared.clone(),
            None => {
                self.0.insert(text.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_loaded_dataset_keeps_each_distinct_text_once() {
        let d = Dataset::builtin_default();
        let all: Vec<&Text> = d
            .conversations
            .iter()
            .flat_map(|c| {
                c.turns
                    .iter()
                    .flat_map(|t| std::iter::once(&t.user).chain(&t.assistant))
            })
            .collect();
        let distinct: HashSet<&str> = all.iter().map(|t| &***t).collect();
        let copies: HashSet<*const u8> = all.iter().map(|t| t.as_ptr()).collect();
        assert_eq!(copies.len(), distinct.len(), "one copy per distinct text");
        assert!(
            distinct.len() < all.len(),
            "the default dataset repeats texts"
        );
    }

    use super::*;

    const GOOD: &str = r#"{"id":"c001","anchor":{"category":"place","subject":"home town","value":"Ghent","variants":["Ghent"]},"turns":[{"kind":"anchor","user":"I grew up in Ghent.","assistant":"Noted."},{"kind":"probe","user":"Where did I grow up?","assistant":null}]}"#;

    fn parse(text: &str) -> Result<Dataset, DatasetError> {
        Dataset::parse(text, Path::new("data.jsonl"))
    }

    #[test]
    fn the_builtin_default_is_the_committed_150() {
        let d = Dataset::builtin_default();
        assert_eq!(d.conversations.len(), 150);
        assert_eq!(d.to_jsonl(), BUILTIN_DATASETS[0].text);
    }

    #[test]
    fn round_trips_and_skips_blank_lines() {
        let d = parse(&format!("\n{GOOD}\n\n")).unwrap();
        assert_eq!(d.conversations.len(), 1);
        assert_eq!(d.to_jsonl(), format!("{GOOD}\n"));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        d.write(&p).unwrap();
        assert_eq!(Dataset::load(&p).unwrap(), d);
        // The streamed file is byte for byte the text.
        assert_eq!(std::fs::read_to_string(&p).unwrap(), d.to_jsonl());
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let err = parse(&format!("{GOOD}\n\n{{\"id\": \"c002\",\n")).unwrap_err();
        assert!(
            matches!(err, DatasetError::Malformed { line: 3, .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.starts_with("data.jsonl:3:"), "{msg}");
    }

    #[test]
    fn duplicate_id_is_rejected() {
        let err = parse(&format!("{GOOD}\n{GOOD}\n")).unwrap_err();
        assert!(
            matches!(err, DatasetError::DuplicateId { line: 2, first_line: 1, ref id, .. } if id == "c001"),
            "{err:?}"
        );
    }

    #[test]
    fn structural_errors_are_rejected() {
        let one_turn = GOOD.replace(
            r#"{"kind":"anchor","user":"I grew up in Ghent.","assistant":"Noted."},"#,
            "",
        );
        assert!(matches!(
            parse(&one_turn),
            Err(DatasetError::TooFewTurns { turns: 1, .. })
        ));
        let no_probe = GOOD.replace(r#""kind":"probe""#, r#""kind":"filler""#);
        assert!(matches!(
            parse(&no_probe),
            Err(DatasetError::LastNotProbe { line: 1, .. })
        ));
        assert!(matches!(parse("\n\n"), Err(DatasetError::Empty { .. })));
        let missing = Dataset::load(Path::new("/nonexistent/dir/x.jsonl")).unwrap_err();
        assert!(matches!(missing, DatasetError::Io { .. }));
        assert!(missing.to_string().contains("/nonexistent/dir/x.jsonl"));
    }
}
