//! Switch events: one record per client request saying which upstream
//! answered and why. They go to three places: an optional JSON-lines file
//! (`--events PATH`, appended one whole line per write; after a failed
//! write, a partial line is cut off, the error is printed once on stderr
//! and no more lines are written), a bounded in-memory list
//! the embedding harness reads with [`EventSink::snapshot`], and the counters
//! of `GET /metrics` (see [`super::metrics`]).

use crate::ProxyMode;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// Events kept in memory; the oldest are dropped past this many. The
/// list is for a look at the latest requests (an embedding test); a run
/// of 10,000 conversations sends about 90,000 requests per built-in proxy,
/// and keeping every event would cost about 40 MB per proxy for nothing
/// the report reads. The `proxy` command's `--events PATH` keeps them all.
pub const MEMORY_CAP: usize = 10_000;

pub use super::reason::SwitchReason;

/// One request's switch event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchEvent {
    /// Sequence number of the request at this proxy, from 0.
    pub request: u64,
    /// `stateless` or `history`.
    pub mode: ProxyMode,
    /// Provider first tried (its base URL).
    pub provider_primary: String,
    /// Provider failed over to (its base URL), if the request switched.
    pub provider_fallback: Option<String>,
    /// Model the client asked for.
    pub model_requested: String,
    /// Model id sent to the upstream whose answer the client got (after a
    /// stream continued from the fallback: the fallback's, whose text
    /// ends the answer); `None` when no upstream answered.
    pub model_actual: Option<String>,
    /// Why it switched, or why the request ended as it did; every value
    /// is listed and documented on [`SwitchReason`] (`none` when it did
    /// not switch).
    pub reason: SwitchReason,
    /// Time spent on the primary, ms (to its full body when not streaming,
    /// to its response headers when streaming).
    pub latency_primary_ms: f64,
    /// Time spent on the fallback including backoff waits, ms (a stream's
    /// continuation included, from the break to its end); `None` when the
    /// request did not switch.
    pub latency_fallback_ms: Option<f64>,
    /// Requests sent to the fallback (1 + retries after 429), or to the
    /// larger-context route; 0 when the request did not switch.
    pub fallback_attempts: u32,
    /// Requests sent to the primary (1 + same-route retries); 0 in events
    /// written before this field.
    #[serde(default)]
    pub primary_attempts: u32,
    /// What happened when a stream broke after its first tokens had reached
    /// the client: `prefill`, `restart`, `prefill rejected, restart`,
    /// `failed: ...` or `not continued`; `None` when no stream broke.
    #[serde(default)]
    pub continuation: Option<String>,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// Status returned to the client.
    pub status: u16,
    /// Whether the client's stream, sent with this status, ended without
    /// `[DONE]`: cut by `--deadline` (`reason: deadline_cut`), past
    /// `--request-memory`, or broken and not continued. Written only when
    /// true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
    /// Whether an upstream's stated wait (`Retry-After`, a 429's reset
    /// header or body) asked for more than [`cb_wire::RETRY_AFTER_MAX`]
    /// (one hour) and was read as that.
    #[serde(default)]
    pub retry_after_clamped: bool,
}

/// Where events go: memory always, a JSON-lines file when configured.
#[derive(Debug)]
pub struct EventSink {
    memory: Mutex<VecDeque<SwitchEvent>>,
    file: Option<Mutex<EventsFile>>,
}

/// The events file and whether writing to it has stopped.
#[derive(Debug)]
struct EventsFile {
    file: File,
    path: std::path::PathBuf,
    stopped: bool,
}

impl EventsFile {
    /// Appends `line` (ending in a newline) with one write call; on an
    /// error, cuts the file back to its length before, so no torn line is
    /// left, then stops writing and says so once on stderr.
    fn append(&mut self, line: &[u8]) -> bool {
        if self.stopped {
            return false;
        }
        let before = self.file.metadata().map(|m| m.len()).ok();
        let Err(e) = self.file.write_all(line) else {
            return true;
        };
        if let Some(len) = before {
            let _ = self.file.set_len(len);
        }
        self.stopped = true;
        eprintln!(
            "continuity-bench proxy: cannot append to --events {}: {e}; no more switch events \
             are written to it (they are still counted in /metrics as \
             continuity_proxy_event_write_errors_total); free space or pass another --events",
            self.path.display()
        );
        false
    }
}

impl EventSink {
    /// A sink that keeps events in memory only.
    pub fn in_memory() -> Self {
        EventSink {
            memory: Mutex::new(VecDeque::new()),
            file: None,
        }
    }

    /// A sink that also appends one JSON line per event to `path`.
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn with_file(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(EventSink {
            memory: Mutex::new(VecDeque::new()),
            file: Some(Mutex::new(EventsFile {
                file,
                path: path.to_path_buf(),
                stopped: false,
            })),
        })
    }

    /// Records one event. Returns `false` when the file write failed (the
    /// event is still kept in memory and counted).
    pub fn record(&self, event: SwitchEvent) -> bool {
        let mut written = true;
        if let Some(file) = &self.file {
            written = match serde_json::to_vec(&event) {
                Ok(mut line) => {
                    line.push(b'\n');
                    let mut w = file.lock().unwrap_or_else(|p| p.into_inner());
                    w.append(&line)
                }
                Err(_) => false,
            };
        }
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        if memory.len() == MEMORY_CAP {
            memory.pop_front();
        }
        memory.push_back(event);
        written
    }

    /// A copy of the events kept so far, oldest first.
    pub fn snapshot(&self) -> Vec<SwitchEvent> {
        let memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory.iter().cloned().collect()
    }

    /// Removes and returns the events kept so far, oldest first.
    pub fn take(&self) -> Vec<SwitchEvent> {
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(request: u64) -> SwitchEvent {
        SwitchEvent {
            request,
            mode: ProxyMode::History,
            provider_primary: "http://p".into(),
            provider_fallback: Some("http://f".into()),
            model_requested: "m".into(),
            model_actual: Some("f".into()),
            reason: SwitchReason::Status(503),
            latency_primary_ms: 1.0,
            latency_fallback_ms: Some(2.0),
            fallback_attempts: 1,
            primary_attempts: 1,
            continuation: None,
            stream: false,
            status: 200,
            cut: false,
            retry_after_clamped: false,
        }
    }

    #[test]
    fn a_failed_write_is_reported_and_writing_stops() {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let Ok(sink) = EventSink::with_file(Path::new("/dev/full")) else {
            return;
        };
        assert!(!sink.record(event(0)));
        assert!(!sink.record(event(1)));
        let file = sink.file.as_ref().unwrap().lock().unwrap();
        assert!(file.stopped);
        drop(file);
        assert_eq!(sink.snapshot().len(), 2, "events stay in memory");
    }

    #[test]
    fn file_gets_one_line_per_event_and_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, "{\"old\":1}\n").unwrap();
        let sink = EventSink::with_file(&path).unwrap();
        assert!(sink.record(event(0)));
        assert!(sink.record(event(1)));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let back: SwitchEvent = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(back, event(1));
        assert_eq!(sink.snapshot().len(), 2);
        assert_eq!(sink.take().len(), 2);
        assert!(sink.snapshot().is_empty());
    }
}
