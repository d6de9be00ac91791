//! `GET /models/{author}/{slug}/endpoints` in OpenRouter's shape: `{"data":
//! {"id", "name", ..., "endpoints": [{"name", "provider_name", "tag",
//! "context_length", "status", ...}]}}`, one entry per simulated route. Any
//! model id is served: the simulated routes answer for whatever model the
//! canary probes.

use super::SimState;
use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// The discovery response for `author/slug`.
pub fn listing(state: &SimState, author: &str, slug: &str) -> Value {
    let model = format!("{author}/{slug}");
    let endpoints: Vec<Value> = state
        .config()
        .routes
        .iter()
        .filter(|r| r.listed_in(state.round()))
        .map(|r| {
            let quantization = r.tag.split_once('/').map_or("unknown", |(_, q)| q);
            json!({
                "name": format!("{} | {model}", r.provider_name),
                "model_name": model,
                "context_length": 131_072,
                "pricing": {"prompt": "0", "completion": "0", "request": "0", "image": "0"},
                "provider_name": r.provider_name,
                "tag": r.tag,
                "quantization": quantization,
                "max_completion_tokens": 4096,
                "max_prompt_tokens": null,
                "supported_parameters": ["max_tokens", "temperature", "response_format", "structured_outputs"],
                "status": 0,
                "uptime_last_30m": 100.0,
            })
        })
        .collect();
    json!({
        "data": {
            "id": model,
            "name": format!("{model} (simulated)"),
            "created": 0,
            "description": "Served by the continuity-bench simulated endpoint.",
            "architecture": {"modality": "text->text", "input_modalities": ["text"], "output_modalities": ["text"]},
            "endpoints": endpoints,
        }
    })
}

/// The handler.
pub async fn endpoints(
    State(state): State<Arc<SimState>>,
    Path((author, slug)): Path<(String, String)>,
) -> Json<Value> {
    Json(listing(&state, &author, &slug))
}
