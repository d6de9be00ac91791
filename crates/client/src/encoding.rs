//! Bodies a system compressed. The official SDKs' HTTP stacks (httpx for
//! Python, undici for Node) decode a body sent with `Content-Encoding:
//! gzip` or `deflate` whether or not they asked for it, so the client reads
//! the same bytes the same way: a compressed answer is an answer, not a
//! malformed body. Another encoding (`br`, `zstd`) is left as it came, as
//! an SDK without the matching decoder leaves it (and the body then fails
//! to parse, with its reason).
//!
//! Decoding is bounded like the body: the decoded bytes count against the
//! same `--max-response-bytes`, checked as they are produced, so a small
//! compressed body that inflates to gigabytes stops at the cap.

use std::io::Write;

/// What a `Content-Encoding` header asks the reader to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// `gzip` (or `x-gzip`).
    Gzip,
    /// `deflate`: zlib-wrapped, as HTTP defines it.
    Deflate,
}

impl Encoding {
    /// The encoding a `Content-Encoding` value names, if it is one this
    /// client decodes (`identity`, absent or unknown: none).
    pub(crate) fn of(header: Option<&str>) -> Option<Encoding> {
        match header?.trim().to_ascii_lowercase().as_str() {
            "gzip" | "x-gzip" => Some(Encoding::Gzip),
            "deflate" => Some(Encoding::Deflate),
            _ => None,
        }
    }
}

/// Where decoded bytes go: kept until taken, and refused past the cap.
pub(crate) struct Capped {
    out: Vec<u8>,
    total: u64,
    cap: u64,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.total = self.total.saturating_add(buf.len() as u64);
        if self.total > self.cap {
            return Err(std::io::Error::other(TOO_LARGE));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capped {
    fn new(cap: u64) -> Self {
        Capped {
            out: Vec::new(),
            total: 0,
            cap,
        }
    }
}

/// The marker of a decoded body past the cap.
const TOO_LARGE: &str = "decoded body over the cap";

/// Why decoding stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The decoded body grew past the cap.
    TooLarge,
    /// The compressed bytes are not valid (the reason, naming the encoding).
    Invalid(String),
}

/// A streaming decoder: compressed chunks in, decoded bytes out.
pub(crate) struct Decoder {
    state: State,
    /// Whether any compressed byte came (an empty body decodes to nothing,
    /// as the SDKs read it, rather than failing as a cut stream).
    fed: bool,
}

enum State {
    Gzip(flate2::write::GzDecoder<Capped>),
    /// `deflate` before its first two bytes tell a zlib header from raw
    /// deflate data: the bytes so far, and the cap.
    DeflateUndecided(Vec<u8>, u64),
    Zlib(flate2::write::ZlibDecoder<Capped>),
    /// `deflate` without the zlib wrapper, which httpx and undici also
    /// accept.
    RawDeflate(flate2::write::DeflateDecoder<Capped>),
}

/// Whether two bytes open a zlib stream (RFC 1950: method 8, a window of
/// at most 32 KiB, and a header that is a multiple of 31).
fn zlib_header(b0: u8, b1: u8) -> bool {
    b0 & 0x0f == 8 && b0 >> 4 <= 7 && (u16::from(b0) * 256 + u16::from(b1)) % 31 == 0
}

/// Writes `bytes` into `w`, stopping quietly where the compressed stream
/// ended (what follows its end is ignored, as zlib's readers ignore it),
/// then flushes so that what was decoded is handed on now rather than
/// at the next chunk: a stream's first token is timed when it arrives.
fn write_through(w: &mut impl Write, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match w.write(bytes)? {
            0 => break,
            n => bytes = &bytes[n..],
        }
    }
    w.flush()
}

impl Decoder {
    /// A decoder of `encoding` whose output stops at `cap` bytes.
    pub(crate) fn new(encoding: Encoding, cap: u64) -> Self {
        let state = match encoding {
            Encoding::Gzip => State::Gzip(flate2::write::GzDecoder::new(Capped::new(cap))),
            Encoding::Deflate => State::DeflateUndecided(Vec::new(), cap),
        };
        Decoder { state, fed: false }
    }

    fn name(&self) -> &'static str {
        match self.state {
            State::Gzip(_) => "gzip",
            _ => "deflate",
        }
    }

    fn sink(&mut self) -> Option<&mut Capped> {
        match &mut self.state {
            State::Gzip(d) => Some(d.get_mut()),
            State::Zlib(d) => Some(d.get_mut()),
            State::RawDeflate(d) => Some(d.get_mut()),
            State::DeflateUndecided(..) => None,
        }
    }

    fn taken(&mut self) -> Vec<u8> {
        self.sink()
            .map(|s| std::mem::take(&mut s.out))
            .unwrap_or_default()
    }

    fn error(&self, e: &std::io::Error) -> DecodeError {
        if e.to_string() == TOO_LARGE {
            DecodeError::TooLarge
        } else {
            DecodeError::Invalid(format!("the {} body does not decode: {e}", self.name()))
        }
    }

    /// Decodes `chunk` and returns what it decoded to so far.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<u8>, DecodeError> {
        if chunk.is_empty() {
            return Ok(Vec::new());
        }
        self.fed = true;
        if let State::DeflateUndecided(head, cap) = &mut self.state {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return Ok(Vec::new());
            }
            let (head, cap) = (std::mem::take(head), *cap);
            self.state = if zlib_header(head[0], head[1]) {
                State::Zlib(flate2::write::ZlibDecoder::new(Capped::new(cap)))
            } else {
                State::RawDeflate(flate2::write::DeflateDecoder::new(Capped::new(cap)))
            };
            return self.feed(&head);
        }
        let written = match &mut self.state {
            State::Gzip(d) => write_through(d, chunk),
            State::Zlib(d) => write_through(d, chunk),
            State::RawDeflate(d) => write_through(d, chunk),
            State::DeflateUndecided(..) => Ok(()),
        };
        written.map_err(|e| self.error(&e))?;
        Ok(self.taken())
    }

    /// Ends the body: what is left to decode. An empty body is empty.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>, DecodeError> {
        if !self.fed {
            return Ok(Vec::new());
        }
        let done = match &mut self.state {
            State::Gzip(d) => d.try_finish(),
            State::Zlib(d) => d.try_finish(),
            State::RawDeflate(d) => d.try_finish(),
            State::DeflateUndecided(..) => Err(std::io::Error::other(
                "the body ended inside its first two bytes",
            )),
        };
        done.map_err(|e| self.error(&e))?;
        Ok(self.taken())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn deflate(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// Fed in pieces of every size, a body decodes to what was compressed.
    fn decode_in_pieces(encoding: Encoding, body: &[u8], piece: usize) -> Vec<u8> {
        let mut d = Decoder::new(encoding, 1 << 20);
        let mut out = Vec::new();
        for chunk in body.chunks(piece) {
            out.extend(d.feed(chunk).unwrap());
        }
        out.extend(d.finish().unwrap());
        out
    }

    #[test]
    fn gzip_and_deflate_decode_whatever_the_chunking() {
        let text =
            b"data: {\"choices\":[{\"delta\":{\"content\":\"Oriane\"}}]}\n\ndata: [DONE]\n\n";
        for piece in [1, 3, 7, 64, 4096] {
            assert_eq!(decode_in_pieces(Encoding::Gzip, &gzip(text), piece), text);
            assert_eq!(
                decode_in_pieces(Encoding::Deflate, &deflate(text), piece),
                text
            );
        }
    }

    #[test]
    fn only_gzip_and_deflate_are_decoded() {
        assert_eq!(Encoding::of(Some(" GZIP ")), Some(Encoding::Gzip));
        assert_eq!(Encoding::of(Some("x-gzip")), Some(Encoding::Gzip));
        assert_eq!(Encoding::of(Some("deflate")), Some(Encoding::Deflate));
        for other in [None, Some("identity"), Some("br"), Some("zstd"), Some("")] {
            assert_eq!(Encoding::of(other), None, "{other:?}");
        }
    }

    #[test]
    fn a_body_that_inflates_past_the_cap_stops_there() {
        let bomb = gzip(&vec![b'a'; 4 << 20]);
        assert!(bomb.len() < 64 * 1024, "{}", bomb.len());
        let mut d = Decoder::new(Encoding::Gzip, 1 << 20);
        let stopped = bomb.chunks(8192).map(|c| d.feed(c)).find_map(Result::err);
        assert_eq!(stopped, Some(DecodeError::TooLarge));
    }

    fn raw_deflate(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn deflate_without_its_zlib_wrapper_decodes_too() {
        let text = b"{\"choices\": []}";
        for piece in [1, 2, 5, 4096] {
            assert_eq!(
                decode_in_pieces(Encoding::Deflate, &raw_deflate(text), piece),
                text
            );
        }
    }

    /// Each chunk's decoded bytes come out with that chunk, not the next:
    /// a stream's first token is timed when its bytes arrive.
    #[test]
    fn what_a_flushed_chunk_holds_comes_out_with_it() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut d = Decoder::new(Encoding::Gzip, 1 << 20);
        let mut sent = 0;
        for event in [
            "data: {\"a\":1}\n\n",
            "data: {\"a\":2}\n\n",
            "data: [DONE]\n\n",
        ] {
            e.write_all(event.as_bytes()).unwrap();
            e.flush().unwrap();
            let so_far = e.get_ref().len();
            let out = d.feed(&e.get_ref()[sent..so_far]).unwrap();
            sent = so_far;
            assert_eq!(String::from_utf8(out).unwrap(), event);
        }
    }

    #[test]
    fn an_empty_body_and_bytes_after_the_end_are_read_as_zlib_reads_them() {
        assert_eq!(Decoder::new(Encoding::Gzip, 64).finish(), Ok(Vec::new()));
        assert_eq!(Decoder::new(Encoding::Deflate, 64).finish(), Ok(Vec::new()));
        let mut body = gzip(b"hello");
        body.extend_from_slice(b"trailing bytes");
        assert_eq!(decode_in_pieces(Encoding::Gzip, &body, 4096), b"hello");
    }

    #[test]
    fn bytes_that_are_not_gzip_are_named() {
        let mut d = Decoder::new(Encoding::Gzip, 1 << 20);
        let err = d
            .feed(b"{\"choices\": []}")
            .and_then(|_| d.finish())
            .unwrap_err();
        match err {
            DecodeError::Invalid(reason) => assert!(
                reason.starts_with("the gzip body does not decode"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
    }
}
