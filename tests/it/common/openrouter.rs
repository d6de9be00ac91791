//! An OpenRouter-compatible endpoint written for the canary tests,
//! independent of the built-in simulated one: route discovery
//! (`GET /models/{author}/{slug}/endpoints`) and `POST /chat/completions`
//! honouring `provider.order` and `allow_fallbacks` (a failing route hands
//! over to a clean one unless fallbacks are off), with a Bearer key
//! checked on every call. Its degraded routes are its own and
//! deterministic: one prefixes `, ` to every text reply, one answers the
//! schema probe with an object missing two required keys, one answers the
//! language probe in English whatever the language asked, one sends the
//! first token of its streams [`SLOW_FIRST_TOKEN`] late, one filters the
//! roleplay request (the control), one answers from another provider
//! (pinning not honoured), one answers 429 on every other request, and one
//! answers 500 with the caller's key echoed in the error body.

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use continuity_bench::contracts::{detect_language, Language};
use continuity_bench::server::{serve, ServerHandle};
use continuity_bench::upstream::degrade::phrasebook;
use futures::StreamExt as _;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How late the slow route sends the first content token of a stream (its
/// headers and role chunk go at once): far above the 1 s ttft limit the
/// tests set, and load can only make it later.
pub const SLOW_FIRST_TOKEN: Duration = Duration::from_secs(2);

/// How a test route answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Clean replies.
    Clean,
    /// `, ` before every text reply.
    Junk,
    /// `{"city": "Lisbon"}` for structured output.
    BrokenSchema,
    /// English sentences whatever language the user wrote in.
    English,
    /// Streams whose first content token comes after [`SLOW_FIRST_TOKEN`].
    SlowFirstToken,
    /// A refusal with `content_filter` to the roleplay request.
    Filters,
    /// A clean reply, junk-prefixed, naming another provider.
    IgnoresPinning,
    /// 429 on every other request.
    Flaky,
    /// 500 with the Authorization header echoed in the body.
    EchoesKey,
}

/// One route of the test endpoint.
#[derive(Debug, Clone)]
pub struct TestRoute {
    /// The tag, or `None` to list only a provider name.
    pub tag: Option<&'static str>,
    /// The provider name.
    pub provider: &'static str,
    /// How it answers.
    pub kind: Kind,
}

impl TestRoute {
    fn id(&self) -> &str {
        self.tag.unwrap_or(self.provider)
    }
}

/// The routes of the canary tests.
pub fn routes() -> Vec<TestRoute> {
    let r = |tag, provider, kind| TestRoute {
        tag,
        provider,
        kind,
    };
    vec![
        r(Some("alpha/fp8"), "Alpha", Kind::Clean),
        r(Some("bravo"), "Bravo", Kind::Clean),
        r(None, "Charlie", Kind::Clean),
        r(Some("delta/fp8"), "Delta", Kind::Junk),
        r(Some("echo"), "Echo", Kind::BrokenSchema),
        r(Some("foxtrot/fp8"), "Foxtrot", Kind::English),
        r(Some("golf"), "Golf", Kind::IgnoresPinning),
        r(Some("hotel"), "Hotel", Kind::Filters),
        r(Some("india"), "India", Kind::Flaky),
        r(Some("juliet"), "Juliet", Kind::EchoesKey),
        r(Some("kilo/fp8"), "Kilo", Kind::SlowFirstToken),
    ]
}

struct Shared {
    routes: Vec<TestRoute>,
    /// Entries listed after the routes, as given (hostile listings).
    extra: Vec<Value>,
    key: String,
    counts: Mutex<HashMap<String, u64>>,
}

/// Serves the test endpoint on 127.0.0.1 at a free port, accepting `key`.
pub async fn start(key: &str) -> ServerHandle {
    start_listing_also(key, Vec::new()).await
}

/// As [`start`], its listing followed by `extra` entries as given (which
/// name no route it answers for).
pub async fn start_listing_also(key: &str, extra: Vec<Value>) -> ServerHandle {
    let shared = Arc::new(Shared {
        routes: routes(),
        extra,
        key: key.to_string(),
        counts: Mutex::new(HashMap::new()),
    });
    let router = Router::new()
        .route("/api/v1/models/{author}/{slug}/endpoints", get(listing))
        .route("/api/v1/chat/completions", post(chat))
        .with_state(shared);
    serve("127.0.0.1:0".parse().unwrap(), router).await.unwrap()
}

fn authorised(shared: &Shared, headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {}", shared.key))
}

fn error(status: u16, message: &str) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        Json(json!({"error": {"code": status, "message": message}})),
    )
        .into_response()
}

async fn listing(
    State(shared): State<Arc<Shared>>,
    Path((author, slug)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if !authorised(&shared, &headers) {
        return error(401, "No auth credentials found");
    }
    let model = format!("{author}/{slug}");
    let endpoints: Vec<Value> = shared
        .routes
        .iter()
        .map(|r| {
            let mut e = json!({"name": format!("{} | {model}", r.provider), "provider_name": r.provider,
                               "context_length": 8192, "status": 0});
            if let Some(tag) = r.tag {
                e["tag"] = json!(tag);
            }
            e
        })
        .chain(shared.extra.iter().cloned())
        .collect();
    Json(json!({"data": {"id": model, "name": model, "endpoints": endpoints}})).into_response()
}

fn text_of(message: &Value) -> String {
    message["content"].as_str().unwrap_or_default().to_string()
}

async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !authorised(&shared, &headers) {
        return error(401, "No auth credentials found");
    }
    let request: Value = serde_json::from_slice(&body).unwrap();
    let first = request["provider"]["order"][0].as_str().unwrap_or_default();
    let Some(mut route) = shared.routes.iter().find(|r| r.id() == first).cloned() else {
        return error(404, "No endpoints found matching your data policy");
    };
    // As OpenRouter: fallbacks are allowed unless the request says not.
    let fallbacks = request["provider"]["allow_fallbacks"] != json!(false);
    let count = {
        let mut counts = shared.counts.lock().unwrap();
        let n = counts.entry(route.id().to_string()).or_insert(0);
        *n += 1;
        *n
    };
    let fails = match route.kind {
        Kind::Flaky => count % 2 == 0,
        Kind::EchoesKey => true,
        _ => false,
    };
    if fails && fallbacks {
        // A failing route hands over to a clean one, which then names
        // itself: a probe that allowed this would see "pinning not
        // honoured" on the flaky routes.
        if let Some(clean) = shared.routes.iter().find(|r| r.kind == Kind::Clean) {
            route = clean.clone();
        }
    }
    match route.kind {
        Kind::Flaky if count % 2 == 0 => return error(429, "Rate limit exceeded"),
        Kind::EchoesKey => {
            let auth = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            return error(
                500,
                &format!("upstream failed; request had Authorization: {auth}"),
            );
        }
        _ => {}
    }
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let roleplay = messages.iter().any(|m| m["role"] == "system");
    let structured = request.get("response_format").is_some();
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(text_of)
        .unwrap_or_default();
    let (mut text, mut finish) = if structured {
        (
            json!({"city": "Lisbon", "country": "Portugal", "population_millions": 0.5})
                .to_string(),
            "stop",
        )
    } else if roleplay {
        (
            "Welcome, traveller! Come and sit by the fire. I have a room upstairs and a hot stew waiting for you."
                .to_string(),
            "stop",
        )
    } else {
        let language = detect_language(&last_user, &Language::ALL).unwrap_or(Language::En);
        let language = if route.kind == Kind::English {
            Language::En
        } else {
            language
        };
        let sentences = phrasebook::sentences(language);
        let separator = if language == Language::Ja { "" } else { " " };
        (sentences[4..7].join(separator), "stop")
    };
    match route.kind {
        Kind::Junk | Kind::IgnoresPinning if !structured => text = format!(", {text}"),
        Kind::BrokenSchema if structured => text = json!({"city": "Lisbon"}).to_string(),
        Kind::Filters if roleplay => {
            text = "I'm sorry, but I can't help with that.".to_string();
            finish = "content_filter";
        }
        _ => {}
    }
    let provider = if route.kind == Kind::IgnoresPinning {
        "Alpha"
    } else {
        route.provider
    };
    let model = request["model"].as_str().unwrap_or_default().to_string();
    if request["stream"] == json!(true) {
        let chunk = |delta: Value, finish: Value| {
            format!(
                "data: {}\n\n",
                json!({"id": "gen-test", "object": "chat.completion.chunk", "model": model, "provider": provider,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            )
        };
        let head = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        let mut rest = String::new();
        for word in text.split_inclusive(' ') {
            rest.push_str(&chunk(json!({"content": word}), Value::Null));
        }
        rest.push_str(&chunk(json!({}), json!(finish)));
        rest.push_str("data: [DONE]\n\n");
        let delay = if route.kind == Kind::SlowFirstToken {
            SLOW_FIRST_TOKEN
        } else {
            Duration::ZERO
        };
        let parts = futures::stream::iter([(head, Duration::ZERO), (rest, delay)]).then(
            |(part, wait)| async move {
                // The simulated route's slow first token: a fault on the wire.
                tokio::time::sleep(wait).await;
                Ok::<_, Infallible>(part)
            },
        );
        return Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(parts))
            .unwrap();
    }
    Json(json!({"id": "gen-test", "object": "chat.completion", "model": model, "provider": provider,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}}))
    .into_response()
}
