//! The exporter trait and the manager that owns a report's files.
//!
//! Every file format is one [`Exporter`] that turns a suite's report data
//! into bytes; only the manager ([`write_files`]) touches the file system,
//! and it writes each file under a temporary name and renames it, so a crash
//! never leaves half a file behind. Every text file it writes is redacted
//! first ([`cb_base::secret::redact_bytes`]): a header value or key that a
//! system under test echoed into an answer or an error body never reaches
//! the disk, whichever exporter rendered it.

use std::io::Write;
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

    /// Writes the file's bytes to `out`. The default renders them whole;
    /// an exporter whose file grows with the run (a row per request)
    /// writes it a row at a time instead, so that it is never whole in
    /// memory.
    ///
    /// # Errors
    /// As [`Exporter::render`], or [`ReportError::Write`] when `out` fails.
    fn write_to(&self, data: &D, out: &mut dyn Write) -> Result<(), ReportError> {
        let bytes = self.render(data)?;
        out.write_all(&bytes).map_err(|source| ReportError::Write {
            path: self.file_name().into(),
            source,
        })
    }
}

/// A writer that redacts ([`cb_base::secret::redact_bytes`]) every line that
/// is text before passing it on: a secret is a header value or a key, never
/// more than one line, so a line at a time finds every one that a whole
/// file would, and a file written row by row is redacted as it goes. A
/// line that is not UTF-8 (a PNG's bytes, whose text is drawn as pixels)
/// passes as it is, since replacing bytes inside a compressed image could
/// only corrupt it.
struct Redacting<W: Write> {
    inner: W,
    line: Vec<u8>,
}

impl<W: Write> Redacting<W> {
    fn new(inner: W) -> Self {
        Redacting {
            inner,
            line: Vec::new(),
        }
    }

    fn pass(&mut self) -> std::io::Result<()> {
        let line = std::mem::take(&mut self.line);
        if std::str::from_utf8(&line).is_ok() {
            self.inner
                .write_all(&cb_base::secret::redact_bytes(&line))?;
        } else {
            self.inner.write_all(&line)?;
        }
        self.line = line;
        self.line.clear();
        Ok(())
    }

    /// Passes the last, unfinished line on and returns the inner writer.
    fn finish(mut self) -> std::io::Result<W> {
        self.pass()?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.line.extend_from_slice(&rest[..=end]);
            self.pass()?;
            rest = &rest[end + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // Only whole lines are passed on before the end (a secret may span
        // two writes); the inner writer is flushed by `finish`.
        Ok(())
    }
}

/// Writes the file of every exporter into `dir` (created if missing) and
/// returns the paths written, in exporter order. Each file is rendered and
/// written under a temporary name before the next is rendered, so that only
/// one file's bytes are in memory at a time; the temporary files are renamed
/// only once every one is written, so that a rendering error leaves no file
/// of the report (and no directory this call created).
///
/// # Errors
/// [`ReportError::Write`] naming the file that could not be written, or
/// [`ReportError::Render`] naming the file that could not be produced.
pub fn write_files<D: ?Sized>(
    dir: &Path,
    data: &D,
    exporters: &[Box<dyn Exporter<D>>],
) -> Result<Vec<PathBuf>, ReportError> {
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(exporters.len());
    for exporter in exporters {
        let path = dir.join(exporter.file_name());
        match stage_with(&path, |out| exporter.write_to(data, out)) {
            Ok(temp) => staged.push((temp, path)),
            Err(e) => {
                // Best effort: nothing of a report that failed is kept.
                for (temp, _) in &staged {
                    let _ = std::fs::remove_file(temp);
                }
                if created {
                    let _ = std::fs::remove_dir(dir);
                }
                return Err(e);
            }
        }
    }
    let mut written = Vec::with_capacity(staged.len());
    for (i, (temp, path)) in staged.iter().enumerate() {
        if let Err(source) = std::fs::rename(temp, path) {
            // Best effort: no temporary file is left behind.
            for (temp, _) in &staged[i..] {
                let _ = std::fs::remove_file(temp);
            }
            return Err(ReportError::Write {
                path: path.clone(),
                source,
            });
        }
        written.push(path.clone());
    }
    Ok(written)
}

/// Writes `bytes` to a temporary sibling of `path`, then renames it over
/// `path`. Text (valid UTF-8) is redacted first; other bytes (PNG images,
/// whose text is drawn as pixels) are written as they are, since replacing
/// bytes inside a compressed image could only corrupt it.
///
/// # Errors
/// [`ReportError::Write`] naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    let temp = stage(path, bytes)?;
    std::fs::rename(&temp, path).map_err(|source| {
        // Best effort: the temporary file is useless now.
        let _ = std::fs::remove_file(&temp);
        ReportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(path.to_path_buf())
}

/// Writes `bytes` (redacted when they are text) to the temporary sibling of
/// `path` (`.NAME.partial`) and returns the temporary file's path.
fn stage(path: &Path, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    stage_with(path, |out| {
        out.write_all(bytes).map_err(|source| ReportError::Write {
            path: path.to_path_buf(),
            source,
        })
    })
}

/// Has `write` write the file through [`Redacting`] to the temporary
/// sibling of `path` (`.NAME.partial`) and returns the temporary file's
/// path; the temporary file is removed when anything fails.
fn stage_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<(), ReportError>,
) -> Result<PathBuf, ReportError> {
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{file_name}.partial"));
    let io_error = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let result = std::fs::File::create(&temp)
        .map_err(io_error)
        .and_then(|file| {
            let mut out = Redacting::new(std::io::BufWriter::new(file));
            write(&mut out)?;
            out.finish()
                .and_then(|w| w.into_inner().map_err(std::io::IntoInnerError::into_error))
                .map_err(io_error)?;
            Ok(())
        });
    match result {
        Ok(()) => Ok(temp),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(e)
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

    struct Failing;

    impl Exporter<str> for Failing {
        fn file_name(&self) -> &'static str {
            "c.txt"
        }
        fn render(&self, _: &str) -> Result<Vec<u8>, ReportError> {
            Err(ReportError::Render {
                file: "c.txt",
                message: "cannot".into(),
            })
        }
    }

    #[test]
    fn a_rendering_error_after_written_files_keeps_none_of_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut list = exporters();
        list.push(Box::new(Failing));
        let err = write_files(dir.path(), "hello", &list).unwrap_err();
        assert!(err.to_string().contains("c.txt"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_secret_written_in_pieces_is_still_redacted_and_binary_lines_pass() {
        let _key = cb_base::secret::Secret::new("sk-pieces-planted-77");
        let mut out = Redacting::new(Vec::new());
        out.write_all(b"row one sk-pieces-").unwrap();
        out.write_all(
            b"planted-77 end\nrow two\n\xff\xfe sk-pieces-planted-77\ntail sk-pieces-planted-77",
        )
        .unwrap();
        let bytes = out.finish().unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(text.matches("sk-pieces-planted-77").count(), 1, "{text}");
        assert!(
            text.starts_with("row one [redacted] end\nrow two\n"),
            "{text}"
        );
        assert!(text.ends_with("tail [redacted]"), "{text}");
        // The line that is not UTF-8 is left as it is.
        assert!(bytes.windows(2).any(|w| w == b"\xff\xfe"));
    }

    #[test]
    fn an_echoed_secret_never_reaches_a_file() {
        let _key = cb_base::secret::Secret::new("sk-exporter-planted-42");
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
