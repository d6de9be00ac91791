//! Every transform trips exactly its contract, and the clean replies it
//! starts from trip none: the positive and negative controls of the
//! contracts, end to end.

use super::*;
use cb_contracts::{violations, ContractInput, ContractName, Contracts};
use cb_dataset::model;
use cb_dataset::Dataset;
use cb_wire::openai::{ChatMessage, ChatRequest};
use serde_json::json;

/// A request of `messages`, with `response_format` when given.
pub(crate) fn request(
    messages: Vec<ChatMessage>,
    format: Option<serde_json::Value>,
) -> ChatRequest {
    let mut extra = serde_json::Map::new();
    if let Some(f) = format {
        extra.insert("response_format".into(), f);
    }
    ChatRequest {
        model: "m".into(),
        messages,
        stream: false,
        stream_options: None,
        extra,
    }
}

/// The contracts `reply` breaks. The conversations of the committed dataset
/// are in English, which the suites know and pass on (their first turns are
/// too short to tell the language from); the phrasebook conversations leave
/// it to detection.
pub(crate) fn violated(
    contracts: &Contracts,
    request: &ChatRequest,
    reply: &Completion,
) -> Vec<ContractName> {
    let english = request.messages.first().is_some_and(|m| m.role == "system");
    let input = ContractInput {
        request,
        expected_language: english.then_some(Language::En),
        status: 200,
        stream: false,
        text: &reply.text,
        finish_reason: Some(&reply.finish_reason),
        ttft: None,
        ttfb: None,
    };
    violations(&contracts.check(&input))
}

/// Requests and the simulated model's clean replies to them: every turn of
/// the first conversations of the committed dataset.
pub(crate) fn simulated() -> Vec<(ChatRequest, Completion)> {
    let dataset = Dataset::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/continuity-150.jsonl"
    )))
    .unwrap();
    let mut out = Vec::new();
    for c in dataset.conversations.iter().take(12) {
        let mut messages = vec![ChatMessage::new("system", "You are a helpful assistant.")];
        for turn in &c.turns {
            messages.push(ChatMessage::new("user", &turn.user));
            let reply = model::reply(&messages);
            out.push((
                request(messages.clone(), None),
                Completion::stop(reply.clone()),
            ));
            messages.push(ChatMessage::new("assistant", &reply));
        }
    }
    out
}

/// A conversation and a clean reply in each language, from the phrasebook.
pub(crate) fn multilingual() -> Vec<(ChatRequest, Completion)> {
    Language::ALL
        .into_iter()
        .map(|l| {
            let s = cb_contracts::phrasebook::sentences(l);
            let user = ChatMessage::new("user", &s[6..9].join(" "));
            (
                request(vec![user], None),
                Completion::stop(s[..3].join(" ")),
            )
        })
        .collect()
}

fn kinds() -> Vec<DegradationKind> {
    let mut out: Vec<DegradationKind> = JunkStyle::ALL
        .into_iter()
        .map(|s| DegradationKind::JunkPrefix { style: Some(s) })
        .collect();
    out.push(DegradationKind::JunkPrefix { style: None });
    for drift in [Some(Drift::Switch), Some(Drift::Mix), None] {
        out.push(DegradationKind::LanguageDrift { drift, to: None });
    }
    out.extend([
        DegradationKind::Refusal,
        DegradationKind::Empty,
        DegradationKind::Truncated,
    ]);
    out
}

#[test]
fn the_simulated_model_never_trips_a_contract() {
    // Every turn of every committed conversation, and the honest "I don't
    // know" the model gives when the anchor turn is missing.
    let dataset = Dataset::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/continuity-150.jsonl"
    )))
    .unwrap();
    let contracts = Contracts::default();
    let mut seen = std::collections::HashSet::new();
    for c in &dataset.conversations {
        let mut messages = vec![ChatMessage::new("system", "You are a helpful assistant.")];
        let mut without_anchor = messages.clone();
        for (i, turn) in c.turns.iter().enumerate() {
            messages.push(ChatMessage::new("user", &turn.user));
            let reply = model::reply(&messages);
            if seen.insert(reply.clone()) {
                let req = request(messages.clone(), None);
                let got = violated(&contracts, &req, &Completion::stop(reply.clone()));
                assert_eq!(got, vec![], "{}: {reply:?}", c.id);
            }
            messages.push(ChatMessage::new("assistant", &reply));
            if i > 0 {
                without_anchor.push(ChatMessage::new("user", &turn.user));
                without_anchor.push(ChatMessage::new("assistant", &reply));
            }
        }
        without_anchor.pop();
        let probe = model::reply(&without_anchor);
        assert!(probe.starts_with("I don't know"), "{probe}");
        let req = request(without_anchor, None);
        assert_eq!(
            violated(&contracts, &req, &Completion::stop(probe.clone())),
            vec![],
            "{}: {probe:?}",
            c.id
        );
    }
    assert!(seen.len() > 300, "{} distinct replies", seen.len());
}

#[test]
fn clean_replies_trip_no_contract() {
    let contracts = Contracts::default();
    for (request, reply) in simulated().iter().chain(multilingual().iter()) {
        assert_eq!(
            violated(&contracts, request, reply),
            vec![],
            "{:?}",
            reply.text
        );
    }
}

#[test]
fn each_transform_trips_exactly_its_contract() {
    let contracts = Contracts::default();
    let cases: Vec<_> = simulated().into_iter().chain(multilingual()).collect();
    for (k, kind) in kinds().into_iter().enumerate() {
        for (i, (request, reply)) in cases.iter().enumerate() {
            let mut rng = cb_base::seed::rng(7, "degrade-test", (k * 1000 + i) as u64);
            let degraded = apply(kind, reply.clone(), &mut rng);
            assert_eq!(
                violated(&contracts, request, &degraded),
                vec![kind.contract()],
                "{kind:?} on {:?} gave {:?}",
                reply.text,
                degraded.text
            );
        }
    }
}

#[test]
fn every_schema_break_trips_schema_only() {
    let contracts = Contracts::default();
    let schemas = [
        json!({"type": "object", "properties": {"city": {"type": "string"}, "temperature_c": {"type": "number"}, "sunny": {"type": "boolean"}}, "required": ["city", "temperature_c", "sunny"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"tasks": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {"title": {"type": "string"}, "priority": {"enum": ["low", "high"]}}, "required": ["title", "priority"]}}}, "required": ["tasks"]}),
        json!({"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}),
    ];
    for (s, schema) in schemas.iter().enumerate() {
        let format = json!({"type": "json_schema", "json_schema": {"name": "x", "schema": schema}});
        let req = request(
            vec![ChatMessage::new("user", "Answer in JSON, please.")],
            Some(format),
        );
        let clean = Completion::stop(instance_for_schema(schema).to_string());
        assert_eq!(violated(&contracts, &req, &clean), vec![], "{}", clean.text);
        for style in SchemaBreakStyle::ALL.map(Some).into_iter().chain([None]) {
            for seed in 0..5 {
                let mut rng = cb_base::seed::rng(7, "schema-break-test", (s * 100 + seed) as u64);
                let kind = DegradationKind::SchemaBreak { style };
                let broken = apply(kind, clean.clone(), &mut rng);
                assert_eq!(
                    violated(&contracts, &req, &broken),
                    vec![ContractName::Schema],
                    "{style:?}: {}",
                    broken.text
                );
            }
        }
    }
}

#[test]
fn transforms_are_deterministic_for_a_seed() {
    let reply = Completion::stop("Hello there! How can I help you today? Ask me anything.");
    for kind in kinds() {
        let a = apply(kind, reply.clone(), &mut cb_base::seed::rng(3, "x", 1));
        let b = apply(kind, reply.clone(), &mut cb_base::seed::rng(3, "x", 1));
        assert_eq!(a, b, "{kind:?}");
    }
}

#[test]
fn drift_goes_to_the_neighbour_or_the_named_language() {
    let pt = cb_contracts::phrasebook::sentences(Language::Pt)[..3].join(" ");
    let mut rng = cb_base::seed::rng(1, "drift", 0);
    let out = apply(
        DegradationKind::LanguageDrift {
            drift: Some(Drift::Switch),
            to: None,
        },
        Completion::stop(pt.clone()),
        &mut rng,
    );
    assert_eq!(
        detect_language(&out.text, &Language::ALL),
        Some(Language::Es)
    );
    let out = apply(
        DegradationKind::LanguageDrift {
            drift: Some(Drift::Switch),
            to: Some(Language::Fr),
        },
        Completion::stop(pt),
        &mut rng,
    );
    assert_eq!(
        detect_language(&out.text, &Language::ALL),
        Some(Language::Fr)
    );
}

#[test]
fn kinds_serialize_with_a_kind_tag() {
    let k = DegradationKind::JunkPrefix {
        style: Some(JunkStyle::TemplateToken),
    };
    assert_eq!(
        serde_json::to_value(k).unwrap(),
        json!({"kind": "junk_prefix", "style": "template_token"})
    );
    let parsed: DegradationKind =
        serde_json::from_value(json!({"kind": "language_drift", "to": "es"})).unwrap();
    assert_eq!(
        parsed,
        DegradationKind::LanguageDrift {
            drift: None,
            to: Some(Language::Es)
        }
    );
    let truncated = apply(
        DegradationKind::Truncated,
        Completion::stop("One two three four five six."),
        &mut cb_base::seed::rng(1, "t", 0),
    );
    assert_eq!(truncated.finish_reason, "length");
    assert!(
        truncated.text.len() < "One two three four five six.".len() && !truncated.text.is_empty()
    );
}
