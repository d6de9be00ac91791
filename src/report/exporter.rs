//! The exporter trait and the manager that owns a report's files.
//!
//! Every file format is one [`Exporter`] that turns a suite's report data
//! into bytes; only the manager ([`write_files`]) touches the file system,
//! and it writes each file under a temporary name and renames it, so a crash
//! never leaves half a file behind. Every text file it writes is redacted
//! first ([`crate::secret::redact_bytes`]): a header value or key that a
//! system under test echoed into an answer or an error body never reaches
//! the disk, whichever exporter rendered it.

use std::path::{Path, PathBuf};

/// What to tell the user when a report directory cannot be read back.
pub(crate) const REGENERATE: &str = "regenerate it with `continuity-bench run`";

/// Why a report could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or directory could not be written.
    #[error("cannot write {}: {source}; check that the directory is writable and the disk is not full", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file of a report directory could not be read.
    #[error("cannot read {}: {source}; is this a report directory written by `continuity-bench run`?", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A JSON file of a report directory is not what `run` writes.
    #[error("{}: invalid JSON: {source}; {}", path.display(), REGENERATE)]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// A CSV file has other columns than the ones this version writes.
    #[error("{}: columns are [{found}], expected [{expected}]; it was written by another version, {}", path.display(), REGENERATE)]
    Columns {
        /// The file.
        path: PathBuf,
        /// The header found, comma-separated.
        found: String,
        /// The header expected, comma-separated.
        expected: String,
    },
    /// One row of a CSV file could not be parsed.
    #[error("{} row {row}: {message}; {}", path.display(), REGENERATE)]
    Row {
        /// The file.
        path: PathBuf,
        /// Data row number, from 1 (the header is not counted).
        row: u64,
        /// What is wrong with the row, naming the column.
        message: String,
    },
    /// A file's content could not be produced in memory.
    #[error("cannot render {file}: {message}")]
    Render {
        /// The file name inside the report directory.
        file: &'static str,
        /// The cause.
        message: String,
    },
}

/// One output file of a report whose data is `D`.
pub trait Exporter<D: ?Sized> {
    /// File name inside the report directory.
    fn file_name(&self) -> &'static str;
    /// The file's bytes.
    ///
    /// # Errors
    /// [`ReportError::Render`] when the content cannot be produced.
    fn render(&self, data: &D) -> Result<Vec<u8>, ReportError>;
}

/// Writes the file of every exporter into `dir` (created if missing) and
/// returns the paths written, in exporter order. Every exporter renders
/// first, then the files are written, so that a rendering error leaves the
/// directory untouched.
///
/// # Errors
/// [`ReportError::Write`] naming the file that could not be written, or
/// [`ReportError::Render`] naming the file that could not be produced.
pub fn write_files<D: ?Sized>(
    dir: &Path,
    data: &D,
    exporters: &[Box<dyn Exporter<D>>],
) -> Result<Vec<PathBuf>, ReportError> {
    let rendered = exporters
        .iter()
        .map(|exporter| Ok((exporter.file_name(), exporter.render(data)?)))
        .collect::<Result<Vec<_>, ReportError>>()?;
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    rendered
        .into_iter()
        .map(|(name, bytes)| write_atomic(&dir.join(name), &bytes))
        .collect()
}

/// Writes `bytes` to a temporary sibling of `path`, then renames it over
/// `path`. Text (valid UTF-8) is redacted first; other bytes (PNG images,
/// whose text is drawn as pixels) are written as they are, since replacing
/// bytes inside a compressed image could only corrupt it.
///
/// # Errors
/// [`ReportError::Write`] naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    let bytes = if std::str::from_utf8(bytes).is_ok() {
        crate::secret::redact_bytes(bytes)
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{file_name}.partial"));
    let result = std::fs::write(&temp, &bytes).and_then(|()| std::fs::rename(&temp, path));
    match result {
        Ok(()) => Ok(path.to_path_buf()),
        Err(source) => {
            // Best effort: the temporary file is useless now.
            let _ = std::fs::remove_file(&temp);
            Err(ReportError::Write {
                path: path.to_path_buf(),
                source,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Text(&'static str);

    impl Exporter<str> for Text {
        fn file_name(&self) -> &'static str {
            self.0
        }
        fn render(&self, data: &str) -> Result<Vec<u8>, ReportError> {
            if data.is_empty() {
                return Err(ReportError::Render {
                    file: self.0,
                    message: "nothing to write".into(),
                });
            }
            Ok(format!("{}: {data}", self.0).into_bytes())
        }
    }

    fn exporters() -> Vec<Box<dyn Exporter<str>>> {
        vec![Box::new(Text("a.txt")), Box::new(Text("b.txt"))]
    }

    #[test]
    fn writes_every_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("nested/report");
        let paths = write_files(&target, "hello", &exporters()).unwrap();
        assert_eq!(paths, [target.join("a.txt"), target.join("b.txt")]);
        assert_eq!(std::fs::read_to_string(&paths[1]).unwrap(), "b.txt: hello");
        let mut on_disk: Vec<String> = std::fs::read_dir(&target)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(on_disk, ["a.txt", "b.txt"], "no .partial file may remain");
    }

    #[test]
    fn a_rendering_error_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report");
        let err = write_files(&target, "", &exporters()).unwrap_err();
        assert!(err.to_string().contains("a.txt"), "{err}");
        assert!(!target.exists());
    }

    #[test]
    fn an_echoed_secret_never_reaches_a_file() {
        let _key = crate::secret::Secret::new("sk-exporter-planted-42");
        let dir = tempfile::tempdir().unwrap();
        let paths = write_files(
            dir.path(),
            "gateway said sk-exporter-planted-42",
            &exporters(),
        )
        .unwrap();
        for path in paths {
            let text = std::fs::read_to_string(path).unwrap();
            assert!(!text.contains("sk-exporter-planted-42"), "{text}");
            assert!(text.ends_with("gateway said [redacted]"), "{text}");
        }
        // Bytes that are not text (an image) are left as they are.
        let image = [0x89, b'P', b'N', b'G', 0xff];
        let path = write_atomic(&dir.path().join("x.png"), &image).unwrap();
        assert_eq!(std::fs::read(path).unwrap(), image);
    }

    #[test]
    fn unwritable_directory_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"not a directory").unwrap();
        let err = write_files(&blocker.join("report"), "x", &exporters()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("file/report"), "{message}");
        assert!(message.starts_with("cannot write"), "{message}");
    }
}
