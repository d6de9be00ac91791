//! Pass-through upstreams in front of a provider stand-in
//! ([`crate::common::standin`]): the same verdicts as the simulated model
//! for `history` and `stateless`, the faults in the attempt log and never
//! at the provider, no key in any file or printed line, a wrong key that
//! fails clearly with its reason recorded, and the cost gate. Streamed,
//! the provider's stream is relayed live: a slow stand-in's first token
//! reaches the client long before its answer ends, and a stand-in whose
//! stream breaks off gives a broken stream and a `provider_error` attempt.

use crate::common::quick_run;
use crate::common::standin::{Pace, StandIn, SLOW_PIECES};
use continuity_bench::cli::ProviderOptions;
use continuity_bench::config::{provider_config, RunConfig};
use continuity_bench::continuity::{self, report::ReportData};
use continuity_bench::record::AttemptAction;
use continuity_bench::scoring::Verdict;
use continuity_bench::source::Source;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Conversations of the small dataset (the first of the committed 150).
const CONVERSATIONS: usize = 12;

const PRIMARY_KEY: &str = "sk-standin-primary-DO-NOT-WRITE-1";
const FALLBACK_KEY: &str = "sk-standin-fallback-DO-NOT-WRITE-2";
const WRONG_KEY: &str = "sk-standin-wrong-DO-NOT-WRITE-3";

/// The first [`CONVERSATIONS`] conversations of the committed dataset, as
/// a file in `dir`.
fn small_dataset(dir: &Path) -> PathBuf {
    crate::common::small_dataset(dir, CONVERSATIONS)
}

/// One run of the small dataset with the instant simulated model.
fn small_run(out: &Path, dataset: &Path) -> RunConfig {
    let mut config = quick_run(out, 1);
    config.dataset = Source::File(dataset.to_path_buf());
    config
}

/// Keys as the environment would hold them.
fn env(var: &str) -> Option<String> {
    match var {
        "STANDIN_PRIMARY_KEY" => Some(PRIMARY_KEY.into()),
        "STANDIN_FALLBACK_KEY" => Some(FALLBACK_KEY.into()),
        "STANDIN_WRONG_KEY" => Some(WRONG_KEY.into()),
        _ => None,
    }
}

/// Provider options: the primary at `primary` with its key, the fallback
/// at `fallback` with the key in `fallback_key_env`.
fn providers(primary: &str, fallback: &str, fallback_key_env: &str) -> ProviderOptions {
    ProviderOptions {
        primary_provider: Some(primary.into()),
        primary_provider_model: Some("standin-primary".into()),
        primary_provider_key_env: Some("STANDIN_PRIMARY_KEY".into()),
        fallback_provider: Some(fallback.into()),
        fallback_provider_model: Some("standin-fallback".into()),
        fallback_provider_key_env: Some(fallback_key_env.into()),
        ..ProviderOptions::default()
    }
}

async fn execute(config: &RunConfig) -> anyhow::Result<ReportData> {
    let outcome =
        continuity::execute(config, CancellationToken::new(), std::time::Instant::now()).await?;
    Ok(outcome.data.expect("conversations finished"))
}

/// Verdict per (system, conversation).
fn verdicts(data: &ReportData) -> BTreeMap<(String, String), Verdict> {
    data.events
        .iter()
        .map(|e| ((e.system.clone(), e.conversation.clone()), e.verdict))
        .collect()
}

/// Asserts that no file of `dir` holds any of the keys.
fn no_key_in(dir: &Path) {
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        files += 1;
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for key in [PRIMARY_KEY, FALLBACK_KEY, WRONG_KEY, "DO-NOT-WRITE"] {
            assert!(!text.contains(key), "{} holds {key}", path.display());
        }
    }
    assert!(files >= 6, "{files} report files");
}

#[tokio::test(start_paused = true)]
async fn passthrough_gives_the_simulated_verdicts_and_the_provider_never_sees_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path());
    let simulated = execute(&small_run(&dir.path().join("sim"), &dataset))
        .await
        .unwrap();

    let primary = StandIn::start(PRIMARY_KEY, "standin-primary-reported").await;
    let fallback = StandIn::start(FALLBACK_KEY, "standin-fallback-reported").await;
    let out = dir.path().join("pass");
    let mut config = small_run(&out, &dataset);
    config.providers = provider_config(
        &providers(&primary.url, &fallback.url, "STANDIN_FALLBACK_KEY"),
        env,
    )
    .unwrap();
    let passed = execute(&config).await.unwrap();

    // The same verdicts, event by event, and so the same CPR.
    assert_eq!(passed.events.len(), 2 * CONVERSATIONS);
    assert_eq!(verdicts(&passed), verdicts(&simulated));
    for (a, b) in passed
        .summary
        .systems
        .iter()
        .zip(&simulated.summary.systems)
    {
        assert_eq!(a.cpr.successes, b.cpr.successes, "{}", a.name);
        assert_eq!(a.cpr.trials, b.cpr.trials, "{}", a.name);
    }
    let cpr = |name: &str| {
        let s = passed
            .summary
            .systems
            .iter()
            .find(|s| s.name == name)
            .unwrap();
        s.cpr.successes
    };
    assert_eq!(cpr("history"), CONVERSATIONS as u64);
    assert_eq!(cpr("stateless"), 0);

    // The faults are in the attempt log, executed by the upstreams.
    let actions: std::collections::BTreeSet<&str> =
        passed.attempts.iter().map(|a| a.action.as_str()).collect();
    for action in ["ok", "timeout_held", "api_error", "rate_limited"] {
        assert!(actions.contains(action), "{actions:?} lacks {action}");
    }
    // A faulted attempt never reached the provider: the primary stand-in
    // never saw a probe (every final turn is faulted at the primary), the
    // fallback stand-in saw exactly the failover requests, and every
    // forwarded attempt is one request at a stand-in.
    let dataset = continuity_bench::dataset::Dataset::load(&dataset).unwrap();
    let probes: Vec<&str> = dataset.conversations.iter().map(|c| c.probe()).collect();
    let (p_seen, f_seen) = (primary.seen(), fallback.seen());
    assert!(p_seen
        .iter()
        .all(|s| !probes.contains(&s.last_user.as_str())));
    assert_eq!(f_seen.len(), 2 * CONVERSATIONS, "one failover per event");
    assert!(f_seen
        .iter()
        .all(|s| probes.contains(&s.last_user.as_str())));
    let forwarded = passed
        .attempts
        .iter()
        .filter(|a| a.action == AttemptAction::Ok)
        .count();
    assert_eq!(forwarded, p_seen.len() + f_seen.len());
    // Each provider got its own model id and key; the log says who answered.
    assert!(p_seen
        .iter()
        .all(|s| s.model == "standin-primary" && s.authorized));
    assert!(f_seen
        .iter()
        .all(|s| s.model == "standin-fallback" && s.authorized));
    for a in passed
        .attempts
        .iter()
        .filter(|a| a.action == AttemptAction::Ok)
    {
        let expected = match a.role {
            continuity_bench::faults::Role::Primary => "standin-primary-reported",
            continuity_bench::faults::Role::Fallback => "standin-fallback-reported",
        };
        assert_eq!(a.answered_by, expected);
        assert!(!a.answer.is_empty());
    }
    // The report says which model answered and points at the judge.
    let providers = passed.config.providers.as_ref().unwrap();
    assert_eq!(providers.fallback.model, "standin-fallback");
    assert_eq!(providers.fallback.url, fallback.url);
    let note = &passed.summary.notes[0];
    assert!(
        note.contains("answers from standin-fallback at 127.0.0.1"),
        "{note}"
    );
    assert!(note.contains("--judge"), "{note}");
    let page = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(page.contains("answers from standin-primary at 127.0.0.1"));
    let config_json = std::fs::read_to_string(out.join("config.json")).unwrap();
    assert!(config_json.contains("\"STANDIN_FALLBACK_KEY\""));
    no_key_in(&out);
}

#[tokio::test(start_paused = true)]
async fn a_wrong_key_fails_clearly_and_is_recorded_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path());
    let primary = StandIn::start(PRIMARY_KEY, "p").await;
    let fallback = StandIn::start(FALLBACK_KEY, "f").await;

    // The fallback's key is wrong: every failover gets the provider's 401,
    // passed on honestly, and the event is an error with that reason.
    let out = dir.path().join("wrong-fallback");
    let mut config = small_run(&out, &dataset);
    config.providers = provider_config(
        &providers(&primary.url, &fallback.url, "STANDIN_WRONG_KEY"),
        env,
    )
    .unwrap();
    let data = execute(&config).await.unwrap();
    assert_eq!(data.events.len(), 2 * CONVERSATIONS);
    for e in &data.events {
        assert_eq!(e.verdict, Verdict::Error, "{e:?}");
        assert_eq!(e.client_status, Some(401), "{e:?}");
    }
    let refused: Vec<_> = data
        .attempts
        .iter()
        .filter(|a| a.action == AttemptAction::ProviderError)
        .collect();
    assert_eq!(refused.len(), 2 * CONVERSATIONS);
    for a in refused {
        assert_eq!(a.status, Some(401));
        assert!(
            a.provider_error
                .contains("answered HTTP 401: Incorrect API key provided: [redacted]"),
            "{}",
            a.provider_error
        );
    }
    let finals: Vec<_> = data.turns.iter().filter(|t| t.is_final).collect();
    assert!(finals
        .iter()
        .all(|t| t.error.as_deref().is_some_and(|e| e.contains("401"))));
    assert!(fallback.seen().iter().all(|s| !s.authorized));
    no_key_in(&out);

    // Both keys wrong: the preflight fails before the run, with the reason
    // and without the key.
    let mut config = small_run(&dir.path().join("wrong-both"), &dataset);
    let mut options = providers(&primary.url, &fallback.url, "STANDIN_WRONG_KEY");
    options.primary_provider_key_env = Some("STANDIN_WRONG_KEY".into());
    config.providers = provider_config(&options, env).unwrap();
    let error = format!("{:#}", execute(&config).await.unwrap_err());
    assert!(
        error.contains("preflight") && error.contains("401"),
        "{error}"
    );
    assert!(!error.contains(WRONG_KEY), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_gate_blocks_a_paid_run_until_yes() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path());
    let standin = StandIn::start(PRIMARY_KEY, "paid").await;
    // 0.0.0.0 reaches this machine on Linux but is not one of the loopback
    // names, so the harness treats it as a paid provider: the stand-in
    // plays a hosted API.
    let paid = format!("http://0.0.0.0:{}/v1", standin.port);
    let options = ProviderOptions {
        provider: Some(paid),
        provider_model: Some("hosted".into()),
        provider_key_env: Some("STANDIN_PRIMARY_KEY".into()),
        ..ProviderOptions::default()
    };
    let out = dir.path().join("gated");
    let mut config = small_run(&out, &dataset);
    config.providers = provider_config(&options, env).unwrap();
    config.cost_limit_tokens = 1000;
    let error = execute(&config).await.unwrap_err().to_string();
    assert!(
        error.contains("--cost-limit-tokens 1,000") && error.contains("--yes"),
        "{error}"
    );
    assert!(standin.seen().is_empty(), "nothing was sent");
    assert!(!out.exists(), "no report directory was made");

    config.yes = true;
    let data = execute(&config).await.unwrap();
    assert_eq!(data.events.len(), 2 * CONVERSATIONS);
    assert!(!standin.seen().is_empty());
}

#[test]
fn a_streamed_run_as_a_binary_prints_its_cost_and_no_key() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let standin = runtime.block_on(StandIn::start(PRIMARY_KEY, "standin-streamed"));
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path());
    let out = dir.path().join("report");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["run", "--quiet", "--stream", "--runs", "1"])
        .args(["--attempt-timeout", "3s"])
        .arg("--dataset")
        .arg(&dataset)
        .args(["--provider", &standin.url, "--provider-model", "standin"])
        .args(["--provider-key-env", "STANDIN_BINARY_KEY"])
        .arg("--out")
        .arg(&out)
        .env("STANDIN_BINARY_KEY", PRIMARY_KEY)
        .output()
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{printed}");
    assert!(printed.contains("cost estimate for 1 run: "), "{printed}");
    assert!(printed.contains("no cost limit applies"), "{printed}");
    assert!(
        printed.contains("answers from standin at 127.0.0.1"),
        "{printed}"
    );
    assert!(!printed.contains(PRIMARY_KEY), "{printed}");
    // Forwarded as the client asked: streamed, but for the two preflight
    // requests, which are plain.
    let seen = standin.seen();
    assert!(seen.iter().all(|s| s.authorized));
    assert_eq!(seen.iter().filter(|s| !s.stream).count(), 2, "{seen:?}");
    no_key_in(&out);
    let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
    let preserved = events.lines().filter(|l| l.contains(",preserved,")).count();
    assert_eq!(
        preserved, CONVERSATIONS,
        "history preserves every anchor:\n{events}"
    );
}

/// Gap between the pieces of a slow stand-in's stream.
const SLOW_GAP: Duration = Duration::from_millis(200);

/// Both providers at `pace`-streaming stand-ins, run streamed.
async fn streamed_against(
    out: &Path,
    dataset: &Path,
    primary: &StandIn,
    fallback: &StandIn,
) -> ReportData {
    let mut config = small_run(out, dataset);
    config.stream = true;
    config.providers = provider_config(
        &providers(&primary.url, &fallback.url, "STANDIN_FALLBACK_KEY"),
        env,
    )
    .unwrap();
    execute(&config).await.unwrap()
}

/// On the paused clock: the stand-in's gaps, the relay's deadlines and the
/// driver's first-token stamp are all virtual time, which moves only when
/// every task waits on a timer, so "first token long before the last
/// piece" is an ordering the machine's load cannot blur.
#[tokio::test(start_paused = true)]
async fn a_slow_provider_stream_is_relayed_as_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path());
    let mut simulated = small_run(&dir.path().join("sim"), &dataset);
    simulated.stream = true;
    let simulated = execute(&simulated).await.unwrap();

    let pace = Pace::Slow(SLOW_GAP);
    let primary = StandIn::start_with(PRIMARY_KEY, "standin-primary-reported", pace).await;
    let fallback = StandIn::start_with(FALLBACK_KEY, "standin-fallback-reported", pace).await;
    let passed = streamed_against(&dir.path().join("pass"), &dataset, &primary, &fallback).await;
    assert_eq!(verdicts(&passed), verdicts(&simulated));

    // Turns the primary answered with a whole slow stream (every piece
    // sent, so the stand-in took all its gaps): the client's first token
    // came in well under half that time. Buffered, it would have come
    // with the last piece.
    let whole_ms = (SLOW_GAP * (SLOW_PIECES as u32 - 1)).as_secs_f64() * 1000.0;
    let answered: Vec<_> = passed
        .turns
        .iter()
        .filter(|t| !t.is_final && t.error.is_none())
        .collect();
    let slow: Vec<_> = answered
        .iter()
        .filter(|t| t.latency_ms >= whole_ms)
        .collect();
    assert!(
        slow.len() * 2 >= answered.len(),
        "{} of {} answers took the stand-in's whole time",
        slow.len(),
        answered.len()
    );
    for t in slow {
        let ttft = t.ttft_ms.expect("a streamed answer has a first token");
        assert!(
            ttft < whole_ms / 2.0,
            "{} {} turn {}: first token at {ttft:.0} ms of {:.0} ms",
            t.system,
            t.conversation,
            t.turn,
            t.latency_ms
        );
    }
    let relayed = passed
        .attempts
        .iter()
        .filter(|a| a.action == AttemptAction::Ok && a.stream)
        .collect::<Vec<_>>();
    assert!(!relayed.is_empty());
    for a in relayed {
        assert!(a.answered_by.starts_with("standin-"), "{a:?}");
        assert!(!a.answer.is_empty(), "{a:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_provider_stream_that_breaks_is_a_broken_stream_and_a_provider_error() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path());
    let primary = StandIn::start(PRIMARY_KEY, "standin-primary-reported").await;
    let fallback = StandIn::start_with(
        FALLBACK_KEY,
        "standin-fallback-reported",
        Pace::BreakAfterFirst,
    )
    .await;
    let data = streamed_against(&dir.path().join("broken"), &dataset, &primary, &fallback).await;
    // Every failover reached the fallback, whose provider broke off: the
    // client got a stream broken off too, not an answer.
    assert_eq!(data.events.len(), 2 * CONVERSATIONS);
    for e in &data.events {
        assert_eq!(e.verdict, Verdict::Error, "{e:?}");
    }
    let finals: Vec<_> = data.turns.iter().filter(|t| t.is_final).collect();
    assert_eq!(finals.len(), 2 * CONVERSATIONS);
    for t in finals {
        let error = t.error.as_deref().unwrap_or_default();
        assert!(error.contains("broken off"), "{error}");
    }
    // Each such attempt is the provider's error, after the 200 and the
    // piece relayed, with the reason and the piece in the log.
    let broken: Vec<_> = data
        .attempts
        .iter()
        .filter(|a| a.role == continuity_bench::faults::Role::Fallback && a.stream)
        .collect();
    assert_eq!(broken.len(), 2 * CONVERSATIONS);
    for a in broken {
        assert_eq!(
            (a.action, a.status),
            (AttemptAction::ProviderError, Some(200)),
            "{a:?}"
        );
        assert!(a.provider_error.contains("broke its reply off"), "{a:?}");
        assert!(!a.answer.is_empty(), "{a:?}");
    }
}
