//! A fallback that speaks another dialect (`--fallback-dialect anthropic`
//! or `gemini`): the one hook the failover core calls where it sends the
//! fallback's request and reads its reply. The OpenAI body the mode built
//! ([`super::payload::fallback_body`]: full history or the stateless
//! projection) is translated with [`cb_dialect::bridge`] (every system
//! message kept, roles alternated, `max_tokens` supplied, tool calls and
//! results mapped) and sent to the dialect's route with its headers; the
//! answer comes back as an OpenAI completion, whole or as a translated
//! stream, and an error body in the dialect's shape as an OpenAI error
//! body with the fallback's status.
//!
//! Kept apart from the core so that it can be re-applied on another core:
//! [`outgoing`] before the send, [`incoming`] after the reply is read.

use super::core::{Reply, ReplyBody};
use super::relay::Source;
use axum::http::{HeaderValue, StatusCode};
use bytes::Bytes;
use cb_dialect::{bridge, ChunkOptions, Dialect, StreamTranslator};
use futures::stream::StreamExt;
use reqwest::Url;
use serde_json::Value;
use std::fmt;

/// The fallback's request in its dialect.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// Where to send it (the base URL with the dialect's path).
    pub url: Url,
    /// The body.
    pub body: Bytes,
    /// Headers the dialect requires (`anthropic-version`).
    pub headers: &'static [(&'static str, &'static str)],
}

/// Why the fallback's request could not be built.
#[derive(Debug, thiserror::Error)]
pub enum OutgoingError {
    /// The OpenAI body cannot be translated.
    #[error("cannot translate the fallback's request: {0}")]
    Translate(#[from] cb_dialect::TranslateError),
    /// The base URL and the dialect's path do not make a URL.
    #[error("--fallback {0:?} with the dialect's path is not a URL; pass an http(s) base URL")]
    Url(String),
    /// The translated body cannot be serialised.
    #[error("cannot serialise the fallback's request: {0}")]
    Json(#[from] serde_json::Error),
}

/// `body` (the OpenAI request for the fallback) translated for a fallback
/// at `base` speaking `dialect`; `None` for OpenAI, sent as it is.
pub fn outgoing(
    dialect: Dialect,
    base: &str,
    body: &Value,
) -> Option<Result<Outgoing, OutgoingError>> {
    let model = body.get("model").and_then(Value::as_str);
    let translation = bridge::translate(dialect, body, model)?;
    Some((|| {
        let t = translation?;
        let base = base.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        let url = Url::parse(&format!("{base}{}", t.path))
            .map_err(|_| OutgoingError::Url(base.to_string()))?;
        Ok(Outgoing {
            url,
            body: Bytes::from(serde_json::to_vec(&t.body)?),
            headers: bridge::request_headers(dialect),
        })
    })())
}

fn json(status: StatusCode, body: &Value) -> Reply {
    Reply {
        status,
        content_type: Some(HeaderValue::from_static("application/json")),
        body: ReplyBody::Full(Bytes::from(body.to_string())),
        retry_after: None,
    }
}

/// The fallback's `reply` (in `dialect`) as the OpenAI reply the client
/// (`client`, its OpenAI body) expects; `id` and `created` label a
/// translated answer. An OpenAI fallback's reply is returned unchanged.
pub fn incoming(dialect: Dialect, reply: Reply, client: &Value, id: &str, created: u64) -> Reply {
    if dialect == Dialect::Openai {
        return reply;
    }
    let options = ChunkOptions::for_client(client, id, created);
    match reply.body {
        ReplyBody::Full(bytes) if reply.status.is_success() => {
            match bridge::completion(dialect, &bytes, &options) {
                Some(Ok(completion)) => json(reply.status, &completion),
                Some(Err(e)) => Reply::error(
                    StatusCode::BAD_GATEWAY,
                    &format!("the fallback's {dialect} answer could not be read: {e}"),
                    "fallback_malformed",
                ),
                None => Reply {
                    body: ReplyBody::Full(bytes),
                    ..reply
                },
            }
        }
        ReplyBody::Full(bytes) => {
            let body = serde_json::from_slice::<Value>(&bytes)
                .map(|v| bridge::error_to_openai(dialect, &v))
                .unwrap_or_else(|_| {
                    cb_wire::openai::error_body(
                        &String::from_utf8_lossy(&bytes),
                        "upstream_error",
                        None,
                    )
                });
            Reply {
                retry_after: reply.retry_after,
                ..json(reply.status, &body)
            }
        }
        // A stream is translated as it is read (translate_source).
        ReplyBody::Relay(plan) => Reply {
            body: ReplyBody::Relay(plan),
            ..reply
        },
    }
}

/// A fallback's event stream in `dialect` as OpenAI chunk frames, for the
/// relay to read as it reads an OpenAI fallback's (`client`: the OpenAI
/// request it answers); an OpenAI stream is returned as it is.
///
/// The translator holds at most `budget` bytes: past that many bytes read
/// without a frame out, the stream ends with [`OverBudget`]
/// (one 400 MB line from an Anthropic upstream cannot be held).
pub fn translate_source(dialect: Dialect, source: Source, client: &Value, budget: usize) -> Source {
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let options = ChunkOptions::for_client(client, "chatcmpl-proxy", created);
    match bridge::stream_translator(dialect, options) {
        Some(translator) => translate_stream(source, translator, budget),
        None => source,
    }
}

fn broken(e: impl fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// The upstream's body through `translator`: its OpenAI frames as they
/// complete; a malformed or cut upstream stream breaks the client's off
/// (no `[DONE]`), so the client cannot take it for a complete answer.
fn translate_stream(
    upstream: Source,
    translator: Box<dyn StreamTranslator>,
    budget: usize,
) -> Source {
    futures::stream::unfold(Some((upstream, translator)), move |state| async move {
        let (mut upstream, mut translator) = state?;
        // Bytes fed since the translator last gave a frame: what it may
        // be holding.
        let mut held = 0usize;
        loop {
            match upstream.next().await {
                Some(Ok(bytes)) => match translator.feed(&bytes) {
                    Ok(frames) if frames.is_empty() => {
                        held = held.saturating_add(bytes.len());
                        if held > budget {
                            let over = std::io::Error::other(OverBudget(budget));
                            return Some((Err(over), None));
                        }
                        continue;
                    }
                    Ok(frames) => {
                        return Some((Ok(Bytes::from(frames)), Some((upstream, translator))))
                    }
                    Err(e) => return Some((Err(broken(e)), None)),
                },
                Some(Err(e)) => return Some((Err(broken(e)), None)),
                None => {
                    return match translator.finish() {
                        Ok(frames) => Some((Ok(Bytes::from(frames)), None)),
                        Err(e) => Some((Err(broken(e)), None)),
                    }
                }
            }
        }
    })
    .boxed()
}

/// The error a source gives when it stopped reading because it held more
/// than the request's memory budget (a dialect translator that produced
/// nothing for that many bytes, [`translate_source`]).
#[derive(Debug, thiserror::Error)]
#[error("held more than --request-memory ({0} bytes) without a complete event")]
pub struct OverBudget(pub usize);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_go_to_the_dialect_s_route_with_its_headers() {
        let body = json!({"model": "m", "messages": [{"role": "system", "content": "a"}, {"role": "system", "content": "b"}, {"role": "user", "content": "hi"}]});
        assert!(outgoing(Dialect::Openai, "http://h:1", &body).is_none());
        let a = outgoing(Dialect::Anthropic, "http://h:1/v1", &body)
            .unwrap()
            .unwrap();
        assert_eq!(a.url.as_str(), "http://h:1/v1/messages");
        assert_eq!(a.headers, &[("anthropic-version", "2023-06-01")]);
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        assert!(v["max_tokens"].is_u64());
        assert!(!v["system"].is_null(), "{v}");
        let g = outgoing(Dialect::Gemini, "http://h:1/", &body)
            .unwrap()
            .unwrap();
        assert_eq!(g.url.as_str(), "http://h:1/v1beta/models/m:generateContent");
    }

    #[test]
    fn error_bodies_come_back_in_openai_shape() {
        let reply = Reply {
            status: StatusCode::BAD_REQUEST,
            content_type: None,
            retry_after: None,
            body: ReplyBody::Full(Bytes::from(
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}}).to_string(),
            )),
        };
        let out = incoming(Dialect::Anthropic, reply, &json!({}), "x", 0);
        assert_eq!(out.status, StatusCode::BAD_REQUEST);
        let ReplyBody::Full(bytes) = out.body else {
            panic!()
        };
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["error"]["message"], "max_tokens: Field required");
    }
}
