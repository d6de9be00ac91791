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
}

/// Reads `response` up to its first token, waiting at most until
/// `first_token_by` for it and never past `deadline`.
///
/// # Errors
/// [`NotOpened`] when the first token does not come.
pub async fn open(
    body: Source,
    first_token_by: Option<Instant>,
    deadline: Instant,
) -> Result<Opened, NotOpened> {
    let mut upstream = Upstream::new(body);
    let mut head = Vec::new();
    let mut delivered = String::new();
    let mut finished = false;
    loop {
        match upstream.next_line(first_token_by, deadline).await {
            Read::Line(line) => match &line.kind {
                Kind::Done => {
                    head.push(line);
                    return Ok(Opened {
                        upstream,
                        head,
                        delivered,
                        finished,
                        done: true,
                    });
                }
                Kind::Malformed => return Err(NotOpened::Broke),
                Kind::Event(e) if e.error => return Err(NotOpened::Broke),
                Kind::Event(e) => {
                    finished |= e.finish;
                    delivered.push_str(&e.content);
                    let token = e.token();
                    head.push(line);
                    if token {
                        return Ok(Opened {
                            upstream,
                            head,
                            delivered,
                            finished,
                            done: false,
                        });
                    }
                }
                Kind::Other => head.push(line),
            },
            // Finished without a token: an empty answer, let through.
            Read::End if finished => {
                return Ok(Opened {
                    upstream,
                    head,
                    delivered,
                    finished,
                    done: false,
                })
            }
            Read::End | Read::Broke => return Err(NotOpened::Broke),
            Read::Silent => return Err(NotOpened::NoFirstToken),
            Read::Deadline => return Err(NotOpened::Deadline),
        }
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
    async fn run(self, tx: &mpsc::Sender<Chunk>) -> (Report, Option<Chunk>) {
        let Plan {
            opened,
            stall_timeout,
            deadline,
            continuer,
        } = self;
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
                return (Report::default(), None);
            }
        }
        if done {
            return (Report::default(), last_of_head.map(|line| Ok(line.raw)));
        }
        loop {
            let quiet = stall_timeout.and_then(|s| Instant::now().checked_add(s));
            match upstream.next_line(quiet, deadline).await {
                Read::Line(line) => match &line.kind {
                    Kind::Done => return (Report::default(), Some(Ok(line.raw))),
                    Kind::Event(e) if !e.error => {
                        delivered.push_str(&e.content);
                        finished |= e.finish;
                        if tx.send(Ok(line.raw)).await.is_err() {
                            return (Report::default(), None);
                        }
                    }
                    Kind::Event(_) | Kind::Malformed => break,
                    Kind::Other => {
                        if tx.send(Ok(line.raw)).await.is_err() {
                            return (Report::default(), None);
                        }
                    }
                },
                Read::End if finished => {
                    return (Report::default(), Some(Ok(Bytes::from_static(DONE))))
                }
                Read::End | Read::Broke | Read::Silent => break,
                Read::Deadline => return (Report::default(), Some(Err(aborted("deadline")))),
            }
        }
        drop(upstream);
        match continuer {
            None => (
                Report {
                    continuation: Some("not continued".into()),
                    ..Report::default()
                },
                Some(Err(aborted("the upstream's stream broke"))),
            ),
            Some(c) => c.run(delivered, tx, deadline).await,
        }
    }
}

/// The error that aborts the client's body.
fn aborted(why: &str) -> std::io::Error {
    std::io::Error::other(format!("relay aborted: {why}"))
}
