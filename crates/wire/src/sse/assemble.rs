//! A chat-completion stream read as an answer, a `data:` line at a time
//! ([`ChunkFold`]: each line read by [`crate::openai::chunk`], the text
//! handed on, the finish reason, model and usage kept), and a whole trace
//! read that way ([`assemble`]): the assistant text, or why it is not a
//! usable answer (a malformed chunk, an error object sent mid-stream, no
//! `data: [DONE]`, a `delta.content` that is not text). The driver reads
//! a trace; the live pass-through relay folds a provider's stream as it
//! arrives; both read it the same way.

use super::trace::{read_all, StreamTrace};
use crate::openai::chunk::{Data, DONE_DATA};
use crate::openai::Usage;
use std::borrow::Cow;

/// What one `data:` line did to the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A chunk, carrying this text (empty when it carries none).
    Text(String),
    /// `data: [DONE]`: the answer is complete.
    Done,
    /// The stream is not a usable answer, for this reason; nothing after
    /// it counts.
    Broken(String),
}

/// A chat-completion stream read chunk by chunk: what its `data:` lines
/// said so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkFold {
    /// Chunks read (`[DONE]` excluded).
    chunks: usize,
    finish_reason: Option<String>,
    /// The `model` values the chunks named, in order, a run of chunks
    /// naming the same one kept once; at most [`MAX_MODELS`], the last
    /// always the last chunk's.
    models: Vec<String>,
    usage: Option<Usage>,
    has_usage: bool,
    /// Whether an `error` key counts only when its value is truthy (as the
    /// official SDKs read it: `null`, `false`, `0`, `""`, `{}` and `[]` are
    /// no error); by default any `error` key breaks the stream.
    truthy_errors: bool,
}

impl ChunkFold {
    /// A fold that counts a chunk's `error` only when its value is truthy
    /// (see [`crate::sse::ClientProfile::OpenAiSdk`]).
    pub fn truthy_errors() -> Self {
        ChunkFold {
            truthy_errors: true,
            ..ChunkFold::default()
        }
    }

    /// Reads the value of the next `data:` line.
    pub fn data(&mut self, data: &str) -> Step {
        let parsed = Data::parse(data);
        let chunk = match parsed {
            Ok(Data::Done) => return Step::Done,
            Ok(Data::Chunk(chunk)) => chunk,
            Err(malformed) => {
                self.chunks += 1;
                return Step::Broken(malformed.reason(self.chunks));
            }
        };
        self.chunks += 1;
        let n = self.chunks;
        if !self.truthy_errors || chunk.value().get("error").is_some_and(truthy) {
            if let Some(message) = chunk.error() {
                return Step::Broken(format!("error in the stream after {n} chunks: {message}"));
            }
        }
        let text = match chunk.content() {
            Ok(text) => text.map(Cow::into_owned).unwrap_or_default(),
            Err(not_text) => {
                return Step::Broken(
                    not_text.reason(&format!("stream chunk {n}: choices[0].delta.content")),
                )
            }
        };
        if let Some(reason) = chunk.finish_reason() {
            self.finish_reason = Some(reason.to_string());
        }
        if let Some(model) = chunk.model().filter(|m| !m.trim().is_empty()) {
            let model: String = model.chars().take(MAX_MODEL_CHARS).collect();
            if self.models.last() != Some(&model) {
                // Full: the first ones stay, the last slot follows the
                // stream, so the last chunk's model is always known.
                if self.models.len() == MAX_MODELS {
                    self.models.pop();
                }
                if self.models.last() != Some(&model) {
                    self.models.push(model);
                }
            }
        }
        self.has_usage |= chunk.has_usage();
        if let Some(usage) = chunk.usage() {
            self.usage = Some(usage);
        }
        Step::Text(text)
    }

    /// The body ended (cleanly) before `data: [DONE]`: complete when
    /// `finish_ends` and a finish reason came (as most client SDKs read a
    /// stream), else the reason it is cut.
    ///
    /// # Errors
    /// The stream ended without `data: [DONE]` (or, with `finish_ends`,
    /// without a finish reason).
    pub fn end(&self, finish_ends: bool) -> Result<(), String> {
        if finish_ends && self.finish_reason.is_some() {
            return Ok(());
        }
        Err(format!(
            "the stream ended without data: {DONE_DATA} after {} chunks",
            self.chunks
        ))
    }

    /// The last `choices[0].finish_reason` sent, if any.
    pub fn finish_reason(&self) -> Option<&str> {
        self.finish_reason.as_deref()
    }

    /// The `model` the first chunk that names one names.
    pub fn model(&self) -> Option<&str> {
        self.models.first().map(String::as_str)
    }

    /// The `model` values the chunks named, in order, each run of chunks
    /// naming the same one kept once (a stream whose chunks disagree on
    /// who answers names two; `a, b, a` names three); empty names are
    /// skipped, and the last is the last chunk's.
    pub fn models(&self) -> &[String] {
        &self.models
    }

    /// The token counts of the last chunk that carried them all.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// Whether a chunk carried a `usage` object.
    pub fn has_usage(&self) -> bool {
        self.has_usage
    }
}

/// Python's truth value of a JSON value (`None`, `False`, `0`, `""`, an
/// empty object or array are false), which the OpenAI Python SDK applies
/// to a chunk's `error` before it raises.
fn truthy(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
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
    /// `usage.completion_tokens` of the last usage block that had one.
    pub completion_tokens: Option<u32>,
    /// `usage.prompt_tokens` of the same block.
    pub prompt_tokens: Option<u32>,
    /// The `model` values the chunks named, in order, a run of the same
    /// one kept once, the last the last chunk's (at most [`MAX_MODELS`]).
    pub models: Vec<String>,
}

/// Most `model` values a stream's reading keeps (the last slot follows the
/// stream): enough to show chunks that disagree, bounded against a
/// hostile stream.
pub const MAX_MODELS: usize = 4;

/// Longest `model` value kept, in characters.
pub const MAX_MODEL_CHARS: usize = 200;

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
    fold_trace(trace, ChunkFold::default(), |fold| fold.end(finish_ends))
}

/// Reads every `data:` line of `trace` into `fold`; at the end of the
/// events without `data: [DONE]`, `end` says whether that is complete.
pub(super) fn fold_trace(
    trace: &StreamTrace,
    mut fold: ChunkFold,
    end: impl FnOnce(&ChunkFold) -> Result<(), String>,
) -> Result<Assembled, String> {
    if trace.not_utf8 {
        return Err("the stream is not UTF-8".to_string());
    }
    let mut text = String::new();
    let mut first_content_ms = None;
    for event in &trace.events {
        match fold.data(&event.data) {
            Step::Done => return Ok(assembled(&fold, text, first_content_ms)),
            Step::Text(piece) => {
                if !piece.is_empty() && first_content_ms.is_none() {
                    first_content_ms = Some(event.at_ms);
                }
                text.push_str(&piece);
            }
            Step::Broken(reason) => return Err(reason),
        }
    }
    end(&fold)?;
    Ok(assembled(&fold, text, first_content_ms))
}

fn assembled(fold: &ChunkFold, text: String, first_content_ms: Option<f64>) -> Assembled {
    Assembled {
        text,
        finish_reason: fold.finish_reason().map(str::to_string),
        first_content_ms,
        model: fold.model().map(str::to_string),
        usage: fold.has_usage(),
        completion_tokens: fold.usage().map(|u| u.completion_tokens),
        prompt_tokens: fold.usage().map(|u| u.prompt_tokens),
        models: fold.models().to_vec(),
    }
}

/// The assistant text of a whole stream body, or why it is not a usable
/// answer (see [`assemble`]).
///
/// # Errors
/// As [`assemble`].
pub fn stream_text(body: &[u8]) -> Result<String, String> {
    assemble(&read_all(body)).map(|a| a.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::TraceReader;

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
        let mut reader = TraceReader::new();
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

    /// The models the chunks name are kept in order (a stream that starts
    /// as one model and ends as another names both), bounded with the last
    /// chunk's always last; empty names are skipped; the usage block's
    /// prompt count is kept beside its completion count.
    #[test]
    fn the_models_named_and_the_prompt_count_are_kept() {
        let named = |model: &str| serde_json::json!({"model": model, "choices": [{"delta": {"content": "a "}}]});
        let mut body = String::new();
        for model in ["primary", "primary", "", "fallback", "m3", "m4", "m5"] {
            body.push_str(&format!("data: {}\n\n", named(model)));
        }
        body.push_str(&format!(
            "data: {}\n\ndata: [DONE]\n\n",
            serde_json::json!({"model": "fallback", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15}})
        ));
        let assembled = assemble(&read_all(body.as_bytes())).unwrap();
        assert_eq!(assembled.models, ["primary", "fallback", "m3", "fallback"]);
        assert_eq!(assembled.model.as_deref(), Some("primary"));
        assert_eq!(assembled.prompt_tokens, Some(9));
        assert_eq!(assembled.completion_tokens, Some(6));
        let long = "x".repeat(MAX_MODEL_CHARS + 50);
        let body = format!("data: {}\n\ndata: [DONE]\n\n", named(&long));
        let assembled = assemble(&read_all(body.as_bytes())).unwrap();
        assert_eq!(assembled.models[0].len(), MAX_MODEL_CHARS);
        // Back to the first model at the end: the last chunk's is last.
        let mut body = String::new();
        for model in ["a", "b", "a"] {
            body.push_str(&format!("data: {}\n\n", named(model)));
        }
        body.push_str("data: [DONE]\n\n");
        let assembled = assemble(&read_all(body.as_bytes())).unwrap();
        assert_eq!(assembled.models, ["a", "b", "a"]);
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

    /// A `data` line without a colon is an empty `data:` line (the SSE
    /// specification's reading, and the dialect reader's), so it is a
    /// malformed chunk as `data:` always was: the driver's reader used to
    /// skip it.
    #[test]
    fn a_bare_data_line_is_an_empty_chunk_not_nothing() {
        let body = format!("{}data\n\ndata: [DONE]\n\n", chunk("a"));
        let err = text(&body).unwrap_err();
        assert!(err.starts_with("malformed stream chunk 2"), "{err}");
    }

    #[test]
    fn the_fold_reads_a_stream_as_it_comes() {
        let mut fold = ChunkFold::default();
        let line = |v: serde_json::Value| v.to_string();
        assert_eq!(
            fold.data(&line(
                serde_json::json!({"model": "m-7", "choices": [{"delta": {"content": "Ori"}}]})
            )),
            Step::Text("Ori".into())
        );
        assert_eq!(fold.model(), Some("m-7"));
        assert!(fold.end(true).is_err(), "no finish reason yet");
        fold.data(&line(serde_json::json!({"choices": [{"delta": {}, "finish_reason": "length"}], "usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}})));
        assert_eq!(fold.finish_reason(), Some("length"));
        assert_eq!(fold.usage(), Some(Usage::new(2, 1)));
        assert!(fold.end(true).is_ok());
        assert_eq!(
            fold.end(false).unwrap_err(),
            "the stream ended without data: [DONE] after 2 chunks"
        );
        assert_eq!(fold.data(" [DONE]"), Step::Done);
        let Step::Broken(reason) = fold.data(&line(
            serde_json::json!({"choices": [{"delta": {"content": 42}}]}),
        )) else {
            panic!("content that is not text breaks the stream")
        };
        assert!(
            reason.starts_with("stream chunk 3: choices[0].delta.content is a number (42)"),
            "{reason}"
        );
    }
}
