//! The proxy's side of a dialect, in one place: what a reference gateway
//! calls to send an OpenAI client's request to a fallback that speaks
//! another dialect and to bring the answer back, whichever dialect it is.
//! Each function answers `None` for [`Dialect::Openai`], whose requests and
//! answers pass unchanged.

use super::{
    anthropic, gemini, ChunkOptions, Dialect, ReplyError, StreamTranslator, TranslateError,
    Translation,
};
use serde_json::Value;

impl ChunkOptions {
    /// The options for answering `client` (an OpenAI body): its model and
    /// `stream_options.include_usage`, with `id` and `created` given.
    pub fn for_client(client: &Value, id: &str, created: u64) -> Self {
        ChunkOptions {
            created,
            include_usage: client
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            id: id.to_string(),
            model: client
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }
    }
}

/// `client` translated for a fallback speaking `dialect`, with `model` as
/// its model id when set.
pub fn translate(
    dialect: Dialect,
    client: &Value,
    model: Option<&str>,
) -> Option<Result<Translation, TranslateError>> {
    match dialect {
        Dialect::Openai => None,
        Dialect::Anthropic => Some(anthropic::translate_request(client, model)),
        Dialect::Gemini => Some(gemini::translate_request(client, model)),
    }
}

/// Headers a request in `dialect` must carry besides the content type and
/// the credentials.
pub fn request_headers(dialect: Dialect) -> &'static [(&'static str, &'static str)] {
    match dialect {
        Dialect::Anthropic => &[(anthropic::VERSION_HEADER, anthropic::VERSION)],
        Dialect::Openai | Dialect::Gemini => &[],
    }
}

/// A whole answer in `dialect` as an OpenAI `chat.completion`.
pub fn completion(
    dialect: Dialect,
    body: &[u8],
    defaults: &ChunkOptions,
) -> Option<Result<Value, ReplyError>> {
    match dialect {
        Dialect::Openai => None,
        Dialect::Anthropic => Some(anthropic::to_openai(body, defaults)),
        Dialect::Gemini => Some(gemini::to_openai(body, defaults)),
    }
}

/// A translator for a streamed answer in `dialect`.
pub fn stream_translator(
    dialect: Dialect,
    options: ChunkOptions,
) -> Option<Box<dyn StreamTranslator>> {
    match dialect {
        Dialect::Openai => None,
        Dialect::Anthropic => Some(Box::new(anthropic::StreamToOpenAi::new(options))),
        Dialect::Gemini => Some(Box::new(gemini::StreamToOpenAi::new(options))),
    }
}

/// An error body in `dialect` as an OpenAI error body (an OpenAI body is
/// returned as is).
pub fn error_to_openai(dialect: Dialect, body: &Value) -> Value {
    match dialect {
        Dialect::Openai => body.clone(),
        Dialect::Anthropic => anthropic::error_to_openai(body),
        Dialect::Gemini => gemini::error_to_openai(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FinishReason, Reply};
    use cb_wire::openai::Usage;
    use cb_wire::sse::stream_text;
    use serde_json::json;

    fn client() -> Value {
        json!({
            "model": "gpt-client",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "hi"}]
        })
    }

    #[test]
    fn openai_passes_through() {
        let c = client();
        assert!(translate(Dialect::Openai, &c, None).is_none());
        assert!(completion(Dialect::Openai, b"{}", &ChunkOptions::default()).is_none());
        assert!(stream_translator(Dialect::Openai, ChunkOptions::default()).is_none());
        assert_eq!(error_to_openai(Dialect::Openai, &c), c);
        assert!(request_headers(Dialect::Openai).is_empty());
    }

    #[test]
    fn options_come_from_the_client() {
        let o = ChunkOptions::for_client(&client(), "chatcmpl-1", 42);
        assert_eq!(
            o,
            ChunkOptions {
                created: 42,
                include_usage: true,
                id: "chatcmpl-1".into(),
                model: "gpt-client".into()
            }
        );
        assert!(!ChunkOptions::for_client(&json!({}), "x", 0).include_usage);
    }

    /// The whole proxy path for each dialect: translate, answer as the
    /// dialect's upstream would (whole and streamed), translate back.
    #[test]
    fn a_request_goes_out_and_its_answer_comes_back() {
        let reply = Reply::text("Your sister is called Oriane.", Usage::new(12, 7));
        for dialect in [Dialect::Anthropic, Dialect::Gemini] {
            let t = translate(dialect, &client(), Some("sim")).unwrap().unwrap();
            assert!(!t.path.is_empty());
            let (whole, streamed) = match dialect {
                Dialect::Anthropic => {
                    let mut e = anthropic::StreamEncoder::new("msg_1", "sim", 12);
                    let s = [
                        e.open(),
                        e.text("Your sister "),
                        e.text("is called Oriane."),
                        e.close(FinishReason::Stop, 7),
                    ]
                    .concat();
                    (anthropic::message_body("msg_1", "sim", &reply), s)
                }
                _ => {
                    let e = gemini::StreamEncoder::new("r1", "sim", 12);
                    let s = [
                        gemini::sse_frame(&e.text("Your sister ")),
                        gemini::sse_frame(&e.text("is called Oriane.")),
                        gemini::sse_frame(&e.close(FinishReason::Stop, reply.usage)),
                    ]
                    .concat();
                    (gemini::generate_body("r1", "sim", &reply), s)
                }
            };
            let options = ChunkOptions::for_client(&client(), "chatcmpl-1", 1);
            let c = completion(dialect, whole.to_string().as_bytes(), &options)
                .unwrap()
                .unwrap();
            assert_eq!(
                cb_wire::openai::response_text(&c).as_deref(),
                Some(reply.text.as_str())
            );
            let mut t = stream_translator(dialect, options).unwrap();
            let mut out = t.feed(streamed.as_bytes()).unwrap();
            out.push_str(&t.finish().unwrap());
            assert_eq!(
                stream_text(out.as_bytes()).unwrap(),
                reply.text,
                "{dialect}"
            );
            assert!(out.contains("\"usage\""), "{dialect}");
        }
        assert_eq!(
            request_headers(Dialect::Anthropic),
            &[("anthropic-version", "2023-06-01")]
        );
    }
}
