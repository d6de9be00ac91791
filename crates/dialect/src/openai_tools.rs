//! OpenAI's own tool-call rules, as chat completions applies them to the
//! history a client (or a gateway) sends: every assistant `tool_calls` entry
//! answered by a `tool` message with its id before the next other message,
//! and every `tool` message answering a call of the assistant message it
//! follows. A history that breaks one gets OpenAI's 400, with its wording.
//!
//! The other dialects check their own rules in their validators
//! ([`crate::anthropic::validate`], [`crate::gemini::validate`]).

use crate::Rejection;
use cb_wire::openai::ChatMessage;

/// The ids of an assistant message's `tool_calls`, in order.
fn call_ids(message: &ChatMessage) -> Vec<&str> {
    message
        .tool_calls
        .as_ref()
        .and_then(|calls| calls.as_array())
        .into_iter()
        .flatten()
        .map(|call| call.get("id").and_then(|id| id.as_str()).unwrap_or(""))
        .collect()
}

fn refused(message: String) -> Rejection {
    Rejection {
        status: 400,
        body: cb_wire::openai::error_body(&message, "invalid_request_error", None),
        message,
        about_tools: true,
    }
}

/// Whether `messages` carry any tool call or result, when they keep
/// OpenAI's rules.
///
/// # Errors
/// OpenAI's 400 for the first rule broken.
pub fn check(messages: &[ChatMessage]) -> Result<bool, Rejection> {
    let mut any = false;
    let mut open: Vec<&str> = Vec::new();
    let mut answerable: Vec<&str> = Vec::new();
    for m in messages {
        if m.role == "tool" {
            any = true;
            let id = m.tool_call_id.as_deref().unwrap_or("");
            if !answerable.contains(&id) {
                return Err(refused(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into(),
                ));
            }
            open.retain(|o| *o != id);
            continue;
        }
        if !open.is_empty() {
            return Err(refused(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                open.join(", ")
            )));
        }
        answerable.clear();
        if m.role == "assistant" {
            let ids = call_ids(m);
            any |= !ids.is_empty();
            open.clone_from(&ids);
            answerable = ids;
        }
    }
    if open.is_empty() {
        Ok(any)
    } else {
        Err(refused(format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            open.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> ChatMessage {
        ChatMessage {
            role: "assistant".into(),
            content: serde_json::Value::Null,
            tool_calls: Some(
                json!([{"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]),
            ),
            tool_call_id: None,
        }
    }

    fn result(id: &str) -> ChatMessage {
        ChatMessage {
            role: "tool".into(),
            content: "done".into(),
            tool_call_id: Some(id.into()),
            tool_calls: None,
        }
    }

    #[test]
    fn paired_calls_pass_and_broken_pairs_get_openais_400() {
        let user = ChatMessage::new("user", "hi");
        let reply = ChatMessage::new("assistant", "ok");
        assert_eq!(check(&[user.clone(), reply.clone()]), Ok(false));
        // Any id shape OpenAI accepts, another provider's included.
        let paired = [
            user.clone(),
            call("functions.read_note:4"),
            result("functions.read_note:4"),
            reply.clone(),
            user.clone(),
        ];
        assert_eq!(check(&paired), Ok(true));
        // The result dropped, the call kept.
        let e = check(&[user.clone(), call("call_1"), reply.clone()]).unwrap_err();
        assert!(e.about_tools && e.status == 400);
        assert!(
            e.message
                .ends_with("did not have response messages: call_1"),
            "{}",
            e.message
        );
        assert!(check(&[user.clone(), call("call_1")]).is_err());
        // The call dropped, the result kept; a result under another id.
        let e = check(&[user.clone(), result("call_1"), reply.clone()]).unwrap_err();
        assert!(e
            .message
            .contains("must be a response to a preceeding message"));
        assert!(check(&[user.clone(), call("call_1"), result("call_2")]).is_err());
        // A result after another message no longer answers the call.
        assert!(check(&[user.clone(), call("call_1"), reply, result("call_1")]).is_err());
        assert_eq!(e.body["error"]["type"], "invalid_request_error");
    }
}
