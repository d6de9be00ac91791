//! Tests of the contract set as a whole, and helpers for the contracts'
//! own tests.

use super::*;
use cb_wire::openai::ChatMessage;

/// A request with `messages` as (role, text) pairs.
pub(crate) fn request(messages: &[(&str, &str)]) -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        messages: messages
            .iter()
            .map(|(r, t)| ChatMessage::new(r, t))
            .collect(),
        stream: false,
        stream_options: None,
        extra: Default::default(),
    }
}

/// A 200, non-streamed input of `text` answering one user message. The
/// request is leaked: tests only.
pub(crate) fn input(text: &'static str, user: &str) -> ContractInput<'static> {
    input_for(text, Box::leak(Box::new(request(&[("user", user)]))))
}

/// A 200, non-streamed input of `text` answering `request`.
pub(crate) fn input_for<'a>(text: &'a str, request: &'a ChatRequest) -> ContractInput<'a> {
    ContractInput {
        request,
        expected_language: None,
        status: 200,
        stream: false,
        text,
        finish_reason: Some("stop"),
        ttft: None,
        ttfb: None,
    }
}

#[test]
fn names_round_trip_and_are_snake_case() {
    for n in ContractName::ALL {
        assert_eq!(serde_json::to_value(n).unwrap(), n.as_str());
        assert_eq!(ContractName::from_name(n.as_str()), Some(n));
    }
    let out = serde_json::to_value(Outcome::fail("x")).unwrap();
    assert_eq!(out, serde_json::json!({"outcome": "fail", "reason": "x"}));
}

#[test]
fn non_2xx_answers_are_never_judged() {
    let contracts = Contracts::default();
    let mut i = input("", "Hello?");
    i.status = 502;
    assert!(contracts.check(&i).iter().all(|r| r.outcome.is_none()));
    i.status = 200;
    assert_eq!(violations(&contracts.check(&i)), vec![ContractName::Empty]);
}

#[test]
fn checks_keep_what_applied_and_violations_name_what_failed() {
    let contracts = Contracts::default();
    let mut i = input(
        "I'm sorry, but I can't help with that.",
        "Tell me a joke about cats, please.",
    );
    i.finish_reason = Some("length");
    let results = contracts.check(&i);
    assert_eq!(
        violations(&results),
        vec![ContractName::Refusal, ContractName::Truncated]
    );
    let checked = checks(&results);
    assert!(checked
        .iter()
        .all(|c| c.outcome != Outcome::Pass || !c.failed()));
    assert_eq!(
        checked
            .iter()
            .filter(|c| c.failed())
            .map(|c| c.name)
            .collect::<Vec<_>>(),
        violations(&results)
    );
    assert!(
        !checked.iter().any(|c| c.name == ContractName::Schema),
        "schema did not apply"
    );
    let clean = input(
        "Why did the cat sit on the computer? To keep an eye on the mouse!",
        "Tell me a joke about cats, please.",
    );
    assert!(violations(&contracts.check(&clean)).is_empty());
}

#[test]
fn settings_choose_contracts_and_are_validated() {
    let only = Contracts::new(ContractSettings {
        enabled: vec![ContractName::Empty, ContractName::Ttft],
        ..Default::default()
    })
    .unwrap();
    let names: Vec<_> = only
        .check(&input("x", "y"))
        .iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, vec![ContractName::Ttft, ContractName::Empty]);
    let none = ContractSettings {
        languages: vec![],
        ..Default::default()
    };
    assert_eq!(Contracts::new(none).unwrap_err(), SettingsError::NoLanguage);
    let zero = ContractSettings {
        ttft_limit: Duration::ZERO,
        ..Default::default()
    };
    assert_eq!(
        Contracts::new(zero).unwrap_err(),
        SettingsError::ZeroTtftLimit
    );
}
