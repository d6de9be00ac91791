//! A provider's answer handed on as it arrives, for the live relay
//! ([`crate::responder::Responder::respond_live`]): the body is
//! read chunk by chunk under the same size cap and deadline as a buffered
//! read, each server-sent event becomes a [`Piece`] at once, and a stream
//! that breaks off, carries an error object, is not JSON, sends a
//! `delta.content` that is not text or ends without `data: [DONE]` (or a
//! finish reason) ends the pieces with the reason.
//!
//! [`Pieces`] is the pure part (bytes in, pieces out): the one reader of
//! server-sent events, redacting line by line so no key a provider echoes
//! reaches a reason or a frame, and the one reading of a chunk, folded as
//! [`cb_wire::sse::assemble_finished`] folds a buffered stream.

use super::forward::{failure, read_capped, Limits, ReadError};
use super::reply;
use crate::responder::{Ending, LiveAnswer, Piece};
use cb_faults::{ErrorKind, ErrorSpec};
use cb_wire::sse::{ChunkFold, Line, Options, SseReader, Step};
use futures::StreamExt;
use std::collections::VecDeque;

/// Reads a provider's server-sent events into pieces, incrementally.
#[derive(Debug)]
pub(super) struct Pieces {
    reader: SseReader,
    fold: ChunkFold,
}

impl Default for Pieces {
    fn default() -> Self {
        Pieces {
            reader: SseReader::new(Options {
                redact: true,
                strict_end: false,
            }),
            fold: ChunkFold::default(),
        }
    }
}

/// Whether `item` ends the pieces (an end or a reason).
fn is_last(item: &Result<Piece, String>) -> bool {
    !matches!(item, Ok(Piece::Text(_)))
}

impl Pieces {
    /// Feeds the next bytes of the body: the pieces the lines they complete
    /// carry, in order. After a [`Piece::End`] or a reason nothing more is
    /// read; the caller stops there.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Vec<Result<Piece, String>> {
        self.reader.feed(bytes);
        self.read()
    }

    /// The body ended cleanly: a last line without a line break still
    /// counts; the answer is complete after `data: [DONE]` or a finish
    /// reason, as most client SDKs read it.
    pub(super) fn finish(&mut self) -> Vec<Result<Piece, String>> {
        self.reader.end();
        let mut out = self.read();
        if !out.last().is_some_and(is_last) {
            out.push(self.fold.end(true).map(|()| self.end()));
        }
        out
    }

    /// The model the provider named so far.
    pub(super) fn model(&self) -> Option<&str> {
        self.fold.model()
    }

    fn end(&self) -> Piece {
        Piece::End(Ending {
            finish_reason: self.fold.finish_reason().unwrap_or("stop").to_string(),
            usage: self.fold.usage(),
        })
    }

    /// The pieces of the lines read, up to the first that ends them.
    fn read(&mut self) -> Vec<Result<Piece, String>> {
        let mut out = Vec::new();
        while let Some(received) = self.reader.next_line() {
            let step = match received.line {
                Ok(Line::Data(data)) => self.fold.data(&data),
                Ok(_) => continue,
                Err(_) => Step::Broken("the stream is not UTF-8".to_string()),
            };
            let item = match step {
                Step::Text(text) => Ok(Piece::Text(text)),
                Step::Done => Ok(self.end()),
                Step::Broken(reason) => Err(reason),
            };
            let last = is_last(&item);
            out.push(item);
            if last {
                break;
            }
        }
        out
    }
}

/// The reason a reply is unusable, as the buffered read words it.
fn malformed(host: &str, reason: &str) -> ErrorSpec {
    failure(
        502,
        ErrorKind::Server,
        format!(
            "the provider at {host} sent a reply that is not a usable chat completion: {reason}"
        ),
    )
}

/// A provider's event stream being read.
struct Reader {
    response: reqwest::Response,
    parser: Pieces,
    queue: VecDeque<Result<Piece, ErrorSpec>>,
    /// Nothing more is read: the answer ended, broke off, or overflowed.
    over: bool,
    read: u64,
    limits: Limits,
}

impl Reader {
    /// The next piece, reading the body as far as needed.
    async fn next(&mut self) -> Option<Result<Piece, ErrorSpec>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            if self.over {
                return None;
            }
            let Limits { host, cap, timeout } = &self.limits;
            match self.response.chunk().await {
                Ok(Some(chunk)) => {
                    self.read += chunk.len() as u64;
                    if self.read > *cap {
                        self.over = true;
                        return Some(Err(ReadError::TooLarge.spec_at(host, *cap, *timeout)));
                    }
                    let items = self.parser.feed(&chunk);
                    self.push(items);
                }
                Ok(None) => {
                    let items = self.parser.finish();
                    self.push(items);
                    self.over = true;
                }
                Err(e) => {
                    self.over = true;
                    return Some(Err(ReadError::of(&e).spec_at(host, *cap, *timeout)));
                }
            }
        }
    }

    fn push(&mut self, items: Vec<Result<Piece, String>>) {
        for item in items {
            let last = is_last(&item);
            self.queue
                .push_back(item.map_err(|reason| malformed(&self.limits.host, &reason)));
            if last {
                self.over = true;
                return;
            }
        }
    }
}

/// The answer `response` carries, live: once its first event has arrived
/// (so the model it names is known), its pieces as they come. A reply
/// that is not an event stream is read whole and handed on as one piece.
///
/// # Errors
/// The provider's failure when the reply breaks off, overflows or is
/// unusable before its first event.
pub(super) async fn open(
    response: reqwest::Response,
    is_stream: bool,
    asked_model: &str,
    limits: Limits,
) -> Result<LiveAnswer, ErrorSpec> {
    let Limits { host, cap, timeout } = &limits;
    if !is_stream {
        let bytes = read_capped(response, *cap, None)
            .await
            .map_err(|e| e.spec_at(host, *cap, *timeout))?;
        let whole = reply::completion(&bytes).map_err(|reason| malformed(host, &reason))?;
        let pieces = [
            Ok(Piece::Text(whole.text)),
            Ok(Piece::End(Ending {
                finish_reason: whole.finish_reason,
                usage: whole.usage,
            })),
        ];
        return Ok(LiveAnswer {
            model: whole.model.unwrap_or_else(|| asked_model.to_string()),
            pieces: futures::stream::iter(pieces).boxed(),
        });
    }
    let mut reader = Reader {
        response,
        parser: Pieces::default(),
        queue: VecDeque::new(),
        over: false,
        read: 0,
        limits: limits.clone(),
    };
    let first = match reader.next().await {
        Some(Ok(piece)) => piece,
        Some(Err(spec)) => return Err(spec),
        None => return Err(malformed(&limits.host, "the stream sent nothing")),
    };
    let model = reader
        .parser
        .model()
        .map_or_else(|| asked_model.to_string(), str::to_string);
    let rest = futures::stream::unfold(reader, |mut r| async move {
        r.next().await.map(|item| (item, r))
    });
    Ok(LiveAnswer {
        model,
        pieces: futures::stream::once(async move { Ok(first) })
            .chain(rest)
            .boxed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(delta: &str, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            serde_json::json!({"model": "m-7", "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": finish}]})
        )
    }

    fn texts(items: &[Result<Piece, String>]) -> Vec<String> {
        items
            .iter()
            .filter_map(|i| match i {
                Ok(Piece::Text(t)) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn pieces_come_as_their_lines_complete() {
        let mut p = Pieces::default();
        let body = format!(
            "{}{}",
            frame("Your sister ", None),
            frame("is Oriane.", None)
        );
        let (a, b) = body.split_at(body.len() / 2 + 3);
        let first = p.feed(a.as_bytes());
        assert_eq!(texts(&first), ["Your sister "]);
        assert_eq!(p.model(), Some("m-7"));
        let second = p.feed(b.as_bytes());
        assert_eq!(texts(&second), ["is Oriane."]);
        let end = p.feed(format!("{}data: [DONE]\n\n", frame("", Some("length"))).as_bytes());
        assert_eq!(
            end.last(),
            Some(&Ok(Piece::End(Ending {
                finish_reason: "length".into(),
                usage: None
            })))
        );
    }

    #[test]
    fn a_finish_reason_ends_a_stream_without_done_but_nothing_else_does() {
        let mut p = Pieces::default();
        p.feed(frame("Oriane.", Some("stop")).as_bytes());
        assert!(matches!(p.finish().last(), Some(Ok(Piece::End(_)))));

        let mut cut = Pieces::default();
        cut.feed(frame("Ori", None).as_bytes());
        let reason = cut.finish().pop().unwrap().unwrap_err();
        assert!(
            reason.contains("without data: [DONE] after 1 chunks"),
            "{reason}"
        );
    }

    #[test]
    fn unusable_events_end_the_pieces_with_a_reason() {
        let mut p = Pieces::default();
        let items = p.feed(
            format!(
                "{}data: {{\"error\": {{\"message\": \"overloaded\"}}}}\n\n{}",
                frame("Ori", None),
                frame("ane", None)
            )
            .as_bytes(),
        );
        assert_eq!(texts(&items), ["Ori"]);
        let reason = items.last().unwrap().as_ref().unwrap_err();
        assert!(reason.contains("error in the stream after 2 chunks: overloaded"));

        let mut bad = Pieces::default();
        let items = bad.feed(b"data: {\"choices\": [\n\n");
        assert!(items[0]
            .as_ref()
            .unwrap_err()
            .contains("malformed stream chunk 1"));
    }

    #[test]
    fn an_echoed_key_is_redacted_from_reasons() {
        let _key = cb_base::secret::Secret::new("sk-live-echo-DO-NOT-KEEP");
        let mut p = Pieces::default();
        let items =
            p.feed(b"data: {\"error\": {\"message\": \"bad key sk-live-echo-DO-NOT-KEEP\"}}\n");
        let reason = items[0].as_ref().unwrap_err();
        assert!(!reason.contains("sk-live-echo"), "{reason}");
    }

    /// A `delta.content` that is not text ends the pieces with the reason a
    /// buffered read gives (the live reader used to hand on no text).
    #[test]
    fn content_that_is_not_text_is_a_reason_live_as_buffered() {
        let body = format!(
            "{}data: {}\n\n",
            frame("Ori", None),
            serde_json::json!({"choices": [{"delta": {"content": {"text": "ane"}}}]})
        );
        let items = Pieces::default().feed(body.as_bytes());
        assert_eq!(texts(&items), ["Ori"]);
        let live = items.last().unwrap().as_ref().unwrap_err().clone();
        let buffered = reply::stream(&cb_wire::sse::read_all(body.as_bytes())).unwrap_err();
        assert_eq!(live, buffered);
        assert!(live.contains("is an object"), "{live}");
    }
}
