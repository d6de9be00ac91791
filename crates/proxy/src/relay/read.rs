//! Reading an upstream's event stream a line at a time, as the relay does:
//! each line's bytes as they came (what the client gets) and what the line
//! is, read by the one reader ([`cb_wire::sse`]) and the one reading of a
//! chunk ([`cb_wire::openai::chunk`]), waiting for bytes no longer than
//! the stall limit and the request's deadline allow.

use super::Source;
use bytes::Bytes;
use cb_wire::openai::chunk::{self, Data};
use cb_wire::sse::{Line, Received, SseReader};
use futures::stream::StreamExt;
use serde_json::Value;
use std::borrow::Cow;
use tokio::time::Instant;

/// Longest line of an upstream's event stream the relay holds: a stream
/// sending more without a line break is treated as broken, so a hostile
/// upstream cannot make the proxy buffer without bound.
const MAX_LINE: usize = 1024 * 1024;

/// What a line of an upstream's event stream is, read by the one reader
/// ([`cb_wire::sse`]) and the one reading of a chunk
/// ([`cb_wire::openai::chunk`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// `data: [DONE]`.
    Done,
    /// A `data:` chunk that is JSON, with text content (or none).
    Event(Event),
    /// A `data:` line that is not JSON, a chunk whose `delta.content` is
    /// not text, or a line that is not UTF-8.
    Malformed,
    /// A blank line, a comment or another field.
    Other,
}

/// What a chunk carries, as the relay reads it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Event {
    /// The chunk's JSON (a continuation rewrites it).
    pub(super) value: Value,
    /// Its `delta.content` text.
    pub(super) content: String,
    /// Whether it carries reasoning text.
    pub(super) reasoning: bool,
    /// Whether it carries a finish reason.
    pub(super) finish: bool,
    /// Whether it is an error object.
    pub(super) error: bool,
}

impl Event {
    /// Whether it carries a token (content or reasoning).
    pub(super) fn token(&self) -> bool {
        !self.content.is_empty() || self.reasoning
    }
}

/// One line as read: its bytes as the upstream sent them (what the client
/// gets) and what it is.
#[derive(Debug, Clone)]
pub(super) struct Relayed {
    /// The bytes, line end included.
    pub(super) raw: Bytes,
    /// What the line is.
    pub(super) kind: Kind,
}

impl Relayed {
    pub(super) fn of(received: Received<'_>) -> Self {
        let kind = match received.line {
            Ok(Line::Data(data)) => match Data::parse(&data) {
                Ok(Data::Done) => Kind::Done,
                Ok(Data::Chunk(chunk)) => Kind::of(chunk),
                Err(_) => Kind::Malformed,
            },
            Ok(_) => Kind::Other,
            Err(_) => Kind::Malformed,
        };
        Relayed {
            raw: Bytes::copy_from_slice(received.raw),
            kind,
        }
    }
}

impl Kind {
    fn of(chunk: chunk::Chunk) -> Self {
        let error = chunk.error().is_some();
        let content = match chunk.content() {
            Ok(text) => text.map(Cow::into_owned).unwrap_or_default(),
            Err(_) if error => String::new(),
            Err(_) => return Kind::Malformed,
        };
        Kind::Event(Event {
            content,
            reasoning: chunk.reasoning(),
            finish: chunk.finish_reason().is_some(),
            error,
            value: chunk.into_value(),
        })
    }
}

/// What reading the next line gave.
pub(super) enum Read {
    Line(Relayed),
    End,
    Broke,
    Silent,
    Deadline,
    /// The line being read, or what a translator held without output, is
    /// past the request's memory budget (`--request-memory`).
    OverBudget,
}

pub use crate::dialect::OverBudget;

/// Whether a source's error is [`OverBudget`].
fn over_budget(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<OverBudget>())
}

/// An upstream's body, read line by line.
pub(super) struct Upstream {
    body: Source,
    reader: SseReader,
    ended: bool,
    /// The request's memory budget: a line longer than this is not held.
    budget: usize,
}

impl Upstream {
    pub(super) fn new(body: Source, budget: usize) -> Self {
        Upstream {
            body,
            reader: SseReader::default(),
            ended: false,
            budget,
        }
    }

    /// Bytes held of a line not yet complete.
    pub(super) fn pending(&self) -> usize {
        self.reader.pending()
    }

    /// The next line (with its line end), waiting until `quiet_until` for
    /// bytes (then [`Read::Silent`]) and never past `deadline`.
    pub(super) async fn next_line(
        &mut self,
        quiet_until: Option<Instant>,
        deadline: Instant,
    ) -> Read {
        loop {
            if let Some(received) = self.reader.next_line() {
                return Read::Line(Relayed::of(received));
            }
            if self.ended {
                return Read::End;
            }
            if self.reader.pending() > self.budget {
                return Read::OverBudget;
            }
            if self.reader.pending() > MAX_LINE {
                return Read::Broke;
            }
            let limit = quiet_until.map_or(deadline, |q| q.min(deadline));
            match tokio::time::timeout_at(limit, self.body.next()).await {
                Ok(Some(Ok(bytes))) => self.reader.feed(&bytes),
                Ok(None) => {
                    self.ended = true;
                    self.reader.end();
                }
                Ok(Some(Err(e))) if over_budget(&e) => return Read::OverBudget,
                Ok(Some(Err(_))) => return Read::Broke,
                Err(_) if limit >= deadline => return Read::Deadline,
                Err(_) => return Read::Silent,
            }
        }
    }
}
