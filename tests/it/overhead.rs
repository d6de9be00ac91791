//! `bench overhead` against its controls: a gateway that holds every
//! request 30 ms must show about that much added latency, with an interval
//! clear of zero, plain and streamed; a "gateway" that is its own upstream
//! (no hop at all) must not; a gateway that routes on model ids of its own
//! is asked for its own; the reference proxies run as processes of their
//! own whose memory and CPU are read; nothing reaches a fallback; and bad
//! flags stop before anything starts.

use crate::common::gateways::{start_on_free_ports, Misbehaviour, HOLD, OWN_MODEL_PREFIX};
use continuity_bench::driver::{GatewaySpec, SystemsConfig};
use continuity_bench::overhead::schedule::{Mode, Subject};
use continuity_bench::overhead::{measure, OverheadConfig};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn gateway(name: &str, url: String, primary_port: u16, fallback_port: u16) -> GatewaySpec {
    GatewaySpec {
        name: name.to_string(),
        url,
        primary_port,
        fallback_port,
        headers: Vec::new(),
        model: None,
    }
}

/// The reference proxies and `gateways`, asked for the run's model.
fn builtin_and(gateways: Vec<GatewaySpec>) -> SystemsConfig {
    SystemsConfig {
        builtin: true,
        gateways,
        model: "continuity-sim".to_string(),
        gateway_wait: Duration::from_secs(1),
        max_response_bytes: 1 << 20,
        fallback_dialect: continuity_bench::dialect::Dialect::Openai,
        api: continuity_bench::client::Api::Chat,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_request_shows_as_added_latency_and_no_hop_does_not() {
    let (slow, slow_p, slow_f) = start_on_free_ports(Misbehaviour::HoldsEveryRequest).await;
    let (own, own_p, own_f) = start_on_free_ports(Misbehaviour::RoutesOnItsOwnModelNames).await;
    let (dead_p, dead_up, dead_f) = (
        crate::common::gateways::free_port(),
        crate::common::gateways::free_port(),
        crate::common::gateways::free_port(),
    );
    let (direct_p, direct_f) = (
        crate::common::gateways::free_port(),
        crate::common::gateways::free_port(),
    );
    let systems = builtin_and(vec![
        gateway("slow", slow.url(), slow_p, slow_f),
        // The URL is its own primary upstream: the same path as the
        // baseline, no gateway in between.
        gateway(
            "direct",
            format!("http://127.0.0.1:{direct_p}"),
            direct_p,
            direct_f,
        ),
        GatewaySpec {
            model: Some(format!("{OWN_MODEL_PREFIX}continuity-sim")),
            ..gateway("own", own.url(), own_p, own_f)
        },
        // Nothing listens there: left out, said, and the others measured.
        gateway(
            "dead",
            format!("http://127.0.0.1:{dead_p}"),
            dead_up,
            dead_f,
        ),
    ]);
    let config = OverheadConfig {
        systems,
        concurrency: vec![1, 4],
        modes: Mode::ALL.to_vec(),
        trials: 2,
        requests: 40,
        warmup: 5,
        upstream_delay: Duration::from_millis(2),
        deadline: Duration::from_secs(10),
        seed: 7,
        pids: vec![("slow".to_string(), std::process::id())],
        exe: env!("CARGO_BIN_EXE_continuity-bench").into(),
    };
    let report = measure(&config, CancellationToken::new(), &|_| {})
        .await
        .unwrap();
    assert!(!report.interrupted);
    assert_eq!(
        report.systems,
        ["stateless", "history", "slow", "direct", "own"]
    );
    assert_eq!(report.left_out.len(), 1, "{:?}", report.left_out);
    assert_eq!(report.left_out[0].0, "dead");
    assert!(
        report.left_out[0].1.contains("preflight"),
        "{:?}",
        report.left_out
    );
    use continuity_bench::overhead::render::added_by_concurrency;
    assert_eq!(
        added_by_concurrency(&report, "dead"),
        "not measured (no answer to its preflight)",
        "said once, not per concurrency"
    );
    let slow_cell = added_by_concurrency(&report, "slow");
    assert!(
        slow_cell.contains(" at C = 1; ") && slow_cell.ends_with(" at C = 4"),
        "{slow_cell}"
    );
    // (1 baseline + 5 systems) x 2 modes x 2 trials x 2 concurrencies.
    assert_eq!(report.slots.len(), 48);
    assert!(report.slots[..2]
        .iter()
        .all(|s| s.slot.subject == Subject::Baseline));
    for p in &report.points {
        assert_eq!(p.failed, 0, "{p:?}");
        assert_eq!(p.measured, 80, "{p:?}");
    }
    let hold = HOLD.as_secs_f64() * 1000.0;
    for mode in Mode::ALL {
        let slow = report
            .point(&Subject::System("slow".into()), 1, mode)
            .unwrap();
        let added = slow.added_p50.unwrap();
        assert!(
            added.ms > hold * 0.5 && added.ms < hold * 5.0,
            "{mode}: the held gateway adds {added:?}, held {hold} ms"
        );
        assert!(added.low.unwrap() > 0.0, "{mode}: {added:?}");
        let direct = report
            .point(&Subject::System("direct".into()), 1, mode)
            .unwrap();
        assert!(
            direct.added_p50.unwrap().ms < hold * 0.5,
            "{mode}: no hop, yet {:?}",
            direct.added_p50
        );
    }
    for name in ["stateless", "history"] {
        let p = report.processes.iter().find(|p| p.system == name).unwrap();
        assert!(p.started_here, "{p:?}");
        assert!(p.peak_rss_kib > 0 && p.requests > 0, "{p:?}");
        assert!(p.cpu_ms_per_1k().is_some(), "{p:?}");
    }
    let given = report
        .processes
        .iter()
        .find(|p| p.system == "slow")
        .unwrap();
    assert!(!given.started_here && given.peak_rss_kib > 0, "{given:?}");
    assert!(
        report
            .unread
            .iter()
            .any(|(name, why)| name == "direct" && why.contains("--pid")),
        "{:?}",
        report.unread
    );
    assert!(report.fallback_attempts.iter().all(|(_, n)| *n == 0));
    let text = continuity_bench::overhead::render::render(
        &report,
        continuity_bench::overhead::render::Target::Markdown,
    );
    assert!(text.contains("| slow |"), "{text}");
    slow.shutdown().await;
    own.shutdown().await;
}

/// Cancelled when the fourth slot starts (the progress line is the
/// readiness signal): the three slots that finished are the report, marked
/// interrupted, and the reference proxies' processes are stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_measurement_keeps_the_slots_that_finished() {
    let systems = builtin_and(Vec::new());
    let config = OverheadConfig {
        systems,
        concurrency: vec![1],
        modes: vec![Mode::Plain],
        trials: 2,
        requests: 20,
        warmup: 1,
        upstream_delay: Duration::from_millis(1),
        deadline: Duration::from_secs(10),
        seed: 7,
        pids: Vec::new(),
        exe: env!("CARGO_BIN_EXE_continuity-bench").into(),
    };
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let report = measure(&config, cancel, &move |line: &str| {
        if line.starts_with("slot 4/") {
            stop.cancel();
        }
    })
    .await
    .unwrap();
    assert!(report.interrupted);
    assert_eq!(report.slots.len(), 3, "{:?}", report.slots);
    assert!(
        report.slots.iter().all(|s| s.warmup_failed == 0),
        "no warm-up request fails against the reference proxies: {:?}",
        report.slots
    );
    let measured: usize = report.points.iter().map(|p| p.measured).sum();
    assert_eq!(measured, 3 * 20, "{:?}", report.points);
    for p in &report.processes {
        assert!(
            std::fs::metadata(format!("/proc/{}", p.pid)).is_err(),
            "{} (pid {}) still runs after the measurement",
            p.system,
            p.pid
        );
    }
    let text = continuity_bench::overhead::render::render(
        &report,
        continuity_bench::overhead::render::Target::Markdown,
    );
    assert!(text.contains("interrupted: 3 slots"), "{text}");
}

#[test]
fn a_pid_for_no_gateway_and_a_used_out_dir_are_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["bench", "overhead", "--pid", "nosuch=1"])
        .arg("--out")
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--pid nosuch=1"), "{stderr}");
    assert!(
        !dir.path().join("o").exists(),
        "nothing is created for refused flags"
    );

    std::fs::write(dir.path().join("kept.txt"), "a report").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["bench", "overhead"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("kept.txt")).unwrap(),
        "a report"
    );

    for (flags, says) in [
        (&["--deadline", "50ms"][..], "--deadline"),
        (
            &["--upstream-delay", "2s", "--deadline", "1s"][..],
            "--upstream-delay",
        ),
        (&["--concurrency", "4,4"][..], "twice"),
        (
            &[
                "--no-builtin",
                "--gateway",
                "g=http://127.0.0.1:1",
                "--gateway-model",
                "nosuch=m",
            ][..],
            "--gateway-model",
        ),
        (
            &["--no-builtin", "--gateway", "baseline=http://127.0.0.1:1"][..],
            "baseline",
        ),
    ] {
        let out = dir.path().join("refused");
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
            .args(["bench", "overhead"])
            .args(flags)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
        assert!(
            !out.exists(),
            "{flags:?}: nothing is created for refused flags"
        );
    }
}
