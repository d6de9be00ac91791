//! A streamed Anthropic answer back in OpenAI's shape: the Messages
//! events, fed chunk by chunk, as OpenAI chunk frames ([`StreamToOpenAi`]).
//!
//! Text deltas become `content` deltas, a `tool_use` block a `tool_calls`
//! entry whose `input_json_delta`s are its `arguments`, and the answer ends
//! with the finish chunk, the usage chunk when asked for, and
//! `data: [DONE]`. A stream is complete only at `message_stop`: a body that
//! ends before it, an `error` event, or an event that does not parse is an
//! error, never a finished answer.

use super::finish_of;
use super::reply::{count, error_message, input_tokens};
use crate::{ChunkOptions, FinishReason, StreamError, StreamTranslator, STREAM_READING};
use cb_wire::openai::{FrameWriter, Usage};
use cb_wire::sse::{Event as SseEvent, SseError, SseReader};
use serde_json::Value;
use std::collections::HashMap;

/// What a content block of the stream is.
#[derive(Debug, Clone, Copy)]
enum Block {
    Text,
    /// A tool call, with its OpenAI `index`.
    Tool(usize),
    /// Thinking and other blocks the client does not see.
    Other,
}

/// Translates an Anthropic event stream into OpenAI chunks; see the module
/// doc and [`StreamTranslator`].
#[derive(Debug)]
pub struct StreamToOpenAi {
    reader: SseReader,
    writer: FrameWriter,
    events: usize,
    started: bool,
    done: bool,
    failed: Option<StreamError>,
    finish: FinishReason,
    input_tokens: u32,
    output_tokens: u32,
    blocks: HashMap<u64, Block>,
}

impl StreamToOpenAi {
    /// A translator whose chunks carry `options` (the stream's own message
    /// id and model replace `options.id` and `options.model`).
    pub fn new(options: ChunkOptions) -> Self {
        StreamToOpenAi {
            reader: SseReader::new(STREAM_READING),
            writer: options.writer(),
            events: 0,
            started: false,
            done: false,
            failed: None,
            finish: FinishReason::Stop,
            input_tokens: 0,
            output_tokens: 0,
            blocks: HashMap::new(),
        }
    }

    fn malformed(&self, detail: impl Into<String>) -> StreamError {
        StreamError::Malformed {
            event: self.events,
            detail: detail.into(),
        }
    }

    fn index(&self, data: &Value) -> Result<u64, StreamError> {
        data.get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| self.malformed("a content block event without an index"))
    }

    fn known(&self, data: &Value) -> Result<Block, StreamError> {
        let index = self.index(data)?;
        self.blocks.get(&index).copied().ok_or_else(|| {
            self.malformed(format!(
                "an event for content block {index}, which was never started"
            ))
        })
    }

    fn event(&mut self, event: SseEvent, out: &mut String) -> Result<(), StreamError> {
        if self.done {
            return Ok(());
        }
        self.events += 1;
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| self.malformed(format!("data is not JSON ({e})")))?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| self.malformed("data without a `type`"))?
            .to_string();
        if event.name.as_deref().is_some_and(|n| n != kind) {
            return Err(self.malformed(format!(
                "event {:?} carries data of type {kind:?}",
                event.name.unwrap_or_default()
            )));
        }
        match kind.as_str() {
            "ping" => {}
            "error" => {
                return Err(StreamError::Upstream {
                    events: self.events - 1,
                    message: error_message(&data).unwrap_or_else(|| data.to_string()),
                })
            }
            "message_start" => {
                if self.started {
                    return Err(self.malformed("a second message_start"));
                }
                self.started = true;
                let message = data.get("message");
                if let Some(id) = message.and_then(|m| m.get("id")).and_then(Value::as_str) {
                    self.writer.set_id(id);
                }
                if let Some(model) = message.and_then(|m| m.get("model")).and_then(Value::as_str) {
                    self.writer.set_model(model);
                }
                let usage = message.and_then(|m| m.get("usage"));
                self.input_tokens = input_tokens(usage);
                self.output_tokens = count(usage, "output_tokens");
                out.push_str(&self.writer.role());
            }
            _ if !self.started => {
                return Err(self.malformed(format!("{kind} before message_start")))
            }
            "content_block_start" => {
                let index = self.index(&data)?;
                let block = data.get("content_block");
                let block_type = block.and_then(|b| b.get("type")).and_then(Value::as_str);
                let field = |key: &str| {
                    block
                        .and_then(|b| b.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                };
                let state = match block_type {
                    Some("text") => {
                        let text = field("text");
                        if !text.is_empty() {
                            out.push_str(&self.writer.text(text));
                        }
                        Block::Text
                    }
                    Some("tool_use") => {
                        let (i, frame) = self.writer.tool_start(field("id"), field("name"), "");
                        out.push_str(&frame);
                        Block::Tool(i)
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, state);
            }
            "content_block_delta" => {
                let block = self.known(&data)?;
                let delta = data.get("delta");
                let field = |key: &str| delta.and_then(|d| d.get(key)).and_then(Value::as_str);
                match (block, field("type")) {
                    (Block::Text, Some("text_delta")) => {
                        let text = field("text")
                            .ok_or_else(|| self.malformed("a text_delta without text"))?;
                        out.push_str(&self.writer.text(text));
                    }
                    (Block::Tool(i), Some("input_json_delta")) => {
                        let json = field("partial_json").unwrap_or_default();
                        if !json.is_empty() {
                            out.push_str(&self.writer.tool_arguments(i, json));
                        }
                    }
                    (Block::Text, Some("input_json_delta"))
                    | (Block::Tool(_), Some("text_delta")) => {
                        return Err(self.malformed("a delta that does not fit its content block"))
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                self.known(&data)?;
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = finish_of(reason);
                }
                if let Some(n) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.output_tokens = u32::try_from(n).unwrap_or(u32::MAX);
                }
            }
            "message_stop" => {
                self.done = true;
                let usage = Usage::new(self.input_tokens, self.output_tokens);
                out.extend(self.writer.close(self.finish.as_str(), usage));
            }
            // New event types may appear; the API says to ignore them.
            _ => {}
        }
        Ok(())
    }

    /// Translates the events the reader has complete; the first error is
    /// kept and repeated from then on.
    fn run(&mut self) -> Result<String, StreamError> {
        let mut out = String::new();
        while let Some(event) = self.reader.next_event() {
            let result = event
                .map_err(|e| self.sse_error(e))
                .and_then(|e| self.event(e, &mut out));
            if let Err(err) = result {
                self.failed = Some(err.clone());
                return Err(err);
            }
        }
        Ok(out)
    }

    fn sse_error(&self, e: SseError) -> StreamError {
        match e {
            SseError::NotUtf8 => self.malformed("a line that is not UTF-8"),
            SseError::CutLine(line) => StreamError::Cut {
                events: self.events,
                detail: format!("the body ended inside a line ({} bytes)", line.len()),
            },
        }
    }
}

impl StreamTranslator for StreamToOpenAi {
    fn feed(&mut self, bytes: &[u8]) -> Result<String, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.reader.feed(bytes);
        self.run()
    }

    fn finish(&mut self) -> Result<String, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.reader.end();
        let out = self.run()?;
        if self.done {
            return Ok(out);
        }
        let detail = if self.started {
            "no message_stop"
        } else {
            "no message_start"
        };
        Err(StreamError::Cut {
            events: self.events,
            detail: detail.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::StreamEncoder;
    use crate::{Reply, ToolCall};
    use cb_wire::sse::stream_text;
    use serde_json::json;

    fn options() -> ChunkOptions {
        ChunkOptions {
            created: 5,
            include_usage: true,
            id: "fallback-id".into(),
            model: "fallback-model".into(),
        }
    }

    fn stream(reply: &Reply) -> String {
        let mut e = StreamEncoder::new("msg_7", "claude-sim", reply.usage.prompt_tokens);
        let mut s = e.open();
        for piece in reply.text.split_inclusive(' ') {
            s.push_str(&e.text(piece));
        }
        for call in &reply.tool_calls {
            s.push_str(&e.tool_call(call));
        }
        s.push_str(&e.close(reply.finish, reply.usage.completion_tokens));
        s
    }

    fn translate_in_pieces(body: &[u8], size: usize) -> Result<String, StreamError> {
        let mut t = StreamToOpenAi::new(options());
        let mut out = String::new();
        for piece in body.chunks(size) {
            out.push_str(&t.feed(piece)?);
        }
        out.push_str(&t.finish()?);
        Ok(out)
    }

    fn weather_call() -> ToolCall {
        ToolCall {
            id: "toolu_1".into(),
            name: "get_weather".into(),
            arguments: json!({"city": "Lyon"}),
        }
    }

    #[test]
    fn a_stream_translates_whatever_the_piece_size() {
        let mut reply = Reply::text("Your sister is called Oriane.", Usage::new(30, 7));
        reply.tool_calls.push(weather_call());
        let body = stream(&reply);
        let whole = translate_in_pieces(body.as_bytes(), body.len()).unwrap();
        for size in [1, 2, 7, 64] {
            assert_eq!(
                translate_in_pieces(body.as_bytes(), size).unwrap(),
                whole,
                "pieces of {size}"
            );
        }
        assert_eq!(stream_text(whole.as_bytes()).unwrap(), reply.text);
        assert!(whole.contains("\"id\":\"msg_7\""));
        assert!(whole.contains("\"model\":\"claude-sim\""));
        assert!(whole.contains("\"arguments\":\"{\\\"city\\\":\\\"Lyon\\\"}\""));
        assert!(whole.contains("\"total_tokens\":37"));
        assert!(whole.ends_with("data: [DONE]\n\n"));
    }

    #[test]
    fn a_cut_stream_is_an_error_not_a_done() {
        let body = stream(&Reply::text(
            "Your sister is called Oriane.",
            Usage::new(3, 3),
        ));
        let stop = body.find("event: message_stop").unwrap();
        // Cut before message_stop, and cut inside its data line.
        for cut in [stop, stop + 25, body.len() - 3] {
            let err = translate_in_pieces(&body.as_bytes()[..cut], 16).unwrap_err();
            assert!(
                matches!(err, StreamError::Cut { .. }),
                "cut at {cut}: {err}"
            );
        }
        let err = translate_in_pieces(b"", 1).unwrap_err();
        assert!(err.to_string().contains("no message_start"), "{err}");
    }

    #[test]
    fn malformed_and_error_events_are_errors() {
        let body = stream(&Reply::text("Hello there", Usage::new(3, 3)));
        let start = body.find("event: content_block_delta").unwrap();
        let broken = format!(
            "{}event: content_block_delta\ndata: {{\"type\": \"content_bl\n\n",
            &body[..start]
        );
        let err = translate_in_pieces(broken.as_bytes(), 10).unwrap_err();
        assert!(
            matches!(err, StreamError::Malformed { event: 4, .. }),
            "{err}"
        );
        let with_error = format!(
            "{}{}",
            &body[..start],
            crate::anthropic::stream_error_frame(
                crate::anthropic::ErrorKind::OverloadedError,
                "Overloaded"
            )
        );
        let err = translate_in_pieces(with_error.as_bytes(), 10).unwrap_err();
        assert_eq!(
            err,
            StreamError::Upstream {
                events: 3,
                message: "overloaded_error: Overloaded".into()
            }
        );
        let orphan_delta = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n";
        assert!(matches!(
            translate_in_pieces(orphan_delta.as_bytes(), 50),
            Err(StreamError::Malformed { event: 2, .. })
        ));
        let before_start = "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        assert!(matches!(
            translate_in_pieces(before_start.as_bytes(), 50),
            Err(StreamError::Malformed { .. })
        ));
        let mislabelled = "event: ping\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n";
        assert!(matches!(
            translate_in_pieces(mislabelled.as_bytes(), 50),
            Err(StreamError::Malformed { .. })
        ));
    }

    #[test]
    fn feeding_after_an_error_repeats_it() {
        let mut t = StreamToOpenAi::new(options());
        let first = t.feed(b"data: nope\n\n").unwrap_err();
        assert_eq!(t.feed(b"data: {}\n\n").unwrap_err(), first);
        assert_eq!(t.finish().unwrap_err(), first);
    }
}
