//! The on-disk verdict cache: one JSON line per decided verdict, appended as
//! verdicts arrive and loaded at start, so a rerun or `report` never asks the
//! judge the same question twice.
//!
//! The key is the SHA-256 of (judge model, prompt version, anchor value,
//! probe, answer): change any of them and the judge is asked again. Failures
//! are never cached; the next run retries them.

use super::parse::JudgeReply;
use super::prompt::PROMPT_VERSION;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why the cache could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Reading or appending the file failed.
    #[error(
        "judge cache {path}: {source}; fix the path given to --judge-cache or its permissions"
    )]
    Io {
        /// The cache file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The cache key of one question to the judge.
pub fn cache_key(model: &str, anchor_value: &str, probe: &str, answer: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [model, PROMPT_VERSION, anchor_value, probe, answer] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One line of the cache file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    key: String,
    model: String,
    prompt_version: String,
    preserved: bool,
    reason: String,
}

/// A JSONL verdict cache, safe to share between concurrent judge calls.
#[derive(Debug)]
pub struct VerdictCache {
    path: PathBuf,
    entries: Mutex<HashMap<String, JudgeReply>>,
    file: Mutex<File>,
    skipped: usize,
}

impl VerdictCache {
    /// Opens (creating if needed) the cache at `path` and loads its entries.
    /// Lines that are not valid entries (a line cut short by a crash) are
    /// skipped and counted in [`VerdictCache::skipped_lines`].
    ///
    /// # Errors
    /// When the file cannot be read or opened for appending.
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        let io = |source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut entries = HashMap::new();
        let mut skipped = 0;
        if path.exists() {
            let reader = BufReader::new(File::open(path).map_err(io)?);
            for line in reader.lines() {
                let line = line.map_err(io)?;
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Entry>(&line) {
                    Ok(e) => {
                        entries.insert(
                            e.key,
                            JudgeReply {
                                preserved: e.preserved,
                                reason: e.reason,
                            },
                        );
                    }
                    Err(_) => skipped += 1,
                }
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        // A line cut short by a crash has no newline; start on a fresh line.
        if skipped > 0 {
            file.write_all(b"\n").map_err(io)?;
        }
        Ok(VerdictCache {
            path: path.to_path_buf(),
            entries: Mutex::new(entries),
            file: Mutex::new(file),
            skipped,
        })
    }

    /// The cached verdict for `key`, if any.
    pub fn get(&self, key: &str) -> Option<JudgeReply> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    /// Records a decided verdict and appends it to the file.
    ///
    /// # Errors
    /// When the line cannot be written.
    pub fn put(&self, key: &str, model: &str, reply: &JudgeReply) -> Result<(), CacheError> {
        let entry = Entry {
            key: key.to_string(),
            model: model.to_string(),
            prompt_version: PROMPT_VERSION.to_string(),
            preserved: reply.preserved,
            reason: reply.reason.clone(),
        };
        let mut line = serde_json::to_string(&entry).map_err(|e| CacheError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        line.push('\n');
        if let Ok(mut file) = self.file.lock() {
            file.write_all(line.as_bytes())
                .and_then(|()| file.flush())
                .map_err(|source| CacheError::Io {
                    path: self.path.clone(),
                    source,
                })?;
        }
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(key.to_string(), reply.clone());
        }
        Ok(())
    }

    /// Number of cached verdicts.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether the cache holds no verdict.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines of the file that were not valid entries when it was opened.
    pub fn skipped_lines(&self) -> usize {
        self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_every_part() {
        let base = cache_key("m", "Oriane", "Who?", "Oriane.");
        assert_eq!(base.len(), 64);
        assert_eq!(base, cache_key("m", "Oriane", "Who?", "Oriane."));
        assert_ne!(base, cache_key("m2", "Oriane", "Who?", "Oriane."));
        assert_ne!(base, cache_key("m", "Oriana", "Who?", "Oriane."));
        assert_ne!(base, cache_key("m", "Oriane", "Who? ", "Oriane."));
        assert_ne!(base, cache_key("m", "Oriane", "Who?", "Oriane"));
        // Length prefixes keep field boundaries apart.
        assert_ne!(cache_key("ab", "c", "", ""), cache_key("a", "bc", "", ""));
    }

    #[test]
    fn verdicts_survive_reopening_and_torn_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.jsonl");
        let reply = JudgeReply {
            preserved: true,
            reason: "names her".into(),
        };
        {
            let cache = VerdictCache::open(&path).unwrap();
            assert!(cache.is_empty());
            cache.put("k1", "m", &reply).unwrap();
            assert_eq!(cache.get("k1"), Some(reply.clone()));
        }
        // Simulate a crash mid-line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"key\": \"k2\", \"mod").unwrap();
        drop(f);
        let cache = VerdictCache::open(&path).unwrap();
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.skipped_lines(), 1);
        assert_eq!(cache.get("k1"), Some(reply.clone()));
        cache.put("k3", "m", &reply).unwrap();
        drop(cache);
        let cache = VerdictCache::open(&path).unwrap();
        assert_eq!(cache.len(), 2);
        assert!(cache.get("k3").is_some());
    }
}
