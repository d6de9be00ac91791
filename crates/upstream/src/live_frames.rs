//! The frames of a streamed answer written one at a time, for the live
//! relay ([`super::relay`]): the opening frame, a frame per piece of text,
//! the closing frames, in each dialect. They are the frames
//! [`super::render::stream_frames`] and
//! [`super::render_dialect::stream_frames_in`] lay out for a whole answer
//! (a test checks it byte for byte), so a gateway sees the same framing
//! whether an answer was relayed live or framed whole.

use super::render::{reasoning_frame, Envelope, MALFORMED_EVENT};
use super::render_dialect::{finish_of, malformed_event};
use cb_dialect::{anthropic, gemini, Dialect};
use cb_wire::openai::{chunk_body, usage_chunk_body, Usage};
use serde_json::{json, Value};

/// Writes one streamed answer frame by frame in its dialect.
#[derive(Debug, Clone)]
pub enum Framer {
    /// OpenAI chat-completion chunks.
    Openai {
        /// The completion id.
        id: String,
        /// The model id in every chunk.
        model: String,
        /// Unix seconds of creation.
        created: u64,
        /// Whether a usage chunk goes before `data: [DONE]`.
        include_usage: bool,
    },
    /// Anthropic Messages events.
    Anthropic(anthropic::StreamEncoder),
    /// Gemini `streamGenerateContent` chunks (server-sent events).
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
        match dialect {
            Dialect::Openai => Framer::Openai {
                id: envelope.id.to_string(),
                model: envelope.model.to_string(),
                created: envelope.created,
                include_usage,
            },
            Dialect::Anthropic => Framer::Anthropic(anthropic::StreamEncoder::new(
                envelope.id,
                envelope.model,
                prompt_tokens,
            )),
            Dialect::Gemini => Framer::Gemini(gemini::StreamEncoder::new(
                envelope.id,
                envelope.model,
                prompt_tokens,
            )),
        }
    }

    /// The opening frame: OpenAI's role chunk, Anthropic's
    /// `message_start`, Gemini's empty text chunk.
    pub fn open(&mut self) -> String {
        match self {
            Framer::Openai { .. } => self.openai(json!({"role": "assistant", "content": ""}), None),
            Framer::Anthropic(e) => e.open(),
            Framer::Gemini(e) => gemini::sse_frame(&e.text("")),
        }
    }

    /// A frame carrying `piece` of the text.
    pub fn text(&mut self, piece: &str) -> String {
        match self {
            Framer::Openai { .. } => self.openai(json!({"content": piece}), None),
            Framer::Anthropic(e) => e.text(piece),
            Framer::Gemini(e) => gemini::sse_frame(&e.text(piece)),
        }
    }

    /// The closing frames; the last one ends the stream (OpenAI's
    /// `data: [DONE]`, Anthropic's `message_stop`, Gemini's finishing
    /// chunk), which a "no end of stream" fault drops.
    pub fn close(&mut self, finish_reason: &str, usage: Usage) -> Vec<String> {
        match self {
            Framer::Openai {
                id,
                model,
                created,
                include_usage,
            } => {
                let mut frames = vec![format!(
                    "data: {}\n\n",
                    chunk_body(id, model, *created, json!({}), Some(finish_reason))
                )];
                if *include_usage {
                    frames.push(format!(
                        "data: {}\n\n",
                        usage_chunk_body(id, model, *created, usage)
                    ));
                }
                frames.push("data: [DONE]\n\n".to_string());
                frames
            }
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
            Framer::Openai {
                id, model, created, ..
            } => Some(reasoning_frame(
                Envelope {
                    id,
                    model,
                    created: *created,
                },
                text,
            )),
            Framer::Anthropic(_) | Framer::Gemini(_) => None,
        }
    }

    /// An event that is not JSON, in the dialect's framing.
    pub fn malformed(&self) -> &'static str {
        match self {
            Framer::Openai { .. } => MALFORMED_EVENT,
            Framer::Anthropic(_) => malformed_event(Dialect::Anthropic),
            Framer::Gemini(_) => malformed_event(Dialect::Gemini),
        }
    }

    fn openai(&self, delta: Value, finish: Option<&str>) -> String {
        match self {
            Framer::Openai {
                id, model, created, ..
            } => format!(
                "data: {}\n\n",
                chunk_body(id, model, *created, delta, finish)
            ),
            Framer::Anthropic(_) | Framer::Gemini(_) => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::stream_frames;
    use crate::render_dialect::stream_frames_in;
    use crate::responder::Answer;
    use std::time::Duration;

    fn answer() -> Answer {
        Answer {
            text: "Your sister is called Oriane.".into(),
            finish_reason: "stop".into(),
            usage: Usage::new(12, 6),
            ttft: Duration::ZERO,
            tokens_per_second: 0.0,
            model: Some("m-7".into()),
        }
    }

    const ENVELOPE: Envelope<'static> = Envelope {
        id: "chatcmpl-1",
        model: "m-7",
        created: 7,
    };

    /// Frame by frame, the answer framed live is the answer framed whole.
    #[test]
    fn live_frames_are_the_whole_answers_frames() {
        let a = answer();
        let cases = [
            (Dialect::Openai, false),
            (Dialect::Openai, true),
            (Dialect::Anthropic, false),
            (Dialect::Gemini, false),
        ];
        for (dialect, include_usage) in cases {
            let whole: Vec<String> = match dialect {
                Dialect::Openai => stream_frames(ENVELOPE, &a, include_usage),
                _ => stream_frames_in(dialect, ENVELOPE, &a),
            }
            .into_iter()
            .map(|(_, f)| f)
            .collect();
            let mut f = Framer::new(dialect, ENVELOPE, a.usage.prompt_tokens, include_usage);
            let mut live = vec![f.open()];
            live.extend(a.text.split_inclusive(' ').map(|p| f.text(p)));
            live.extend(f.close(&a.finish_reason, a.usage));
            assert_eq!(live, whole, "{dialect} usage {include_usage}");
        }
    }

    #[test]
    fn reasoning_and_malformed_events_take_the_dialect() {
        let f = Framer::new(Dialect::Openai, ENVELOPE, 1, false);
        assert!(f
            .reasoning("thinking")
            .unwrap()
            .contains("reasoning_content"));
        assert_eq!(f.malformed(), MALFORMED_EVENT);
        let g = Framer::new(Dialect::Gemini, ENVELOPE, 1, false);
        assert!(g.reasoning("thinking").is_none());
        assert_eq!(g.malformed(), malformed_event(Dialect::Gemini));
    }
}
