//! What an upstream sends in the dialect it was called in: error responses
//! in the dialect's error shape, an [`Answer`] as the dialect's whole body
//! or as its timed server-sent events. The OpenAI rendering stays in
//! [`super::render`]; this file puts the same neutral faults and answers in
//! the Anthropic and Gemini shapes from [`cb_dialect`], so a fault
//! means the same thing whichever dialect the gateway speaks.

use super::render::{error_response, json_response, retry_after_secs, Envelope};
use super::responder::Answer;
use cb_dialect::{anthropic, gemini, Dialect, FinishReason, Reply};
use cb_faults::ErrorSpec;
use cb_wire::openai::approx_tokens;
use axum::http::{header, HeaderValue};
use axum::response::Response;
use serde_json::Value;
use std::time::Duration;

/// The error body of `spec` in `dialect` (`None` for OpenAI, which
/// [`super::render`] writes).
pub fn error_value(spec: &ErrorSpec, dialect: Dialect) -> Option<Value> {
    match dialect {
        Dialect::Openai => None,
        Dialect::Anthropic => Some(anthropic::error_body(
            anthropic::ErrorKind::for_status(spec.status),
            &spec.message,
        )),
        Dialect::Gemini => Some(gemini::error_body(spec.status, &spec.message)),
    }
}

/// The error response of `spec` in `dialect`: its status, the dialect's
/// error body, and `Retry-After` when it has one.
pub fn error_response_in(spec: &ErrorSpec, dialect: Dialect) -> Response {
    let Some(body) = error_value(spec, dialect) else {
        return error_response(spec);
    };
    let mut response = json_response(spec.status, body.to_string());
    if let Some(retry_after) = spec.retry_after {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(retry_after_secs(retry_after)),
        );
    }
    response
}

/// A dialect's own 400 (a [`cb_dialect::Rejection`]) as a response.
pub fn rejection_response(rejection: &cb_dialect::Rejection) -> Response {
    json_response(rejection.status, rejection.body.to_string())
}

/// The finish reason of an OpenAI `finish_reason` string.
pub fn finish_of(reason: &str) -> FinishReason {
    match reason {
        "length" => FinishReason::Length,
        "tool_calls" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// `answer` as a dialect-neutral [`Reply`].
pub fn reply_of(answer: &Answer) -> Reply {
    Reply {
        text: answer.text.clone(),
        tool_calls: Vec::new(),
        finish: finish_of(&answer.finish_reason),
        usage: answer.usage,
    }
}

/// `answer` as the dialect's whole (non-streamed) body; for Gemini's
/// `streamGenerateContent` without `alt=sse`, the JSON array of chunks.
pub fn whole_body(
    dialect: Dialect,
    envelope: Envelope<'_>,
    answer: &Answer,
    array: bool,
) -> String {
    let reply = reply_of(answer);
    match dialect {
        Dialect::Anthropic => {
            anthropic::message_body(envelope.id, envelope.model, &reply).to_string()
        }
        Dialect::Gemini if array => {
            let e =
                gemini::StreamEncoder::new(envelope.id, envelope.model, answer.usage.prompt_tokens);
            gemini::json_array(&[e.text(&answer.text), e.close(reply.finish, reply.usage)])
        }
        Dialect::Gemini | Dialect::Openai => {
            gemini::generate_body(envelope.id, envelope.model, &reply).to_string()
        }
    }
}

/// An event that is not JSON, in the dialect's framing.
pub fn malformed_event(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic => {
            "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"delta\": {\"text\": \"\n\n"
        }
        Dialect::Gemini | Dialect::Openai => "data: {\"candidates\": [{\"content\": \r\n\r\n",
    }
}

/// A streamed answer's frames in the dialect, each with its due time as an
/// offset from the first, laid out as [`super::render::stream_frames`] lays
/// out OpenAI's (so cuts and stalls count content frames the same way):
/// an opening frame (Anthropic's `message_start`; an empty text chunk for
/// Gemini), one frame per word, the closing frame(s), and the dialect's
/// last frame (Anthropic's `message_stop`, Gemini's finishing chunk), which
/// a "no end of stream" fault drops.
pub fn stream_frames_in(
    dialect: Dialect,
    envelope: Envelope<'_>,
    answer: &Answer,
) -> Vec<(Duration, String)> {
    let reply = reply_of(answer);
    let mut due = Duration::ZERO;
    let mut frames = Vec::new();
    match dialect {
        Dialect::Anthropic => {
            let mut e = anthropic::StreamEncoder::new(
                envelope.id,
                envelope.model,
                answer.usage.prompt_tokens,
            );
            frames.push((due, e.open()));
            for piece in answer.text.split_inclusive(' ') {
                due += answer.output_time(approx_tokens(piece));
                frames.push((due, e.text(piece)));
            }
            let close = e.close(reply.finish, answer.usage.completion_tokens);
            // Split off `message_stop`, the stream's end.
            match close.find("event: message_stop") {
                Some(at) => {
                    frames.push((due, close[..at].to_string()));
                    frames.push((due, close[at..].to_string()));
                }
                None => frames.push((due, close)),
            }
        }
        Dialect::Gemini | Dialect::Openai => {
            let e =
                gemini::StreamEncoder::new(envelope.id, envelope.model, answer.usage.prompt_tokens);
            frames.push((due, gemini::sse_frame(&e.text(""))));
            for piece in answer.text.split_inclusive(' ') {
                due += answer.output_time(approx_tokens(piece));
                frames.push((due, gemini::sse_frame(&e.text(piece))));
            }
            frames.push((due, gemini::sse_frame(&e.close(reply.finish, reply.usage))));
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_dialect::{bridge, ChunkOptions};
    use cb_faults::ErrorKind;
    use cb_wire::openai::Usage;
    use cb_wire::sse::stream_text;

    fn answer() -> Answer {
        Answer {
            text: "Your sister is called Oriane.".into(),
            finish_reason: "stop".into(),
            usage: Usage::new(10, 6),
            ttft: Duration::ZERO,
            tokens_per_second: 0.0,
            model: None,
        }
    }

    fn envelope() -> Envelope<'static> {
        Envelope {
            id: "msg_1",
            model: "sim",
            created: 0,
        }
    }

    #[test]
    fn errors_take_the_dialect_shape() {
        let spec = ErrorSpec::new(503, ErrorKind::Server, "down");
        assert!(error_value(&spec, Dialect::Openai).is_none());
        let a = error_value(&spec, Dialect::Anthropic).unwrap();
        assert_eq!(a["type"], "error");
        assert_eq!(a["error"]["type"], "api_error");
        let g = error_value(&spec, Dialect::Gemini).unwrap();
        assert_eq!(g["error"]["status"], "UNAVAILABLE");
        assert_eq!(g["error"]["code"], 503);
    }

    /// The frames read back through the proxy's own translators give the
    /// answer's text: the upstream and the proxy agree on each dialect.
    #[test]
    fn streams_and_bodies_translate_back() {
        for dialect in [Dialect::Anthropic, Dialect::Gemini] {
            let frames: String = stream_frames_in(dialect, envelope(), &answer())
                .into_iter()
                .map(|(_, f)| f)
                .collect();
            let mut t = bridge::stream_translator(dialect, ChunkOptions::default()).unwrap();
            let mut out = t.feed(frames.as_bytes()).unwrap();
            out.push_str(&t.finish().unwrap());
            assert_eq!(
                stream_text(out.as_bytes()).unwrap(),
                answer().text,
                "{dialect}"
            );
            let body = whole_body(dialect, envelope(), &answer(), false);
            let c = bridge::completion(dialect, body.as_bytes(), &ChunkOptions::default())
                .unwrap()
                .unwrap();
            assert_eq!(
                cb_wire::openai::response_text(&c).as_deref(),
                Some(answer().text.as_str())
            );
        }
    }

    #[test]
    fn the_last_frame_ends_the_stream() {
        let frames = stream_frames_in(Dialect::Anthropic, envelope(), &answer());
        assert!(frames.last().unwrap().1.starts_with("event: message_stop"));
        let frames = stream_frames_in(Dialect::Gemini, envelope(), &answer());
        assert!(frames.last().unwrap().1.contains("finishReason"));
    }
}
