//! The live path of a streamed answer: a provider's answer relayed piece
//! by piece as it arrives ([`LiveAnswer`]), each piece framed at once in
//! the upstream's own dialect ([`Framer`]), so the gateway sees the
//! provider's real time to first token with the framing the simulated
//! model gives. What a fault can do to a stream without the whole text
//! still applies: the first piece comes late (a slow first token, a
//! scripted delay), a reasoning frame goes before it, a malformed event
//! after the N-th piece, the stream is cut or stalls after N pieces (as
//! [`super::wire::paced_stream`] counts content frames), or loses its last
//! frame. A provider stream that breaks off is a broken stream to the
//! gateway (no end of stream), logged as `provider_error` with the reason.
//! The attempt log gets the answer text and the model when the stream
//! ends, whichever way it ends.

use super::attempt::AttemptGuard;
use super::responder::{LiveAnswer, Piece};
use super::wire::{cut_error, Tail, CUT_AFTER};
use axum::body::{Body, Bytes};
use axum::response::Response;
use cb_dialect::frames::Framer;
use cb_faults::{End, ErrorSpec, Shape};
use cb_wire::openai::{approx_tokens, Usage};
use futures::stream::BoxStream;
use futures::StreamExt;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// What the relay does to the stream, from a [`Shape`] and the lateness
/// of its first content.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveShape {
    /// How much later than it arrives the first content may go (from the
    /// opening frame).
    pub late: Duration,
    /// A reasoning frame before the first content.
    pub reasoning: Option<&'static str>,
    /// After this many content pieces the stream ends this way.
    pub limit: Option<(usize, Tail)>,
    /// The stream's last frame is dropped.
    pub no_end: bool,
    /// A malformed event goes after this many content pieces.
    pub malformed_after: Option<usize>,
    /// At the limit, the stream closes properly with `finish_reason:
    /// "length"` instead of ending as the limit's tail says.
    pub finish_length: bool,
    /// At the limit, an error event goes out before the stream ends.
    pub error_at_limit: bool,
}

impl LiveShape {
    /// The live form of `shape`, its first content `late`.
    pub fn of(shape: &Shape, late: Duration) -> Self {
        let limit = match shape.end {
            End::Complete | End::NoDone => None,
            End::CutAfter(n) => Some((n, Tail::Cut)),
            End::StallAfter { tokens, silent } => Some((tokens, Tail::StallThenCut(silent))),
            End::TruncatedAfter(n) | End::LengthAfter(n) | End::ErrorAfter(n) => {
                Some((n, Tail::Complete))
            }
            End::HalfBody => Some((1, Tail::CloseAfter(Duration::ZERO))),
            End::BodyStall { silent } => Some((0, Tail::StallThenCut(silent))),
            End::KeepAliveAfter {
                tokens,
                every,
                silent,
            } => Some((
                tokens,
                Tail::KeepAlive {
                    every,
                    left: silent,
                },
            )),
        };
        LiveShape {
            late,
            reasoning: shape.reasoning.then_some(super::render::REASONING_TEXT),
            limit,
            no_end: shape.end == End::NoDone,
            malformed_after: shape.malformed_after,
            finish_length: matches!(shape.end, End::LengthAfter(_)),
            error_at_limit: matches!(shape.end, End::ErrorAfter(_)),
        }
    }
}

/// Where the relay is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Pieces are being relayed.
    Relaying,
    /// The frames queued are the last; then the body ends this way.
    Ending(Tail),
    /// Nothing more.
    Done,
}

/// One answer being relayed.
struct Relay {
    pieces: BoxStream<'static, Result<Piece, ErrorSpec>>,
    framer: Framer,
    shape: LiveShape,
    guard: Option<AttemptGuard>,
    /// Frames ready to go.
    out: VecDeque<String>,
    /// When the opening frame went out.
    opened: Instant,
    /// The first content is under way (its delay has passed).
    started: bool,
    malformed_sent: bool,
    /// Content pieces sent.
    sent: usize,
    /// The text relayed.
    text: String,
    model: String,
    input_tokens: u32,
    phase: Phase,
}

impl Relay {
    /// The next bytes of the body: a frame, the break of a cut, or the end.
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        loop {
            if let Some(frame) = self.out.pop_front() {
                return Some(Ok(Bytes::from(frame)));
            }
            match self.phase {
                Phase::Done => return None,
                Phase::Ending(tail) => {
                    if let Some((wait, rest)) = tail.keep_alive() {
                        // The fault itself: a keep-alive comment every `every` while no
                        // content comes.
                        tokio::time::sleep(wait).await;
                        self.phase = Phase::Ending(rest);
                        return Some(Ok(Bytes::from_static(super::wire::KEEP_ALIVE.as_bytes())));
                    }
                    self.phase = Phase::Done;
                    return self.end(tail).await;
                }
                Phase::Relaying => self.step().await,
            }
        }
    }

    /// Reads the next piece and queues what it becomes.
    async fn step(&mut self) {
        match self.pieces.next().await {
            Some(Ok(Piece::Text(text))) if text.is_empty() => {}
            Some(Ok(Piece::Text(text))) => {
                self.start().await;
                if self.limit_reached() {
                    return self.stop();
                }
                let frame = self.framer.text(&text);
                self.out.push_back(frame);
                self.text.push_str(&text);
                self.sent += 1;
                if self.shape.malformed_after == Some(self.sent) {
                    self.malformed();
                }
                if self.limit_reached() {
                    self.stop();
                }
            }
            Some(Ok(Piece::End(ending))) => {
                self.start().await;
                self.record();
                let usage = ending
                    .usage
                    .unwrap_or_else(|| Usage::new(self.input_tokens, approx_tokens(&self.text)));
                let mut close = self.framer.close(&ending.finish_reason, usage);
                if self.shape.no_end {
                    close.pop();
                }
                let tail = match self.shape.limit {
                    // The answer ended before the limit: it is whole.
                    Some(_) if self.shape.finish_length => Tail::Complete,
                    Some((n, tail)) => {
                        close.truncate(n.saturating_sub(self.sent));
                        tail
                    }
                    None => Tail::Complete,
                };
                self.out.extend(close);
                self.finish_with(tail);
            }
            Some(Err(spec)) => self.broken(&spec.message),
            None => self.broken("the provider's answer ended before it was complete"),
        }
    }

    /// Before the first content: waits out its delay, then queues the
    /// reasoning frame and a malformed event due before any content.
    async fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        let due = self.opened + self.shape.late;
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        if let Some(frame) = self.shape.reasoning.and_then(|t| self.framer.reasoning(t)) {
            self.out.push_back(frame);
        }
        if self.shape.malformed_after == Some(0) {
            self.malformed();
        }
    }

    fn malformed(&mut self) {
        self.out.push_back(self.framer.malformed().to_string());
        self.malformed_sent = true;
    }

    fn limit_reached(&self) -> bool {
        self.shape.limit.is_some_and(|(n, _)| self.sent >= n)
    }

    /// The cut or stall of the shape, after the pieces sent.
    fn stop(&mut self) {
        self.record();
        if self.shape.finish_length {
            let usage = Usage::new(self.input_tokens, approx_tokens(&self.text));
            let close = self.framer.close("length", usage);
            self.out.extend(close);
        }
        if self.shape.error_at_limit {
            let error = self.framer.error(super::wire::IN_BAND_ERROR);
            self.out.push_back(error);
        }
        let tail = self.shape.limit.map_or(Tail::Cut, |(_, tail)| tail);
        self.finish_with(tail);
    }

    /// The provider's answer broke off: the gateway's stream breaks off
    /// too, and the attempt says why.
    fn broken(&mut self, reason: &str) {
        self.record();
        if let Some(guard) = self.guard.as_mut() {
            guard.set_provider_error(reason);
        }
        self.phase = Phase::Ending(Tail::Cut);
        self.release();
    }

    /// Queues a malformed event still due, ends with `tail`, and lets the
    /// provider go.
    fn finish_with(&mut self, tail: Tail) {
        if self.shape.malformed_after.is_some() && !self.malformed_sent {
            self.malformed();
        }
        self.phase = Phase::Ending(tail);
        self.release();
    }

    /// Drops the provider's stream (its connection closes), so a stall's
    /// silence does not hold it.
    fn release(&mut self) {
        self.pieces = futures::stream::empty().boxed();
    }

    /// The attempt's answer: the text relayed and the model that gave it.
    fn record(&mut self) {
        if let Some(guard) = self.guard.as_mut() {
            guard.set_answer(&self.text, &self.model);
        }
    }

    /// After the last frame: the body ends, breaks off, or goes silent and
    /// then ends; the attempt is recorded.
    async fn end(&mut self, tail: Tail) -> Option<Result<Bytes, std::io::Error>> {
        let guard = self.guard.take()?;
        match tail {
            Tail::Complete => {
                guard.finish(Some(200));
                None
            }
            Tail::Cut => {
                guard.finish(Some(200));
                // The fault itself: the connection closes this long after the last byte sent (a
                // cut, not a phase wait).
                tokio::time::sleep(CUT_AFTER).await;
                Some(Err(cut_error()))
            }
            Tail::CloseAfter(silent) | Tail::KeepAlive { left: silent, .. } => {
                // The guard stays alive through the silence: a client that
                // gives up on it is recorded.
                tokio::time::sleep(silent).await;
                guard.finish(Some(200));
                None
            }
            Tail::StallThenCut(silent) => {
                // The fault itself: silence, then the connection aborted.
                tokio::time::sleep(silent).await;
                guard.finish(Some(200));
                Some(Err(cut_error()))
            }
        }
    }
}

/// A 200 event stream relaying `live` through `framer` as `shape` says;
/// `input_tokens` estimates the usage when the provider sends none.
pub fn relay(
    mut framer: Framer,
    mut guard: AttemptGuard,
    shape: LiveShape,
    live: LiveAnswer,
    input_tokens: u32,
) -> Response {
    guard.set_sent(200);
    let open = framer.open();
    let relay = Relay {
        pieces: live.pieces,
        framer,
        shape,
        guard: Some(guard),
        out: VecDeque::from([open]),
        opened: Instant::now(),
        started: false,
        malformed_sent: false,
        sent: 0,
        text: String::new(),
        model: live.model,
        input_tokens,
        phase: Phase::Relaying,
    };
    let body = futures::stream::unfold(relay, |mut r| async move {
        r.next().await.map(|bytes| (bytes, r))
    });
    cb_wire::openai::frame::event_stream(Body::from_stream(body))
}
