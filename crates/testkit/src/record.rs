//! Rows for tests, so every test builds its attempts the same way.

use cb_base::record::{AttemptAction, AttemptRecord};
use cb_base::Role;

/// One attempt that arrived at `arrived_ms` and was answered 200 in 1 ms:
/// the base every test adjusts with struct-update syntax.
pub fn attempt(
    run: u32,
    system: &str,
    role: Role,
    conversation: &str,
    turn: u32,
    arrived_ms: f64,
) -> AttemptRecord {
    AttemptRecord {
        run,
        system: system.into(),
        role,
        conversation: conversation.into(),
        turn,
        attempt: 1,
        arrived_ms,
        action: AttemptAction::Ok,
        status: Some(200),
        retry_after_ms: None,
        messages: 1,
        approx_tokens: 10,
        model: "m".into(),
        stream: false,
        params: Vec::new(),
        degradation: String::new(),
        client_gave_up: false,
        duration_ms: 1.0,
        answered_by: String::new(),
        answer: String::new(),
        provider_error: String::new(),
        tools: cb_base::record::ToolCalls::None,
    }
}
