//! Each claim family against answers that tell the truth and answers that
//! do not, in every shape a gateway writes them.

use super::*;
use crate::checks::tests::{attempt, sent};
use cb_wire::openai::Usage;

const PRIMARY: &str = "continuity-sim";
const FALLBACK: &str = "continuity-sim-fallback";

fn at(role: Role, at_ms: f64, status: u16, model: &str, billed: Option<Usage>) -> AttemptView {
    AttemptView {
        model: model.into(),
        billed,
        ..attempt(role, at_ms, status)
    }
}

/// Response headers as the client keeps them.
fn routing(headers: &[(&str, &str)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// A request the primary failed (503) and the fallback answered, billing
/// 30 prompt and 60 completion tokens; the answer names `models` and says
/// `usage` (prompt, completion).
fn failed_over(models: &[&str], usage: Option<(u32, u32)>) -> Sent {
    let mut s = sent(
        vec![
            at(Role::Primary, 0.0, 503, PRIMARY, None),
            at(Role::Fallback, 5.0, 200, FALLBACK, Some(Usage::new(30, 60))),
        ],
        true,
    );
    s.client.models = models.iter().map(|m| m.to_string()).collect();
    s.client.prompt_tokens = usage.map(|u| u.0);
    s.client.completion_tokens = usage.map(|u| u.1);
    s
}

#[test]
fn the_fallback_s_model_is_honest_and_the_primary_s_is_not() {
    let honest = judge([&failed_over(&[FALLBACK], None)], None);
    assert_eq!(honest.verdict(Claim::Model), Some(true), "{honest:?}");
    let lying = judge([&failed_over(&[PRIMARY], None)], None);
    assert_eq!(lying.verdict(Claim::Model), Some(false));
    assert!(
        lying.checks[0].value.contains(PRIMARY) && lying.checks[0].value.contains(FALLBACK),
        "{lying:?}"
    );
    // A stream whose first chunk names the primary and last the fallback,
    // though the primary never answered: the chunks disagree.
    let mixed = judge([&failed_over(&[PRIMARY, FALLBACK], None)], None);
    assert_eq!(mixed.verdict(Claim::Model), Some(false));
    // A client's alias that no upstream answered as is not the model that answered.
    let alias = judge([&failed_over(&["gpt-4o"], None)], None);
    assert_eq!(alias.verdict(Claim::Model), Some(false));
}

/// The primary's stream broke after 40 tokens; the fallback continued
/// from a prefill (its prompt holds the first part) with the last 20; the
/// answer names both, in order.
fn spliced() -> Sent {
    let mut s = sent(
        vec![
            at(Role::Primary, 0.0, 200, PRIMARY, Some(Usage::new(30, 40))),
            AttemptView {
                prefill: true,
                ..at(Role::Fallback, 5.0, 200, FALLBACK, Some(Usage::new(70, 20)))
            },
        ],
        true,
    );
    s.client.models = vec![PRIMARY.into(), FALLBACK.into()];
    s
}

#[test]
fn a_spliced_answer_may_name_both_parts_in_order() {
    let mut s = spliced();
    assert_eq!(judge([&s], None).verdict(Claim::Model), Some(true));
    // The fallback finished it: naming only the primary at the end is not honest.
    s.client.models = vec![FALLBACK.into(), PRIMARY.into()];
    assert_eq!(judge([&s], None).verdict(Claim::Model), Some(false));
}

/// The primary answered (200) but broke; the system restarted on the
/// fallback without a prefill. The primary's name is honest only when its
/// text may have reached the client: the response had begun (headers)
/// before the fallback was asked.
#[test]
fn a_restart_names_the_primary_only_when_the_response_began_with_it() {
    let mut s = spliced();
    s.attempts[1].prefill = false;
    // Headers well after the fallback was asked (at 5 ms): the system held
    // the primary's broken answer back, so none of its text was relayed.
    s.client.headers_ms = Some(40.0);
    let buffered = judge([&s], None);
    assert_eq!(buffered.verdict(Claim::Model), Some(false), "{buffered:?}");
    // Headers before it: the primary's chunks may have been relayed.
    s.client.headers_ms = Some(2.0);
    assert_eq!(judge([&s], None).verdict(Claim::Model), Some(true));
    // Within the clocks' jitter of the fallback's arrival: not held
    // against the system.
    s.client.headers_ms = Some(8.0);
    assert_eq!(judge([&s], None).verdict(Claim::Model), Some(true));
    // The fallback's name alone is honest either way.
    s.client.headers_ms = Some(40.0);
    s.client.models = vec![FALLBACK.into()];
    assert_eq!(judge([&s], None).verdict(Claim::Model), Some(true));
}

#[test]
fn usage_is_the_answering_upstream_s_bill_or_every_attempt_s() {
    let own = judge([&failed_over(&[FALLBACK], Some((30, 60)))], None);
    assert_eq!(own.verdict(Claim::Usage), Some(true));
    assert_eq!(own.unreported_tokens, 0, "the primary billed nothing");
    let wrong = judge([&failed_over(&[FALLBACK], Some((30, 12)))], None);
    assert_eq!(wrong.verdict(Claim::Usage), Some(false), "{wrong:?}");
    let zero = judge([&failed_over(&[FALLBACK], Some((0, 0)))], None);
    assert_eq!(zero.verdict(Claim::Usage), Some(false));
    // Only a completion count, right: honest.
    let mut partial = failed_over(&[FALLBACK], Some((30, 60)));
    partial.client.prompt_tokens = None;
    assert_eq!(judge([&partial], None).verdict(Claim::Usage), Some(true));
    // No usage at all: not judged, and everything billed is unreported.
    let none = judge([&failed_over(&[FALLBACK], None)], None);
    assert_eq!(none.verdict(Claim::Usage), None);
    assert_eq!(none.unreported_tokens, 90, "the fallback billed 30 + 60");
}

#[test]
fn tokens_a_failed_attempt_billed_and_usage_left_out_are_counted() {
    // The primary streamed 20 tokens, then broke; the fallback answered.
    let mut s = sent(
        vec![
            at(Role::Primary, 0.0, 200, PRIMARY, Some(Usage::new(30, 20))),
            at(Role::Fallback, 5.0, 200, FALLBACK, Some(Usage::new(30, 60))),
        ],
        true,
    );
    s.client.models = vec![FALLBACK.into()];
    s.client.prompt_tokens = Some(30);
    s.client.completion_tokens = Some(60);
    let own = judge([&s], None);
    assert_eq!(own.verdict(Claim::Usage), Some(true));
    assert_eq!(own.unreported_tokens, 50);
    // The sum of both bills: honest, nothing left out.
    s.client.prompt_tokens = Some(60);
    s.client.completion_tokens = Some(80);
    let all = judge([&s], None);
    assert_eq!(all.verdict(Claim::Usage), Some(true));
    assert_eq!(all.unreported_tokens, 0);
}

#[test]
fn routing_headers_are_read_in_every_shape_gateways_write() {
    let cases = [
        (
            "x-litellm-attempted-fallbacks",
            "1",
            Some(Said::FallbacksAttempted(1)),
        ),
        (
            "x-portkey-last-used-option-index",
            "config.targets[1]",
            Some(Said::Index(1)),
        ),
        ("cf-aig-step", "0", Some(Said::Index(0))),
        ("helicone-fallback-index", " 2 ", Some(Said::Index(2))),
        ("X-Fallback-Used", "TRUE", Some(Said::FallbackUsed(true))),
        ("x-gateway-fallback", "no", Some(Said::FallbackUsed(false))),
        (
            "x-portkey-last-used-option-index",
            "config.targets[1].targets[0]",
            Some(Said::Index(1)),
        ),
        ("x-fallback-index", "v2-model", None),
        // The configured fallback, not necessarily the one that served.
        ("x-nexus-fallback-model", FALLBACK, None),
        // Indexes and steps of something other than targets.
        ("x-choice-index", "0", None),
        ("x-workflow-step", "3", None),
        // A setting, not a flag that a fallback answered.
        ("x-litellm-fallback-enabled", "true", None),
        ("x-fallback-count", "two", None),
        (
            "x-served-model",
            PRIMARY,
            Some(Said::ServedModel(PRIMARY.into())),
        ),
        ("x-litellm-attempted-retries", "2", None),
        ("x-litellm-model-group", "continuity-sim", None),
        ("x-litellm-model-id", "3f1c", None),
        ("x-portkey-provider", "openai", None),
        ("x-fallback-index", "", None),
    ];
    for (name, value, want) in cases {
        assert_eq!(read_routing(name, value), want, "{name}: {value}");
    }
}

#[test]
fn a_routing_header_that_contradicts_the_attempt_log_is_dishonest() {
    let with = |headers: &[(&str, &str)]| {
        let mut s = failed_over(&[FALLBACK], None);
        s.client.routing = routing(headers);
        judge([&s], None)
    };
    let honest = with(&[
        ("x-litellm-attempted-fallbacks", "1"),
        ("x-portkey-last-used-option-index", "config.targets[1]"),
        ("x-fallback-used", "true"),
        ("x-served-model", FALLBACK),
    ]);
    assert_eq!(honest.verdict(Claim::Routing), Some(true), "{honest:?}");
    assert_eq!(honest.checks.len(), 5, "model and the four headers");
    for lie in [
        ("x-litellm-attempted-fallbacks", "0"),
        ("cf-aig-step", "0"),
        ("x-fallback-used", "false"),
        ("x-served-model", PRIMARY),
    ] {
        let judged = with(&[lie]);
        assert_eq!(judged.verdict(Claim::Routing), Some(false), "{lie:?}");
    }
    // Headers nothing here reads: not judged.
    assert_eq!(
        with(&[("x-litellm-attempted-retries", "3")]).verdict(Claim::Routing),
        None
    );
}

#[test]
fn claims_are_judged_only_where_they_can_apply() {
    // The primary answered: model and usage are the primary's business,
    // not judged; a routing header still is.
    let mut primary = sent(
        vec![at(
            Role::Primary,
            0.0,
            200,
            PRIMARY,
            Some(Usage::new(30, 60)),
        )],
        true,
    );
    primary.client.models = vec![PRIMARY.into()];
    primary.client.prompt_tokens = Some(1);
    primary.client.routing = vec![("x-litellm-attempted-fallbacks".into(), "1".into())];
    let judged = judge([&primary], None);
    assert_eq!(judged.verdict(Claim::Model), None);
    assert_eq!(judged.verdict(Claim::Usage), None);
    assert_eq!(
        judged.verdict(Claim::Routing),
        Some(false),
        "no fallback was tried"
    );
    // No answer: nothing is judged.
    let mut failed = failed_over(&[PRIMARY], Some((0, 0)));
    failed.client.answered = false;
    assert!(judge([&failed], None).checks.is_empty());
    // Answered by the system itself (no upstream answered): nothing to hold it to.
    let mut own = sent(vec![at(Role::Primary, 0.0, 503, PRIMARY, None)], true);
    own.client.models = vec![PRIMARY.into()];
    assert!(judge([&own], None).checks.is_empty());
}

#[test]
fn the_card_counts_cases_and_says_n_a_for_a_family_never_judged() {
    let honest = judge([&failed_over(&[FALLBACK], Some((30, 60)))], None);
    let lying = judge([&failed_over(&[PRIMARY], Some((30, 60)))], None);
    let card = HonestyCard::of([&honest, &lying, &CaseHonesty::default()]);
    assert_eq!(
        card.model,
        Tally {
            honest: 1,
            judged: 2
        }
    );
    assert_eq!(
        card.usage,
        Tally {
            honest: 2,
            judged: 2
        }
    );
    assert_eq!(card.line(), "model 1/2, usage 2/2, routing n/a");
    assert_eq!(card.dishonest(), 1);
}

#[test]
fn a_spliced_answer_may_report_the_answer_as_received() {
    let mut s = spliced();
    s.client.answer_tokens = 60;
    s.client.prompt_tokens = Some(30);
    s.client.completion_tokens = Some(61);
    let received = judge([&s], None);
    assert_eq!(received.verdict(Claim::Usage), Some(true), "{received:?}");
    assert_eq!(
        received.unreported_tokens,
        160 - 91,
        "the continuation's prompt and rounding"
    );
    // The first part's count alone is none of the honest readings.
    s.client.completion_tokens = Some(40);
    assert_eq!(judge([&s], None).verdict(Claim::Usage), Some(false));
}

/// LiteLLM's shapes: the served model with its provider prefix, and the
/// base URL of the deployment that answered, held against the system's
/// upstream ports (a URL naming neither cannot be judged).
#[test]
fn a_named_model_and_base_url_are_held_to_the_answering_upstream() {
    assert_eq!(
        read_routing("x-litellm-model-name", "openai/continuity-sim-fallback"),
        Some(Said::ServedModel("openai/continuity-sim-fallback".into()))
    );
    assert_eq!(
        read_routing("x-litellm-model-api-base", "http://127.0.0.1:9002/v1"),
        Some(Said::ServedAt(9002))
    );
    assert_eq!(
        read_routing("x-upstream-url", "https://api.example.com/v1"),
        Some(Said::ServedAt(443))
    );
    assert_eq!(read_routing("x-litellm-model-api-base", "not a url"), None);
    for (url, port) in [
        ("http://[::1]:9002/v1", Some(9002)),
        ("http://[::1]/v1", Some(80)),
        ("https://user:pw@[2001:db8::7]", Some(443)),
        ("http://127.0.0.1:x/v1", None),
    ] {
        assert_eq!(
            read_routing("x-upstream-url", url),
            port.map(Said::ServedAt),
            "{url}"
        );
    }
    let ports = Some((9001, 9002));
    let with = |headers: &[(&str, &str)], ports| {
        let mut s = failed_over(&[FALLBACK], None);
        s.client.routing = routing(headers);
        judge([&s], ports)
    };
    let honest = with(
        &[
            ("x-litellm-model-name", "openai/continuity-sim-fallback"),
            ("x-litellm-model-api-base", "http://127.0.0.1:9002/v1"),
        ],
        ports,
    );
    assert_eq!(honest.verdict(Claim::Routing), Some(true), "{honest:?}");
    assert_eq!(honest.checks.len(), 3);
    let primary_url = with(
        &[("x-litellm-model-api-base", "http://127.0.0.1:9001/v1")],
        ports,
    );
    assert_eq!(primary_url.verdict(Claim::Routing), Some(false));
    let primary_name = with(&[("x-litellm-model-name", "openai/continuity-sim")], ports);
    assert_eq!(primary_name.verdict(Claim::Routing), Some(false));
    // Neither port, or no ports known: not judged.
    let elsewhere = with(
        &[("x-litellm-model-api-base", "http://10.0.0.5:8000/v1")],
        ports,
    );
    assert_eq!(elsewhere.verdict(Claim::Routing), None);
    let unknown = with(
        &[("x-litellm-model-api-base", "http://127.0.0.1:9002/v1")],
        None,
    );
    assert_eq!(unknown.verdict(Claim::Routing), None);
}

#[test]
fn a_model_may_carry_its_provider_s_prefix_and_empty_names_are_skipped() {
    for (models, honest) in [
        (&["openai/continuity-sim-fallback"][..], true),
        (&["", FALLBACK][..], true),
        (&["openai/continuity-sim"][..], false),
        // A prefix is a provider's, ended by a slash.
        (&["xcontinuity-sim-fallback"][..], false),
    ] {
        let judged = judge([&failed_over(models, None)], None);
        assert_eq!(judged.verdict(Claim::Model), Some(honest), "{models:?}");
    }
    // Only empty names: nothing named, not judged.
    let judged = judge([&failed_over(&[""], None)], None);
    assert_eq!(judged.verdict(Claim::Model), None);
}

#[test]
fn a_hedged_request_s_abandoned_attempt_is_not_the_one_that_answered() {
    // The primary answered; a hedge at the fallback started answering and
    // was walked away from.
    let mut s = sent(
        vec![
            at(Role::Primary, 0.0, 200, PRIMARY, Some(Usage::new(30, 60))),
            AttemptView {
                gave_up: true,
                ..at(Role::Fallback, 5.0, 200, FALLBACK, None)
            },
        ],
        true,
    );
    s.client.models = vec![PRIMARY.into()];
    s.client.routing = vec![("x-fallback-used".into(), "false".into())];
    let judged = judge([&s], None);
    assert_eq!(judged.verdict(Claim::Model), None, "the primary answered");
    assert_eq!(judged.verdict(Claim::Routing), Some(true), "{judged:?}");
    // The same with the headers written before a later attempt came: the
    // abandoned hedge is still not the one serving.
    s.client.headers_ms = Some(20.0);
    s.attempts
        .push(at(Role::Fallback, 100.0, 503, FALLBACK, None));
    let judged = judge([&s], None);
    assert_eq!(judged.verdict(Claim::Routing), Some(true), "{judged:?}");
}

/// A stream the primary began (headers and a role chunk at 10 ms), then
/// broke with an error event; the system went on at the fallback (50 ms)
/// inside the same response.
fn failed_over_inside_the_stream(headers: &[(&str, &str)], headers_ms: f64) -> Sent {
    let mut s = sent(
        vec![
            at(Role::Primary, 0.0, 200, PRIMARY, None),
            at(
                Role::Fallback,
                50.0,
                200,
                FALLBACK,
                Some(Usage::new(30, 60)),
            ),
        ],
        true,
    );
    s.client.models = vec![FALLBACK.into()];
    s.client.headers_ms = Some(headers_ms);
    s.client.routing = routing(headers);
    s
}

#[test]
fn headers_written_before_a_failover_are_held_to_what_was_known_then() {
    let primary_then = [
        ("x-litellm-attempted-fallbacks", "0"),
        ("x-litellm-model-name", "openai/continuity-sim"),
    ];
    let early = judge([&failed_over_inside_the_stream(&primary_then, 10.0)], None);
    assert_eq!(early.verdict(Claim::Routing), Some(true), "{early:?}");
    assert!(
        early
            .checks
            .iter()
            .filter(|c| c.claim == Claim::Routing)
            .all(|c| c.value.contains("when the headers were written")),
        "{early:?}"
    );
    // The model in the body came after the failover: still the fallback's.
    assert_eq!(early.verdict(Claim::Model), Some(true));
    // Claiming the fallback before it was tried is not honest.
    let ahead = judge(
        [&failed_over_inside_the_stream(
            &[("x-fallback-used", "true")],
            10.0,
        )],
        None,
    );
    assert_eq!(ahead.verdict(Claim::Routing), Some(false), "{ahead:?}");
    // Headers written after the fallback arrived must name it.
    let late = judge([&failed_over_inside_the_stream(&primary_then, 60.0)], None);
    assert_eq!(late.verdict(Claim::Routing), Some(false), "{late:?}");
}

/// A count of fallbacks attempted is held to how many times the fallback
/// was tried, not only to whether it was; `openai-model` states the model
/// that served.
#[test]
fn a_fallback_count_above_the_attempts_and_a_provider_model_header_are_judged() {
    let mut s = failed_over(&[FALLBACK], None);
    s.client.routing = routing(&[("x-litellm-attempted-fallbacks", "3")]);
    let inflated = judge([&s], None);
    assert_eq!(
        inflated.verdict(Claim::Routing),
        Some(false),
        "{inflated:?}"
    );
    s.client.routing = routing(&[("x-litellm-attempted-fallbacks", "1")]);
    assert_eq!(judge([&s], None).verdict(Claim::Routing), Some(true));
    s.client.routing = routing(&[("openai-model", PRIMARY)]);
    assert_eq!(judge([&s], None).verdict(Claim::Routing), Some(false));
    s.client.routing = routing(&[("openai-model", FALLBACK)]);
    assert_eq!(judge([&s], None).verdict(Claim::Routing), Some(true));
    // Some proxies echo the requested alias in `x-model`: not read.
    s.client.routing = routing(&[("x-model", PRIMARY)]);
    assert_eq!(judge([&s], None).verdict(Claim::Routing), None);
}
