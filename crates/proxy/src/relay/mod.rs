//! Relaying an upstream's event stream to the client, line by line, with
//! the time limits and the continuation of the reference proxies.
//!
//! - Before the first token nothing goes to the client: the lines read are
//!   held, and a stream whose first token does not come within the
//!   time-to-first-token limit, or that breaks first, is handed back to
//!   the failover core ([`open`]), which fails over cleanly.
//! - Once the first token has come, every line goes on as it arrives (the
//!   raw bytes), the text sent is kept, and a stream that completes at the
//!   HTTP level after its finish reason but without `data: [DONE]` gets one.
//! - A stream that breaks after that (cut, silent past the stall limit, a
//!   malformed event, an error event, an early end) is continued from the
//!   fallback when a [`Continuer`] is given: with the text sent as an
//!   assistant prefill, or asking for the whole answer again and dropping
//!   what the client already has. The splice never duplicates or drops
//!   text: when the fallback's answer cannot be joined to what was sent,
//!   the client gets a clean error event instead. Without a continuer the
//!   break reaches the client (the body is aborted).
//!
//! How a line is read is in `read.rs`; how a continuation is joined to the
//! text sent, in `continuation.rs`.

mod continuation;
mod read;
#[cfg(test)]
mod tests;

pub use continuation::Continuer;
pub use read::OverBudget;

use crate::events::SwitchReason;
use axum::body::Body;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use read::{Kind, Read, Relayed, Upstream};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// An item of the client's body.
type Chunk = Result<Bytes, std::io::Error>;

/// An upstream's body as the relay reads it: bytes as they arrive, in
/// OpenAI's event-stream format (a fallback in another dialect has its
/// stream translated first, see [`super::dialect::translate_source`]).
pub type Source = BoxStream<'static, Result<Bytes, std::io::Error>>;

/// The body of `response`, as a [`Source`].
pub fn source_of(response: reqwest::Response) -> Source {
    response
        .bytes_stream()
        .map(|r| r.map_err(std::io::Error::other))
        .boxed()
}

/// The terminator a finished stream gets when its upstream sent none.
const DONE: &[u8] = cb_wire::openai::frame::DONE.as_bytes();

/// Lines buffered between the relay task and the client.
const CHANNEL: usize = 64;

/// A stream whose first token has come (or that completed without one):
/// the lines read so far, held, and the rest of the body.
pub struct Opened {
    upstream: Upstream,
    head: Vec<Relayed>,
    delivered: String,
    finished: bool,
    done: bool,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("head", &self.head.len())
            .field("delivered", &self.delivered.len())
            .finish_non_exhaustive()
    }
}

/// Why a stream could not be opened; nothing reached the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotOpened {
    /// No token within the time-to-first-token limit.
    NoFirstToken,
    /// The stream broke (or ended, or sent an error or a malformed event)
    /// before its first token.
    Broke,
    /// The request's deadline passed.
    Deadline,
    /// What the stream made the proxy hold before its first token
    /// (comments, token-less chunks, one unfinished line) passed the
    /// request's memory budget.
    OverBudget,
}

/// What holding one line costs besides its bytes: the [`Relayed`] itself
/// and its allocation's bookkeeping. Counted so that a stream of tiny lines
/// (`: ping` and blank lines, 4 bytes on average) cannot hold many times
/// the budget in per-line overhead.
const LINE_OVERHEAD: usize = std::mem::size_of::<Relayed>() + 32;

/// What a held chunk's parsed JSON may cost per byte of its text: a
/// `serde_json::Value` is 32 bytes, and `[0,0,...]` spends one per 2
/// bytes. A token-less chunk held before the first token is counted at
/// this rate, so a hostile chunk made of tiny JSON values cannot hold 16
/// times what the budget says.
const VALUE_PER_BYTE: usize = 16;

/// Reads `response` up to its first token, waiting at most until
/// `first_token_by` for it and never past `deadline`, and holding at most
/// `budget` bytes (the lines held, comments and token-less chunks
/// included, each with its `LINE_OVERHEAD`, a chunk's parsed JSON at
/// `VALUE_PER_BYTE`, the comments' buffer at its capacity, and the line
/// being read).
/// Consecutive comments and blank lines are held as one piece: the client
/// gets the same bytes, the proxy holds them once.
///
/// # Errors
/// [`NotOpened`] when the first token does not come.
pub async fn open(
    body: Source,
    first_token_by: Option<Instant>,
    deadline: Instant,
    budget: usize,
) -> Result<Opened, NotOpened> {
    let mut upstream = Upstream::new(body, budget);
    let mut head = Head::default();
    let mut delivered = String::new();
    let mut finished = false;
    loop {
        if head.held().saturating_add(upstream.pending()) > budget {
            return Err(NotOpened::OverBudget);
        }
        let read = upstream.next_line(first_token_by, deadline).await;
        let opened = |upstream, head: Head, delivered, finished, done| Opened {
            upstream,
            head: head.lines(),
            delivered,
            finished,
            done,
        };
        match read {
            Read::Line(line) => match &line.kind {
                Kind::Done => {
                    head.push(line);
                    return Ok(opened(upstream, head, delivered, finished, true));
                }
                Kind::Malformed => return Err(NotOpened::Broke),
                Kind::Event(e) if e.error => return Err(NotOpened::Broke),
                Kind::Event(e) => {
                    finished |= e.finish;
                    delivered.push_str(&e.content);
                    let token = e.token();
                    head.push(line);
                    if token {
                        return Ok(opened(upstream, head, delivered, finished, false));
                    }
                }
                Kind::Other => head.other(&line.raw),
            },
            // Finished without a token: an empty answer, let through.
            Read::End if finished => {
                return Ok(opened(upstream, head, delivered, finished, false));
            }
            Read::End | Read::Broke => return Err(NotOpened::Broke),
            Read::Silent => return Err(NotOpened::NoFirstToken),
            Read::Deadline => return Err(NotOpened::Deadline),
            Read::OverBudget => return Err(NotOpened::OverBudget),
        }
    }
}

/// The lines held before the first token, and what they cost.
#[derive(Default)]
struct Head {
    lines: Vec<Relayed>,
    /// Comments and blank lines since the last chunk, held as one piece.
    others: bytes::BytesMut,
    /// What `lines` cost: each piece's bytes (a comments piece at the
    /// capacity it keeps) and [`LINE_OVERHEAD`], a chunk's JSON at
    /// [`VALUE_PER_BYTE`].
    held: usize,
}

impl Head {
    /// What is held, the comments not yet a piece included.
    fn held(&self) -> usize {
        let pending = if self.others.is_empty() {
            0
        } else {
            self.others.capacity().saturating_add(LINE_OVERHEAD)
        };
        self.held.saturating_add(pending)
    }

    fn push(&mut self, line: Relayed) {
        self.flush();
        let per_byte = if matches!(line.kind, Kind::Event(_)) {
            VALUE_PER_BYTE
        } else {
            1
        };
        self.held = self
            .held
            .saturating_add(line.raw.len().saturating_mul(per_byte))
            .saturating_add(LINE_OVERHEAD);
        self.lines.push(line);
    }

    fn other(&mut self, raw: &[u8]) {
        self.others.extend_from_slice(raw);
    }

    fn flush(&mut self) {
        if !self.others.is_empty() {
            self.held = self
                .held
                .saturating_add(self.others.capacity())
                .saturating_add(LINE_OVERHEAD);
            self.lines.push(Relayed {
                raw: self.others.split().freeze(),
                kind: Kind::Other,
            });
        }
    }

    fn lines(mut self) -> Vec<Relayed> {
        self.flush();
        self.lines
    }
}

/// How a relay ended, for the switch event.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// What happened after a break: `prefill`, `restart`, `prefill
    /// rejected, restart`, `failed: ...`, or `not continued`; `None` when
    /// the stream did not break.
    pub continuation: Option<String>,
    /// Requests sent to the fallback to continue the stream.
    pub fallback_attempts: u32,
    /// The model id the continuation asked the fallback for, when one
    /// continued the stream.
    pub fallback_model: Option<String>,
    /// Milliseconds from the break to the continuation's end (or its
    /// failure), when the fallback was asked.
    pub latency_fallback_ms: Option<f64>,
    /// How the stream ended when the event must say more than `none` or
    /// `stream_broken`: cut by the deadline, past the memory budget, or
    /// stalled on keep-alives.
    pub reason: Option<SwitchReason>,
    /// Whether the client's stream ended without `[DONE]` (cut by the
    /// deadline, past the budget, or broken and not completed).
    pub cut: bool,
}

/// What a relay needs besides the opened stream.
#[derive(Debug)]
pub struct Plan {
    /// The stream, opened.
    pub opened: Opened,
    /// The stall limit.
    pub stall_timeout: Option<Duration>,
    /// The request's deadline.
    pub deadline: Instant,
    /// How to continue a break; `None`: the break reaches the client.
    pub continuer: Option<Continuer>,
    /// The request's memory budget: the text kept for a continuation is
    /// at most this many bytes (past it, a break is not continued).
    pub budget: usize,
    /// What restarts the stall timer.
    pub stall_clock: crate::StallClock,
}

impl Plan {
    /// The client's body: a task relays the stream into it and calls
    /// `on_end` with how it ended just before the last item goes, so
    /// whoever reads the body to its end sees `on_end` done.
    pub fn into_body(self, on_end: impl FnOnce(Report) + Send + 'static) -> Body {
        let (tx, rx) = mpsc::channel::<Chunk>(CHANNEL);
        tokio::spawn(async move {
            let (report, last) = self.run(&tx).await;
            on_end(report);
            if let Some(item) = last {
                let _ = tx.send(item).await;
            }
        });
        Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
    }

    /// Relays the stream; returns how it ended and the last item, not yet
    /// sent.
    ///
    /// The stall timer counts content: only a chunk with a token restarts
    /// it, so a stream that sends nothing but comments or empty chunks for
    /// the stall limit is broken (`keepalive_stall`). The text kept for a
    /// continuation stops at the budget; a break past it is not continued.
    async fn run(self, tx: &mpsc::Sender<Chunk>) -> (Report, Option<Chunk>) {
        let Plan {
            opened,
            stall_timeout,
            deadline,
            continuer,
            budget,
            stall_clock,
        } = self;
        let every_line = stall_clock == crate::StallClock::EveryLine;
        let Opened {
            mut upstream,
            mut head,
            mut delivered,
            mut finished,
            done,
        } = opened;
        let last_of_head = if done { head.pop() } else { None };
        for line in head {
            if tx.send(Ok(line.raw)).await.is_err() {
                return (gone(), None);
            }
        }
        if done {
            return (Report::default(), last_of_head.map(|line| Ok(line.raw)));
        }
        // Text is kept only for a continuation, and only up to the budget.
        let mut kept = continuer.is_some();
        if !kept {
            delivered = String::new();
        }
        let mut last_content = Instant::now();
        let mut keepalives = false;
        let ended = loop {
            let quiet = stall_timeout.and_then(|s| last_content.checked_add(s));
            let read = upstream.next_line(quiet, deadline).await;
            if every_line && matches!(read, Read::Line(_)) {
                last_content = Instant::now();
            }
            match read {
                Read::Line(line) => match &line.kind {
                    Kind::Done => return (Report::default(), Some(Ok(line.raw))),
                    Kind::Event(e) if !e.error => {
                        if e.token() {
                            last_content = Instant::now();
                            keepalives = false;
                        } else {
                            keepalives = true;
                        }
                        if kept {
                            delivered.push_str(&e.content);
                            if delivered.len() > budget {
                                kept = false;
                                delivered = String::new();
                            }
                        }
                        finished |= e.finish;
                        if tx.send(Ok(line.raw)).await.is_err() {
                            return (gone(), None);
                        }
                    }
                    Kind::Event(_) | Kind::Malformed => break None,
                    Kind::Other => {
                        keepalives = true;
                        if tx.send(Ok(line.raw)).await.is_err() {
                            return (gone(), None);
                        }
                    }
                },
                Read::End if finished => {
                    return (Report::default(), Some(Ok(Bytes::from_static(DONE))))
                }
                Read::Silent if keepalives => break Some(SwitchReason::KeepaliveStall),
                Read::End | Read::Broke | Read::Silent => break None,
                Read::OverBudget => break Some(SwitchReason::RequestMemoryExceeded),
                Read::Deadline => return (cut(), Some(Err(aborted("deadline")))),
            }
        };
        drop(upstream);
        if ended == Some(SwitchReason::RequestMemoryExceeded) {
            return over_budget(
                "the upstream sent a line longer than the proxy's --request-memory",
                budget,
            );
        }
        match continuer {
            None => (
                Report {
                    continuation: Some("not continued".into()),
                    reason: ended,
                    cut: true,
                    ..Report::default()
                },
                Some(Err(aborted("the upstream's stream broke"))),
            ),
            Some(_) if !kept => over_budget(
                "the upstream's stream broke after more text than --request-memory keeps \
                 for a continuation",
                budget,
            ),
            Some(c) => {
                let (mut report, last) = c.run(delivered, tx, deadline, budget).await;
                report.reason = report.reason.or(ended);
                (report, last)
            }
        }
    }
}

/// The report of a stream whose client went away (or was disconnected by
/// the write timeout) before it ended: it did not get the whole answer.
fn gone() -> Report {
    Report {
        cut: true,
        ..Report::default()
    }
}

/// The report of a stream cut by the request's deadline while it was
/// still being relayed: the client got part of the answer and no `[DONE]`.
pub(super) fn cut() -> Report {
    Report {
        reason: Some(SwitchReason::DeadlineCut),
        cut: true,
        ..Report::default()
    }
}

/// How a stream ends that went past the request's memory budget after its
/// first token: not continued, and a clean error event for the client.
fn over_budget(why: &str, budget: usize) -> (Report, Option<Chunk>) {
    (
        Report {
            continuation: Some(format!(
                "not continued: past --request-memory ({budget} bytes)"
            )),
            reason: Some(SwitchReason::RequestMemoryExceeded),
            cut: true,
            ..Report::default()
        },
        Some(Ok(Bytes::from(cb_wire::openai::frame::error_event(
            &format!("{why} ({budget} bytes); raise --request-memory to allow more"),
            "proxy_error",
            Some("request_memory_exceeded"),
        )))),
    )
}

/// The error that aborts the client's body.
fn aborted(why: &str) -> std::io::Error {
    std::io::Error::other(format!("relay aborted: {why}"))
}
