//! Executing a fault on the wire: holding a connection without a byte,
//! answering an error status with its body, breaking a 200 body off partway,
//! and pacing a stream's frames to their due times. These are real bytes on
//! a real connection; nothing here is decided by a field the client sends.

use super::attempt::AttemptGuard;
use super::degrade::Completion;
use super::render::{error_json, error_response, json_response, retry_after_secs};
use super::responder::Answer;
use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::Response;
use cb_base::record::AttemptAction;
use cb_dialect::Dialect;
use cb_faults::degrade::{Degradation, Degraded};
use cb_faults::{ErrorKind, ErrorSpec};
use cb_wire::openai::{approx_tokens, Usage};
use std::time::Duration;

/// The message of the error event an `ErrorAfter` stream sends.
pub const IN_BAND_ERROR: &str =
    "Overloaded: the provider stopped generating (simulated error inside the stream)";

/// How long a cut body waits after its last bytes before breaking off, so
/// those bytes have left for the gateway (hyper would otherwise drop the
/// connection with them still in its buffer, before even the status line).
pub(super) const CUT_AFTER: Duration = Duration::from_millis(100);

/// Waits `d`; returns at once when `d` is zero. A zero `tokio::time::sleep`
/// still waits for the timer's next millisecond tick, which would give the
/// `instant` profile about a millisecond of hidden latency.
pub async fn pause(d: Duration) {
    if !d.is_zero() {
        // Simulated latency: the answer's own time, a wait that load can only lengthen.
        tokio::time::sleep(d).await;
    }
}

/// TIMEOUT: no byte until `hold` ends or the client goes away (then the
/// guard records the give-up when hyper drops this future). When the hold
/// runs out with the client still there, a 504 with an error body.
pub async fn hold(mut guard: AttemptGuard, hold: Duration, dialect: Dialect) -> Response {
    guard.set_action(AttemptAction::TimeoutHeld);
    // The TIMEOUT fault: the connection is held; the client gives up first or gets the 504.
    tokio::time::sleep(hold).await;
    guard.finish(Some(504));
    let message = format!(
        "simulated TIMEOUT: the upstream held the connection for {} without answering",
        humantime::format_duration(hold)
    );
    error_response(&ErrorSpec::new(504, ErrorKind::Timeout, message), dialect)
}

/// An error status with its body in `dialect` (and `Retry-After` when the
/// spec has one).
pub fn error(mut guard: AttemptGuard, spec: &ErrorSpec, dialect: Dialect) -> Response {
    guard.set_action(if spec.kind == ErrorKind::RateLimit {
        AttemptAction::RateLimited
    } else {
        AttemptAction::ApiError
    });
    if let Some(retry_after) = spec.retry_after {
        guard.set_retry_after(retry_after_secs(retry_after).saturating_mul(1000));
    }
    guard.finish(Some(spec.status));
    error_response(spec, dialect)
}

/// The real provider's failure, passed on: its status and its (redacted)
/// reason as the error body, `Retry-After` when it sent one, and the
/// attempt logged as `provider_error` with the reason.
pub fn provider_error(mut guard: AttemptGuard, spec: &ErrorSpec, dialect: Dialect) -> Response {
    guard.set_provider_error(&spec.message);
    if let Some(retry_after) = spec.retry_after {
        guard.set_retry_after(retry_after_secs(retry_after).saturating_mul(1000));
    }
    guard.finish(Some(spec.status));
    error_response(spec, dialect)
}

/// Applies a drawn degradation to `answer`: a text one changes its text and
/// finish reason (and output tokens); a slow first token returns how late
/// the first content token must come.
pub fn degrade(answer: &mut Answer, degraded: Degraded) -> Option<Duration> {
    match degraded.degradation {
        Degradation::SlowFirstToken { delay } => Some(delay),
        Degradation::Text(kind) => {
            let mut rng = cb_base::seed::rng(degraded.seed, "degrade-text", 0);
            let clean = Completion {
                text: std::mem::take(&mut answer.text),
                finish_reason: std::mem::take(&mut answer.finish_reason),
            };
            let out = super::degrade::apply(kind, clean, &mut rng);
            answer.usage = Usage::new(answer.usage.prompt_tokens, approx_tokens(&out.text));
            answer.text = out.text;
            answer.finish_reason = out.finish_reason;
            None
        }
    }
}

/// Cuts `answer` to its first `words` words (as the stream frames them:
/// one word and its following space a chunk), its usage counting what is
/// left.
pub fn cut_to_words(answer: &mut Answer, words: usize) {
    let end = answer
        .text
        .split_inclusive(' ')
        .take(words)
        .map(str::len)
        .sum::<usize>();
    answer.text.truncate(end);
    answer.usage = Usage::new(answer.usage.prompt_tokens, approx_tokens(&answer.text));
}

/// A 400 for a request the upstream cannot read, already logged.
pub fn bad_request(message: &str) -> Response {
    json_response(
        400,
        error_json(&ErrorSpec::new(400, ErrorKind::InvalidRequest, message)),
    )
}

/// The error that makes hyper abort a body instead of ending it.
pub(super) fn cut_error() -> std::io::Error {
    std::io::Error::other("simulated cut: the upstream broke the body off")
}

/// The first half of `body` (at a character boundary).
fn first_half(body: &str) -> String {
    let half = body
        .char_indices()
        .nth(body.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    body[..half].to_string()
}

/// A 200 whose body is the first half of a JSON answer and ends cleanly
/// (its `Content-Length` matches): complete at the HTTP level, not the
/// JSON it claims to be.
pub fn half_json(body: &str) -> Response {
    json_response(200, first_half(body))
}

/// A 200 JSON answer whose first half goes at once, then nothing for
/// `silent`, then the connection breaks off.
pub fn stalled_json(body: &str, silent: Duration) -> Response {
    let part = first_half(body);
    let sent = futures::stream::once(async move { Ok(Bytes::from(part)) });
    let stall = futures::stream::once(async move {
        // The fault itself: the body goes silent after its first half.
        tokio::time::sleep(silent).await;
        Err(cut_error())
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(futures::StreamExt::chain(sent, stall)))
        .unwrap_or_else(|_| json_response(500, String::new()))
}

/// A 200 JSON answer broken off halfway through its body.
pub fn cut_json(body: &str) -> Response {
    let part = first_half(body);
    let sent = futures::stream::once(async move { Ok(Bytes::from(part)) });
    let cut = futures::stream::once(async {
        // The fault itself: the body breaks off this long after the part sent.
        tokio::time::sleep(CUT_AFTER).await;
        Err(cut_error())
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(futures::StreamExt::chain(sent, cut)))
        .unwrap_or_else(|_| json_response(500, String::new()))
}

/// How a paced stream ends after its last frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The body ends normally.
    Complete,
    /// The body breaks off (the connection is aborted).
    Cut,
    /// Silence for this long, then the body ends normally (the connection
    /// closes without the rest of the stream).
    CloseAfter(Duration),
    /// Silence for this long, then the body breaks off (the connection is
    /// aborted): how a real stall ends.
    StallThenCut(Duration),
    /// Keep-alive comments ([`KEEP_ALIVE`]) one every `every` for `left`,
    /// then the body ends normally: no content, no finish, no `[DONE]`.
    KeepAlive {
        /// Gap between two comments.
        every: Duration,
        /// Time left before the body ends.
        left: Duration,
    },
}

/// The keep-alive comment of [`Tail::KeepAlive`].
pub const KEEP_ALIVE: &str = ": ping\n\n";

impl Tail {
    /// What a tail does next: `Some((wait, rest))` to wait and send one
    /// keep-alive comment then go on as `rest`; `None` when it is not a
    /// keep-alive with a comment still due (the wait left, if any, is
    /// that of [`Tail::CloseAfter`]).
    pub fn keep_alive(self) -> Option<(Duration, Tail)> {
        match self {
            Tail::KeepAlive { every, left } if !every.is_zero() && left >= every => Some((
                every,
                Tail::KeepAlive {
                    every,
                    left: left - every,
                },
            )),
            _ => None,
        }
    }
}

/// A 200 event stream that sends each frame at its due time (an offset from
/// the first frame), then ends as `tail` says, and records the attempt when
/// the last frame has gone (after the silence of [`Tail::CloseAfter`]).
pub fn paced_stream(
    frames: Vec<(Duration, String)>,
    mut guard: AttemptGuard,
    tail: Tail,
) -> Response {
    guard.set_sent(200);
    let first = tokio::time::Instant::now();
    let stream = futures::stream::unfold(
        (frames.into_iter(), Some(guard), tail),
        move |(mut frames, mut guard, tail)| async move {
            match frames.next() {
                Some((offset, text)) => {
                    let deadline = first + offset;
                    if deadline > tokio::time::Instant::now() {
                        tokio::time::sleep_until(deadline).await;
                    }
                    Some((Ok(Bytes::from(text)), (frames, guard, tail)))
                }
                // Polled once more after the last frame: the stream is done,
                // breaks off, or goes silent (or sends only keep-alives)
                // and then ends.
                None => {
                    if let Some((wait, rest)) = tail.keep_alive() {
                        // The fault itself: a keep-alive comment every `every`
                        // while no content comes.
                        tokio::time::sleep(wait).await;
                        return Some((
                            Ok(Bytes::from_static(KEEP_ALIVE.as_bytes())),
                            (frames, guard, rest),
                        ));
                    }
                    let g = guard.take()?;
                    match tail {
                        Tail::Complete => {
                            g.finish(Some(200));
                            None
                        }
                        Tail::Cut => {
                            g.finish(Some(200));
                            // The fault itself: the stream breaks off this long after its last
                            // event.
                            tokio::time::sleep(CUT_AFTER).await;
                            Some((Err(cut_error()), (frames, None, tail)))
                        }
                        Tail::CloseAfter(silent) | Tail::KeepAlive { left: silent, .. } => {
                            // The guard stays alive through the silence: a
                            // client that gives up on it is recorded.
                            tokio::time::sleep(silent).await;
                            g.finish(Some(200));
                            None
                        }
                        Tail::StallThenCut(silent) => {
                            // The fault itself: silence, then the connection aborted.
                            tokio::time::sleep(silent).await;
                            g.finish(Some(200));
                            Some((Err(cut_error()), (frames, None, tail)))
                        }
                    }
                }
            }
        },
    );
    cb_wire::openai::frame::event_stream(Body::from_stream(stream))
}

/// A response that sends nothing at all: its body fails before the status
/// line leaves, so hyper drops the connection with no byte written.
fn no_response() -> Response {
    let broken = futures::stream::once(async { Err::<Bytes, std::io::Error>(cut_error()) });
    Response::builder()
        .status(StatusCode::OK)
        .body(Body::from_stream(broken))
        .unwrap_or_else(|_| json_response(500, String::new()))
}

/// Resets the connection before any byte of a response: `SO_LINGER` zero,
/// then the connection is dropped, so the kernel sends an RST. Without a
/// socket handle (a router served without connection info) the
/// connection is closed without a response instead.
pub fn reset(mut guard: AttemptGuard, socket: Option<&super::listen::Socket>) -> Response {
    guard.set_action(AttemptAction::BodyCut);
    if let Some(socket) = socket {
        socket.reset_on_close();
    }
    guard.finish(None);
    no_response()
}

/// A held connection (no byte until `hold` ends or the client goes away)
/// that, when the hold runs out, is closed without a response.
pub async fn hold_then_close(mut guard: AttemptGuard, hold: Duration) -> Response {
    guard.set_action(AttemptAction::TimeoutHeld);
    // The fault itself: held, then closed without a response.
    tokio::time::sleep(hold).await;
    guard.finish(None);
    no_response()
}
