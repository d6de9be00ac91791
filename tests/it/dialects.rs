//! Fallbacks in another dialect, end to end: the reference `history` proxy
//! through an Anthropic and a Gemini fallback keeps every system message
//! and tool result (streamed and not); control gateways that keep only the
//! last system message, drop tool results or omit `max_tokens` are caught
//! with their diagnosis; and under a context squeeze the report tells a
//! request the fallback rejected from one a gateway trimmed to fit.
//!
//! Every run uses the first [`CONVERSATIONS`] conversations of the rich
//! dataset (a third each with the anchor in the first user message, a
//! system message and a tool result) and a profile whose faults fail over
//! at once (API_ERROR and RATE_LIMIT, no TIMEOUT), replayed fast-forward
//! (only the final turn, carrying the dataset's history), so each run is
//! short.

use crate::common::dialect_gateways::{start_on_free_ports, DialectFault};
use crate::common::{execute, first_of, gateway_spec, quick_run, system};
use continuity_bench::config::Replay;
use continuity_bench::continuity::summary::delivery::Delivery;
use continuity_bench::continuity::RunOutcome;
use continuity_bench::dialect::Dialect;
use continuity_bench::server::ServerHandle;
use continuity_bench::source::Source;
use std::path::Path;

/// Conversations of the rich dataset each run replays.
const CONVERSATIONS: usize = 30;

/// A context window (approximate tokens) that no conversation's final turn
/// fits in, and that its system messages and last user turn do.
const SQUEEZED_WINDOW: u32 = 200;

/// Writes the dataset subset and the fault profile into `dir`.
fn inputs(dir: &Path, context_tokens: Option<u32>) -> (Source, Source) {
    let dataset = first_of("datasets/continuity-rich-150.jsonl", dir, CONVERSATIONS);
    let mut profile = String::from(
        r#"name = "dialects"
description = "On the final turn the primary fails with API_ERROR or RATE_LIMIT; the gateway fails over at once."
upstream = "primary"
turns = "final"

[modes.api_error]
weight = 1
status = 503

[modes.rate_limit]
weight = 1
status = 429
retry_after = "1s"
"#,
    );
    if let Some(n) = context_tokens {
        profile.push_str(&format!("\n[fallback]\ncontext_tokens = {n}\n"));
    }
    let faults = dir.join("dialects.toml");
    std::fs::write(&faults, profile).unwrap();
    (Source::File(dataset), Source::File(faults))
}

/// Runs the reference systems and one control gateway per entry of
/// `controls` (name, fault), all with a fallback speaking `dialect`.
async fn run(
    dialect: Dialect,
    stream: bool,
    controls: &[(&str, DialectFault)],
    context_tokens: Option<u32>,
) -> (tempfile::TempDir, Vec<ServerHandle>, RunOutcome) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(&dir.path().join("report"), 1);
    (config.dataset, config.faults) = inputs(dir.path(), context_tokens);
    config.stream = stream;
    config.replay = Replay::FastForward;
    config.systems.fallback_dialect = dialect;
    let mut handles = Vec::new();
    for (name, fault) in controls {
        let (gateway, primary, fallback) = start_on_free_ports(*fault, dialect).await;
        config
            .systems
            .gateways
            .push(gateway_spec(name, gateway.url(), primary, fallback));
        handles.push(gateway);
    }
    let outcome = execute(&config).await;
    (dir, handles, outcome)
}

fn delivery<'a>(outcome: &'a RunOutcome, name: &str) -> &'a Delivery {
    system(outcome, name).fallback_delivery.as_ref().unwrap()
}

/// `history` through a `dialect` fallback, streamed and not: every event
/// preserved, every system message, tool result and user turn delivered.
async fn history_delivers_everything(dialect: Dialect) {
    for stream in [false, true] {
        let (_dir, _handles, outcome) = run(dialect, stream, &[], None).await;
        let history = system(&outcome, "history");
        assert_eq!(
            history.events, CONVERSATIONS as u64,
            "{dialect} stream={stream}"
        );
        assert_eq!(
            history.cpr.rate,
            Some(1.0),
            "{dialect} stream={stream}: {:?}",
            history.cpr
        );
        let d = delivery(&outcome, "history");
        assert_eq!(d.dialect, dialect);
        assert_eq!(
            d.requests, CONVERSATIONS as u64,
            "{dialect} stream={stream}"
        );
        assert!(
            d.system_messages.sent >= 3 * CONVERSATIONS as u64,
            "several system messages per request: {:?}",
            d.system_messages
        );
        assert!(
            d.tool_results.sent >= CONVERSATIONS as u64,
            "{:?}",
            d.tool_results
        );
        for (what, share) in [
            ("system messages", d.system_messages),
            ("tool results", d.tool_results),
            ("user turns", d.user_turns),
        ] {
            assert_eq!(
                share.rate,
                Some(1.0),
                "{dialect} stream={stream}: {what} {share:?}"
            );
        }
        assert_eq!(d.anchor_missing, 0);
        assert_eq!(d.rejected, 0, "{:?}", d.rejection);
        assert!(d.diagnosis.is_empty(), "{:?}", d.diagnosis);
    }
}

#[tokio::test(start_paused = true)]
async fn history_delivers_everything_through_an_anthropic_fallback() {
    history_delivers_everything(Dialect::Anthropic).await;
}

#[tokio::test(start_paused = true)]
async fn history_delivers_everything_through_a_gemini_fallback() {
    history_delivers_everything(Dialect::Gemini).await;
}

/// Three lossy translations to an Anthropic fallback, each caught by the
/// share it lowers or the fallback's 400, beside a reference proxy that is
/// not flagged.
#[tokio::test(start_paused = true)]
async fn lossy_anthropic_translations_are_caught_with_their_diagnosis() {
    let controls = [
        ("last-system", DialectFault::KeepsLastSystemOnly),
        ("no-tools", DialectFault::DropsToolResults),
        ("no-max-tokens", DialectFault::OmitsMaxTokens),
    ];
    let (_dir, _handles, outcome) = run(Dialect::Anthropic, false, &controls, None).await;

    let d = delivery(&outcome, "last-system");
    let rate = d.system_messages.rate.unwrap();
    assert!(rate < 0.5, "one system message of three or four: {rate}");
    assert_eq!(d.tool_results.rate, Some(1.0));
    assert!(
        d.diagnosis
            .iter()
            .any(|l| l.contains("of the system messages reached the fallback")),
        "{:?}",
        d.diagnosis
    );
    assert!(d.anchor_missing > 0, "some anchors sit in a system message");

    let d = delivery(&outcome, "no-tools");
    assert_eq!(d.tool_results.rate, Some(0.0), "{:?}", d.tool_results);
    assert_eq!(d.system_messages.rate, Some(1.0));
    assert!(
        d.diagnosis
            .iter()
            .any(|l| l.contains("0.0 % of the tool results reached the fallback")),
        "{:?}",
        d.diagnosis
    );
    assert!(
        system(&outcome, "no-tools").cpr.rate.unwrap() < 0.8,
        "the anchors in tool results are lost"
    );

    let d = delivery(&outcome, "no-max-tokens");
    assert_eq!(d.rejected, CONVERSATIONS as u64, "{d:?}");
    assert!(
        d.rejection.as_deref().unwrap().contains("max_tokens"),
        "{:?}",
        d.rejection
    );
    assert!(
        d.diagnosis
            .iter()
            .any(|l| l.contains("refused") && l.contains("max_tokens")),
        "{:?}",
        d.diagnosis
    );
    assert_eq!(system(&outcome, "no-max-tokens").cpr.successes, 0);

    let d = delivery(&outcome, "history");
    assert!(d.diagnosis.is_empty(), "{:?}", d.diagnosis);
    assert_eq!(d.rejected, 0);
    assert_eq!(system(&outcome, "history").cpr.rate, Some(1.0));
}

/// A Gemini fallback whose context window the history does not fit: the
/// reference proxy (which does not trim) has every event rejected by the
/// fallback; a control that trims up front, and one that trims after the
/// fallback's 400, are both counted as trimmed, with or without the anchor.
#[tokio::test(start_paused = true)]
async fn a_gemini_context_squeeze_tells_rejected_from_trimmed() {
    let controls = [
        ("trims", DialectFault::TrimsToLastTurn),
        ("trims-on-400", DialectFault::TrimsAfterRejection),
    ];
    let (_dir, _handles, outcome) =
        run(Dialect::Gemini, false, &controls, Some(SQUEEZED_WINDOW)).await;
    let n = CONVERSATIONS as u64;

    let history = delivery(&outcome, "history").squeeze.unwrap();
    assert_eq!(history.rejected_by_fallback, n, "{history:?}");
    assert_eq!(system(&outcome, "history").cpr.successes, 0);

    for name in ["trims", "trims-on-400"] {
        let s = delivery(&outcome, name).squeeze.unwrap();
        assert_eq!(s.rejected_by_fallback, 0, "{name}: {s:?}");
        assert_eq!(
            s.trimmed_anchor_kept + s.trimmed_anchor_lost,
            n,
            "{name}: {s:?}"
        );
        // The anchor survives the trim only where a system message states it.
        assert_eq!(s.trimmed_anchor_kept, n / 3, "{name}: {s:?}");
        assert_eq!(
            system(&outcome, name).cpr.successes,
            n / 3,
            "{name}: what the trim kept is what it recalls"
        );
    }
}
