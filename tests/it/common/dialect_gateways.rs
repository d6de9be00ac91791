//! Control gateways for a fallback in another dialect (positive controls of
//! "what reached the fallback"). Each one fronts the harness's upstreams as
//! an external gateway does: it sends the client's request to the OpenAI
//! primary and, when that fails, translates the history for an Anthropic or
//! Gemini fallback with the crate's own bridge, then gets one thing wrong on
//! purpose, as public gateways have: it keeps only the last system message,
//! drops tool results (and the tool calls they answer) as "orphaned", omits
//! `max_tokens`, or trims the history to fit a small context window; or,
//! past the fault, keeps a session on the fallback for good, forgets the
//! turns the fallback served, or passes tool-call ids through to a dialect
//! that refuses them. Plain (not streamed) requests only: the tests that
//! use them do not stream.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use continuity_bench::dialect::{bridge, ChunkOptions, Dialect};
use continuity_bench::server::{serve, ServerHandle};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
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
    /// After the primary failed a session once (a session is named by its
    /// first user message), sends every later request of it straight to
    /// the fallback: the session never returns to the primary.
    StaysOnFallback,
    /// Forgets the turns the fallback served: every later request of the
    /// session, to either upstream, goes without them (the user message,
    /// its tool exchange and the fallback's reply), as a gateway that
    /// stores only the primary's replies does.
    DropsFallbackTurns,
    /// Translates the history for the fallback, but puts the client's
    /// tool-call ids back as they were, where the fallback's dialect
    /// refuses some of them.
    PassesToolIdsThrough,
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
    /// Sessions (first user messages) `StaysOnFallback` keeps on the
    /// fallback.
    stuck: Shared,
    /// The turns the fallback served, by session (the session's first user
    /// message, the turn's number), which `DropsFallbackTurns` forgets.
    fallback_turns: Arc<Mutex<HashSet<(String, usize)>>>,
}

type Shared = Arc<Mutex<HashSet<String>>>;

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
        stuck: Shared::default(),
        fallback_turns: Arc::default(),
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
        DialectFault::OmitsMaxTokens
        | DialectFault::TrimsAfterRejection
        | DialectFault::StaysOnFallback
        | DialectFault::DropsFallbackTurns
        | DialectFault::PassesToolIdsThrough => messages.to_vec(),
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
    if g.fault == DialectFault::PassesToolIdsThrough {
        restore_tool_ids(&openai, &mut translation.body);
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

/// Puts the client's tool-call ids (`openai`, in OpenAI shape) back into
/// the translated `body` of an Anthropic request, in order: the calls'
/// ids into the `tool_use` blocks, the results' into the `tool_result`
/// blocks.
fn restore_tool_ids(openai: &Value, body: &mut Value) {
    let messages = openai["messages"].as_array().cloned().unwrap_or_default();
    let mut calls = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["id"].clone());
    let mut results = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].clone());
    let blocks = body["messages"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array_mut())
        .flatten();
    for block in blocks {
        match block["type"].as_str() {
            Some("tool_use") => block["id"] = calls.next().unwrap_or_default(),
            Some("tool_result") => block["tool_use_id"] = results.next().unwrap_or_default(),
            _ => {}
        }
    }
}

/// `messages` without the turns numbered in `forgotten` (from 1): each
/// such turn's user message and everything after it up to the next user
/// message (its tool exchange and the reply).
fn without_turns(messages: &[Value], forgotten: &HashSet<usize>) -> Vec<Value> {
    let mut turn = 0;
    messages
        .iter()
        .filter(|m| {
            if m["role"] == "user" {
                turn += 1;
            }
            m["role"] == "system" || !forgotten.contains(&turn)
        })
        .cloned()
        .collect()
}

async fn handle(State(g): State<Gateway>, Json(mut body): Json<Value>) -> Response {
    let session = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let client_turn = body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "user").count());
    if g.fault == DialectFault::DropsFallbackTurns {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let forgotten: HashSet<usize> = g
            .fallback_turns
            .lock()
            .unwrap()
            .iter()
            .filter(|(s, _)| *s == session)
            .map(|(_, turn)| *turn)
            .collect();
        let kept = without_turns(&messages, &forgotten);
        body["messages"] = Value::Array(kept);
    }
    let stuck =
        g.fault == DialectFault::StaysOnFallback && g.stuck.lock().unwrap().contains(&session);
    if !stuck {
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
        if g.fault == DialectFault::StaysOnFallback {
            g.stuck.lock().unwrap().insert(session.clone());
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
        Some(Ok(completion)) => {
            if g.fault == DialectFault::DropsFallbackTurns {
                g.fallback_turns
                    .lock()
                    .unwrap()
                    .insert((session, client_turn));
            }
            Json(completion).into_response()
        }
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

    #[test]
    fn forgetting_a_turn_forgets_all_of_it() {
        let forgotten: HashSet<usize> = [1].into();
        let kept: Vec<String> = without_turns(&conversation(), &forgotten)
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("call").to_string())
            .collect();
        assert_eq!(kept, ["s1", "s2", "u2"]);
    }

    #[test]
    fn tool_ids_go_back_as_the_client_sent_them() {
        let openai = json!({"messages": [
            {"role": "user", "content": "u1"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "functions.read:1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "functions.read:1", "content": "r1"},
            {"role": "user", "content": "u2"},
        ]});
        let mut body = bridge::translate(Dialect::Anthropic, &openai, Some("m"))
            .unwrap()
            .unwrap()
            .body;
        assert!(
            !body.to_string().contains("functions.read:1"),
            "the bridge makes ids valid"
        );
        restore_tool_ids(&openai, &mut body);
        assert_eq!(
            body.to_string().matches("functions.read:1").count(),
            2,
            "{body}"
        );
    }
}
