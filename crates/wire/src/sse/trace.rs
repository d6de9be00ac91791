//! A stream as the driver's client reads it: every `data:` line with its
//! arrival time, and every line that is not part of the event stream at
//! all (junk before the first event, a stray HTML error page), so that
//! time-to-first-token and junk checks can look at what was really sent.
//! [`super::assemble`] then reads the trace as an answer.
//!
//! Every line is redacted ([`cb_base::secret::redact`]) as it is read, so a
//! header value a gateway echoes into its stream is gone before the trace
//! keeps it or a reason quotes it. A stream is read only up to the driver's
//! size cap; this reader holds at most that much.

use super::{Line, Options, SseError, SseReader};

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
    /// `data:` lines at the end of `events` whose event never got its
    /// closing blank line (the body ended first): a reader that dispatches
    /// events only at a blank line, as the OpenAI Python SDK does, never
    /// sees them.
    pub unterminated: usize,
}

/// Reads a body into a [`StreamTrace`], chunk by chunk as it arrives.
#[derive(Debug)]
pub struct TraceReader {
    reader: SseReader,
    trace: StreamTrace,
}

impl Default for TraceReader {
    fn default() -> Self {
        TraceReader::new()
    }
}

impl TraceReader {
    /// A reader that has seen nothing: lines redacted, a last line without
    /// its line break still read.
    pub fn new() -> Self {
        TraceReader {
            reader: SseReader::new(Options {
                redact: true,
                strict_end: false,
            }),
            trace: StreamTrace::default(),
        }
    }

    /// Feeds the next chunk of the body, which arrived `at_ms` after the
    /// request was sent: the lines it completes arrived then.
    pub fn feed(&mut self, chunk: &[u8], at_ms: f64) {
        self.reader.feed(chunk);
        self.read(at_ms);
    }

    /// Ends the body (`at_ms` is when it ended) and returns the trace; a
    /// last line without a line break still counts.
    pub fn finish(mut self, at_ms: f64) -> StreamTrace {
        self.reader.end();
        self.read(at_ms);
        self.trace
    }

    fn read(&mut self, at_ms: f64) {
        while let Some(received) = self.reader.next_line() {
            match received.line {
                Ok(Line::Data(data)) => {
                    self.trace.events.push(TimedEvent {
                        at_ms,
                        data: data.trim().to_string(),
                    });
                    self.trace.unterminated += 1;
                }
                Ok(Line::Blank) => self.trace.unterminated = 0,
                Ok(Line::Stray(text)) => self.trace.stray.push(text.into_owned()),
                Ok(Line::Event(_) | Line::Other) => {}
                Err(SseError::NotUtf8) => self.trace.not_utf8 = true,
                // Not with a lenient end: a last line without its break is
                // read as a line.
                Err(SseError::CutLine(_)) => {}
            }
        }
    }
}

/// Reads a whole body at once (tests, and callers that already hold it).
pub fn read_all(body: &[u8]) -> StreamTrace {
    let mut reader = TraceReader::new();
    reader.feed(body, 0.0);
    reader.finish(0.0)
}
