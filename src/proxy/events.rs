//! Switch events.

use serde::{Deserialize, Serialize};

/// One request's switch event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchEvent {
    /// Provider first tried.
    pub provider_primary: String,
    /// Provider failed over to, if any.
    pub provider_fallback: Option<String>,
    /// Model the client asked for.
    pub model_requested: String,
    /// Model that answered.
    pub model_actual: Option<String>,
    /// Why it switched (or `none`).
    pub reason: String,
    /// Time spent on the primary, ms.
    pub latency_primary_ms: f64,
    /// Time spent on the fallback, ms.
    pub latency_fallback_ms: Option<f64>,
    /// Status returned to the client.
    pub status: u16,
}
