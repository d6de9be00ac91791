//! The API an application speaks to a system under test: chat completions
//! (the client sends the whole history every turn) or the Responses API
//! (it sends the turn's new input and `previous_response_id`, and the
//! system keeps the history).

use serde::{Deserialize, Serialize};

/// The API the driver speaks (`--api`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST /v1/chat/completions`.
    #[default]
    Chat,
    /// `POST /v1/responses`, `store: true`.
    Responses,
}

impl Api {
    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Responses => "responses",
        }
    }
}
