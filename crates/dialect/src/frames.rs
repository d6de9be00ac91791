//! An answer and its errors written in the dialect a request came in: the
//! one entry point a simulated upstream calls, whichever dialect it
//! speaks. OpenAI's frames are the one OpenAI writer's
//! ([`cb_wire::openai::FrameWriter`]); Anthropic's and Gemini's are their
//! encoders' ([`anthropic::StreamEncoder`], [`gemini::StreamEncoder`]).
//!
//! [`Framer`] writes one answer: streamed frame by frame as its pieces come
//! (a relayed answer) or piece by piece from a whole text (an answer paced
//! by its sender), the same frames either way, and whole as one body
//! ([`Framer::whole`]). [`error_body`] is the dialect's error body.

use crate::{anthropic, gemini, Dialect, FinishReason, Reply};
use cb_wire::openai::frame::MALFORMED_EVENT;
use cb_wire::openai::{Envelope, FrameWriter, Message, Usage};
use serde_json::Value;

/// The finish reason of an OpenAI `finish_reason` string (any other string
/// is a stop).
pub fn finish_of(reason: &str) -> FinishReason {
    match reason {
        "length" => FinishReason::Length,
        "tool_calls" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// An event that is not JSON, in `dialect`'s framing (a fault).
pub fn malformed_event(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Openai => MALFORMED_EVENT,
        Dialect::Anthropic => {
            "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"delta\": {\"text\": \"\n\n"
        }
        Dialect::Gemini => "data: {\"candidates\": [{\"content\": \r\n\r\n",
    }
}

/// An error with HTTP `status` and `message` as `dialect`'s error body;
/// `kind` and `code` are OpenAI's `type` and `code` (the other dialects
/// derive theirs from the status).
pub fn error_body(
    dialect: Dialect,
    status: u16,
    message: &str,
    kind: &str,
    code: Option<&str>,
) -> Value {
    match dialect {
        Dialect::Openai => cb_wire::openai::error_body(message, kind, code),
        Dialect::Anthropic => {
            anthropic::error_body(anthropic::ErrorKind::for_status(status), message)
        }
        Dialect::Gemini => gemini::error_body(status, message),
    }
}

/// A whole answer, before it is put in a dialect's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Whole<'a> {
    /// The text.
    pub text: &'a str,
    /// Why it ended, in OpenAI's words (written as is in OpenAI's shape).
    pub finish_reason: &'a str,
    /// Token counts.
    pub usage: Usage,
    /// Reasoning text, in the dialects that carry it (OpenAI's
    /// `reasoning_content`).
    pub reasoning: Option<&'a str>,
}

/// Writes one answer in its dialect; see the module doc.
#[derive(Debug, Clone)]
pub enum Framer {
    /// OpenAI chat-completion chunks.
    Openai(FrameWriter),
    /// Anthropic Messages events.
    Anthropic(anthropic::StreamEncoder),
    /// Gemini `generateContent` chunks (server-sent events, or one JSON
    /// array).
    Gemini(gemini::StreamEncoder),
}

impl Framer {
    /// A framer for the answer `envelope` names, in `dialect`, whose
    /// prompt counted `prompt_tokens`; `include_usage` as the client's
    /// `stream_options` asked (OpenAI only).
    pub fn new(
        dialect: Dialect,
        envelope: Envelope<'_>,
        prompt_tokens: u32,
        include_usage: bool,
    ) -> Self {
        let Envelope { id, model, .. } = envelope;
        match dialect {
            Dialect::Openai => {
                Framer::Openai(FrameWriter::new(envelope).include_usage(include_usage))
            }
            Dialect::Anthropic => {
                Framer::Anthropic(anthropic::StreamEncoder::new(id, model, prompt_tokens))
            }
            Dialect::Gemini => Framer::Gemini(gemini::StreamEncoder::new(id, model, prompt_tokens)),
        }
    }

    /// The opening frame: OpenAI's role chunk, Anthropic's
    /// `message_start`, Gemini's empty text chunk.
    pub fn open(&mut self) -> String {
        match self {
            Framer::Openai(w) => w.role(),
            Framer::Anthropic(e) => e.open(),
            Framer::Gemini(e) => gemini::sse_frame(&e.text("")),
        }
    }

    /// A frame carrying `piece` of the text.
    pub fn text(&mut self, piece: &str) -> String {
        match self {
            Framer::Openai(w) => w.text(piece),
            Framer::Anthropic(e) => e.text(piece),
            Framer::Gemini(e) => gemini::sse_frame(&e.text(piece)),
        }
    }

    /// The closing frames; the last one ends the stream (OpenAI's
    /// `data: [DONE]`, Anthropic's `message_stop`, Gemini's finishing
    /// chunk), which a "no end of stream" fault drops.
    pub fn close(&mut self, finish_reason: &str, usage: Usage) -> Vec<String> {
        match self {
            Framer::Openai(w) => w.close(finish_reason, usage),
            Framer::Anthropic(e) => {
                let close = e.close(finish_of(finish_reason), usage.completion_tokens);
                match close.find("event: message_stop") {
                    Some(at) => vec![close[..at].to_string(), close[at..].to_string()],
                    None => vec![close],
                }
            }
            Framer::Gemini(e) => vec![gemini::sse_frame(&e.close(finish_of(finish_reason), usage))],
        }
    }

    /// The reasoning frame carrying `text`, in the dialects that have one
    /// (OpenAI's `reasoning_content`).
    pub fn reasoning(&self, text: &str) -> Option<String> {
        match self {
            Framer::Openai(w) => Some(w.reasoning(text)),
            Framer::Anthropic(_) | Framer::Gemini(_) => None,
        }
    }

    /// An error event inside the stream, in the dialect's framing: an
    /// overloaded provider giving up on an answer it had started
    /// (OpenAI's `data: {"error": ...}`, Anthropic's `event: error` with
    /// `overloaded_error`, Gemini's error object with `UNAVAILABLE`).
    pub fn error(&self, message: &str) -> String {
        match self {
            Framer::Openai(_) => {
                cb_wire::openai::frame::error_event(message, "overloaded_error", None)
            }
            Framer::Anthropic(_) => format!(
                "event: error\ndata: {}\n\n",
                anthropic::error_body(anthropic::ErrorKind::OverloadedError, message)
            ),
            Framer::Gemini(_) => gemini::sse_frame(&gemini::error_body(503, message)),
        }
    }

    /// An event that is not JSON, in the dialect's framing.
    pub fn malformed(&self) -> &'static str {
        malformed_event(match self {
            Framer::Openai(_) => Dialect::Openai,
            Framer::Anthropic(_) => Dialect::Anthropic,
            Framer::Gemini(_) => Dialect::Gemini,
        })
    }

    /// `answer` as the dialect's whole (non-streamed) body: OpenAI's
    /// `chat.completion`, Anthropic's `message`, Gemini's
    /// `GenerateContentResponse`, or with `array` (Gemini's
    /// `streamGenerateContent` without `alt=sse`) the JSON array of its
    /// chunks.
    pub fn whole(&self, answer: Whole<'_>, array: bool) -> String {
        let reply = Reply {
            text: answer.text.to_string(),
            tool_calls: Vec::new(),
            finish: finish_of(answer.finish_reason),
            usage: answer.usage,
        };
        match self {
            Framer::Openai(w) => {
                let message = Message {
                    reasoning: answer.reasoning,
                    ..Message::text(answer.text)
                };
                w.completion(message, answer.finish_reason, answer.usage)
                    .to_string()
            }
            Framer::Anthropic(e) => e.message_body(&reply).to_string(),
            Framer::Gemini(e) if array => {
                gemini::json_array(&[e.text(answer.text), e.close(reply.finish, reply.usage)])
            }
            Framer::Gemini(e) => e.generate_body(&reply).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bridge, ChunkOptions};
    use cb_wire::sse::stream_text;

    const TEXT: &str = "Your sister is called Oriane.";

    const ENVELOPE: Envelope<'static> = Envelope {
        id: "msg_1",
        model: "sim",
        created: 7,
    };

    fn whole(reasoning: Option<&'static str>) -> Whole<'static> {
        Whole {
            text: TEXT,
            finish_reason: "stop",
            usage: Usage::new(10, 6),
            reasoning,
        }
    }

    /// The frames of `TEXT`, a word at a time, as a sender writes them.
    fn streamed(dialect: Dialect, include_usage: bool) -> Vec<String> {
        let mut f = Framer::new(dialect, ENVELOPE, 10, include_usage);
        let mut frames = vec![f.open()];
        frames.extend(TEXT.split_inclusive(' ').map(|piece| f.text(piece)));
        frames.extend(f.close("stop", Usage::new(10, 6)));
        frames
    }

    /// What a client gets from `frames`: read as OpenAI's, or through the
    /// proxy's translator for the dialect.
    fn read_back(dialect: Dialect, frames: &str) -> Result<String, String> {
        let openai = match bridge::stream_translator(dialect, ChunkOptions::default()) {
            None => frames.to_string(),
            Some(mut t) => {
                let mut out = t.feed(frames.as_bytes()).map_err(|e| e.to_string())?;
                out.push_str(&t.finish().map_err(|e| e.to_string())?);
                out
            }
        };
        stream_text(openai.as_bytes())
    }

    #[test]
    fn errors_take_the_dialect_shape() {
        let openai = error_body(Dialect::Openai, 503, "down", "server_error", None);
        assert_eq!(
            openai,
            cb_wire::openai::error_body("down", "server_error", None)
        );
        let a = error_body(Dialect::Anthropic, 503, "down", "server_error", None);
        assert_eq!(a["type"], "error");
        assert_eq!(a["error"]["type"], "api_error");
        let g = error_body(Dialect::Gemini, 503, "down", "server_error", None);
        assert_eq!(g["error"]["status"], "UNAVAILABLE");
        assert_eq!(g["error"]["code"], 503);
    }

    /// Every dialect's frames read back as the text they carry, and each
    /// stream's last frame is its end: without it the answer is cut.
    #[test]
    fn streams_read_back_and_end_with_their_last_frame() {
        for dialect in Dialect::ALL {
            let frames = streamed(dialect, false);
            assert_eq!(
                read_back(dialect, &frames.concat()).unwrap(),
                TEXT,
                "{dialect}"
            );
            let cut = &frames[..frames.len() - 1];
            assert!(read_back(dialect, &cut.concat()).is_err(), "{dialect}");
        }
        let last = |d| streamed(d, false).pop().unwrap();
        assert_eq!(last(Dialect::Openai), cb_wire::openai::frame::DONE);
        assert!(last(Dialect::Anthropic).starts_with("event: message_stop"));
        assert!(last(Dialect::Gemini).contains("finishReason"));
        // The usage chunk, when the client asks, goes before the end.
        let with_usage = streamed(Dialect::Openai, true);
        assert_eq!(with_usage.len(), streamed(Dialect::Openai, false).len() + 1);
        assert!(with_usage[with_usage.len() - 2].contains("\"total_tokens\":16"));
    }

    #[test]
    fn whole_answers_translate_back() {
        for dialect in Dialect::ALL {
            let f = Framer::new(dialect, ENVELOPE, 10, false);
            let body = f.whole(whole(None), false);
            let completion =
                match bridge::completion(dialect, body.as_bytes(), &ChunkOptions::default()) {
                    None => serde_json::from_str(&body).unwrap(),
                    Some(c) => c.unwrap(),
                };
            assert_eq!(
                cb_wire::openai::response_text(&completion).as_deref(),
                Some(TEXT),
                "{dialect}"
            );
        }
        let openai = Framer::new(Dialect::Openai, ENVELOPE, 10, false);
        let body: Value = serde_json::from_str(&openai.whole(whole(Some("hmm")), false)).unwrap();
        assert_eq!(body["choices"][0]["message"]["reasoning_content"], "hmm");
        let gemini = Framer::new(Dialect::Gemini, ENVELOPE, 10, false);
        let array: Value = serde_json::from_str(&gemini.whole(whole(None), true)).unwrap();
        assert_eq!(array.as_array().map(Vec::len), Some(2));
        assert_eq!(array[1]["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn reasoning_and_malformed_events_take_the_dialect() {
        for dialect in Dialect::ALL {
            let f = Framer::new(dialect, ENVELOPE, 1, false);
            assert_eq!(f.malformed(), malformed_event(dialect));
            let data = f
                .malformed()
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            assert!(serde_json::from_str::<Value>(data).is_err(), "{dialect}");
            assert_eq!(
                f.reasoning("thinking").is_some(),
                dialect == Dialect::Openai
            );
        }
        let reasoning = Framer::new(Dialect::Openai, ENVELOPE, 1, false)
            .reasoning("thinking")
            .unwrap();
        assert!(reasoning.contains("\"reasoning_content\":\"thinking\""));
    }

    #[test]
    fn openai_finish_reasons_map_onto_the_neutral_ones() {
        assert_eq!(finish_of("length"), FinishReason::Length);
        assert_eq!(finish_of("tool_calls"), FinishReason::ToolCalls);
        assert_eq!(finish_of("content_filter"), FinishReason::ContentFilter);
        assert_eq!(finish_of("eos"), FinishReason::Stop);
    }
}
