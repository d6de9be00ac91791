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

use super::Continuation;
use cb_dialect::Dialect;
use axum::body::Body;
use axum::http::{header, HeaderValue};
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use reqwest::Url;
use cb_wire::openai::chunk::{self, Data};
use cb_wire::sse::{Line, Received, SseReader};
use serde_json::{json, Value};
use std::borrow::Cow;
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

/// Longest line of an upstream's event stream the relay holds: a stream
/// sending more without a line break is treated as broken, so a hostile
/// upstream cannot make the proxy buffer without bound.
const MAX_LINE: usize = 1024 * 1024;

/// Lines buffered between the relay task and the client.
const CHANNEL: usize = 64;

/// What a line of an upstream's event stream is, read by the one reader
/// ([`cb_wire::sse`]) and the one reading of a chunk
/// ([`cb_wire::openai::chunk`]).
#[derive(Debug, Clone, PartialEq)]
enum Kind {
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
struct Event {
    value: Value,
    content: String,
    reasoning: bool,
    finish: bool,
    error: bool,
}

impl Event {
    /// Whether it carries a token (content or reasoning).
    fn token(&self) -> bool {
        !self.content.is_empty() || self.reasoning
    }
}

/// One line as read: its bytes as the upstream sent them (what the client
/// gets) and what it is.
#[derive(Debug, Clone)]
struct Relayed {
    raw: Bytes,
    kind: Kind,
}

impl Relayed {
    fn of(received: Received<'_>) -> Self {
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
enum Read {
    Line(Relayed),
    End,
    Broke,
    Silent,
    Deadline,
}

/// An upstream's body, read line by line.
struct Upstream {
    body: Source,
    reader: SseReader,
    ended: bool,
}

impl Upstream {
    fn new(body: Source) -> Self {
        Upstream {
            body,
            reader: SseReader::default(),
            ended: false,
        }
    }

    /// The next line (with its line end), waiting until `quiet_until` for
    /// bytes (then [`Read::Silent`]) and never past `deadline`.
    async fn next_line(&mut self, quiet_until: Option<Instant>, deadline: Instant) -> Read {
        loop {
            if let Some(received) = self.reader.next_line() {
                return Read::Line(Relayed::of(received));
            }
            if self.ended {
                return Read::End;
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
                Ok(Some(Err(_))) => return Read::Broke,
                Err(_) if limit >= deadline => return Read::Deadline,
                Err(_) => return Read::Silent,
            }
        }
    }
}

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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// What happened after a break: `prefill`, `restart`, `prefill
    /// rejected, restart`, `failed: ...`, or `not continued`; `None` when
    /// the stream did not break.
    pub continuation: Option<String>,
    /// Requests sent to the fallback to continue the stream.
    pub fallback_attempts: u32,
}

/// Continuing a broken stream from the fallback.
#[derive(Debug, Clone)]
pub struct Continuer {
    /// The HTTP client.
    pub client: reqwest::Client,
    /// The fallback's chat endpoint (OpenAI dialect).
    pub url: Url,
    /// The fallback's base URL, for a fallback in another dialect.
    pub base: String,
    /// The fallback's dialect: another one gets the request translated
    /// and its stream translated back.
    pub dialect: Dialect,
    /// The fallback's request (streamed), without a prefill.
    pub body: Value,
    /// How to continue.
    pub how: Continuation,
    /// Deadline of the fallback's response headers.
    pub attempt_timeout: Duration,
    /// The time-to-first-token limit of the continuation.
    pub first_token_timeout: Option<Duration>,
    /// The stall limit of the continuation.
    pub stall_timeout: Option<Duration>,
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
            let quiet = stall_timeout.map(|s| Instant::now() + s);
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
                    fallback_attempts: 0,
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

/// A clean error event for the client: the stream cannot be completed.
fn error_event(message: &str) -> Bytes {
    Bytes::from(cb_wire::openai::frame::error_event(
        message,
        "proxy_error",
        Some("stream_broken"),
    ))
}

/// The fallback request with `text` as an assistant prefill.
fn with_prefill(body: &Value, text: &str) -> Value {
    let mut body = body.clone();
    if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
        messages.push(json!({"role": "assistant", "content": text}));
    }
    body
}

/// How the continuation's text is joined to what the client has.
#[derive(Debug)]
enum Splice {
    /// New text, unless the fallback ignored the prefill and repeats the
    /// text sent from its start: held until that is clear.
    Echo {
        sent: String,
        seen: String,
        held: Vec<Bytes>,
    },
    /// The fallback answers from the start: this much must match the text
    /// sent and is dropped.
    Skip(String),
    /// Everything goes on.
    Through,
}

/// What to do with one continuation event's content.
enum Joined {
    /// Send the event with this content.
    Send(String),
    /// Hold the event (it may be an echo).
    Hold(String),
    /// Drop the held events and send the event with this content.
    DropHeld(String),
    /// Send these held events, then the event with this content.
    FlushHeld(Vec<Bytes>, String),
    /// The answers diverge.
    Mismatch,
}

impl Splice {
    fn join(&mut self, piece: &str) -> Joined {
        match self {
            Splice::Through => Joined::Send(piece.to_string()),
            Splice::Skip(rest) => {
                if let Some(left) = rest.strip_prefix(piece) {
                    *rest = left.to_string();
                    Joined::Send(String::new())
                } else if let Some(new) = piece.strip_prefix(rest.as_str()) {
                    let new = new.to_string();
                    *self = Splice::Through;
                    Joined::Send(new)
                } else {
                    Joined::Mismatch
                }
            }
            Splice::Echo { sent, seen, held } => {
                seen.push_str(piece);
                if seen.len() > sent.len() && seen.starts_with(sent.as_str()) {
                    let new = seen[sent.len()..].to_string();
                    *self = Splice::Through;
                    Joined::DropHeld(new)
                } else if seen == sent {
                    *self = Splice::Through;
                    Joined::DropHeld(String::new())
                } else if sent.starts_with(seen.as_str()) {
                    Joined::Hold(piece.to_string())
                } else {
                    // Not an echo after all: what was held is new text,
                    // taken before the state (and its held list) goes.
                    let held = std::mem::take(held);
                    *self = Splice::Through;
                    Joined::FlushHeld(held, piece.to_string())
                }
            }
        }
    }

    fn held(&mut self) -> Vec<Bytes> {
        match self {
            Splice::Echo { held, .. } => std::mem::take(held),
            Splice::Skip(_) | Splice::Through => Vec::new(),
        }
    }
}

/// A continuation event with `content` as its text and no role, as bytes;
/// `None` when nothing is left in it.
fn rewrite(mut value: Value, content: &str) -> Option<Bytes> {
    let finish = value
        .pointer("/choices/0/finish_reason")
        .is_some_and(|f| !f.is_null());
    let usage = value.get("usage").is_some_and(|u| !u.is_null());
    if let Some(delta) = value
        .pointer_mut("/choices/0/delta")
        .and_then(Value::as_object_mut)
    {
        delta.remove("role");
        if content.is_empty() {
            delta.remove("content");
        } else {
            delta.insert("content".into(), Value::String(content.to_string()));
        }
    }
    let empty_delta = value
        .pointer("/choices/0/delta")
        .and_then(Value::as_object)
        .is_none_or(serde_json::Map::is_empty);
    (!empty_delta || finish || usage).then(|| Bytes::from(cb_wire::openai::frame::data_frame(&value)))
}

/// The fallback's answer to a continuation request: its status and body.
struct Answered {
    status: reqwest::StatusCode,
    body: Source,
}

impl Answered {
    fn status(&self) -> reqwest::StatusCode {
        self.status
    }
}

impl Continuer {
    /// Sends `body` to the fallback (translated to its dialect) and waits
    /// for its headers.
    async fn attempt(&self, body: &Value, deadline: Instant) -> Result<Answered, String> {
        let limit = (Instant::now() + self.attempt_timeout).min(deadline);
        let (url, bytes, headers) = match super::dialect::outgoing(self.dialect, &self.base, body) {
            Some(Ok(out)) => (out.url, out.body, out.headers),
            Some(Err(e)) => return Err(e.to_string()),
            None => (
                self.url.clone(),
                Bytes::from(serde_json::to_vec(body).map_err(|e| e.to_string())?),
                &[][..],
            ),
        };
        let mut request = self.client.post(url).header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        match tokio::time::timeout_at(limit, request.body(bytes).send()).await {
            Ok(Ok(response)) => {
                let status = response.status();
                let source = source_of(response);
                let body = if status.is_success() {
                    super::dialect::translate_source(self.dialect, source, body)
                } else {
                    source
                };
                Ok(Answered { status, body })
            }
            Ok(Err(_)) => Err("the fallback could not be reached".into()),
            Err(_) => Err("the fallback sent no response headers in time".into()),
        }
    }

    /// Continues after `sent` reached the client; returns how it ended and
    /// the last item.
    async fn run(
        self,
        sent: String,
        tx: &mpsc::Sender<Chunk>,
        deadline: Instant,
    ) -> (Report, Option<Chunk>) {
        let mut attempts = 1u32;
        let failed = |why: String, attempts: u32| {
            (
                Report {
                    continuation: Some(format!("failed: {why}")),
                    fallback_attempts: attempts,
                },
                Some(Ok(error_event(&format!(
                    "the upstream's stream broke and could not be continued: {why}"
                )))),
            )
        };
        let prefill = self.how == Continuation::Prefill && !sent.is_empty();
        let first = if prefill {
            self.attempt(&with_prefill(&self.body, &sent), deadline)
                .await
        } else {
            self.attempt(&self.body, deadline).await
        };
        let (response, splice, how) = match first {
            Ok(r) if r.status().is_success() && prefill => (
                r,
                Splice::Echo {
                    sent: sent.clone(),
                    seen: String::new(),
                    held: Vec::new(),
                },
                "prefill",
            ),
            Ok(r) if r.status().is_success() => (r, Splice::Skip(sent.clone()), "restart"),
            // The fallback does not take a prefill: ask for the whole
            // answer and drop what the client has.
            Ok(r) if prefill && r.status() == reqwest::StatusCode::BAD_REQUEST => {
                drop(r);
                attempts += 1;
                match self.attempt(&self.body, deadline).await {
                    Ok(r) if r.status().is_success() => {
                        (r, Splice::Skip(sent.clone()), "prefill rejected, restart")
                    }
                    Ok(r) => {
                        return failed(
                            format!("the fallback answered HTTP {}", r.status().as_u16()),
                            attempts,
                        )
                    }
                    Err(why) => return failed(why, attempts),
                }
            }
            Ok(r) => {
                return failed(
                    format!("the fallback answered HTTP {}", r.status().as_u16()),
                    attempts,
                )
            }
            Err(why) => return failed(why, attempts),
        };
        let first_token_by = self.first_token_timeout.map(|t| Instant::now() + t);
        let opened = match open(response.body, first_token_by, deadline).await {
            Ok(opened) => opened,
            Err(NotOpened::NoFirstToken) => {
                return failed("the fallback sent no first token in time".into(), attempts)
            }
            Err(NotOpened::Broke) => return failed("the fallback's stream broke".into(), attempts),
            Err(NotOpened::Deadline) => {
                return failed("the request's deadline passed".into(), attempts)
            }
        };
        let report = |how: &str| Report {
            continuation: Some(how.to_string()),
            fallback_attempts: attempts,
        };
        let mut splice = splice;
        let Opened {
            mut upstream,
            head,
            mut finished,
            ..
        } = opened;
        let mut queue: std::collections::VecDeque<Relayed> = head.into();
        loop {
            let line = match queue.pop_front() {
                Some(line) => line,
                None => match upstream
                    .next_line(self.stall_timeout.map(|s| Instant::now() + s), deadline)
                    .await
                {
                    Read::Line(line) => line,
                    Read::End if finished => {
                        for held in splice.held() {
                            if tx.send(Ok(held)).await.is_err() {
                                return (report(how), None);
                            }
                        }
                        return (report(how), Some(Ok(Bytes::from_static(DONE))));
                    }
                    Read::End | Read::Broke | Read::Silent => {
                        return failed("the fallback's stream broke too".into(), attempts)
                    }
                    Read::Deadline => return (report(how), Some(Err(aborted("deadline")))),
                },
            };
            let event = match line.kind {
                Kind::Done => {
                    for held in splice.held() {
                        if tx.send(Ok(held)).await.is_err() {
                            return (report(how), None);
                        }
                    }
                    return (report(how), Some(Ok(line.raw)));
                }
                Kind::Other => continue,
                Kind::Malformed => {
                    return failed("the fallback's stream broke too".into(), attempts)
                }
                Kind::Event(e) if e.error => {
                    return failed("the fallback's stream sent an error".into(), attempts)
                }
                Kind::Event(e) => e,
            };
            finished |= event.finish;
            let mut flushed = Vec::new();
            let (out, drop_held) = match splice.join(&event.content) {
                Joined::Send(c) => (rewrite(event.value, &c), false),
                Joined::FlushHeld(held, c) => {
                    flushed = held;
                    (rewrite(event.value, &c), false)
                }
                Joined::Hold(c) => {
                    if let (Some(bytes), Splice::Echo { held, .. }) =
                        (rewrite(event.value, &c), &mut splice)
                    {
                        held.push(bytes);
                    }
                    continue;
                }
                Joined::DropHeld(c) => (rewrite(event.value, &c), true),
                Joined::Mismatch => {
                    return failed(
                        "the fallback's answer does not begin with the text already sent".into(),
                        attempts,
                    )
                }
            };
            let held = splice.held();
            let mut items: Vec<Bytes> = if drop_held { Vec::new() } else { held };
            items.append(&mut flushed);
            items.extend(out);
            for item in items {
                if tx.send(Ok(item)).await.is_err() {
                    return (report(how), None);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the relay makes of one line of an upstream's stream.
    fn kind_of(bytes: &[u8]) -> Kind {
        let mut reader = SseReader::default();
        reader.feed(bytes);
        reader.end();
        let line = Relayed::of(reader.next_line().expect("a line"));
        assert_eq!(line.raw, bytes, "the bytes are relayed as they came");
        line.kind
    }

    fn event_of(bytes: &[u8]) -> Event {
        match kind_of(bytes) {
            Kind::Event(e) => e,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn lines_are_read_as_the_relay_reads_them() {
        assert_eq!(kind_of(b"data: [DONE]\n"), Kind::Done);
        assert_eq!(kind_of(b": keep-alive\n"), Kind::Other);
        assert_eq!(kind_of(b"\n"), Kind::Other);
        assert_eq!(kind_of(b"data: {\"choices\": [\n"), Kind::Malformed);
        assert_eq!(kind_of(b"data: \xff\n"), Kind::Malformed);
        let e = event_of(b"data: {\"choices\":[{\"delta\":{\"content\":\"hi \"}}]}\n");
        assert_eq!(
            (e.content.as_str(), e.token(), e.finish),
            ("hi ", true, false)
        );
        let e = event_of(
            b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n",
        );
        assert!(!e.token(), "a role chunk carries no token");
        let e = event_of(b"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n");
        assert!(e.token(), "reasoning is a token");
        assert!(event_of(b"data: {\"error\":{\"message\":\"x\"}}\n").error);
    }

    /// The edge cases the relay read apart from the driver, now read as
    /// the driver reads them: content that is not text breaks the stream
    /// (it used to go on as a chunk without a token, which no client could
    /// read), text parts are a token (they used to be none), and only a
    /// string finish reason finishes an answer (any non-null one did).
    #[test]
    fn a_chunk_is_read_as_the_driver_reads_it() {
        assert_eq!(
            kind_of(b"data: {\"choices\":[{\"delta\":{\"content\":42}}]}\n"),
            Kind::Malformed
        );
        let parts = event_of(
            b"data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}]}\n",
        );
        assert!(parts.token() && parts.content == "hi");
        let odd = event_of(b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":1}]}\n");
        assert!(!odd.finish);
        // An error chunk is an error, whatever its content holds.
        let error = event_of(b"data: {\"error\":{\"message\":\"x\"},\"choices\":[{\"delta\":{\"content\":7}}]}\n");
        assert!(error.error);
    }

    #[test]
    fn a_restart_drops_exactly_the_text_sent() {
        let mut s = Splice::Skip("one two ".into());
        assert!(matches!(s.join("one "), Joined::Send(c) if c.is_empty()));
        assert!(matches!(s.join("two three "), Joined::Send(c) if c == "three "));
        assert!(matches!(s.join("four"), Joined::Send(c) if c == "four"));
        let mut s = Splice::Skip("one two ".into());
        assert!(matches!(s.join("uno "), Joined::Mismatch));
    }

    #[test]
    fn a_prefill_continuation_passes_and_an_ignored_prefill_is_dropped() {
        let echo = || Splice::Echo {
            sent: "one two ".into(),
            seen: String::new(),
            held: Vec::new(),
        };
        // A real continuation: new text at once.
        let mut s = echo();
        assert!(
            matches!(s.join("three "), Joined::FlushHeld(h, c) if h.is_empty() && c == "three ")
        );
        // A continuation that starts like the text sent, then diverges: the
        // held start is new text and goes out before the rest.
        let mut s = echo();
        assert!(matches!(s.join("one"), Joined::Hold(_)));
        if let Splice::Echo { held, .. } = &mut s {
            held.push(Bytes::from_static(b"data: one\n\n"));
        }
        assert!(
            matches!(s.join(" more"), Joined::FlushHeld(h, c) if h.len() == 1 && c == " more"),
            "the held event is handed back with the new text"
        );
        // The fallback ignored the prefill and starts over: held, dropped.
        let mut s = echo();
        assert!(matches!(s.join("one "), Joined::Hold(_)));
        assert!(matches!(s.join("two three "), Joined::DropHeld(c) if c == "three "));
        let mut s = echo();
        assert!(matches!(s.join("one "), Joined::Hold(_)));
        assert!(matches!(s.join("two "), Joined::DropHeld(c) if c.is_empty()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_line_without_end_past_the_cap_is_a_broken_stream() {
        let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
        let endless = futures::stream::iter((0..40).map(move |_| Ok(chunk.clone()))).boxed();
        let mut upstream = Upstream::new(endless);
        let deadline = Instant::now() + Duration::from_secs(10);
        assert!(matches!(
            upstream.next_line(None, deadline).await,
            Read::Broke
        ));
        let mut short =
            Upstream::new(futures::stream::iter([Ok(Bytes::from_static(b"data: x\n"))]).boxed());
        assert!(matches!(
            short.next_line(None, deadline).await,
            Read::Line(_)
        ));
    }

    #[test]
    fn rewritten_events_lose_the_role_and_empty_ones_go() {
        let role = json!({"choices": [{"delta": {"role": "assistant", "content": ""}}]});
        assert_eq!(rewrite(role, ""), None);
        let piece = json!({"choices": [{"delta": {"content": "abc"}}]});
        let out = rewrite(piece, "c").unwrap();
        assert_eq!(
            out,
            Bytes::from("data: {\"choices\":[{\"delta\":{\"content\":\"c\"}}]}\n\n")
        );
        let finish = json!({"choices": [{"delta": {}, "finish_reason": "stop"}]});
        assert!(rewrite(finish, "").is_some());
        assert_eq!(
            with_prefill(&json!({"messages": []}), "so far")["messages"][0]["role"],
            "assistant"
        );
    }
}
