//! A Gemini answer back in OpenAI's shape: a whole
//! `GenerateContentResponse` as a `chat.completion` ([`to_openai`]), or the
//! `alt=sse` stream of chunks as OpenAI chunks ([`StreamToOpenAi`]).
//!
//! Text parts become `content` (thought parts are left out),
//! `functionCall` parts become `tool_calls` (an id is made up when the
//! answer has none), `finishReason` becomes `finish_reason` ([`finish_of`];
//! a prompt blocked by `promptFeedback` is `content_filter`), and
//! `usageMetadata` becomes `usage` (thinking tokens count as completion
//! tokens, as OpenAI counts reasoning). Gemini sends no end marker, so a
//! stream is complete only if a chunk carried a `finishReason` before the
//! body ended; one that ends without it, or with a line cut short, is an
//! error, never a finished answer.

use super::finish_of;
use crate::{
    completion, ChunkOptions, FinishReason, ReplyError, StreamError, StreamTranslator, ToolCall,
    STREAM_READING,
};
use cb_wire::openai::FrameWriter;
use cb_wire::openai::Usage;
use cb_wire::sse::{SseError, SseReader};
use serde_json::Value;

fn tokens(usage: Option<&Value>, key: &str) -> u32 {
    usage
        .and_then(|u| u.get(key))
        .and_then(Value::as_u64)
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

fn usage_of(body: &Value) -> Option<Usage> {
    let u = body.get("usageMetadata")?;
    let completion = tokens(Some(u), "candidatesTokenCount")
        .saturating_add(tokens(Some(u), "thoughtsTokenCount"));
    Some(Usage::new(tokens(Some(u), "promptTokenCount"), completion))
}

fn error_message(body: &Value) -> Option<String> {
    let e = body.get("error")?;
    let status = e.get("status").and_then(Value::as_str).unwrap_or("ERROR");
    let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
    Some(format!("{status}: {message}"))
}

/// What one response (or chunk) says.
#[derive(Debug, Default)]
struct Piece {
    text: String,
    calls: Vec<ToolCall>,
    /// `finishReason`, or `SAFETY` for a blocked prompt.
    finish: Option<String>,
}

/// Reads a response; `calls_so_far` numbers made-up call ids.
fn piece(body: &Value, calls_so_far: usize) -> Result<Piece, String> {
    let mut p = Piece::default();
    let candidate = body
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    let Some(candidate) = candidate else {
        if body.pointer("/promptFeedback/blockReason").is_some() {
            p.finish = Some("SAFETY".into());
            return Ok(p);
        }
        if body.get("usageMetadata").is_some() {
            return Ok(p);
        }
        return Err("no candidates and no promptFeedback".into());
    };
    for part in candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(t) = part.get("text").and_then(Value::as_str) {
            p.text.push_str(t);
        } else if let Some(c) = part.get("functionCall") {
            let id = c.get("id").and_then(Value::as_str).map_or_else(
                || format!("call_{}", calls_so_far + p.calls.len()),
                str::to_string,
            );
            p.calls.push(ToolCall {
                id,
                name: c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: c
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default())),
            });
        }
    }
    p.finish = candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(p)
}

/// A whole Gemini answer as an OpenAI `chat.completion`. Gemini answers
/// may name no id or model: `defaults.id` and `defaults.model` stand in;
/// `defaults.created` is the timestamp (injected).
///
/// # Errors
/// The body is not JSON, is a Gemini error, or has no candidate.
pub fn to_openai(body: &[u8], defaults: &ChunkOptions) -> Result<Value, ReplyError> {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| ReplyError::NotJson(e.to_string()))?;
    if let Some(message) = error_message(&body) {
        return Err(ReplyError::Upstream(message));
    }
    let p = piece(&body, 0).map_err(ReplyError::Malformed)?;
    let finish = p
        .finish
        .as_deref()
        .map_or(FinishReason::Stop, |f| finish_of(f, !p.calls.is_empty()));
    let mut options = defaults.clone();
    if let Some(id) = body.get("responseId").and_then(Value::as_str) {
        id.clone_into(&mut options.id);
    }
    if let Some(model) = body.get("modelVersion").and_then(Value::as_str) {
        model.clone_into(&mut options.model);
    }
    Ok(completion(
        &options,
        &p.text,
        &p.calls,
        finish,
        usage_of(&body).unwrap_or_default(),
    ))
}

/// Translates a Gemini `alt=sse` stream into OpenAI chunks; see the module
/// doc and [`StreamTranslator`].
#[derive(Debug)]
pub struct StreamToOpenAi {
    reader: SseReader,
    writer: FrameWriter,
    chunks: usize,
    finish: Option<String>,
    called: bool,
    usage: Usage,
    failed: Option<StreamError>,
    done: bool,
}

impl StreamToOpenAi {
    /// A translator whose chunks carry `options` (the stream's own
    /// `responseId` and `modelVersion` replace `options.id` and
    /// `options.model` when it names them).
    pub fn new(options: ChunkOptions) -> Self {
        StreamToOpenAi {
            reader: SseReader::new(STREAM_READING),
            writer: options.writer(),
            chunks: 0,
            finish: None,
            called: false,
            usage: Usage::default(),
            failed: None,
            done: false,
        }
    }

    fn chunk(&mut self, data: &str, out: &mut String) -> Result<(), StreamError> {
        self.chunks += 1;
        let malformed = |detail: String| StreamError::Malformed {
            event: self.chunks,
            detail,
        };
        let body: Value =
            serde_json::from_str(data).map_err(|e| malformed(format!("data is not JSON ({e})")))?;
        if let Some(message) = error_message(&body) {
            return Err(StreamError::Upstream {
                events: self.chunks - 1,
                message,
            });
        }
        let p = piece(&body, self.writer.tool_calls()).map_err(malformed)?;
        if self.chunks == 1 {
            if let Some(id) = body.get("responseId").and_then(Value::as_str) {
                self.writer.set_id(id);
            }
            if let Some(model) = body.get("modelVersion").and_then(Value::as_str) {
                self.writer.set_model(model);
            }
            out.push_str(&self.writer.role());
        }
        if !p.text.is_empty() {
            out.push_str(&self.writer.text(&p.text));
        }
        for call in &p.calls {
            self.called = true;
            let (_, frame) =
                self.writer
                    .tool_start(&call.id, &call.name, &call.arguments.to_string());
            out.push_str(&frame);
        }
        if let Some(u) = usage_of(&body) {
            self.usage = u;
        }
        if p.finish.is_some() {
            self.finish = p.finish;
        }
        Ok(())
    }

    fn remember(&mut self, result: Result<String, StreamError>) -> Result<String, StreamError> {
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    fn sse_error(&self, e: SseError) -> StreamError {
        match e {
            SseError::NotUtf8 => StreamError::Malformed {
                event: self.chunks + 1,
                detail: "a line that is not UTF-8".into(),
            },
            SseError::CutLine(line) => StreamError::Cut {
                events: self.chunks,
                detail: format!("the body ended inside a line ({} bytes)", line.len()),
            },
        }
    }

    /// Translates the chunks the reader has complete.
    fn run(&mut self, out: &mut String) -> Result<(), StreamError> {
        while let Some(event) = self.reader.next_event() {
            let event = event.map_err(|e| self.sse_error(e))?;
            self.chunk(&event.data, out)?;
        }
        Ok(())
    }

    fn feed_inner(&mut self, bytes: &[u8]) -> Result<String, StreamError> {
        self.reader.feed(bytes);
        let mut out = String::new();
        self.run(&mut out)?;
        Ok(out)
    }

    fn finish_inner(&mut self) -> Result<String, StreamError> {
        self.reader.end();
        let mut out = String::new();
        self.run(&mut out)?;
        let Some(reason) = self.finish.as_deref() else {
            return Err(StreamError::Cut {
                events: self.chunks,
                detail: "no chunk carried a finishReason".into(),
            });
        };
        let finish = finish_of(reason, self.called);
        self.done = true;
        out.extend(self.writer.close(finish.as_str(), self.usage));
        Ok(out)
    }
}

impl StreamTranslator for StreamToOpenAi {
    fn feed(&mut self, bytes: &[u8]) -> Result<String, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.done {
            return Ok(String::new());
        }
        let result = self.feed_inner(bytes);
        self.remember(result)
    }

    fn finish(&mut self) -> Result<String, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.done {
            return Ok(String::new());
        }
        let result = self.finish_inner();
        self.remember(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemini::{generate_body, sse_frame, StreamEncoder};
    use crate::Reply;
    use cb_wire::sse::stream_text;
    use serde_json::json;

    fn defaults() -> ChunkOptions {
        ChunkOptions {
            created: 3,
            include_usage: true,
            id: "chatcmpl-proxy-1".into(),
            model: "gemini-requested".into(),
        }
    }

    fn stream(reply: &Reply) -> String {
        let e = StreamEncoder::new("resp-1", "gemini-sim-001", reply.usage.prompt_tokens);
        let mut s: String = reply
            .text
            .split_inclusive(' ')
            .map(|p| sse_frame(&e.text(p)))
            .collect();
        for call in &reply.tool_calls {
            s.push_str(&sse_frame(&e.tool_call(call)));
        }
        s.push_str(&sse_frame(&e.close(reply.finish, reply.usage)));
        s
    }

    fn translate_in_pieces(body: &[u8], size: usize) -> Result<String, StreamError> {
        let mut t = StreamToOpenAi::new(defaults());
        let mut out = String::new();
        for piece in body.chunks(size) {
            out.push_str(&t.feed(piece)?);
        }
        out.push_str(&t.finish()?);
        Ok(out)
    }

    #[test]
    fn a_whole_answer_becomes_a_completion() {
        let mut reply = Reply::text("Let me check.", Usage::new(9, 4));
        reply.tool_calls.push(ToolCall {
            id: String::new(),
            name: "get_weather".into(),
            arguments: json!({"city": "Lyon"}),
        });
        reply.finish = FinishReason::ToolCalls;
        let body = generate_body("resp-1", "gemini-sim-001", &reply).to_string();
        let c = to_openai(body.as_bytes(), &defaults()).unwrap();
        assert_eq!(c["id"], "resp-1");
        assert_eq!(c["model"], "gemini-sim-001");
        let m = &c["choices"][0]["message"];
        assert_eq!(m["content"], "Let me check.");
        assert_eq!(m["tool_calls"][0]["id"], "call_0");
        assert_eq!(m["tool_calls"][0]["function"]["name"], "get_weather");
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(c["usage"]["total_tokens"], 13);
        let bare = json!({"candidates": [{"content": {"parts": [{"text": "thinking", "thought": true}, {"text": "hi"}]}, "finishReason": "MAX_TOKENS"}], "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 1, "thoughtsTokenCount": 5}});
        let c = to_openai(bare.to_string().as_bytes(), &defaults()).unwrap();
        assert_eq!(c["id"], "chatcmpl-proxy-1");
        assert_eq!(c["choices"][0]["message"]["content"], "hi");
        assert_eq!(c["choices"][0]["finish_reason"], "length");
        assert_eq!(c["usage"]["completion_tokens"], 6);
    }

    #[test]
    fn blocked_error_and_malformed_answers() {
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        let c = to_openai(blocked.to_string().as_bytes(), &defaults()).unwrap();
        assert_eq!(c["choices"][0]["finish_reason"], "content_filter");
        let err = crate::gemini::error_body(503, "The model is overloaded.");
        assert_eq!(
            to_openai(err.to_string().as_bytes(), &defaults()),
            Err(ReplyError::Upstream(
                "UNAVAILABLE: The model is overloaded.".into()
            ))
        );
        assert!(matches!(
            to_openai(b"[]", &defaults()),
            Err(ReplyError::Malformed(_))
        ));
        assert!(matches!(
            to_openai(b"", &defaults()),
            Err(ReplyError::NotJson(_))
        ));
    }

    #[test]
    fn a_stream_translates_whatever_the_piece_size() {
        let mut reply = Reply::text("Your sister is called Oriane.", Usage::new(30, 7));
        reply.tool_calls.push(ToolCall {
            id: "fc-1".into(),
            name: "remember".into(),
            arguments: json!({"name": "Oriane"}),
        });
        let body = stream(&reply);
        let whole = translate_in_pieces(body.as_bytes(), body.len()).unwrap();
        for size in [1, 3, 10, 100] {
            assert_eq!(
                translate_in_pieces(body.as_bytes(), size).unwrap(),
                whole,
                "pieces of {size}"
            );
        }
        assert_eq!(stream_text(whole.as_bytes()).unwrap(), reply.text);
        assert!(
            whole.contains("\"id\":\"resp-1\"") && whole.contains("\"model\":\"gemini-sim-001\"")
        );
        assert!(whole.contains("\"finish_reason\":\"tool_calls\""));
        assert!(whole.contains("\"total_tokens\":37"));
        assert!(whole.ends_with("data: [DONE]\n\n"));
    }

    #[test]
    fn a_stream_without_its_finish_reason_is_cut() {
        let body = stream(&Reply::text(
            "Your sister is called Oriane.",
            Usage::new(3, 3),
        ));
        let last = body.rfind("data: ").unwrap();
        let err = translate_in_pieces(&body.as_bytes()[..last], 7).unwrap_err();
        assert_eq!(
            err,
            StreamError::Cut {
                events: 5,
                detail: "no chunk carried a finishReason".into()
            }
        );
        let err = translate_in_pieces(&body.as_bytes()[..body.len() - 8], 7).unwrap_err();
        assert!(matches!(err, StreamError::Cut { .. }), "{err}");
        assert!(matches!(
            translate_in_pieces(b"", 1),
            Err(StreamError::Cut { events: 0, .. })
        ));
    }

    #[test]
    fn malformed_and_error_chunks_are_errors() {
        let body = stream(&Reply::text("Hello there", Usage::new(3, 3)));
        let broken = format!(
            "{}data: {{\"candidates\": [\r\n\r\n",
            &body[..body.find("data: ").unwrap() + 10]
        );
        assert!(translate_in_pieces(broken.as_bytes(), 5).is_err());
        let with_error = format!(
            "{}{}",
            sse_frame(&json!({"candidates": [{"content": {"parts": [{"text": "a"}]}}]})),
            sse_frame(&crate::gemini::error_body(500, "Internal error"))
        );
        let err = translate_in_pieces(with_error.as_bytes(), 5).unwrap_err();
        assert_eq!(
            err,
            StreamError::Upstream {
                events: 1,
                message: "INTERNAL: Internal error".into()
            }
        );
        let not_json = "data: [DONE]\r\n\r\n";
        assert!(matches!(
            translate_in_pieces(not_json.as_bytes(), 50),
            Err(StreamError::Malformed { event: 1, .. })
        ));
    }
}
