//! Control gateways for a fallback in another dialect (positive controls of
//! "what reached the fallback"). Each one fronts the harness's upstreams as
//! an external gateway does: it sends the client's request to the OpenAI
//! primary and, when that fails, translates the history for an Anthropic or
//! Gemini fallback with the crate's own bridge, then gets one thing wrong on
//! purpose, as public gateways have: it keeps only the last system message,
//! drops tool results (and the tool calls they answer) as "orphaned", omits
//! `max_tokens`, or trims the history to fit a small context window. Plain
//! (not streamed) requests only: the tests that use them do not stream.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use continuity_bench::dialect::{bridge, ChunkOptions, Dialect};
use continuity_bench::server::{serve, ServerHandle};
use serde_json::Value;
use std::time::Duration;

/// What a dialect control gateway gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialectFault {
    /// Keeps only the client's last system message.
    KeepsLastSystemOnly,
    /// Drops every tool result and the assistant tool calls they answer.
    DropsToolResults,
    /// Leaves `max_tokens` out of the translated request.
    OmitsMaxTokens,
    /// Sends the fallback only the system messages and the last user turn
    /// (with its tool exchange), so a long history fits a small window.
    TrimsToLastTurn,
    /// Sends the whole history; when the fallback refuses it with a 400,
    /// sends it again trimmed as `TrimsToLastTurn` does (as gateways with
    /// a context-window fallback do).
    TrimsAfterRejection,
}

/// Deadline of one upstream attempt: generous, so a loaded test machine
/// does not turn a slow answer into an error.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
struct Gateway {
    fault: DialectFault,
    dialect: Dialect,
    primary: String,
    fallback: String,
    client: reqwest::Client,
}

/// Starts a control gateway on 127.0.0.1 in front of an OpenAI `primary`
/// and a `fallback` speaking `dialect` (base URLs).
pub async fn start(
    fault: DialectFault,
    dialect: Dialect,
    primary: String,
    fallback: String,
) -> ServerHandle {
    let state = Gateway {
        fault,
        dialect,
        primary,
        fallback,
        client: reqwest::Client::builder().no_proxy().build().unwrap(),
    };
    let router = Router::new()
        .route("/v1/chat/completions", post(handle))
        .with_state(state);
    serve(([127, 0, 0, 1], 0).into(), router).await.unwrap()
}

/// A control gateway in front of upstreams to be started on two ports that
/// were free a moment ago: (gateway, primary port, fallback port).
pub async fn start_on_free_ports(
    fault: DialectFault,
    dialect: Dialect,
) -> (ServerHandle, u16, u16) {
    let (primary, fallback) = (super::gateways::free_port(), super::gateways::free_port());
    let gateway = start(
        fault,
        dialect,
        format!("http://127.0.0.1:{primary}"),
        format!("http://127.0.0.1:{fallback}"),
    )
    .await;
    (gateway, primary, fallback)
}

/// The messages the fallback gets from `fault`.
fn fallback_messages(fault: DialectFault, messages: &[Value]) -> Vec<Value> {
    let is_system = |m: &Value| m["role"] == "system";
    match fault {
        DialectFault::KeepsLastSystemOnly => {
            let last = messages.iter().rposition(is_system);
            messages
                .iter()
                .enumerate()
                .filter(|(i, m)| !is_system(m) || Some(*i) == last)
                .map(|(_, m)| m.clone())
                .collect()
        }
        DialectFault::DropsToolResults => messages
            .iter()
            .filter(|m| m["role"] != "tool" && m["tool_calls"].is_null())
            .cloned()
            .collect(),
        DialectFault::OmitsMaxTokens | DialectFault::TrimsAfterRejection => messages.to_vec(),
        DialectFault::TrimsToLastTurn => {
            let last_user = messages
                .iter()
                .rposition(|m| m["role"] == "user")
                .unwrap_or(0);
            messages
                .iter()
                .enumerate()
                .filter(|(i, m)| is_system(m) || *i >= last_user)
                .map(|(_, m)| m.clone())
                .collect()
        }
    }
}

/// An OpenAI error reply.
fn error(status: u16, message: &str) -> Response {
    let body = serde_json::json!({"error": {"message": message, "type": "control_error"}});
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
        Json(body),
    )
        .into_response()
}

/// Sends the client's `body` with `messages` to the fallback in its
/// dialect: its status and body, or the reply for the client when it did
/// not answer.
async fn send_fallback(
    g: &Gateway,
    body: &Value,
    messages: Vec<Value>,
) -> Result<(u16, bytes::Bytes), Response> {
    let mut openai = body.clone();
    openai["messages"] = Value::Array(messages);
    let model = openai["model"].as_str().map(str::to_string);
    let mut translation = bridge::translate(g.dialect, &openai, model.as_deref())
        .expect("a dialect fallback")
        .unwrap();
    if g.fault == DialectFault::OmitsMaxTokens {
        if let Some(top) = translation.body.as_object_mut() {
            top.remove("max_tokens");
        }
    }
    let mut request = g
        .client
        .post(format!("{}{}", g.fallback, translation.path))
        .json(&translation.body)
        .timeout(ATTEMPT_TIMEOUT);
    for (name, value) in bridge::request_headers(g.dialect) {
        request = request.header(*name, *value);
    }
    let Ok(response) = request.send().await else {
        return Err(error(504, "the fallback did not answer"));
    };
    let status = response.status().as_u16();
    match response.bytes().await {
        Ok(bytes) => Ok((status, bytes)),
        Err(_) => Err(error(502, "the fallback's answer broke off")),
    }
}

async fn handle(State(g): State<Gateway>, Json(body): Json<Value>) -> Response {
    let primary = g
        .client
        .post(format!("{}/v1/chat/completions", g.primary))
        .json(&body)
        .timeout(ATTEMPT_TIMEOUT)
        .send()
        .await;
    if let Ok(response) = primary {
        if response.status().is_success() {
            if let Ok(json) = response.json::<Value>().await {
                return Json(json).into_response();
            }
        }
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let mut sent = send_fallback(&g, &body, fallback_messages(g.fault, &messages)).await;
    if g.fault == DialectFault::TrimsAfterRejection && matches!(sent, Ok((400, _))) {
        let trimmed = fallback_messages(DialectFault::TrimsToLastTurn, &messages);
        sent = send_fallback(&g, &body, trimmed).await;
    }
    let (status, bytes) = match sent {
        Ok(answer) => answer,
        Err(reply) => return reply,
    };
    if !(200..300).contains(&status) {
        let json = serde_json::from_slice::<Value>(&bytes).unwrap_or_default();
        let openai = bridge::error_to_openai(g.dialect, &json);
        return (
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
            Json(openai),
        )
            .into_response();
    }
    let options = ChunkOptions::for_client(&body, "chatcmpl-control", 0);
    match bridge::completion(g.dialect, &bytes, &options) {
        Some(Ok(completion)) => Json(completion).into_response(),
        _ => error(502, "the fallback's answer could not be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conversation() -> Vec<Value> {
        vec![
            json!({"role": "system", "content": "s1"}),
            json!({"role": "system", "content": "s2"}),
            json!({"role": "user", "content": "u1"}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1"}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "r1"}),
            json!({"role": "assistant", "content": "a1"}),
            json!({"role": "user", "content": "u2"}),
        ]
    }

    #[test]
    fn each_fault_changes_only_what_it_names() {
        let all = conversation();
        let texts = |f| {
            fallback_messages(f, &all)
                .iter()
                .map(|m| m["content"].as_str().unwrap_or("call").to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            texts(DialectFault::KeepsLastSystemOnly),
            ["s2", "u1", "call", "r1", "a1", "u2"]
        );
        assert_eq!(
            texts(DialectFault::DropsToolResults),
            ["s1", "s2", "u1", "a1", "u2"]
        );
        assert_eq!(fallback_messages(DialectFault::OmitsMaxTokens, &all), all);
        assert_eq!(texts(DialectFault::TrimsToLastTurn), ["s1", "s2", "u2"]);
    }
}
