//! The one reader of server-sent events: bytes in, as they arrive in
//! pieces of any size, complete lines and events out.
//!
//! [`SseReader`] is fed a body piece by piece ([`SseReader::feed`]) and
//! told when it ends ([`SseReader::end`]). It hands out what the pieces
//! complete either line by line ([`SseReader::next_line`]: each line's
//! bytes as received, for a relay that passes them on, and what the line
//! says) or event by event ([`SseReader::next_event`]: the `data:` lines
//! up to a blank line, joined, with the `event:` name). Its [`Options`]
//! are what its callers differ in: whether every line's text is redacted
//! as it is read ([`cb_base::secret::redact`]), and whether a body that
//! ends inside a line is an error or its last line.
//!
//! Its callers: the driver's client keeps every `data:` line with its
//! arrival time ([`TraceReader`], then [`assemble`] reads the trace); a
//! real provider's stream relayed live and the reference proxies' relay
//! read a chat-completion stream a `data:` line at a time (each is one
//! chunk, read by [`crate::openai::chunk`]); the dialects' stream
//! translators read named events.
//!
//! Where the readers this one replaced disagreed, it takes the reading of
//! the SSE specification, which is also the stricter one:
//!
//! - a line ends at `\n`, `\r\n` or a lone `\r` (a lone `\r` was part of
//!   the line for three of them). A `\r` last in a piece waits for the next
//!   byte, so a `\r\n` split across two pieces is one line end and the
//!   bytes of a line are always whole;
//! - a field is the text before the line's first colon (all of it when
//!   there is none), and its value loses one leading space: a bare `data`
//!   line is an empty `data:` line, not a line to skip.

mod assemble;
mod client;
mod trace;

pub use assemble::{
    assemble, assemble_finished, stream_text, Assembled, ChunkFold, Step, MAX_MODELS,
};
pub use client::ClientProfile;
pub use trace::{read_all, StreamTrace, TimedEvent, TraceReader};

use cb_base::secret::redact;
use std::borrow::Cow;
use std::ops::Range;

/// How a reader treats what it reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Redact every line's text (a `data:` value, an `event:` name, a stray
    /// line) as it is read, so a secret a peer echoes is gone before a
    /// caller keeps or quotes it. The bytes of a line are not redacted.
    pub redact: bool,
    /// A body that ends inside a line is [`SseError::CutLine`] (a provider
    /// ends its last line, and a truncated one is what a broken connection
    /// leaves), instead of counting as the last line.
    pub strict_end: bool,
}

/// What one line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line<'a> {
    /// A `data:` field: its value.
    Data(Cow<'a, str>),
    /// An `event:` field: the event's name.
    Event(Cow<'a, str>),
    /// An empty line: the end of an event.
    Blank,
    /// A field of the format that carries no data (`id:`, `retry:`), a `:`
    /// comment, or a line of spaces.
    Other,
    /// A line that is not event-stream syntax: a field the format does not
    /// have, such as junk before the stream or a stray HTML error page.
    Stray(Cow<'a, str>),
}

impl Line<'_> {
    /// The line with its text owned, to keep past the next read.
    pub fn into_owned(self) -> Line<'static> {
        let own = |text: Cow<'_, str>| Cow::Owned(text.into_owned());
        match self {
            Line::Data(value) => Line::Data(own(value)),
            Line::Event(name) => Line::Event(own(name)),
            Line::Blank => Line::Blank,
            Line::Other => Line::Other,
            Line::Stray(text) => Line::Stray(own(text)),
        }
    }
}

/// Why bytes are not lines of an event stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// A line is not UTF-8.
    NotUtf8,
    /// The body ended inside a line (with [`Options::strict_end`]): the
    /// line's text, lossily decoded.
    CutLine(String),
}

/// A line as it came: its bytes (line end included) and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received<'a> {
    /// The bytes of the line, its line end included: what a relay passes on.
    pub raw: &'a [u8],
    /// What the line says, or why it is not a line of an event stream.
    pub line: Result<Line<'a>, SseError>,
}

/// One event: its `event:` name, if any, and its `data:` lines joined by
/// newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field.
    pub name: Option<String>,
    /// The `data:` field(s).
    pub data: String,
}

/// Incremental reader of a server-sent-events body; see the module doc.
/// Linear in the bytes fed: only new bytes are searched for line ends, and
/// the lines read are dropped when the next piece comes.
#[derive(Debug, Default)]
pub struct SseReader {
    options: Options,
    /// Bytes fed and not dropped yet.
    buf: Vec<u8>,
    /// Where the first line not handed out starts.
    start: usize,
    /// Where the search for the next line end resumes.
    scan: usize,
    /// The body ended: no more bytes come.
    ended: bool,
    /// The `event:` name of the event being read.
    name: Option<String>,
    /// The `data:` of the event being read.
    data: Option<String>,
}

impl SseReader {
    /// A reader that has seen nothing.
    pub fn new(options: Options) -> Self {
        SseReader {
            options,
            ..SseReader::default()
        }
    }

    /// Takes the next piece of the body.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scan -= self.start;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The body ended: what is left is the last line (or, with
    /// [`Options::strict_end`], a cut one), and the event still open is
    /// complete.
    pub fn end(&mut self) {
        self.ended = true;
    }

    /// Bytes of a line not complete yet: a reader that must not hold a
    /// line without bound checks this before feeding more.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next complete line, or `None` until more bytes come (or, after
    /// [`SseReader::end`], when all is read).
    pub fn next_line(&mut self) -> Option<Received<'_>> {
        let (text, raw) = self.cut()?;
        let ended_inside = raw.end == text.end && self.ended;
        let raw_bytes = &self.buf[raw];
        let text_bytes = &self.buf[text];
        let line = if ended_inside && self.options.strict_end {
            Err(SseError::CutLine(
                String::from_utf8_lossy(text_bytes).into_owned(),
            ))
        } else {
            std::str::from_utf8(text_bytes)
                .map_err(|_| SseError::NotUtf8)
                .map(|text| parse(text, self.options.redact))
        };
        Some(Received {
            raw: raw_bytes,
            line,
        })
    }

    /// The next complete event, or `None` until more bytes come (or, after
    /// [`SseReader::end`], when all is read: the event still open then
    /// counts, with or without its blank line).
    ///
    /// # Errors
    /// A line that is not UTF-8, or (strict) a body that ended inside one.
    pub fn next_event(&mut self) -> Option<Result<Event, SseError>> {
        loop {
            let line = match self
                .next_line()
                .map(|received| received.line.map(Owned::from))
            {
                None if self.ended => return self.dispatch().map(Ok),
                None => return None,
                Some(line) => line,
            };
            match line {
                Err(e) => return Some(Err(e)),
                Ok(Owned::Data(value)) => match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(&value);
                    }
                    None => self.data = Some(value),
                },
                Ok(Owned::Event(name)) => self.name = Some(name),
                Ok(Owned::Blank) => {
                    if let Some(event) = self.dispatch() {
                        return Some(Ok(event));
                    }
                }
                Ok(Owned::Skip) => {}
            }
        }
    }

    /// The open event, if it has data; its name goes with it either way.
    fn dispatch(&mut self) -> Option<Event> {
        let name = self.name.take();
        self.data.take().map(|data| Event { name, data })
    }

    /// Hands out the next line: the range of its text and the range of its
    /// bytes with the line end.
    fn cut(&mut self) -> Option<(Range<usize>, Range<usize>)> {
        let from = self.start;
        let len = self.buf.len();
        let found = memchr::memchr2(b'\n', b'\r', &self.buf[self.scan..]).map(|o| self.scan + o);
        let Some(end) = found else {
            self.scan = len;
            if self.ended && from < len {
                self.start = len;
                return Some((from..len, from..len));
            }
            return None;
        };
        let after = match self.buf.get(end + 1) {
            _ if self.buf[end] == b'\n' => end + 1,
            Some(b'\n') => end + 2,
            Some(_) => end + 1,
            // A `\r` last in what came: its `\n` may be in the next piece.
            None if !self.ended => {
                self.scan = end;
                return None;
            }
            None => end + 1,
        };
        self.start = after;
        self.scan = after;
        Some((from..end, from..after))
    }
}

/// What a line, by its owned parts, does to the event being read.
enum Owned {
    Data(String),
    Event(String),
    Blank,
    Skip,
}

impl From<Line<'_>> for Owned {
    fn from(line: Line<'_>) -> Self {
        match line {
            Line::Data(value) => Owned::Data(value.into_owned()),
            Line::Event(name) => Owned::Event(name.into_owned()),
            Line::Blank => Owned::Blank,
            Line::Other | Line::Stray(_) => Owned::Skip,
        }
    }
}

/// `text`, redacted when `redacting`.
fn kept(text: &str, redacting: bool) -> Cow<'_, str> {
    if redacting {
        redact(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// A line's text (its line end gone) read as the format says.
fn parse(text: &str, redacting: bool) -> Line<'_> {
    if text.is_empty() {
        return Line::Blank;
    }
    if text.starts_with(':') || text.trim().is_empty() {
        return Line::Other;
    }
    let (field, value) = match text.split_once(':') {
        Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
        None => (text, ""),
    };
    match field {
        "data" => Line::Data(kept(value, redacting)),
        "event" => Line::Event(kept(value, redacting)),
        "id" | "retry" => Line::Other,
        _ => Line::Stray(kept(text, redacting)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(options: Options, pieces: &[&[u8]]) -> Result<Vec<Event>, SseError> {
        let mut reader = SseReader::new(options);
        let mut events = Vec::new();
        for p in pieces {
            reader.feed(p);
            while let Some(e) = reader.next_event() {
                events.push(e?);
            }
        }
        reader.end();
        while let Some(e) = reader.next_event() {
            events.push(e?);
        }
        Ok(events)
    }

    fn strict(pieces: &[&[u8]]) -> Result<Vec<Event>, SseError> {
        events(
            Options {
                strict_end: true,
                ..Options::default()
            },
            pieces,
        )
    }

    fn event(name: Option<&str>, data: &str) -> Event {
        Event {
            name: name.map(str::to_string),
            data: data.to_string(),
        }
    }

    /// Every line's bytes, line ends included, as a relay sees them.
    fn raw_lines(pieces: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut reader = SseReader::default();
        let mut lines = Vec::new();
        for p in pieces {
            reader.feed(p);
            while let Some(line) = reader.next_line() {
                lines.push(line.raw.to_vec());
            }
        }
        reader.end();
        while let Some(line) = reader.next_line() {
            lines.push(line.raw.to_vec());
        }
        lines
    }

    #[test]
    fn reads_events_whatever_the_piece_boundaries() {
        let body = "event: a\ndata: {\"x\": \"é\"}\n\n: comment\r\ndata:1\r\ndata: 2\r\n\r\nevent: only-name\n\ndata: z\r\r";
        let expected = vec![
            event(Some("a"), "{\"x\": \"é\"}"),
            event(None, "1\n2"),
            event(None, "z"),
        ];
        let bytes = body.as_bytes();
        assert_eq!(strict(&[bytes]).unwrap(), expected);
        // Every split point, including inside the two-byte é and CRLF pairs.
        for cut in 0..bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(strict(&[a, b]).unwrap(), expected, "cut at {cut}");
            assert_eq!(raw_lines(&[a, b]), raw_lines(&[bytes]), "cut at {cut}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(strict(&singles).unwrap(), expected);
        assert_eq!(raw_lines(&singles).concat(), bytes);
    }

    #[test]
    fn an_event_without_its_blank_line_is_still_read_but_a_cut_line_is_not() {
        assert_eq!(
            strict(&[b"data: last\n"]).unwrap(),
            vec![event(None, "last")]
        );
        assert_eq!(
            strict(&[b"data: {\"partial"]),
            Err(SseError::CutLine("data: {\"partial".into()))
        );
        assert_eq!(strict(&[b"data: \xff\n\n"]), Err(SseError::NotUtf8));
        assert!(strict(&[b""]).unwrap().is_empty());
        // Without strict_end the cut line is the last line.
        assert_eq!(
            events(Options::default(), &[b"data: {\"partial"]).unwrap(),
            vec![event(None, "{\"partial")]
        );
    }

    /// A lone `\r` ends a line, as the specification says: the readers of
    /// chat-completion streams used to keep it inside the line.
    #[test]
    fn a_lone_carriage_return_ends_a_line() {
        let lines = raw_lines(&[b"data: a\rdata: b\r\n\r\n"]);
        assert_eq!(
            lines,
            [
                b"data: a\r".to_vec(),
                b"data: b\r\n".to_vec(),
                b"\r\n".to_vec()
            ]
        );
        assert_eq!(
            strict(&[b"data: a\rdata: b\r\n\r\n"]).unwrap(),
            vec![event(None, "a\nb")]
        );
        // A `\r` last in a piece waits for the next byte.
        let mut reader = SseReader::default();
        reader.feed(b"data: a\r");
        assert!(reader.next_line().is_none());
        assert_eq!(reader.pending(), 8);
        reader.feed(b"\ndata: b");
        assert_eq!(reader.next_line().unwrap().raw, b"data: a\r\n");
        assert!(reader.next_line().is_none());
        reader.end();
        assert_eq!(reader.next_line().unwrap().raw, b"data: b");
        assert!(reader.next_line().is_none());
    }

    #[test]
    fn lines_say_what_they_are() {
        let mut reader = SseReader::default();
        reader.feed(b"data:x\ndata\nevent: e\nid: 7\nretry: 10\n: hi\n   \n\n<html>\nfoo: bar\n");
        let mut said = Vec::new();
        while let Some(line) = reader.next_line() {
            said.push(line.line.unwrap().into_owned());
        }
        let stray = |s: &'static str| Line::Stray(Cow::Borrowed(s));
        assert_eq!(
            said,
            [
                Line::Data("x".into()),
                Line::Data("".into()),
                Line::Event("e".into()),
                Line::Other,
                Line::Other,
                Line::Other,
                Line::Other,
                Line::Blank,
                stray("<html>"),
                stray("foo: bar"),
            ]
        );
    }

    #[test]
    fn echoed_secrets_are_redacted_when_asked() {
        let _s = cb_base::secret::Secret::new("sk-reader-planted-12");
        let body = b"data: key sk-reader-planted-12\njunk sk-reader-planted-12\n";
        let mut reader = SseReader::new(Options {
            redact: true,
            ..Options::default()
        });
        reader.feed(body);
        let first = reader.next_line().unwrap();
        assert_eq!(first.line, Ok(Line::Data("key [redacted]".into())));
        assert_eq!(
            first.raw, b"data: key sk-reader-planted-12\n",
            "bytes are as sent"
        );
        assert_eq!(
            reader.next_line().unwrap().line,
            Ok(Line::Stray("junk [redacted]".into()))
        );
        let mut plain = SseReader::default();
        plain.feed(body);
        assert_eq!(
            plain.next_line().unwrap().line,
            Ok(Line::Data("key sk-reader-planted-12".into()))
        );
    }
}
