//! Controls of the failover catalogue: the reference proxies pass every
//! scored case, and each control gateway, built to get some cases wrong,
//! gets exactly those cases not passed (with the verdict each deserves)
//! and passes the cases run beside them. Every case of the catalogue is
//! covered by at least one control (`every_case_has_a_control`). All on
//! the fast profile; a control runs only the cases it is about.

use crate::common::gateway_spec;
use crate::common::gateways::{start_on_free_ports, Misbehaviour, COOLDOWN};
use continuity_bench::config::{GatewaySpec, SemanticsConfig, SystemsConfig};
use continuity_bench::semantics::catalogue::catalogue;
use continuity_bench::semantics::load::LoadFault;
use continuity_bench::semantics::timing::{GiveUpBounds, Timing};
use continuity_bench::semantics::verdict::Verdict;
use continuity_bench::semantics::{self, CaseResult, SemanticsReport, SystemResult};
use std::collections::BTreeMap;
use std::time::Duration;

/// A control, the cases it runs, and the verdict of each case it does not
/// pass (every other case it runs must pass).
struct Control {
    kind: Misbehaviour,
    stream: bool,
    cases: &'static [&'static str],
    not_passed: &'static [(&'static str, Verdict)],
}

use Verdict::{Fail, Partial, Safe};

/// The `ok` case and the five cases whose 429 states its wait (in
/// `Retry-After`, a reset header, the body's field or its message).
const STATED_WAIT: [&str; 6] = [
    "ok",
    "429-retry-after",
    "429-reset-header",
    "429-reset-tokens",
    "429-retry-in-body",
    "429-retry-in-message",
];

/// Every control and what it must get; the union of `not_passed` covers
/// the catalogue.
const CONTROLS: &[Control] = &[
    Control {
        kind: Misbehaviour::FallsBackOnAnyError,
        stream: false,
        cases: &[
            "ok",
            "400",
            "401",
            "402",
            "403",
            "content-filter",
            "context-length",
            "503",
            "500-once",
            "fallback-health",
            "all-cooling",
        ],
        not_passed: &[
            ("400", Fail),
            ("401", Fail),
            ("402", Fail),
            ("403", Fail),
            ("content-filter", Fail),
            ("context-length", Safe),
            ("500-once", Partial),
            ("fallback-health", Partial),
            // The fallback's 429 passed on without its Retry-After: the
            // client is not told when to come back.
            ("all-cooling", Partial),
        ],
    },
    Control {
        kind: Misbehaviour::CoolsDownPrimary,
        stream: false,
        cases: &["ok", "recooled"],
        // Its cooldown is a fixed half second whatever the 429 said: it
        // is back on the primary long before the longer wait ends.
        not_passed: &[("recooled", Fail)],
    },
    Control {
        kind: Misbehaviour::CoolsEverything,
        stream: false,
        cases: &["ok", "503", "429-stuck", "all-cooling"],
        // It passes the fallback's 429 on without its Retry-After, then
        // answers 503 for an hour: nothing is answered after the span.
        not_passed: &[("all-cooling", Fail)],
    },
    Control {
        kind: Misbehaviour::NeverFallsBack,
        stream: false,
        cases: &[
            "ok",
            "401",
            "404",
            "429",
            "500",
            "502",
            "503",
            "504",
            "timeout",
            "cut",
            "503-persistent",
            "reset-before-headers",
            "no-response",
            "accounting",
            "model-id-map",
            "extra-params",
            "flap",
            "429-stuck",
        ],
        not_passed: &[
            ("404", Fail),
            ("429", Fail),
            ("500", Fail),
            ("502", Fail),
            ("503", Fail),
            ("504", Fail),
            ("timeout", Fail),
            ("cut", Fail),
            ("503-persistent", Safe),
            ("reset-before-headers", Safe),
            ("no-response", Safe),
            // No failover, so nothing of what these cases check at the
            // fallback (usage, the mapped model, the parameters) happened:
            // those checks do not apply, the client got a clean error, and
            // the missing failover is counted once, by the cases above.
            ("accounting", Safe),
            ("model-id-map", Safe),
            ("extra-params", Safe),
            ("flap", Fail),
            // The primary's 429s reach the client during the span; the
            // one client request sent after it is answered.
            ("429-stuck", Fail),
        ],
    },
    Control {
        kind: Misbehaviour::DropsParams,
        stream: false,
        cases: &["ok", "extra-params", "accounting", "model-id-map"],
        not_passed: &[("extra-params", Fail), ("model-id-map", Fail)],
    },
    Control {
        kind: Misbehaviour::HammersPrimary,
        stream: false,
        cases: &[
            "ok",
            "429-retry-after",
            "429-reset-header",
            "429-reset-tokens",
            "429-retry-in-body",
            "429-retry-in-message",
            "429-persistent",
            "503-persistent",
            "both-fail",
        ],
        not_passed: &[
            ("429-retry-after", Fail),
            ("429-reset-header", Fail),
            ("429-reset-tokens", Fail),
            ("429-retry-in-body", Fail),
            ("429-retry-in-message", Fail),
            ("429-persistent", Fail),
            ("503-persistent", Fail),
            ("both-fail", Fail),
        ],
    },
    Control {
        kind: Misbehaviour::MasksCutStreams,
        stream: true,
        cases: &["ok", "cut", "stream-cut", "stream-stall", "malformed-chunk"],
        not_passed: &[
            ("cut", Fail),
            ("stream-cut", Fail),
            ("stream-stall", Fail),
            ("malformed-chunk", Fail),
        ],
    },
    Control {
        kind: Misbehaviour::RelaysStreamsAsTheyEnd,
        stream: true,
        cases: &[
            "ok",
            "stream-cut",
            "stream-truncated",
            "stream-stall",
            "stream-error-first",
            "stream-error-midway",
        ],
        // To the official SDKs (the default client), a stream that ends
        // cleanly is whole: the cut and the truncated stream reach the
        // user as complete answers. The stall's abort comes after the
        // case's wall bound, so it fails on time first. An error event
        // relayed as it came makes the SDK raise: a clean error.
        not_passed: &[
            ("stream-cut", Fail),
            ("stream-truncated", Fail),
            ("stream-stall", Fail),
            ("stream-error-first", Safe),
            ("stream-error-midway", Safe),
        ],
    },
    Control {
        kind: Misbehaviour::DropsErrorEvents,
        stream: true,
        cases: &[
            "ok",
            "stream-error-first",
            "stream-error-midway",
            "fallback-stream-error",
        ],
        not_passed: &[
            ("stream-error-first", Fail),
            ("stream-error-midway", Fail),
            ("fallback-stream-error", Fail),
        ],
    },
    Control {
        kind: Misbehaviour::SaysStop,
        stream: false,
        cases: &["ok", "finish-length"],
        not_passed: &[("finish-length", Fail)],
    },
    Control {
        kind: Misbehaviour::ReadsOnlyRetryAfter,
        stream: false,
        cases: &STATED_WAIT,
        // It honours the header, and retries inside the window when the
        // wait is stated anywhere else.
        not_passed: &[
            ("429-reset-header", Fail),
            ("429-reset-tokens", Fail),
            ("429-retry-in-body", Fail),
            ("429-retry-in-message", Fail),
        ],
    },
    Control {
        kind: Misbehaviour::BacksOffBlindly,
        stream: false,
        cases: &STATED_WAIT,
        // Its retries come inside every window, wherever the wait is stated.
        not_passed: &[
            ("429-retry-after", Fail),
            ("429-reset-header", Fail),
            ("429-reset-tokens", Fail),
            ("429-retry-in-body", Fail),
            ("429-retry-in-message", Fail),
        ],
    },
    Control {
        kind: Misbehaviour::ForwardsPrefillError,
        stream: false,
        cases: &["ok", "prefill-rejected"],
        not_passed: &[("prefill-rejected", Fail)],
    },
    Control {
        kind: Misbehaviour::NoTimeouts,
        stream: false,
        cases: &[
            "ok",
            "no-response",
            "slow-first-token",
            "slow-reasoning-primary",
        ],
        not_passed: &[
            ("no-response", Fail),
            ("slow-first-token", Partial),
            ("slow-reasoning-primary", Partial),
        ],
    },
    Control {
        kind: Misbehaviour::HoldsWithoutDone,
        stream: false,
        cases: &["ok", "no-done"],
        not_passed: &[("no-done", Fail)],
    },
    Control {
        kind: Misbehaviour::StripsJsonBraces,
        stream: false,
        cases: &["ok", "schema"],
        not_passed: &[("schema", Fail)],
    },
    Control {
        kind: Misbehaviour::EmptiesAnswers,
        stream: false,
        cases: &["ok"],
        not_passed: &[("ok", Fail)],
    },
    Control {
        kind: Misbehaviour::TrustsPlainBodies,
        stream: false,
        cases: &["ok", "503", "timeout", "broken-200", "body-stall"],
        not_passed: &[("broken-200", Fail), ("body-stall", Fail)],
    },
    Control {
        kind: Misbehaviour::StallTimerCountsEveryLine,
        stream: true,
        cases: &["ok", "stream-stall", "stream-keepalive"],
        not_passed: &[("stream-keepalive", Fail)],
    },
    Control {
        kind: Misbehaviour::SplicesWithoutAccounting,
        stream: true,
        cases: &["ok", "stream-cut", "continuation-usage"],
        not_passed: &[("continuation-usage", Fail)],
    },
];

/// The configuration of a fast run of `cases` (all when `None`) through
/// the reference proxies (`builtin`) and the given gateways.
fn config(
    builtin: bool,
    gateways: Vec<GatewaySpec>,
    cases: Option<&[&str]>,
    stream: bool,
    cooldown_wait: Duration,
) -> SemanticsConfig {
    SemanticsConfig {
        seed: 42,
        attempt_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(20),
        systems: SystemsConfig {
            builtin,
            gateways,
            model: continuity_bench::config::DRIVER_MODEL.to_string(),
            gateway_wait: Duration::from_secs(5),
            max_response_bytes: continuity_bench::client::DEFAULT_MAX_RESPONSE_BYTES,
            fallback_dialect: continuity_bench::dialect::Dialect::Openai,
            api: continuity_bench::client::Api::Chat,
        },
        stream,
        client: continuity_bench::sse::ClientProfile::default(),
        cooldown_wait,
        json: None,
        contracts: std::sync::Arc::new(continuity_bench::contracts::Contracts::default()),
        timing: Timing::fast(),
        give_up: GiveUpBounds::default(),
        cases: cases.map(|c| c.iter().map(|s| s.to_string()).collect()),
        load: None,
        load_fault: Default::default(),
        out: None,
    }
}

/// Runs `cases` through one control gateway of `kind` only.
async fn run_control(
    kind: Misbehaviour,
    cases: &[&str],
    stream: bool,
    cooldown_wait: Duration,
) -> SemanticsReport {
    let (gateway, primary, fallback) = start_on_free_ports(kind).await;
    let spec = gateway_spec("control", gateway.url(), primary, fallback);
    let config = config(false, vec![spec], Some(cases), stream, cooldown_wait);
    semantics::execute(&config).await.unwrap()
}

fn system<'a>(report: &'a SemanticsReport, name: &str) -> &'a SystemResult {
    report.systems.iter().find(|s| s.system == name).unwrap()
}

fn case<'a>(system: &'a SystemResult, id: &str) -> &'a CaseResult {
    system.cases.iter().find(|c| c.case == id).unwrap()
}

/// The cases of `system` that did not pass, with their verdicts.
fn not_passed(system: &SystemResult) -> BTreeMap<String, Verdict> {
    system
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .map(|c| (c.case.clone(), c.verdict))
        .collect()
}

async fn check_control(control: &Control) {
    let report = run_control(
        control.kind,
        control.cases,
        control.stream,
        Duration::from_secs(1),
    )
    .await;
    let got = not_passed(system(&report, "control"));
    let want: BTreeMap<String, Verdict> = control
        .not_passed
        .iter()
        .map(|(id, v)| (id.to_string(), *v))
        .collect();
    let why: Vec<String> = system(&report, "control")
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .map(|c| format!("{}: {}", c.case, c.reason))
        .collect();
    assert_eq!(got, want, "{:?}: {why:#?}", control.kind);
}

#[test]
fn every_case_has_a_control() {
    let ids: Vec<&str> = catalogue(&Timing::fast(), &GiveUpBounds::default(), false)
        .iter()
        .map(|c| c.id)
        .collect();
    for id in &ids {
        assert!(
            CONTROLS
                .iter()
                .any(|c| c.not_passed.iter().any(|(case, _)| case == id)),
            "no control gets {id} wrong"
        );
    }
    for control in CONTROLS {
        for (id, _) in control.not_passed {
            assert!(
                control.cases.contains(id),
                "{:?} does not run {id}",
                control.kind
            );
        }
    }
}

/// The reference proxies pass every scored case of the catalogue, and
/// report their fallback's expired key on `GET /health`.
#[tokio::test(start_paused = true)]
async fn the_reference_proxies_pass_the_catalogue() {
    let report = semantics::execute(&config(
        true,
        Vec::new(),
        None,
        false,
        Duration::from_secs(1),
    ))
    .await
    .unwrap();
    for name in ["stateless", "history"] {
        let s = system(&report, name);
        assert_eq!(s.cases.len(), 51);
        assert_eq!(
            not_passed(s),
            BTreeMap::new(),
            "{name}: {}",
            report.render()
        );
        let health = case(s, "fallback-health");
        assert!(
            health.reason.is_empty() && health.health.is_some(),
            "{name}: {health:?}"
        );
        // The 500 is retried once on the same route, then fails over.
        assert!(case(s, "500-once").requests[0].served_by_primary());
        // What they say about who answered agrees with the attempt log,
        // spliced continuations included.
        let h = s.honesty;
        assert!(
            h.model.judged >= 20 && h.usage.judged >= 20,
            "{name}: {h:?}"
        );
        assert_eq!(h.dishonest(), 0, "{name}: {}", report.render());
    }
    assert_eq!(report.failures(), 0);
}

/// Each honesty control is caught by the claim it lies in, and by no
/// other; the control that states its routing truthfully is judged honest
/// there. Honesty sits beside the verdicts: the lies change none.
#[tokio::test(start_paused = true)]
async fn each_honesty_control_is_caught_by_its_own_claim() {
    use continuity_bench::semantics::honesty::Claim;
    let cases = ["ok", "503", "timeout", "accounting"];
    for (kind, stream, lies_in) in [
        (Misbehaviour::ClaimsPrimaryModel, false, Some(Claim::Model)),
        (Misbehaviour::ClaimsPrimaryModel, true, Some(Claim::Model)),
        (Misbehaviour::RecountsUsage, false, Some(Claim::Usage)),
        (Misbehaviour::ClaimsNoFallback, false, Some(Claim::Routing)),
        (Misbehaviour::TellsRoutingTruth, false, None),
    ] {
        let report = run_control(kind, &cases, stream, Duration::from_secs(1)).await;
        let control = system(&report, "control");
        let h = control.honesty;
        for claim in Claim::ALL {
            let t = h.tally(claim);
            let why = format!(
                "{kind:?} stream={stream} {}: {}",
                claim.as_str(),
                report.render()
            );
            if Some(claim) == lies_in {
                assert!(t.judged >= 3 && t.honest < t.judged, "{why}");
            } else {
                assert_eq!(t.honest, t.judged, "{why}");
            }
        }
        if kind == Misbehaviour::TellsRoutingTruth {
            assert_eq!(h.routing.judged, cases.len() as u32, "{}", report.render());
        }
        // The failover cases the control answers pass: the lies are
        // counted as honesty, not as verdicts.
        for id in ["503", "timeout"] {
            assert_eq!(case(control, id).verdict, Verdict::Pass, "{kind:?} {id}");
        }
    }
}

/// Read strictly (only `data: [DONE]` completes a stream), the reference
/// proxies still pass every case that always streams: they end what they
/// relay with `[DONE]` or an error.
#[tokio::test(start_paused = true)]
async fn the_reference_proxies_pass_the_streaming_cases_read_strictly() {
    let streaming: Vec<&str> = catalogue(&Timing::fast(), &GiveUpBounds::default(), false)
        .iter()
        .filter(|c| c.streaming == continuity_bench::semantics::case::Streaming::Always)
        .map(|c| c.id)
        .collect();
    assert!(streaming.len() >= 10, "{streaming:?}");
    let mut config = config(
        true,
        Vec::new(),
        Some(&streaming),
        false,
        Duration::from_secs(1),
    );
    config.client = continuity_bench::sse::ClientProfile::Strict;
    let report = semantics::execute(&config).await.unwrap();
    for name in ["stateless", "history"] {
        let s = system(&report, name);
        assert_eq!(s.cases.len(), streaming.len());
        assert_eq!(
            not_passed(s),
            BTreeMap::new(),
            "{name}: {}",
            report.render()
        );
    }
}

/// One test per control, found by its kind, and the list of the kinds
/// tested, so that a control without its test is caught
/// (`every_control_has_its_test`).
macro_rules! control_tests {
    ($($name:ident => $kind:ident,)*) => {
        $(
            #[tokio::test(start_paused = true)]
            async fn $name() {
                let control = CONTROLS
                    .iter()
                    .find(|c| c.kind == Misbehaviour::$kind)
                    .expect("a control of this kind");
                check_control(control).await;
            }
        )*
        const TESTED: &[Misbehaviour] = &[$(Misbehaviour::$kind),*];
    };
}

control_tests! {
    a_gateway_that_fails_over_on_every_error_is_caught => FallsBackOnAnyError,
    a_gateway_that_never_fails_over_is_caught => NeverFallsBack,
    a_gateway_that_drops_parameters_is_caught => DropsParams,
    a_gateway_that_hammers_and_stacks_retries_is_caught => HammersPrimary,
    a_gateway_that_masks_a_broken_stream_is_caught => MasksCutStreams,
    a_gateway_that_relays_a_stream_as_it_ends_is_caught => RelaysStreamsAsTheyEnd,
    a_gateway_that_says_stop_for_a_cut_answer_is_caught => SaysStop,
    a_gateway_that_drops_error_events_is_caught => DropsErrorEvents,
    a_gateway_that_reads_only_retry_after_is_caught => ReadsOnlyRetryAfter,
    a_gateway_that_backs_off_blindly_is_caught => BacksOffBlindly,
    a_gateway_that_forwards_the_prefill_400_is_caught => ForwardsPrefillError,
    a_gateway_without_timeouts_is_caught => NoTimeouts,
    a_gateway_that_waits_for_a_missing_done_is_caught => HoldsWithoutDone,
    a_gateway_that_breaks_structured_output_is_caught => StripsJsonBraces,
    a_gateway_that_empties_answers_is_caught => EmptiesAnswers,
    a_gateway_that_trusts_plain_bodies_is_caught => TrustsPlainBodies,
    a_stall_timer_that_every_line_restarts_is_caught => StallTimerCountsEveryLine,
    a_gateway_that_splices_without_accounting_is_caught => SplicesWithoutAccounting,
    a_gateway_that_cools_every_target_for_an_hour_is_caught => CoolsEverything,
    a_gateway_that_keeps_the_first_cooldown_is_caught => CoolsDownPrimary,
}

#[test]
fn every_control_has_its_test() {
    for control in CONTROLS {
        assert!(
            TESTED.contains(&control.kind),
            "{:?} has no test in control_tests!",
            control.kind
        );
        let same = CONTROLS.iter().filter(|c| c.kind == control.kind).count();
        assert_eq!(same, 1, "{:?} is listed twice", control.kind);
    }
}

/// The verdict on a stream that ends cleanly but short is the client's:
/// the same relay (it ends its stream cleanly whatever the primary's
/// did) fails the cut and the truncated stream read as the official SDKs
/// read them, and is safe read strictly (no `data: [DONE]`, an error).
#[tokio::test(start_paused = true)]
async fn a_clean_end_is_judged_as_the_client_reads_it() {
    use continuity_bench::sse::ClientProfile;
    let cases = ["stream-cut", "stream-truncated"];
    for (profile, verdict) in [
        (ClientProfile::OpenAiSdk, Fail),
        (ClientProfile::Strict, Safe),
    ] {
        let (gateway, primary, fallback) =
            start_on_free_ports(Misbehaviour::RelaysStreamsAsTheyEnd).await;
        let spec = gateway_spec("control", gateway.url(), primary, fallback);
        let mut config = config(
            false,
            vec![spec],
            Some(&cases),
            true,
            Duration::from_secs(1),
        );
        config.client = profile;
        let report = semantics::execute(&config).await.unwrap();
        assert_eq!(report.client, profile);
        let control = system(&report, "control");
        for id in cases {
            let c = case(control, id);
            assert_eq!(c.verdict, verdict, "{profile} {id}: {}", c.reason);
        }
    }
}

/// A gateway that never goes back to the primary after a flap, or after
/// a span of 429s, fails the recovery check, while serving every request.
#[tokio::test(start_paused = true)]
async fn a_gateway_that_never_returns_to_the_primary_is_caught() {
    // One gateway each: after the first case it never calls the primary
    // again, so the second would be inconclusive.
    for id in ["flap", "429-stuck"] {
        let report = run_control(Misbehaviour::StaysOnFallback, &[id], false, Duration::ZERO).await;
        let c = case(system(&report, "control"), id);
        assert_eq!(c.verdict, Verdict::Fail, "{c:?}");
        assert!(c.reason.contains("recovered"), "{}", c.reason);
    }
}

/// `both-fail` spells out the multiplication of stacked retries.
#[tokio::test(start_paused = true)]
async fn stacked_retries_are_spelled_out() {
    let report = run_control(
        Misbehaviour::HammersPrimary,
        &["both-fail"],
        false,
        Duration::ZERO,
    )
    .await;
    let both = case(system(&report, "control"), "both-fail");
    assert_eq!(both.verdict, Verdict::Fail);
    assert!(both.reason.contains("primary 7"), "{}", both.reason);
}

/// A gateway that cools its primary down after a failure sends the next
/// case straight to the fallback. Without waiting, those cases are
/// inconclusive (never counted as a pass); waiting out the cooldown and
/// sending again recovers the real verdicts, with a note saying so.
#[tokio::test(start_paused = true)]
async fn a_primary_cooldown_is_waited_out_or_reported_inconclusive() {
    let cases = ["ok", "401", "503", "502", "504", "404"];
    let report = run_control(
        Misbehaviour::CoolsDownPrimary,
        &cases,
        false,
        Duration::ZERO,
    )
    .await;
    let control = system(&report, "control");
    let inconclusive: Vec<&str> = control
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Inconclusive)
        .map(|c| c.case.as_str())
        .collect();
    assert!(inconclusive.len() >= 3, "{inconclusive:?}");
    assert!(!inconclusive.contains(&"ok"));
    assert_eq!(report.inconclusive() as usize, inconclusive.len());

    let report = run_control(Misbehaviour::CoolsDownPrimary, &cases, false, COOLDOWN * 2).await;
    let control = system(&report, "control");
    assert_eq!(
        not_passed(control),
        BTreeMap::from([("401".to_string(), Fail)]),
        "{}",
        report.render()
    );
    assert!(control.cases.iter().filter(|c| c.resent > 0).count() >= 3);
}

/// The command line: exit 1 when a scored case fails, the reasons and a
/// scorecard line printed, and the same results written as JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_exits_1_on_a_failure_and_writes_json() {
    let (gateway, primary, fallback) = start_on_free_ports(Misbehaviour::FallsBackOnAnyError).await;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("semantics.json");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"));
    command
        .args([
            "semantics",
            "--fast",
            "--no-builtin",
            "--cases",
            "ok,401",
            "--gateway",
        ])
        .arg(format!("control={}", gateway.url()))
        .arg("--upstream-ports")
        .arg(format!("control={primary},{fallback}"))
        .arg("--json")
        .arg(&json);
    // The control gateway serves on this runtime while the command runs.
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("scorecard control: 1 pass"), "{stdout}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = written["systems"][0]["cases"].as_array().unwrap();
    let c401 = cases.iter().find(|c| c["case"] == "401").unwrap();
    assert_eq!(c401["verdict"], "fail");
    let checks = c401["checks"].as_array().unwrap();
    let no_failover = checks.iter().find(|c| c["check"] == "no_failover").unwrap();
    assert_eq!(no_failover["passed"], false);
    assert!(no_failover["value"].is_string() && no_failover["bound"].is_string());
}

/// The catalogue's `ok` case and a load phase of `c` requests under
/// `fault`, through the `HammersPrimary` control (and the reference proxies
/// when `builtin`).
async fn hammered_load(builtin: bool, c: u32, fault: LoadFault) -> SemanticsReport {
    let (gateway, primary, fallback) = start_on_free_ports(Misbehaviour::HammersPrimary).await;
    let spec = gateway_spec("control", gateway.url(), primary, fallback);
    let mut config = config(
        builtin,
        vec![spec],
        Some(&["ok"]),
        false,
        Duration::from_secs(1),
    );
    config.load = Some(c);
    config.load_fault = fault;
    semantics::execute(&config).await.unwrap()
}

/// The load phase tells a gateway whose retries stack and come back
/// together from the reference proxies, whose retries wait out the stated
/// wait, spread over one more of it, once.
#[tokio::test(start_paused = true)]
async fn the_load_phase_measures_stacked_and_synchronised_retries() {
    let mut reference = config(
        true,
        Vec::new(),
        Some(&["ok"]),
        false,
        Duration::from_secs(1),
    );
    reference.load = Some(40);
    let report = semantics::execute(&reference).await.unwrap();
    for name in ["stateless", "history"] {
        let load = system(&report, name)
            .load
            .clone()
            .expect("the load phase ran");
        assert_eq!(load.concurrency, 40);
        assert_eq!(load.answered, 40, "{}", load.line());
        // One 429, one retry after the stated wait, one fallback answer.
        assert_eq!(load.attempts_mean.unwrap().value, 3.0, "{}", load.line());
        assert_eq!(load.retries, 40);
        let sync = load.sync_index.unwrap();
        assert!(sync < 2.0, "{name}: {}", load.line());
        assert!(load.worst_ms.unwrap() <= 2500.0, "{}", load.line());
    }
    let report = hammered_load(false, 40, LoadFault::PrimaryLimited).await;
    let load = system(&report, "control").load.clone().unwrap();
    assert!(load.attempts_mean.unwrap().value >= 8.0, "{}", load.line());
    assert!(load.attempts_mean.unwrap().low.is_some() && load.attempts_p99.unwrap().low.is_some());
    assert!(load.sync_index.unwrap() > 3.0, "{}", load.line());
    assert!(
        report.render().contains("load control: C = 40"),
        "{}",
        report.render()
    );
}

/// `--load-fault all-limited`: with both upstreams rate limited no request
/// is answered, and the attempts per request are every layer's retries
/// multiplied out. `HammersPrimary` spends its 7 primary and 3 fallback
/// attempts on each; the reference proxies one primary retry and the
/// fallback's retries of its stated wait.
#[tokio::test(start_paused = true)]
async fn the_load_phase_with_every_upstream_limited_spends_every_layer() {
    let report = hammered_load(true, 20, LoadFault::AllLimited).await;
    let control = system(&report, "control").load.clone().unwrap();
    assert_eq!(control.fault, LoadFault::AllLimited);
    assert_eq!(control.answered, 0, "{}", control.line());
    assert_eq!(
        control.attempts_mean.unwrap().value,
        10.0,
        "{}",
        control.line()
    );
    assert!(control
        .line()
        .contains("the primary and the fallback answer 429"));
    for name in ["stateless", "history"] {
        let load = system(&report, name).load.clone().unwrap();
        assert_eq!(load.answered, 0, "{name}: {}", load.line());
        // The primary twice (one retry after its wait), the fallback four
        // times (three retries of its stated wait).
        assert_eq!(
            load.attempts_mean.unwrap().value,
            6.0,
            "{name}: {}",
            load.line()
        );
        assert!(load.attempts_mean.unwrap().value < control.attempts_mean.unwrap().value);
    }
    let rendered = report.render();
    assert!(
        rendered.contains("load control: C = 20, the primary and the fallback answer 429"),
        "{rendered}"
    );
}

/// A provider's limiter answers 429 to every attempt inside the window it
/// stated. `ReadsOnlyRetryAfter` retries inside a window stated anywhere
/// but `Retry-After`, meets the limiter again and drops the primary for the
/// fallback: `not_dropped_in_window` counts it. Where it read the wait
/// (`Retry-After`), and for the reference proxies, which wait it out, no
/// retry came inside the window and the check does not apply.
#[tokio::test(start_paused = true)]
async fn a_primary_dropped_inside_its_stated_window_is_counted() {
    use continuity_bench::semantics::case::CheckId;
    let ids = &STATED_WAIT[1..];
    let dropped = |c: &CaseResult| {
        c.checks
            .iter()
            .find(|k| k.check == CheckId::NotDroppedInWindow)
            .unwrap()
            .clone()
    };
    let report = run_control(
        Misbehaviour::ReadsOnlyRetryAfter,
        ids,
        false,
        Duration::ZERO,
    )
    .await;
    let control = system(&report, "control");
    let honoured = dropped(case(control, "429-retry-after"));
    assert!(!honoured.applicable, "{honoured:?}");
    for id in &ids[1..] {
        let c = case(control, id);
        let check = dropped(c);
        assert!(check.broken(), "{id}: {check:?}");
        assert!(
            check
                .value
                .starts_with("1 retry inside the window, then no primary attempt"),
            "{id}: {check:?}"
        );
        assert!(c.requests[0].client.answered, "{id}: the fallback answered");
    }
    // Retrying at once ignores even Retry-After.
    let report = run_control(Misbehaviour::HammersPrimary, ids, false, Duration::ZERO).await;
    for id in ids {
        let check = dropped(case(system(&report, "control"), id));
        assert!(check.broken(), "{id}: {check:?}");
    }
    // Blind backoff retries inside the window too, but comes back after it
    // and is answered: the primary was kept (retry_after_honoured fails).
    let report = run_control(Misbehaviour::BacksOffBlindly, ids, false, Duration::ZERO).await;
    for id in ids {
        let c = case(system(&report, "control"), id);
        let check = dropped(c);
        assert!(check.applicable && check.passed, "{id}: {check:?}");
        assert!(c.requests[0].served_by_primary(), "{id}");
    }
    let reference = semantics::execute(&config(true, Vec::new(), Some(ids), false, Duration::ZERO))
        .await
        .unwrap();
    for name in ["stateless", "history"] {
        for id in ids {
            let c = case(system(&reference, name), id);
            assert!(!dropped(c).applicable, "{name} {id}");
            assert_eq!(c.verdict, Verdict::Pass, "{name} {id}: {}", c.reason);
            assert!(
                c.requests[0].served_by_primary(),
                "{name} {id}: waited for the primary"
            );
        }
    }
}

/// `deadline_moved` applies to a gateway that cools its primary down: one
/// that keeps it cooled past the longer wait passes it (the negative
/// control of `CoolsDownPrimary`'s failure); the reference proxies keep no
/// cooldown, so it does not apply to them.
#[tokio::test(start_paused = true)]
async fn a_cooldown_that_outlasts_the_longer_wait_passes_recooled() {
    use continuity_bench::semantics::case::CheckId;
    let report = run_control(
        Misbehaviour::StaysOnFallback,
        &["recooled"],
        false,
        Duration::ZERO,
    )
    .await;
    let c = case(system(&report, "control"), "recooled");
    let moved = c
        .checks
        .iter()
        .find(|k| k.check == CheckId::DeadlineMoved)
        .unwrap();
    assert!(moved.applicable && moved.passed, "{moved:?}");
    assert_eq!(c.verdict, Verdict::Pass, "{}", c.reason);
    let reference = semantics::execute(&config(
        true,
        Vec::new(),
        Some(&["recooled"]),
        false,
        Duration::ZERO,
    ))
    .await
    .unwrap();
    let c = case(system(&reference, "history"), "recooled");
    let moved = c
        .checks
        .iter()
        .find(|k| k.check == CheckId::DeadlineMoved)
        .unwrap();
    assert!(!moved.applicable, "{moved:?}");
    assert_eq!(c.verdict, Verdict::Pass, "{}", c.reason);
}

/// An error event inside the fallback's stream, in each dialect the
/// fallback can speak (OpenAI's error chunk, Anthropic's `event: error`,
/// Gemini's error object): the reference proxies never hand the partial
/// answer on as complete, whatever the translation.
#[tokio::test(start_paused = true)]
async fn an_error_inside_the_fallback_s_stream_is_never_a_whole_answer_in_any_dialect() {
    use continuity_bench::dialect::Dialect;
    for dialect in [Dialect::Openai, Dialect::Anthropic, Dialect::Gemini] {
        let mut c = config(
            true,
            Vec::new(),
            Some(&["fallback-stream-error"]),
            false,
            Duration::ZERO,
        );
        c.systems.fallback_dialect = dialect;
        let report = semantics::execute(&c).await.unwrap();
        for name in ["stateless", "history"] {
            let case = case(system(&report, name), "fallback-stream-error");
            assert_eq!(
                case.verdict,
                Verdict::Pass,
                "{dialect:?} {name}: {}",
                case.reason
            );
            assert!(!case.requests[0].client.answered, "{dialect:?} {name}");
        }
    }
}

/// A gateway that routes on its own model names (any other id is its
/// 400) is asked for its own id, answers, and the report says which id.
#[tokio::test(start_paused = true)]
async fn a_gateway_s_own_model_id_is_asked_for_and_recorded() {
    use crate::common::gateways::OWN_MODEL_PREFIX;
    let own = format!(
        "{OWN_MODEL_PREFIX}{}",
        continuity_bench::config::DRIVER_MODEL
    );
    let (gateway, primary, fallback) =
        start_on_free_ports(Misbehaviour::RoutesOnItsOwnModelNames).await;
    let mut spec = gateway_spec("control", gateway.url(), primary, fallback);
    spec.model = Some(own.clone());
    let cases = ["ok"];
    let report = semantics::execute(&config(
        true,
        vec![spec],
        Some(&cases),
        false,
        Duration::from_secs(1),
    ))
    .await
    .unwrap();
    let control = system(&report, "control");
    assert_eq!(control.model.as_deref(), Some(own.as_str()));
    assert_eq!(
        control.scorecard.pass,
        1,
        "{:?}",
        case(control, "ok").reason
    );
    assert_eq!(system(&report, "history").model, None);
}
