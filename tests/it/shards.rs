//! One run split into shards as processes (`run --shard K/4`, the real
//! binary) and merged (`report merge`) against the same run made whole: the
//! same rows in the same order and the same figures; and the merge's
//! refusals, exit 2 naming the directory.
//!
//! Timing cannot repeat across processes, so the timing columns
//! (latencies, send and arrival stamps, durations: the machine's, not the
//! code's, as `scripts/behaviour-snapshot` drops them) are left out of the
//! row comparison, and the figures built on them (latency and CLO
//! percentiles, gaps between attempts) are compared by count only. That
//! the merge computes those exactly from the rows is the unit test
//! `merge::tests::merged_shards_give_the_rows_and_every_figure_of_the_whole`.
//! The upstreams' one preflight attempt per system comes once per process,
//! so attempt rows are compared for the dataset's conversations.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_continuity-bench");

/// Columns holding the machine's time.
const TIMING: [&str; 6] = [
    "latency_ms",
    "sent_at_ms",
    "ttfb_ms",
    "ttft_ms",
    "arrived_ms",
    "duration_ms",
];

/// `run` of the small dataset with `extra` flags into `out`, started.
fn start_run(dataset: &Path, out: &Path, seed: &str, extra: &[&str]) -> Child {
    Command::new(BIN)
        .args(["run", "--quiet", "--runs", "2", "--latency", "instant"])
        // Long enough that a loaded machine turns no answer into an error.
        .args(["--attempt-timeout", "5s", "--seed", seed, "--dataset"])
        .arg(dataset)
        .args(extra)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn finished(child: Child) -> Output {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The rows of a CSV file without the timing columns, in file order; with
/// `known`, only rows whose `conversation` is not empty.
fn rows(path: &Path, known: bool) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let keep: Vec<usize> = (0..header.len())
        .filter(|i| !TIMING.contains(&header[*i].as_str()))
        .collect();
    let conversation = header.iter().position(|h| h == "conversation").unwrap();
    let mut out = vec![keep.iter().map(|i| header[*i].clone()).collect()];
    for record in reader.records() {
        let record = record.unwrap();
        if known && record[conversation].is_empty() {
            continue;
        }
        out.push(keep.iter().map(|i| record[*i].to_string()).collect());
    }
    out
}

/// summary.json without what timing or the process decides.
fn figures(dir: &Path) -> serde_json::Value {
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let top = json.as_object_mut().unwrap();
    for key in ["notes", "requests_in_flight", "merged_shards", "shard"] {
        top.remove(key);
    }
    let clo_n = top["clo"]["delta_ms"]["n"].clone();
    top.insert("clo".into(), clo_n);
    for system in top["systems"].as_array_mut().unwrap() {
        let s = system.as_object_mut().unwrap();
        for key in ["event_latency_ms", "ttft_ms"] {
            let n = s[key]["n"].clone();
            s.insert(key.into(), n);
        }
        let gaps = s["attempts"]["gaps_ms"]["n"].clone();
        s["attempts"]["gaps_ms"] = gaps;
    }
    json
}

fn merge(dirs: &[PathBuf], out: &Path) -> Output {
    Command::new(BIN)
        .args(["report", "merge"])
        .args(dirs)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn four_shards_as_processes_merge_into_the_whole_run() {
    let root = tempfile::tempdir().unwrap();
    let dataset = root.path().join("d24.jsonl");
    let generated = Command::new(BIN)
        .args(["generate", "--seed", "42", "--conversations", "24", "--out"])
        .arg(&dataset)
        .output()
        .unwrap();
    assert!(generated.status.success());
    let whole = root.path().join("whole");
    let shards: Vec<PathBuf> = (0..4)
        .map(|k| root.path().join(format!("shard-{k}")))
        .collect();
    let mut children = vec![start_run(&dataset, &whole, "42", &[])];
    for (k, dir) in shards.iter().enumerate() {
        let shard = format!("{k}/4");
        children.push(start_run(&dataset, dir, "42", &["--shard", &shard]));
    }
    for child in children {
        finished(child);
    }
    let merged = root.path().join("merged");
    // Given in any order.
    let given = [&shards[2], &shards[0], &shards[3], &shards[1]].map(|p| p.to_path_buf());
    let output = merge(&given, &merged);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("merged 4 shards (24 conversations)"),
        "{stdout}"
    );

    // The rows: the same, in the same order, but for the timing columns.
    for (file, known) in [
        ("events.csv", false),
        ("turns.csv", false),
        ("attempts.csv", true),
    ] {
        let (a, b) = (
            rows(&whole.join(file), known),
            rows(&merged.join(file), known),
        );
        assert!(a.len() > 24, "{file}: {} rows", a.len());
        assert_eq!(a, b, "{file}");
    }
    // Every shard kept the fault plan and verdicts of the whole: its own
    // rows are the whole's rows of its conversations.
    let shard_events = rows(&shards[1].join("events.csv"), false);
    let whole_events = rows(&whole.join("events.csv"), false);
    let conversation = whole_events[0]
        .iter()
        .position(|h| h == "conversation")
        .unwrap();
    let ids: Vec<String> = {
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(shards[1].join("shard.json")).unwrap()).unwrap();
        manifest["conversations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids.len(), 6);
    let mine: Vec<Vec<String>> = whole_events
        .iter()
        .enumerate()
        .filter(|(i, r)| *i == 0 || ids.contains(&r[conversation]))
        .map(|(_, r)| r.clone())
        .collect();
    assert_eq!(shard_events, mine);
    // The figures: CPR, Wilson and clustered intervals, stages, verdicts,
    // groupings, attempts, contracts, bleed, and how many latencies and CLO
    // differences each rests on.
    let (a, b) = (figures(&whole), figures(&merged));
    assert_eq!(a, b);
    assert_eq!(b["systems"][1]["cpr"]["successes"], 48, "{b}");
    assert_eq!(b["clo"], 48);
    // The shard says what it is, the merge what it joined.
    let shard_summary = std::fs::read_to_string(shards[1].join("summary.json")).unwrap();
    assert!(shard_summary.contains("\"index\": 1") && shard_summary.contains("\"count\": 4"));
    let merged_summary = std::fs::read_to_string(merged.join("summary.json")).unwrap();
    assert!(merged_summary.contains("\"merged_shards\": 4"));

    // Refusals: exit 2, naming the directory and what to do.
    let refused = |dirs: &[PathBuf], expected: &str| {
        let out = root.path().join(format!("refused-{}", expected.len()));
        let output = merge(dirs, &out);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
        assert!(!out.exists(), "a refused merge writes nothing");
    };
    refused(&shards[..3], "shard 3/4 of the run is missing");
    let twice = [shards.clone(), vec![shards[2].clone()]].concat();
    refused(
        &twice,
        &format!(
            "{} and {} are both shard 2/4",
            shards[2].display(),
            shards[2].display()
        ),
    );
    refused(
        std::slice::from_ref(&whole),
        &format!("{} is not a shard", whole.display()),
    );
    // A shard of another seed.
    let other = root.path().join("seed-7");
    finished(start_run(&dataset, &other, "7", &["--shard", "0/4"]));
    let mixed = [vec![other.clone()], shards[1..].to_vec()].concat();
    refused(&mixed, "has seed 42, but");
    refused(&mixed, &other.display().to_string());
    // A shard past the dataset is refused before the run.
    let output = Command::new(BIN)
        .args(["run", "--quiet", "--dataset"])
        .arg(&dataset)
        .args(["--shard", "4/4"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("K counts from 0"));
}
