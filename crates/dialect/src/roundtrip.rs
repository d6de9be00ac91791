//! Property tests across the dialect layer: for many generated OpenAI
//! histories, the translation into each dialect passes that dialect's
//! strict validator and nothing the client sent is lost on the way (every
//! system text, tool result and user turn is in the validated
//! conversation). And for the committed dataset, the simulated upstream
//! recognises each conversation and answers as it does in OpenAI format.

use super::testgen;
use super::{anthropic, gemini, survival, Dialect, Translation, Validated};
use cb_dataset::model;
use cb_dataset::{Conversation, Dataset};
use cb_wire::openai::{ChatMessage, ChatRequest};
use serde_json::{json, Value};

/// Generated requests per dialect.
const CASES: u64 = 400;

fn translate(dialect: Dialect, client: &Value) -> Translation {
    match dialect {
        Dialect::Anthropic => anthropic::translate_request(client, Some("claude-sim")),
        Dialect::Gemini => gemini::translate_request(client, Some("gemini-sim")),
        Dialect::Openai => unreachable!("no translation to OpenAI"),
    }
    .unwrap()
}

/// Sends the translation through the dialect's strict validator, with
/// alternation required and, when the client's request ends with a user
/// or tool message, prefill refused.
fn validate(
    dialect: Dialect,
    t: &Translation,
    ends_with_assistant: bool,
) -> Result<Validated, String> {
    let bytes = serde_json::to_vec(&t.body).unwrap();
    match dialect {
        Dialect::Anthropic => {
            let rules = anthropic::Rules {
                reject_prefill: !ends_with_assistant,
                require_alternation: true,
            };
            anthropic::validate(Some(anthropic::VERSION), &bytes, &rules)
        }
        Dialect::Gemini => {
            let (path, query) = t
                .path
                .split_once('?')
                .map_or((t.path.as_str(), None), |(p, q)| (p, Some(q)));
            let call =
                gemini::parse_call(path, query).ok_or_else(|| format!("bad path {}", t.path))?;
            gemini::validate(&call, &bytes)
        }
        Dialect::Openai => unreachable!(),
    }
    .map_err(|r| r.message)
}

#[test]
fn generated_histories_validate_and_lose_nothing() {
    for dialect in [Dialect::Anthropic, Dialect::Gemini] {
        for i in 0..CASES {
            let client = testgen::request(cb_base::seed::DEFAULT_SEED, i);
            let ends_with_assistant = client["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|m| m["role"] == "assistant");
            let t = translate(dialect, &client);
            let v = validate(dialect, &t, ends_with_assistant).unwrap_or_else(|e| {
                panic!(
                    "{dialect} case {i}: {e}\nclient: {client}\nsent: {}",
                    t.body
                )
            });
            let request: ChatRequest = serde_json::from_value(client.clone()).unwrap();
            let s = survival(&request, &v.messages);
            assert!(
                s.complete(),
                "{dialect} case {i}: {s:?}\nclient: {client}\nvalidated: {:?}",
                v.messages
            );
            assert_eq!(v.stream, request.stream, "{dialect} case {i}");
        }
    }
}

/// The final-turn request of `c` with full history, dressed up: a second
/// system message mid-conversation, a tool call and its result after the
/// second turn, and the scripted replies as assistant messages.
fn dressed_request(c: &Conversation, with_tools: bool) -> Value {
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    let last = c.n_turns() - 1;
    for (i, t) in c.turns.iter().enumerate() {
        messages.push(json!({"role": "user", "content": t.user}));
        if i == last {
            break;
        }
        if i == 1 && with_tools {
            let id = format!("call_{}_{i}", c.id);
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "lookup_notes", "arguments": "{\"topic\":\"calendar\"}"}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": "No notes found for this topic."}));
        }
        messages
            .push(json!({"role": "assistant", "content": t.assistant.clone().unwrap_or_default()}));
        if i == 2 {
            messages.push(json!({"role": "system", "content": "Keep answers short."}));
        }
    }
    json!({"model": "gpt-client", "messages": messages})
}

fn users(messages: &[ChatMessage]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.role == "user")
        .map(ChatMessage::text)
        .collect()
}

#[test]
fn the_dataset_is_recognised_and_answered_alike_in_every_dialect() {
    let dataset = Dataset::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/continuity-150.jsonl"
    )))
    .unwrap();
    for (k, c) in dataset.conversations.iter().enumerate() {
        let client = dressed_request(c, k % 2 == 0);
        let request: ChatRequest = serde_json::from_value(client.clone()).unwrap();
        let expected_users = users(&request.messages);
        let expected_reply = model::reply(&request.messages);
        for dialect in [Dialect::Anthropic, Dialect::Gemini] {
            let t = translate(dialect, &client);
            let v =
                validate(dialect, &t, false).unwrap_or_else(|e| panic!("{dialect} {}: {e}", c.id));
            let got_users = users(&v.messages);
            assert_eq!(
                got_users.first(),
                Some(&c.first_user_message().to_string()),
                "{dialect} {}",
                c.id
            );
            assert_eq!(
                got_users.len(),
                expected_users.len(),
                "{dialect} {}: turn count",
                c.id
            );
            assert_eq!(
                model::reply(&v.messages),
                expected_reply,
                "{dialect} {}",
                c.id
            );
            assert!(
                survival(&request, &v.messages).complete(),
                "{dialect} {}",
                c.id
            );
        }
    }
}

/// A gateway that keeps only the last system message, one that drops tool
/// results and one that omits `max_tokens` are each caught: by the
/// survival count or by the validator.
#[test]
fn control_gateways_are_caught() {
    let client = json!({
        "model": "gpt-client",
        "messages": [
            {"role": "system", "content": "Rule one about the garden."},
            {"role": "user", "content": "User turn one about the ticket."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Tool result about the harbour."},
            {"role": "assistant", "content": "Done."},
            {"role": "system", "content": "Rule two about the violin."},
            {"role": "user", "content": "User turn two about the orbit."}
        ]
    });
    let request: ChatRequest = serde_json::from_value(client.clone()).unwrap();
    let good = translate(Dialect::Anthropic, &client);

    // Last system message only.
    let mut last_system = good.body.clone();
    last_system["system"] = json!([{"type": "text", "text": "Rule two about the violin."}]);
    let bytes = serde_json::to_vec(&last_system).unwrap();
    let v = anthropic::validate(
        Some(anthropic::VERSION),
        &bytes,
        &anthropic::Rules::default(),
    )
    .unwrap();
    let s = survival(&request, &v.messages);
    assert_eq!((s.system.sent, s.system.reached), (2, 1));

    // Tool results dropped as "orphaned" (and the call with them).
    let mut no_tools = good.body.clone();
    no_tools["messages"] = json!([
        {"role": "user", "content": "User turn one about the ticket."},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "User turn two about the orbit."}
    ]);
    let bytes = serde_json::to_vec(&no_tools).unwrap();
    let v = anthropic::validate(
        Some(anthropic::VERSION),
        &bytes,
        &anthropic::Rules::default(),
    )
    .unwrap();
    let s = survival(&request, &v.messages);
    assert_eq!((s.tool_results.sent, s.tool_results.reached), (1, 0));
    assert!(s.system.complete() && s.user_turns.complete());

    // max_tokens omitted.
    let mut no_max = good.body.clone();
    no_max.as_object_mut().unwrap().remove("max_tokens");
    let bytes = serde_json::to_vec(&no_max).unwrap();
    let r = anthropic::validate(
        Some(anthropic::VERSION),
        &bytes,
        &anthropic::Rules::default(),
    )
    .unwrap_err();
    assert_eq!(r.message, "max_tokens: Field required");

    // The good translation: everything reached.
    let bytes = serde_json::to_vec(&good.body).unwrap();
    let v = anthropic::validate(
        Some(anthropic::VERSION),
        &bytes,
        &anthropic::Rules::default(),
    )
    .unwrap();
    assert!(survival(&request, &v.messages).complete());
}
