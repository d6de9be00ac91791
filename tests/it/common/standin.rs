//! A provider stand-in for the pass-through tests: an OpenAI-compatible
//! `POST /v1/chat/completions` on 127.0.0.1, streamed or not, that checks
//! the Bearer key (and, like real providers do, echoes the key it got in
//! its 401 body) and answers with a tiny model of its own.
//!
//! Its model answers the last user question from the messages it
//! received, exactly as the harness's simulated model does (it calls the
//! same pure function, [`continuity_bench::upstream::model::reply`]), so
//! that `history` and `stateless` differ for the same reason and the
//! verdicts of a pass-through run can be compared one for one with those
//! of a simulated run. It reports its own model id, and keeps every
//! request it saw, so a test can prove that a faulted attempt never
//! reached it. A stream goes all at once, or slowly ([`Pace::Slow`]: a
//! provider generating its answer), or breaks off after its first piece
//! ([`Pace::BreakAfterFirst`]).

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use continuity_bench::openai::{chunk_body, completion_body, ChatMessage, Usage};
use continuity_bench::server::{serve, ServerHandle};
use futures::StreamExt;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Pieces a slow stream's text is sent in.
pub const SLOW_PIECES: usize = 4;

/// How the stand-in sends a streamed answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pace {
    /// The whole stream at once.
    #[default]
    AtOnce,
    /// The role chunk and the first piece of the text at once, then the
    /// rest in pieces this far apart (the text in at most
    /// [`SLOW_PIECES`] pieces).
    Slow(Duration),
    /// The role chunk and the first piece, then the body breaks off.
    BreakAfterFirst,
}

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The `model` asked for.
    pub model: String,
    /// Whether it asked for a stream.
    pub stream: bool,
    /// The text of its last user message.
    pub last_user: String,
    /// Whether its key was right.
    pub authorized: bool,
}

#[derive(Debug)]
struct Shared {
    key: String,
    pace: Pace,
    reported_model: String,
    seen: Mutex<Vec<Seen>>,
}

/// A running stand-in.
pub struct StandIn {
    /// Its base URL, `http://127.0.0.1:PORT/v1`.
    pub url: String,
    /// Its port.
    pub port: u16,
    shared: Arc<Shared>,
    _server: ServerHandle,
}

impl StandIn {
    /// Starts a stand-in that accepts `key` and says its answers come from
    /// `reported_model`.
    pub async fn start(key: &str, reported_model: &str) -> StandIn {
        Self::start_with(key, reported_model, Pace::AtOnce).await
    }

    /// As [`StandIn::start`], its streams sent at `pace`.
    pub async fn start_with(key: &str, reported_model: &str, pace: Pace) -> StandIn {
        let shared = Arc::new(Shared {
            key: key.to_string(),
            pace,
            reported_model: reported_model.to_string(),
            seen: Mutex::new(Vec::new()),
        });
        let router = Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(Arc::clone(&shared));
        let server = serve(([127, 0, 0, 1], 0).into(), router).await.unwrap();
        StandIn {
            url: format!("{}/v1", server.url()),
            port: server.addr.port(),
            shared,
            _server: server,
        }
    }

    /// Every request received so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

async fn chat(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_string();
    let messages: Vec<ChatMessage> =
        serde_json::from_value(body["messages"].clone()).unwrap_or_default();
    let stream = body["stream"].as_bool().unwrap_or(false);
    let authorized = given == shared.key;
    shared.seen.lock().unwrap().push(Seen {
        model: body["model"].as_str().unwrap_or("").to_string(),
        stream,
        last_user: messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(ChatMessage::text)
            .unwrap_or_default(),
        authorized,
    });
    if !authorized {
        // As real providers do: the key it got, echoed in the error.
        let error = json!({"error": {
            "message": format!("Incorrect API key provided: {given}. You can find your API key at https://example.invalid/keys."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"
        }});
        return (StatusCode::UNAUTHORIZED, Json(error)).into_response();
    }
    let text = continuity_bench::upstream::model::reply(&messages);
    let model = shared.reported_model.as_str();
    if !stream {
        let usage = Usage::new(10, 5);
        return Json(completion_body(
            "cmpl-standin",
            model,
            0,
            &text,
            "stop",
            usage,
        ))
        .into_response();
    }
    let frame = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            chunk_body("cmpl-standin", model, 0, delta, finish)
        )
    };
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    let pieces: Vec<String> = match shared.pace {
        Pace::AtOnce => words.iter().map(|w| w.to_string()).collect(),
        Pace::Slow(_) | Pace::BreakAfterFirst => words
            .chunks(words.len().div_ceil(SLOW_PIECES).max(1))
            .map(|c| c.concat())
            .collect(),
    };
    let gap = match shared.pace {
        Pace::Slow(gap) => gap,
        Pace::AtOnce | Pace::BreakAfterFirst => Duration::ZERO,
    };
    let mut frames: Vec<(Duration, String)> = vec![(
        Duration::ZERO,
        frame(json!({"role": "assistant", "content": ""}), None),
    )];
    for (i, piece) in pieces.iter().enumerate() {
        let wait = if i == 0 { Duration::ZERO } else { gap };
        frames.push((wait, frame(json!({"content": piece}), None)));
    }
    if shared.pace == Pace::BreakAfterFirst {
        frames.truncate(2);
    } else {
        frames.push((Duration::ZERO, frame(json!({}), Some("stop"))));
        frames.push((Duration::ZERO, "data: [DONE]\n\n".to_string()));
    }
    let sent = futures::stream::iter(frames).then(|(wait, f)| async move {
        // The stand-in's pace: a provider generating its answer.
        tokio::time::sleep(wait).await;
        Ok::<_, std::io::Error>(Bytes::from(f))
    });
    let body = if shared.pace == Pace::BreakAfterFirst {
        // The bytes sent get time to leave before the connection breaks.
        let broken = futures::stream::once(async {
            // Not a guess at timing: the sleep's first poll is Pending, on which hyper flushes
            // what the stream gave it, so the first piece is in the socket before the break,
            // whatever the load.
            tokio::time::sleep(Duration::from_millis(100)).await;
            Err(std::io::Error::other("the stand-in breaks its stream off"))
        });
        Body::from_stream(sent.chain(broken))
    } else {
        Body::from_stream(sent)
    };
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}
