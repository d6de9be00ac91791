//! Hostile gateways: test fixtures that attack the harness rather than get
//! failover wrong. Each answers the preflight request as a well-behaved
//! gateway does (so the run starts), then misbehaves on every conversation
//! request: it redirects, sends more bytes than any answer needs, sends long
//! answers, sends `content` that is not text, or echoes the request's
//! headers (secrets included) into its answers, error bodies and preflight
//! reply. None calls its upstreams.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use continuity_bench::openai::{completion_body, Usage};
use continuity_bench::server::{serve, ServerHandle};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The first words of the harness's preflight request.
const PREFLIGHT: &str = "continuity-bench preflight";

/// Size of one chunk of an oversized body.
const CHUNK: usize = 64 * 1024;

/// What a hostile gateway does to every conversation request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hostile {
    /// Answers `302 Found` with `Location: <to>/v1/chat/completions`.
    Redirect {
        /// Base URL the redirect points at.
        to: String,
    },
    /// Answers 200 with a body of `bytes` bytes (a JSON answer that never
    /// ends, or for a stream, content chunks without end), sent in chunks;
    /// with `announce`, the length is sent up front in `Content-Length`.
    Oversized {
        /// Bytes sent.
        bytes: usize,
        /// Whether `Content-Length` announces them.
        announce: bool,
    },
    /// Answers every turn with a valid answer of `chars` characters full of
    /// commas and quotes (what made CSV writing quadratic).
    LongAnswers {
        /// Characters of every answer.
        chars: usize,
    },
    /// Answers 200 with this JSON value as `content` (`42`, an object).
    Content(Value),
    /// Echoes every request header into its answers, into 500 error bodies
    /// (on turn 2 of some conversations, the secret at the 200th character,
    /// where an error excerpt is cut) and into its preflight reply; a
    /// streamed answer splits the echo across two chunks.
    Echo,
    /// As `Echo`, but fails the preflight with an echoing 500.
    EchoFailingPreflight,
    /// Fails the preflight with a 500 whose body carries raw terminal
    /// control characters (an escape sequence that clears the screen and
    /// colours what follows, a carriage return, a backspace, a bell), the
    /// bytes as sent, not JSON-escaped.
    EscapesInPreflight,
}

#[derive(Clone)]
struct Gateway {
    kind: Hostile,
    sent: Sent,
}

/// Bytes of oversized bodies the server has handed to the socket, counted
/// as the body stream is pulled: how much the client let through before it
/// stopped reading (a client that reads on pulls all of it).
#[derive(Debug, Clone, Default)]
pub struct Sent(Arc<AtomicU64>);

impl Sent {
    /// Bytes pulled so far.
    pub fn bytes(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The router of a hostile gateway that counts its oversized bytes in `sent`.
fn router(kind: Hostile, sent: Sent) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(handle))
        .with_state(Gateway { kind, sent })
}

/// Starts a hostile gateway on 127.0.0.1.
pub async fn start(kind: Hostile) -> ServerHandle {
    start_counting(kind).await.0
}

/// Starts a hostile gateway on 127.0.0.1, with the count of the oversized
/// bytes it sent.
pub async fn start_counting(kind: Hostile) -> (ServerHandle, Sent) {
    let sent = Sent::default();
    let server = serve(([127, 0, 0, 1], 0).into(), router(kind, sent.clone()))
        .await
        .unwrap();
    (server, sent)
}

/// Every request header as `name: value`, joined by `; `.
fn dump(headers: &HeaderMap) -> String {
    headers
        .iter()
        .map(|(name, value)| format!("{name}: {}", String::from_utf8_lossy(value.as_bytes())))
        .collect::<Vec<_>>()
        .join("; ")
}

fn answer(text: &str) -> Response {
    Json(completion_body(
        "chatcmpl-hostile",
        "hostile",
        0,
        text,
        "stop",
        Usage::new(1, 1),
    ))
    .into_response()
}

fn sse(events: Vec<String>) -> Response {
    let mut body: String = events
        .into_iter()
        .map(|e| format!("data: {e}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(body))
        .unwrap()
}

fn delta(text: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]}).to_string()
}

/// A 500 whose error body puts `x-api-key=VALUE` at the 190th character,
/// across the 200 characters an error excerpt keeps.
fn echo_error(headers: &HeaderMap) -> Response {
    let key = headers
        .get("x-api-key")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    // `{"error":{"message":"` is 21 characters, `x-api-key=` 10.
    let message = format!(
        "{}x-api-key={key}; {}",
        "x".repeat(190 - 21 - 10),
        dump(headers)
    );
    let message = serde_json::to_string(&message).unwrap();
    let body = format!(r#"{{"error":{{"message":{message},"type":"server_error"}}}}"#);
    Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap()
}

/// A body of `bytes` bytes, repeated `piece`s after `head`, in chunks.
fn oversized(
    head: &str,
    piece: &str,
    bytes: usize,
    announce: bool,
    sse: bool,
    sent: &Sent,
) -> Response {
    let mut chunk = head.as_bytes().to_vec();
    while chunk.len() < CHUNK {
        chunk.extend_from_slice(piece.as_bytes());
    }
    let chunk = bytes::Bytes::from(chunk);
    let count = bytes.div_ceil(chunk.len());
    let builder = Response::builder().header(
        "content-type",
        if sse {
            "text/event-stream"
        } else {
            "application/json"
        },
    );
    if announce {
        let whole: Vec<u8> = chunk
            .iter()
            .copied()
            .cycle()
            .take(count * chunk.len())
            .collect();
        return builder.body(Body::from(whole)).unwrap();
    }
    let sent = sent.clone();
    let stream = futures::stream::iter((0..count).map(move |_| {
        sent.0.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        Ok::<_, std::io::Error>(chunk.clone())
    }));
    builder.body(Body::from_stream(stream)).unwrap()
}

/// The text of the first user message, and the number of user messages.
fn turn_of(body: &Value) -> (String, usize) {
    let users: Vec<&Value> = body["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "user").collect())
        .unwrap_or_default();
    let first = users
        .first()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    (first, users.len())
}

async fn handle(State(g): State<Gateway>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let (first, turn) = turn_of(&body);
    let stream = body["stream"] == Value::Bool(true);
    let preflight = first.starts_with(PREFLIGHT);
    let echo = dump(&headers);
    match (&g.kind, preflight) {
        (Hostile::EchoFailingPreflight, _) => echo_error(&headers),
        (Hostile::EscapesInPreflight, _) => Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .header("content-type", "application/json")
            .body(Body::from(
                "{\"error\":{\"message\":\"boom\u{1b}[2J\u{1b}[31mall systems pass\u{1b}[0m\r\u{8}\u{7}\"}}",
            ))
            .unwrap(),
        (Hostile::Echo, true) => answer(&format!("preflight ok; you sent {echo}")),
        (_, true) => answer("preflight ok"),
        (Hostile::Redirect { to }, false) => Response::builder()
            .status(StatusCode::FOUND)
            .header("location", format!("{to}/v1/chat/completions"))
            .body(Body::empty())
            .unwrap(),
        (Hostile::Oversized { bytes, announce }, false) if stream => {
            let piece = format!("data: {}\n\n", delta("xxxxxxxxxxxxxxxx"));
            oversized("", &piece, *bytes, *announce, true, &g.sent)
        }
        (Hostile::Oversized { bytes, announce }, false) => oversized(
            r#"{"choices":[{"message":{"role":"assistant","content":""#,
            "xxxxxxxxxxxxxxxx",
            *bytes,
            *announce,
            false,
            &g.sent,
        ),
        (Hostile::LongAnswers { chars }, false) => {
            let text: String = "a, \"b\" ".chars().cycle().take(*chars).collect();
            if stream {
                sse(vec![delta(&text)])
            } else {
                answer(&text)
            }
        }
        (Hostile::Content(value), false) if stream => sse(vec![
            json!({"choices": [{"index": 0, "delta": {"content": value}}]}).to_string(),
        ]),
        (Hostile::Content(value), false) => Json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": value}, "finish_reason": "stop"}]
        }))
        .into_response(),
        (Hostile::Echo, false) if turn == 2 && first.len() % 2 == 1 => echo_error(&headers),
        (Hostile::Echo, false) if stream => {
            // The echo split in two chunks, inside the secret.
            let text = format!("Noted. You sent: {echo}");
            let middle = text.len() / 2;
            let split = (middle..text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            sse(vec![delta(&text[..split]), delta(&text[split..])])
        }
        (Hostile::Echo, false) => answer(&format!("Noted. You sent: {echo}")),
    }
}

/// A server that would answer every request 200 (the place a redirect
/// points at), recording the headers of every request it gets.
pub struct Landing {
    /// The server.
    pub server: ServerHandle,
    /// The headers of every request it got.
    pub seen: Arc<Mutex<Vec<HeaderMap>>>,
}

/// Starts a [`Landing`] server on 127.0.0.1.
pub async fn landing() -> Landing {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let record = Arc::clone(&seen);
    let router = Router::new().route(
        "/v1/chat/completions",
        post(move |headers: HeaderMap| {
            let record = Arc::clone(&record);
            async move {
                record.lock().unwrap().push(headers);
                answer("I never saw this conversation.")
            }
        }),
    );
    let server = serve(([127, 0, 0, 1], 0).into(), router).await.unwrap();
    Landing { server, seen }
}

/// A judge that echoes the headers it got (its key) into every verdict's
/// reason, and says "lost".
pub async fn echo_judge() -> ServerHandle {
    let router = Router::new().route(
        "/v1/chat/completions",
        post(|headers: HeaderMap| async move {
            let verdict =
                json!({"preserved": false, "reason": format!("I was sent {}", dump(&headers))});
            answer(&format!(
                "Verdict: {verdict}. Your key was {}",
                dump(&headers)
            ))
        }),
    );
    serve(([127, 0, 0, 1], 0).into(), router).await.unwrap()
}
