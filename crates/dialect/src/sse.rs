//! An incremental server-sent-events reader for the stream translators.
//!
//! Upstream bytes arrive in pieces that split lines, CRLF pairs and UTF-8
//! characters anywhere, so the reader buffers bytes, cuts complete lines
//! (`\n`, `\r\n` or `\r`), and hands out an event at each blank line, as the
//! SSE specification reads a stream. What it does not do is forgive a cut:
//! at the end of the body, a line without its line end is reported, because
//! a provider always ends its last event properly and a truncated line is
//! what a broken connection leaves.

/// One event: its `event:` name, if any, and its `data:` lines joined by
/// newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field.
    pub name: Option<String>,
    /// The `data:` field(s).
    pub data: String,
}

/// Why the byte stream is not a stream of events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseError {
    /// A line is not UTF-8.
    NotUtf8,
    /// The body ended inside a line.
    CutLine(String),
}

/// The reader's state between pieces.
#[derive(Debug, Default)]
pub(crate) struct SseReader {
    /// Bytes of the line being received.
    pending: Vec<u8>,
    /// The last piece ended with `\r`; a `\n` first in the next piece
    /// belongs to it.
    after_cr: bool,
    name: Option<String>,
    data: Option<String>,
}

impl SseReader {
    /// Reads `bytes`; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', rest) {
            self.pending.extend_from_slice(&rest[..end]);
            let is_cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if is_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.pending);
            if let Some(event) = self.line(&line)? {
                events.push(event);
            }
        }
        self.pending.extend_from_slice(rest);
        Ok(events)
    }

    /// The body ended: the event still open (its lines complete but no
    /// blank line after them), if any.
    ///
    /// # Errors
    /// [`SseError::CutLine`] when the body ended inside a line.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            return Err(SseError::CutLine(line));
        }
        Ok(self.dispatch())
    }

    fn line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let name = self.name.take();
        self.data.take().map(|data| SseEvent { name, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(pieces: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
        let mut reader = SseReader::default();
        let mut events = Vec::new();
        for p in pieces {
            events.extend(reader.feed(p)?);
        }
        events.extend(reader.finish()?);
        Ok(events)
    }

    fn event(name: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            name: name.map(str::to_string),
            data: data.to_string(),
        }
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
        assert_eq!(read_all(&[bytes]).unwrap(), expected);
        // Every split point, including inside the two-byte é and CRLF pairs.
        for cut in 0..bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(read_all(&[a, b]).unwrap(), expected, "cut at {cut}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(read_all(&singles).unwrap(), expected);
    }

    #[test]
    fn an_event_without_its_blank_line_is_still_read_but_a_cut_line_is_not() {
        assert_eq!(
            read_all(&[b"data: last\n"]).unwrap(),
            vec![event(None, "last")]
        );
        assert_eq!(
            read_all(&[b"data: {\"partial"]),
            Err(SseError::CutLine("data: {\"partial".into()))
        );
        assert_eq!(read_all(&[b"data: \xff\n\n"]), Err(SseError::NotUtf8));
        assert!(read_all(&[b""]).unwrap().is_empty());
    }
}
