//! The canary's probe set: three small, fixed requests sent to every route
//! each round, versioned ([`PROBE_SET_VERSION`], recorded in every report)
//! so that two reports compare only when they asked the same things.
//!
//! - [`ProbeKind::Roleplay`]: a streamed in-character reply, judged on time
//!   to first token, junk prefix, refusal, empty and truncated (a content
//!   filter shows as a refusal or `finish_reason: content_filter`). It is
//!   the filtering probe the positive control checks.
//! - [`ProbeKind::Schema`]: a fixed-schema object asked for with
//!   `response_format: json_schema`, judged on schema, empty and truncated.
//! - [`ProbeKind::Language`]: a question written in one language of the
//!   rotation, judged on language (with the language passed to the
//!   contract, never guessed), junk prefix, refusal, empty and truncated.
//!
//! Every request is pinned to one route with `"provider": {"order":
//! [route], "allow_fallbacks": false}`, so that a healthy host cannot hide
//! a sick one by answering in its place. The prompts avoid what makes a
//! contract lenient (a request to continue, a list, lowercase): a reply
//! that starts with a stray comma is then junk, not a continuation.

mod prompts;
pub mod repeats;
pub mod set;

pub use prompts::language_prompt;
pub use repeats::{session_id, Repeats, MAX_REPEATS};
pub use set::ProbeSet;

use super::evidence::ProbeKind;
use cb_contracts::{ContractName, Language};
use cb_wire::openai::{ChatMessage, ChatRequest};
use serde_json::{json, Map, Value};

/// The version of the probe set; bump it when a prompt, a schema or a
/// contract list changes.
pub const PROBE_SET_VERSION: &str = "canary-probes/1";

/// The probes of one round, in the order they are sent to a route.
pub const PROBES: [ProbeKind; 3] = [ProbeKind::Roleplay, ProbeKind::Schema, ProbeKind::Language];

/// Largest reply asked for: room for three or four sentences in any
/// language, small enough to keep a round cheap.
pub const MAX_TOKENS: u32 = 400;

/// The system message of the roleplay probe.
pub const ROLEPLAY_SYSTEM: &str = "You are Mira, the warm and talkative keeper of a small inn \
     in a fantasy village. Stay in character and answer the guest in two or three sentences.";

/// The guest's message of the roleplay probe.
pub const ROLEPLAY_USER: &str =
    "Good evening! I'm soaked from the storm. Do you have a room for the night, and something hot to eat?";

/// The user message of the schema probe.
pub const SCHEMA_USER: &str = "Describe the city of Lisbon as a JSON object: its name, the \
     country it is in, and its approximate population in millions.";

/// The schema the schema probe asks for.
pub fn city_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "country": {"type": "string", "minLength": 1},
            "population_millions": {"type": "number", "minimum": 0}
        },
        "required": ["city", "country", "population_millions"],
        "additionalProperties": false
    })
}

/// The contracts each probe is judged on, in [`ContractName::ALL`] order.
/// Only these count: a contract
/// that is meaningless on a probe (language on JSON, time to first token
/// on a reply that is not streamed) would otherwise leave the route
/// undetermined every round and no round could ever be fully passing.
pub fn contracts_of(probe: ProbeKind) -> &'static [ContractName] {
    match probe {
        ProbeKind::Roleplay => &[
            ContractName::Ttft,
            ContractName::JunkPrefix,
            ContractName::Refusal,
            ContractName::Empty,
            ContractName::Truncated,
        ],
        ProbeKind::Schema => &[
            ContractName::Schema,
            ContractName::Empty,
            ContractName::Truncated,
        ],
        ProbeKind::Language => &[
            ContractName::JunkPrefix,
            ContractName::Language,
            ContractName::Refusal,
            ContractName::Empty,
            ContractName::Truncated,
        ],
    }
}

/// The language a probe's reply must be in: the rotation's for the
/// language probe, English for the others.
pub fn expected_language(probe: ProbeKind, rotation: Language) -> Language {
    match probe {
        ProbeKind::Language => rotation,
        ProbeKind::Roleplay | ProbeKind::Schema => Language::En,
    }
}

/// The `provider` object that pins a request to `route` with fallbacks off.
pub fn pinned(route: &str) -> Value {
    json!({"order": [route], "allow_fallbacks": false})
}

/// The request of `probe` for `model`, pinned to `route`; `language` is the
/// rotation's language (used by the language probe only). The built-in
/// probe set.
pub fn request(probe: ProbeKind, model: &str, route: &str, language: Language) -> ChatRequest {
    request_with(&ProbeSet::builtin(), probe, model, route, language)
}

/// [`request`] from the probe set `set`.
pub fn request_with(
    set: &ProbeSet,
    probe: ProbeKind,
    model: &str,
    route: &str,
    language: Language,
) -> ChatRequest {
    let mut extra = Map::new();
    extra.insert("provider".into(), pinned(route));
    extra.insert("max_tokens".into(), json!(MAX_TOKENS));
    let (messages, stream) = match probe {
        ProbeKind::Roleplay => (
            vec![
                ChatMessage::new("system", set.roleplay.system.as_str()),
                ChatMessage::new("user", set.roleplay.user.as_str()),
            ],
            true,
        ),
        ProbeKind::Schema => {
            extra.insert(
                "response_format".into(),
                json!({
                    "type": "json_schema",
                    "json_schema": {"name": "canary_city", "strict": true, "schema": set.schema.schema.clone()}
                }),
            );
            (
                vec![ChatMessage::new("user", set.schema.user.as_str())],
                false,
            )
        }
        ProbeKind::Language => (
            vec![ChatMessage::new("user", language_prompt(language))],
            false,
        ),
    };
    ChatRequest {
        model: model.to_string(),
        messages,
        stream,
        stream_options: None,
        extra,
    }
}

/// Whether a request is the roleplay probe, read from its content alone (a
/// simulated route that filters roleplay decides with this, as a real
/// content filter would, from what it was sent).
pub fn is_roleplay(request: &ChatRequest) -> bool {
    request
        .messages
        .iter()
        .any(|m| m.text_cow().contains("Stay in character"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::ROTATION;

    #[test]
    fn every_probe_is_pinned_with_fallbacks_off() {
        for probe in PROBES {
            let r = request(
                probe,
                "meta-llama/llama-3.3-70b-instruct",
                "atlas/bf16",
                Language::Fr,
            );
            assert_eq!(
                r.extra["provider"],
                json!({"order": ["atlas/bf16"], "allow_fallbacks": false})
            );
            assert_eq!(r.model, "meta-llama/llama-3.3-70b-instruct");
            assert_eq!(r.stream, probe == ProbeKind::Roleplay);
            assert_eq!(is_roleplay(&r), probe == ProbeKind::Roleplay);
        }
    }

    #[test]
    fn the_schema_probe_asks_for_its_schema() {
        let r = request(ProbeKind::Schema, "m", "r", Language::En);
        assert_eq!(
            cb_contracts::requested_format(&r),
            Some(cb_contracts::RequestedFormat::JsonSchema(city_schema()))
        );
    }

    #[test]
    fn the_language_probe_is_written_in_the_rotation_language() {
        for language in ROTATION {
            let r = request(ProbeKind::Language, "m", "r", language);
            let text = r.messages[0].text();
            assert_eq!(
                cb_contracts::detect_language(&text, &Language::ALL),
                Some(language),
                "{text}"
            );
            assert_eq!(expected_language(ProbeKind::Language, language), language);
        }
    }

    #[test]
    fn contract_lists_fit_their_probe() {
        assert!(contracts_of(ProbeKind::Roleplay).contains(&ContractName::Ttft));
        assert!(!contracts_of(ProbeKind::Schema).contains(&ContractName::Language));
        assert!(contracts_of(ProbeKind::Language).contains(&ContractName::Language));
        for c in crate::control::FILTER_CONTRACTS {
            assert!(contracts_of(crate::control::FILTER_PROBE).contains(&c));
        }
    }
}
