//! A provider's answer handed on as it arrives, for the live relay
//! ([`crate::responder::Responder::respond_live`]): the body is
//! read chunk by chunk under the same size cap and deadline as a buffered
//! read, each server-sent event becomes a [`Piece`] at once, and a stream
//! that breaks off, carries an error object, is not JSON or ends without
//! `data: [DONE]` (or a finish reason) ends the pieces with the reason.
//!
//! [`StreamParser`] is the pure part (bytes in, pieces out), read with the
//! same rules as [`cb_wire::sse::assemble_finished`] and redacted
//! line by line, so no key a provider echoes reaches a reason or a frame.

use super::forward::{failure, read_capped, Limits, ReadError};
use super::reply;
use cb_faults::{ErrorKind, ErrorSpec};
use cb_wire::openai::Usage;
use cb_base::secret::redact_owned;
use crate::responder::{Ending, LiveAnswer, Piece};
use futures::StreamExt;
use serde_json::Value;
use std::collections::VecDeque;

/// Longest excerpt of a bad chunk kept in a reason.
const CHUNK_EXCERPT: usize = 120;

/// Reads a provider's server-sent events into pieces, incrementally.
#[derive(Debug, Default)]
pub(super) struct StreamParser {
    /// Bytes of a line not ended yet.
    pending: Vec<u8>,
    /// Data events read (`[DONE]` excluded).
    chunks: usize,
    /// The last finish reason sent.
    finish_reason: Option<String>,
    /// The token counts, if a chunk carried them.
    usage: Option<Usage>,
    /// The model the first chunk that names one names.
    model: Option<String>,
}

impl StreamParser {
    /// Feeds the next bytes of the body: the pieces the lines they complete
    /// carry, in order. After a [`Piece::End`] or a reason nothing more is
    /// read; the caller stops there.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Vec<Result<Piece, String>> {
        let mut pending = std::mem::take(&mut self.pending);
        let mut search = pending.len();
        pending.extend_from_slice(bytes);
        let mut start = 0;
        let mut out = Vec::new();
        while let Some(offset) = memchr::memchr(b'\n', &pending[search..]) {
            let end = search + offset;
            let item = self.line(&pending[start..end]);
            start = end + 1;
            search = start;
            if let Some(item) = item {
                let last = !matches!(item, Ok(Piece::Text(_)));
                out.push(item);
                if last {
                    return out;
                }
            }
        }
        pending.drain(..start);
        self.pending = pending;
        out
    }

    /// The body ended cleanly: a last line without a line break still
    /// counts; the answer is complete after `data: [DONE]` or a finish
    /// reason, as most client SDKs read it.
    pub(super) fn finish(&mut self) -> Vec<Result<Piece, String>> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        if let Some(item) = self.line(&rest) {
            let last = !matches!(item, Ok(Piece::Text(_)));
            out.push(item);
            if last {
                return out;
            }
        }
        out.push(match self.finish_reason {
            Some(_) => Ok(self.end()),
            None => Err(format!(
                "the stream ended without data: [DONE] after {} chunks",
                self.chunks
            )),
        });
        out
    }

    /// The model the provider named so far.
    pub(super) fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn end(&self) -> Piece {
        Piece::End(Ending {
            finish_reason: self
                .finish_reason
                .clone()
                .unwrap_or_else(|| "stop".to_string()),
            usage: self.usage,
        })
    }

    /// One line: a piece for a data event, `None` for anything else.
    fn line(&mut self, raw: &[u8]) -> Option<Result<Piece, String>> {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(line) = std::str::from_utf8(raw) else {
            return Some(Err("the stream is not UTF-8".to_string()));
        };
        let data = redact_owned(line.strip_prefix("data:")?.trim().to_string());
        if data == "[DONE]" {
            return Some(Ok(self.end()));
        }
        self.chunks += 1;
        let n = self.chunks;
        let chunk: Value = match serde_json::from_str(&data) {
            Ok(v) => v,
            Err(e) => {
                let excerpt: String = data.chars().take(CHUNK_EXCERPT).collect();
                return Some(Err(format!("malformed stream chunk {n} ({e}): {excerpt}")));
            }
        };
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            return Some(Err(format!(
                "error in the stream after {n} chunks: {message}"
            )));
        }
        if let Some(reason) = chunk
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
        {
            self.finish_reason = Some(reason.to_string());
        }
        if self.model.is_none() {
            self.model = cb_wire::openai::response_model(&chunk);
        }
        if let Some(usage) = chunk
            .get("usage")
            .filter(|u| u.is_object())
            .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok())
        {
            self.usage = Some(usage);
        }
        let text = match chunk.pointer("/choices/0/delta/content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => cb_wire::openai::ChatMessage {
                role: "assistant".into(),
                content: other.clone(),
                tool_calls: None,
                tool_call_id: None,
            }
            .text(),
        };
        Some(Ok(Piece::Text(text)))
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
    parser: StreamParser,
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
            let last = !matches!(item, Ok(Piece::Text(_)));
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
        parser: StreamParser::default(),
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
        let mut p = StreamParser::default();
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
        let mut p = StreamParser::default();
        p.feed(frame("Oriane.", Some("stop")).as_bytes());
        assert!(matches!(p.finish().last(), Some(Ok(Piece::End(_)))));

        let mut cut = StreamParser::default();
        cut.feed(frame("Ori", None).as_bytes());
        let reason = cut.finish().pop().unwrap().unwrap_err();
        assert!(
            reason.contains("without data: [DONE] after 1 chunks"),
            "{reason}"
        );
    }

    #[test]
    fn unusable_events_end_the_pieces_with_a_reason() {
        let mut p = StreamParser::default();
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

        let mut bad = StreamParser::default();
        let items = bad.feed(b"data: {\"choices\": [\n\n");
        assert!(items[0]
            .as_ref()
            .unwrap_err()
            .contains("malformed stream chunk 1"));
    }

    #[test]
    fn an_echoed_key_is_redacted_from_reasons() {
        let _key = cb_base::secret::Secret::new("sk-live-echo-DO-NOT-KEEP");
        let mut p = StreamParser::default();
        let items =
            p.feed(b"data: {\"error\": {\"message\": \"bad key sk-live-echo-DO-NOT-KEEP\"}}\n");
        let reason = items[0].as_ref().unwrap_err();
        assert!(!reason.contains("sk-live-echo"), "{reason}");
    }
}
