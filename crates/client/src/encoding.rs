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
pub(crate) enum Decoder {
    Gzip(flate2::write::GzDecoder<Capped>),
    Deflate(flate2::write::ZlibDecoder<Capped>),
}

impl Decoder {
    /// A decoder of `encoding` whose output stops at `cap` bytes.
    pub(crate) fn new(encoding: Encoding, cap: u64) -> Self {
        let sink = Capped {
            out: Vec::new(),
            total: 0,
            cap,
        };
        match encoding {
            Encoding::Gzip => Decoder::Gzip(flate2::write::GzDecoder::new(sink)),
            Encoding::Deflate => Decoder::Deflate(flate2::write::ZlibDecoder::new(sink)),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Decoder::Gzip(_) => "gzip",
            Decoder::Deflate(_) => "deflate",
        }
    }

    fn sink(&mut self) -> &mut Capped {
        match self {
            Decoder::Gzip(d) => d.get_mut(),
            Decoder::Deflate(d) => d.get_mut(),
        }
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
        let written = match self {
            Decoder::Gzip(d) => d.write_all(chunk),
            Decoder::Deflate(d) => d.write_all(chunk),
        };
        written.map_err(|e| self.error(&e))?;
        Ok(std::mem::take(&mut self.sink().out))
    }

    /// Ends the body: what is left to decode.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>, DecodeError> {
        let done = match &mut self {
            Decoder::Gzip(d) => d.try_finish(),
            Decoder::Deflate(d) => d.try_finish(),
        };
        done.map_err(|e| self.error(&e))?;
        Ok(std::mem::take(&mut self.sink().out))
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
