//! The catalogue as the issue lists it: every case once, the control
//! first, the decision-tree cases keeping their meaning, the universal
//! checks and a bound on every case, and OpenAI-style error bodies.

use super::*;
use crate::case::Severity;

fn cases(stream: bool) -> Vec<Case> {
    catalogue(&Timing::fast(), &GiveUpBounds::default(), stream)
}

fn find(cases: &[Case], id: &str) -> Case {
    cases.iter().find(|c| c.id == id).unwrap().clone()
}

fn required(case: &Case) -> Vec<Id> {
    case.checks
        .iter()
        .filter(|c| c.severity == Severity::Required)
        .map(|c| c.id)
        .collect()
}

#[test]
fn every_case_the_issue_lists_is_there_once() {
    let ids: Vec<&str> = cases(false).iter().map(|c| c.id).collect();
    let listed = [
        "400",
        "401",
        "402",
        "403",
        "404",
        "429",
        "500",
        "502",
        "503",
        "504",
        "timeout",
        "cut",
        "ok",
        "schema",
        "429-retry-after",
        "429-reset-header",
        "429-reset-tokens",
        "429-retry-in-body",
        "429-retry-in-message",
        "429-persistent",
        "500-once",
        "503-persistent",
        "reset-before-headers",
        "no-response",
        "slow-first-token",
        "stream-cut",
        "stream-stall",
        "stream-truncated",
        "stream-error-first",
        "stream-error-midway",
        "fallback-stream-error",
        "stream-keepalive",
        "malformed-chunk",
        "no-done",
        "context-length",
        "content-filter",
        "prefill-rejected",
        "broken-200",
        "body-stall",
        "finish-length",
        "continuation-usage",
        "flap",
        "429-stuck",
        "all-cooling",
        "recooled",
        "accounting",
        "both-fail",
        "model-id-map",
        "extra-params",
        "slow-reasoning-primary",
        "fallback-health",
    ];
    assert_eq!(ids.len(), listed.len(), "{ids:?}");
    for id in listed {
        assert_eq!(ids.iter().filter(|i| **i == id).count(), 1, "{id}");
    }
    assert_eq!(ids[0], "ok", "the control goes first");
    assert_eq!(ids.last(), Some(&"fallback-health"));
}

#[test]
fn the_decision_tree_cases_keep_their_meaning() {
    for stream in [false, true] {
        let all = cases(stream);
        for id in ["ok", "schema"] {
            assert!(required(&find(&all, id)).contains(&Id::Delivered), "{id}");
        }
        for id in ["400", "401", "402", "403"] {
            let c = find(&all, id);
            assert!(required(&c).contains(&Id::NoFailover), "{id}");
            assert!(required(&c).contains(&Id::PassedThrough), "{id}");
            assert_eq!(c.ideal, Ideal::CleanError);
        }
        for id in ["404", "429", "500", "502", "503", "504", "timeout"] {
            assert!(required(&find(&all, id)).contains(&Id::FailedOver), "{id}");
        }
        // A cut body fails over; a cut stream cannot be replaced
        // cleanly, so only the universal checks judge it.
        assert_eq!(
            required(&find(&all, "cut")).contains(&Id::FailedOver),
            !stream
        );
    }
}

#[test]
fn every_case_has_the_universal_checks_and_a_bound() {
    for c in cases(false) {
        let ids = required(&c);
        for id in [Id::NoHang, Id::NoTruncatedSuccess, Id::ContractsKept] {
            assert!(ids.contains(&id), "{} lacks {id:?}", c.id);
        }
        assert!(!c.bound.is_zero(), "{}", c.id);
        assert_eq!(c.script.clock, c.id);
    }
    assert!(!find(&cases(false), "fallback-health").scored);
    assert_eq!(cases(false).iter().filter(|c| !c.scored).count(), 1);
}

#[test]
fn error_bodies_are_openai_style() {
    for c in cases(false) {
        for script in [&c.script.primary, &c.script.fallback] {
            let acts = script
                .rules
                .iter()
                .map(|(_, a)| a)
                .chain([&script.otherwise]);
            for act in acts {
                if let Act::Error(spec) = act {
                    let body = cb_upstream::render::error_json(spec);
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                    assert!(v["error"]["message"].is_string(), "{}", c.id);
                    assert!(v["error"]["type"].is_string(), "{}", c.id);
                }
            }
        }
    }
    let c = find(&cases(false), "429");
    let Act::Error(spec) = &c.script.primary.otherwise else {
        panic!("case 429 is a rate limit")
    };
    assert_eq!(spec.retry_after, Some(RETRY_AFTER_429));
}
