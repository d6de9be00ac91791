//! Reading a streamed chat completion as a client does.
//!
//! [`SseReader`] is fed the body chunk by chunk as it arrives, with the time
//! each chunk arrived, and keeps every `data:` event with its arrival time and
//! every line that is not part of the event stream at all (junk before the
//! first event, a stray HTML error page), so that time-to-first-token and
//! junk checks can look at what was really sent. [`assemble`] then turns the
//! trace into the assistant text, or says why it is not a usable answer (a
//! malformed chunk, an error object sent mid-stream, no `data: [DONE]`, a
//! `delta.content` that is not text).
//!
//! Every line is redacted ([`cb_base::secret::redact`]) as it is read, so a
//! header value a gateway echoes into its stream is gone before the trace
//! keeps it or a reason quotes it. A stream is read only up to the driver's
//! size cap; this reader holds at most that much.

use crate::content::content_text;
use cb_base::secret::redact_owned;
use serde_json::Value;

/// Longest excerpt of a bad chunk kept in a reason.
const CHUNK_EXCERPT: usize = 120;

/// One `data:` line of a stream, with when it arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedEvent {
    /// Milliseconds from the request being sent to the arrival of the chunk
    /// that completed this line.
    pub at_ms: f64,
    /// The line's data, trimmed (`[DONE]` included).
    pub data: String,
}

/// Everything a stream sent, as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamTrace {
    /// Every `data:` line, in order; the `[DONE]` line included.
    pub events: Vec<TimedEvent>,
    /// Lines that are not server-sent-events syntax (not `data:`, `event:`,
    /// `id:`, `retry:`, a `:` comment or blank), in order.
    pub stray: Vec<String>,
    /// Whether some line was not UTF-8.
    pub not_utf8: bool,
}

/// Incremental reader of a server-sent-events body.
#[derive(Debug, Default)]
pub struct SseReader {
    pending: Vec<u8>,
    trace: StreamTrace,
}

impl SseReader {
    /// A reader that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of the body, which arrived `at_ms` after the
    /// request was sent. Linear in the bytes fed: only the new bytes are
    /// searched for line ends, and the lines read are removed at once.
    pub fn feed(&mut self, chunk: &[u8], at_ms: f64) {
        let mut pending = std::mem::take(&mut self.pending);
        let mut search = pending.len();
        pending.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &pending[search..]) {
            let end = search + offset;
            self.line(&pending[start..end], at_ms);
            start = end + 1;
            search = start;
        }
        pending.drain(..start);
        self.pending = pending;
    }

    /// Ends the body (`at_ms` is when it ended) and returns the trace; a
    /// last line without a line break still counts.
    pub fn finish(mut self, at_ms: f64) -> StreamTrace {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.line(&rest, at_ms);
        }
        self.trace
    }

    fn line(&mut self, raw: &[u8], at_ms: f64) {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(line) = std::str::from_utf8(raw) else {
            self.trace.not_utf8 = true;
            return;
        };
        if let Some(data) = line.strip_prefix("data:") {
            self.trace.events.push(TimedEvent {
                at_ms,
                data: redact_owned(data.trim().to_string()),
            });
        } else if !is_sse_syntax(line) {
            self.trace.stray.push(redact_owned(line.to_string()));
        }
    }
}

/// Whether `line` is a field or comment of the event-stream format other
/// than `data:`, or a blank separator.
fn is_sse_syntax(line: &str) -> bool {
    line.trim().is_empty()
        || line.starts_with(':')
        || ["event:", "id:", "retry:"]
            .iter()
            .any(|f| line.starts_with(f))
        || ["event", "id", "retry", "data"].contains(&line)
}

/// The answer a complete stream carried.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembled {
    /// The assistant text: every `choices[0].delta.content` in order.
    pub text: String,
    /// The last `choices[0].finish_reason` sent, if any.
    pub finish_reason: Option<String>,
    /// Milliseconds from the request to the first event with non-empty
    /// content, if one came.
    pub first_content_ms: Option<f64>,
    /// The `model` the first chunk that names one names.
    pub model: Option<String>,
    /// Whether a chunk carried a `usage` block.
    pub usage: bool,
}

/// The assistant text of a stream, or why it is not a usable answer. Text
/// after `data: [DONE]` is ignored.
///
/// # Errors
/// A reason: a line is not UTF-8, a chunk is not JSON, a chunk carries an
/// `error` object, a `delta.content` is neither a string, null nor an array
/// of text parts, or the stream ended without `data: [DONE]`.
pub fn assemble(trace: &StreamTrace) -> Result<Assembled, String> {
    assemble_with(trace, false)
}

/// As [`assemble`], but a stream that ended at the HTTP level after a
/// `finish_reason` counts as complete without `data: [DONE]`, as most
/// client SDKs read it (the caller knows the body ended cleanly: a body
/// that broke off is a transport error, not a trace).
///
/// # Errors
/// As [`assemble`], except a missing `data: [DONE]` after a finish reason.
pub fn assemble_finished(trace: &StreamTrace) -> Result<Assembled, String> {
    assemble_with(trace, true)
}

fn assemble_with(trace: &StreamTrace, finish_ends: bool) -> Result<Assembled, String> {
    if trace.not_utf8 {
        return Err("the stream is not UTF-8".to_string());
    }
    let mut out = Assembled {
        text: String::new(),
        finish_reason: None,
        first_content_ms: None,
        model: None,
        usage: false,
    };
    let mut chunks = 0usize;
    for event in &trace.events {
        if event.data == "[DONE]" {
            return Ok(out);
        }
        chunks += 1;
        let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
            format!(
                "malformed stream chunk {chunks} ({e}): {}",
                event.data.chars().take(CHUNK_EXCERPT).collect::<String>()
            )
        })?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(format!(
                "error in the stream after {chunks} chunks: {message}"
            ));
        }
        if let Some(content) = chunk.pointer("/choices/0/delta/content") {
            let field = format!("stream chunk {chunks}: choices[0].delta.content");
            let piece = content_text(content, &field)?.unwrap_or_default();
            if !piece.is_empty() && out.first_content_ms.is_none() {
                out.first_content_ms = Some(event.at_ms);
            }
            out.text.push_str(&piece);
        }
        if let Some(reason) = chunk
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
        {
            out.finish_reason = Some(reason.to_string());
        }
        if out.model.is_none() {
            out.model = chunk
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        out.usage |= chunk.get("usage").is_some_and(Value::is_object);
    }
    if finish_ends && out.finish_reason.is_some() {
        return Ok(out);
    }
    Err(format!(
        "the stream ended without data: [DONE] after {chunks} chunks"
    ))
}

/// The assistant text of a whole stream body, or why it is not a usable
/// answer (see [`assemble`]).
///
/// # Errors
/// As [`assemble`].
pub fn stream_text(body: &[u8]) -> Result<String, String> {
    assemble(&read_all(body)).map(|a| a.text)
}

/// Reads a whole body at once (tests, and callers that already hold it).
pub fn read_all(body: &[u8]) -> StreamTrace {
    let mut reader = SseReader::new();
    reader.feed(body, 0.0);
    reader.finish(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(content: &str) -> String {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": content}}]})
        )
    }

    fn text(body: &str) -> Result<String, String> {
        assemble(&read_all(body.as_bytes())).map(|a| a.text)
    }

    #[test]
    fn assembles_the_deltas_of_a_complete_stream() {
        let body = format!(
            "data: {}\n\n{}{}: keep-alive comment\n\n{}data: {}\n\ndata: [DONE]\n\n",
            serde_json::json!({"choices": [{"delta": {"role": "assistant", "content": ""}}]}),
            chunk("Your sister "),
            chunk("is called "),
            chunk("Oriane."),
            serde_json::json!({"choices": [], "usage": {"prompt_tokens": 9}}),
        );
        assert_eq!(text(&body).unwrap(), "Your sister is called Oriane.");
        // CRLF line ends and no space after the colon are valid SSE.
        let crlf = "data:{\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\r\n\r\ndata:[DONE]\r\n";
        assert_eq!(text(crlf).unwrap(), "ok");
    }

    #[test]
    fn a_stream_cut_before_done_is_not_an_answer() {
        let body = format!("{}{}", chunk("Your sister "), chunk("is"));
        let err = text(&body).unwrap_err();
        assert_eq!(err, "the stream ended without data: [DONE] after 2 chunks");
    }

    #[test]
    fn a_malformed_chunk_or_an_error_chunk_is_named() {
        let body = format!("{}data: {{\"choices\": [\n\ndata: [DONE]\n\n", chunk("a"));
        let err = text(&body).unwrap_err();
        assert!(err.starts_with("malformed stream chunk 2"), "{err}");
        let body = format!(
            "{}data: {}\n\ndata: [DONE]\n\n",
            chunk("a"),
            serde_json::json!({"error": {"message": "upstream went away", "type": "server_error"}})
        );
        let err = text(&body).unwrap_err();
        assert_eq!(
            err,
            "error in the stream after 2 chunks: upstream went away"
        );
        assert!(assemble(&read_all(&[0xff, 0xfe])).is_err());
    }

    #[test]
    fn chunks_split_anywhere_give_the_same_events_with_their_arrival() {
        let body = format!(
            "{}{}data: [DONE]\n\n",
            chunk(""),
            chunk("Hel") + &chunk("lo")
        );
        let bytes = body.as_bytes();
        let mut reader = SseReader::new();
        for (i, piece) in bytes.chunks(7).enumerate() {
            reader.feed(piece, i as f64);
        }
        let trace = reader.finish(99.0);
        let data = |t: &StreamTrace| t.events.iter().map(|e| e.data.clone()).collect::<Vec<_>>();
        assert_eq!(data(&trace), data(&read_all(bytes)));
        let assembled = assemble(&trace).unwrap();
        assert_eq!(assembled.text, "Hello");
        // The first event with content, not the empty role chunk.
        let first = trace
            .events
            .iter()
            .find(|e| e.data.contains("Hel"))
            .unwrap();
        assert_eq!(assembled.first_content_ms, Some(first.at_ms));
        assert!(first.at_ms > trace.events[0].at_ms);
    }

    #[test]
    fn lines_that_are_not_events_are_kept_apart() {
        let body = format!(
            "garbage before the stream\nevent: message\nid: 7\n{}<html>oops</html>\ndata: [DONE]\n",
            chunk("hi")
        );
        let trace = read_all(body.as_bytes());
        assert_eq!(
            trace.stray,
            ["garbage before the stream", "<html>oops</html>"]
        );
        assert_eq!(assemble(&trace).unwrap().text, "hi");
    }

    #[test]
    fn a_delta_content_that_is_not_text_is_named() {
        let body = format!(
            "{}data: {}\n\ndata: [DONE]\n\n",
            chunk("a"),
            serde_json::json!({"choices": [{"delta": {"content": 42}}]})
        );
        let err = text(&body).unwrap_err();
        assert!(
            err.starts_with("stream chunk 2: choices[0].delta.content is a number (42)"),
            "{err}"
        );
        // A null delta (role or tool-call chunk) is no text, not an error.
        let body = format!(
            "data: {}\n\n{}data: [DONE]\n\n",
            serde_json::json!({"choices": [{"delta": {"role": "assistant", "content": null}}]}),
            chunk("ok")
        );
        assert_eq!(text(&body).unwrap(), "ok");
    }

    #[test]
    fn echoed_secrets_are_redacted_as_lines_are_read() {
        let _s = cb_base::secret::Secret::new("sk-sse-planted-77");
        let body = format!(
            "junk sk-sse-planted-77\n{}data: {{\"oops sk-sse-planted-77\n\ndata: [DONE]\n\n",
            chunk("key sk-sse-planted-77")
        );
        let trace = read_all(body.as_bytes());
        assert_eq!(trace.stray, ["junk [redacted]"]);
        assert!(trace.events[0].data.contains("key [redacted]"));
        let err = assemble(&trace).unwrap_err();
        assert!(!err.contains("sk-sse-planted-77"), "{err}");
    }

    #[test]
    fn a_finished_stream_without_done_is_complete_only_when_asked() {
        let body = format!(
            "{}data: {}\n\ndata: {}\n\n",
            chunk("done"),
            serde_json::json!({"model": "fb", "choices": [{"delta": {}, "finish_reason": "stop"}]}),
            serde_json::json!({"choices": [], "usage": {"total_tokens": 3}}),
        );
        let trace = read_all(body.as_bytes());
        assert!(assemble(&trace).is_err());
        let finished = assemble_finished(&trace).unwrap();
        assert_eq!(finished.text, "done");
        assert_eq!(finished.model.as_deref(), Some("fb"));
        assert!(finished.usage);
        // Without a finish reason it is cut, not finished.
        assert!(assemble_finished(&read_all(chunk("cut").as_bytes())).is_err());
    }

    #[test]
    fn the_finish_reason_is_kept() {
        let body = format!(
            "{}data: {}\n\ndata: [DONE]\n\n",
            chunk("cut"),
            serde_json::json!({"choices": [{"delta": {}, "finish_reason": "length"}]})
        );
        let assembled = assemble(&read_all(body.as_bytes())).unwrap();
        assert_eq!(assembled.finish_reason.as_deref(), Some("length"));
    }
}
