//! Past the fault, end to end: `run --faults outage` (the primary down on
//! turns 3 to 5) on conversations with later probes and tool calls, with an
//! Anthropic fallback. The reference `history` proxy passes every figure;
//! `stateless` loses what the fallback needed; and each control gateway is
//! caught by the figure it was built to fail, with its reason:
//!
//! - `stays` never takes a session back to the primary: return to primary;
//! - `forgets` drops the turns the fallback served from every later
//!   request: survival (the probe of a fact stated during the outage);
//! - `raw-ids` passes tool-call ids through to a dialect that refuses some
//!   of them: tool-call integrity;
//! - `trims` sends the fallback only the last turn, without saying so:
//!   survival.

use crate::common::dialect_gateways::{start_on_free_ports, DialectFault};
use crate::common::{execute, first_of, gateway_spec, quick_run, repo, system};
use continuity_bench::continuity::summary::past::PastFault;
use continuity_bench::continuity::RunOutcome;
use continuity_bench::dialect::Dialect;
use continuity_bench::source::Source;

/// Conversations of the outage dataset each run replays.
const CONVERSATIONS: usize = 24;

fn past<'a>(outcome: &'a RunOutcome, name: &str) -> &'a PastFault {
    system(outcome, name)
        .past_fault
        .as_ref()
        .unwrap_or_else(|| panic!("{name} has figures past the fault"))
}

/// One run of the first [`CONVERSATIONS`] conversations of the outage
/// dataset under the `outage` profile, reporting into `dir`.
fn outage_run(dir: &std::path::Path) -> continuity_bench::config::RunConfig {
    let dataset = first_of("datasets/continuity-outage-150.jsonl", dir, CONVERSATIONS);
    let mut config = quick_run(&dir.join("report"), 1);
    config.dataset = Source::File(dataset);
    config.faults = Source::File(repo("fault_profiles/outage.toml"));
    config
}

#[tokio::test(start_paused = true)]
async fn each_control_fails_the_figure_it_was_built_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = outage_run(dir.path());
    config.systems.fallback_dialect = Dialect::Anthropic;
    let mut handles = Vec::new();
    for (name, fault) in [
        ("stays", DialectFault::StaysOnFallback),
        ("forgets", DialectFault::DropsFallbackTurns),
        ("raw-ids", DialectFault::PassesToolIdsThrough),
        ("trims", DialectFault::TrimsToLastTurn),
    ] {
        let (gateway, primary, fallback) = start_on_free_ports(fault, Dialect::Anthropic).await;
        config
            .systems
            .gateways
            .push(gateway_spec(name, gateway.url(), primary, fallback));
        handles.push(gateway);
    }
    let outcome = execute(&config).await;
    let n = CONVERSATIONS as u64;
    let all = |r: &continuity_bench::continuity::summary::past::PastRate| {
        (r.rate.successes, r.rate.trials)
    };

    // The reference: every probe answered, back on the primary at once,
    // every tool call paired in the fallback's dialect.
    let history = past(&outcome, "history");
    assert_eq!(system(&outcome, "history").events, n);
    assert_eq!(all(&history.survival), (n, n), "{history:?}");
    assert_eq!(all(&history.return_to_primary), (n, n));
    assert_eq!(history.returned_after, vec![(1, n)]);
    assert_eq!(all(&history.tool_integrity), (n, n));
    assert!(history
        .by_turns_since
        .iter()
        .all(|g| g.rate.rate == Some(1.0)));

    // `stateless` sends the fallback the last message only: the probes
    // inside the outage are lost, so no conversation survives.
    let stateless = past(&outcome, "stateless");
    assert_eq!(stateless.survival.rate.successes, 0, "{stateless:?}");
    assert_eq!(all(&stateless.return_to_primary), (n, n));

    let stays = past(&outcome, "stays");
    assert_eq!(stays.return_to_primary.rate.successes, 0, "{stays:?}");
    assert_eq!(stays.return_to_primary.rate.trials, n);
    assert!(stays.return_to_primary.reasons[0].contains("served by the fallback"));
    assert_eq!(all(&stays.survival), (n, n), "{stays:?}");
    assert_eq!(all(&stays.tool_integrity), (n, n));

    let forgets = past(&outcome, "forgets");
    assert_eq!(forgets.survival.rate.successes, 0, "{forgets:?}");
    assert!(
        forgets.survival.reasons[0].contains("was lost"),
        "{:?}",
        forgets.survival.reasons
    );
    assert_eq!(all(&forgets.return_to_primary), (n, n));
    assert_eq!(all(&forgets.tool_integrity), (n, n));

    // Every other conversation states its fact in a tool result whose id
    // Anthropic refuses: those break at turn 4, so their later probes are
    // lost and no turn of theirs comes after the outage.
    let raw = past(&outcome, "raw-ids");
    assert_eq!(all(&raw.tool_integrity), (n / 2, n), "{raw:?}");
    assert_eq!(all(&raw.survival), (n / 2, n));
    assert_eq!(all(&raw.return_to_primary), (n / 2, n / 2));
    assert_eq!(raw.no_turn_after_outage, n / 2);
    assert!(
        raw.tool_integrity.reasons[0].contains("the fallback refused the request's tool calls"),
        "{:?}",
        raw.tool_integrity.reasons
    );

    let trims = past(&outcome, "trims");
    assert_eq!(trims.survival.rate.successes, 0, "{trims:?}");
    assert_eq!(all(&trims.return_to_primary), (n, n));
    assert_eq!(all(&trims.tool_integrity), (n, n));

    // The reasons reach summary.md.
    let md = std::fs::read_to_string(dir.path().join("report/summary.md")).unwrap();
    assert!(md.contains("### Past the fault"), "{md}");
    assert!(md.contains("refused the request's tool calls"));
    drop(handles);
}

/// The paper profile on the default dataset measures nothing past the
/// fault: no section, no line.
#[tokio::test(start_paused = true)]
async fn the_default_profile_has_no_figures_past_the_fault() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = quick_run(&dir.path().join("report"), 1);
    config.dataset = Source::File(crate::common::small_dataset(dir.path(), 12));
    let outcome = execute(&config).await;
    for name in ["stateless", "history"] {
        assert!(system(&outcome, name).past_fault.is_none(), "{name}");
    }
    let md = std::fs::read_to_string(dir.path().join("report/summary.md")).unwrap();
    assert!(!md.contains("Past the fault"));
}

/// The same outage in Responses mode (`--api responses`): the client sends
/// only each turn's new input and `previous_response_id`. `history` keeps
/// the conversation itself and passes every figure; `stateless` forwards
/// the id to a fallback that never stored it and is refused at the fault;
/// a gateway that stores only the primary's responses loses the turns the
/// fallback served and is caught by survival.
#[tokio::test(start_paused = true)]
async fn responses_mode_tells_the_same_systems_apart() {
    use crate::common::responses_gateway::{self, ResponsesFault};
    let dir = tempfile::tempdir().unwrap();
    let mut config = outage_run(dir.path());
    config.systems.api = continuity_bench::client::Api::Responses;
    let mut handles = Vec::new();
    for (name, fault) in [
        ("primary-only", ResponsesFault::StoresPrimaryOnly),
        ("no-calls", ResponsesFault::DropsFunctionCalls),
    ] {
        let (gateway, primary, fallback) = responses_gateway::start_on_free_ports(fault).await;
        config
            .systems
            .gateways
            .push(gateway_spec(name, gateway.url(), primary, fallback));
        handles.push(gateway);
    }
    let outcome = execute(&config).await;
    let n = CONVERSATIONS as u64;

    let history = past(&outcome, "history");
    assert_eq!(history.survival.rate.successes, n, "{history:?}");
    assert_eq!(history.return_to_primary.rate.successes, n);
    assert_eq!(history.tool_integrity.rate.rate, Some(1.0));

    let stateless = system(&outcome, "stateless");
    assert_eq!(stateless.cpr.successes, 0);
    let p = stateless.past_fault.as_ref().unwrap();
    assert_eq!(p.survival.rate.successes, 0);
    // Refused at the fault: no turn after the outage, counted beside.
    assert_eq!(p.return_to_primary.rate.trials, 0);
    assert_eq!(p.no_turn_after_outage, n);

    let control = past(&outcome, "primary-only");
    assert_eq!(control.survival.rate.successes, 0, "{control:?}");
    assert!(
        control.survival.reasons[0].contains("was lost"),
        "{:?}",
        control.survival.reasons
    );
    assert_eq!(control.return_to_primary.rate.successes, n);
    assert_eq!(control.tool_integrity.rate.rate, Some(1.0));
    let config_json = std::fs::read_to_string(dir.path().join("report/config.json")).unwrap();
    assert!(config_json.contains("\"api\": \"responses\""));
    // Tool results that answer no call: the OpenAI upstreams refuse them
    // by OpenAI's own rule, in Responses mode too.
    let calls = past(&outcome, "no-calls");
    let (kept, trials) = (
        calls.tool_integrity.rate.successes,
        calls.tool_integrity.rate.trials,
    );
    assert!(trials > 0 && kept < trials, "{calls:?}");
    assert!(calls.tool_integrity.reasons[0].contains("refused the request's tool calls"));
    drop(handles);
}
