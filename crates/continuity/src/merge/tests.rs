//! The merge against the whole: the fixture's rows split into shard
//! directories as `run --shard K/N` writes them, merged, give the rows and
//! the summary of the whole, every figure; and each refusal.

use super::*;
use crate::report::fixture::report_data;
use crate::report::{summary_context, write_report};
use crate::shard::ShardManifest;
use cb_driver::Shard;
use std::path::Path;

/// Conversations of the fixture's rows: c001 to c030, index = number - 1.
const CONVERSATIONS: usize = 30;

fn index_of(id: &str) -> usize {
    id[1..].parse::<usize>().unwrap() - 1
}

/// The fixture as a whole run: its rows in the one order, its summary
/// computed from them.
fn whole() -> ReportData {
    let mut data = report_data();
    data.config.conversations = CONVERSATIONS as u32;
    data.config.dataset_sha256 = Some("d".repeat(64));
    data.config.fault_profile_sha256 = Some("f".repeat(64));
    let ids: Vec<String> = (1..=CONVERSATIONS).map(|i| format!("c{i:03}")).collect();
    let order = RowOrder::new(
        data.config.systems.iter().map(String::as_str),
        ids.iter().map(|id| (id.as_str(), index_of(id))),
    );
    order.sort_turns(&mut data.turns);
    order.sort_events(&mut data.events);
    order.sort_attempts(&mut data.attempts);
    let ctx = summary_context(&data.config, crate::run_notes(&data.config));
    data.summary = summarize(&ctx, &data.events, &data.turns, &data.attempts);
    data
}

/// Writes shard `shard` of `data` into `dir` as a sharded run does:
/// its rows, its own summary and its manifest.
fn write_shard(data: &ReportData, shard: Shard, dir: &Path) {
    let mine = |id: &str| shard.includes(index_of(id));
    let mut config = data.config.clone();
    config.shard = Some(shard);
    config.requests_in_flight.peak = Some(7 + shard.index as usize);
    let turns: Vec<_> = data
        .turns
        .iter()
        .filter(|t| mine(&t.conversation))
        .cloned()
        .collect();
    let events: Vec<_> = data
        .events
        .iter()
        .filter(|e| mine(&e.conversation))
        .cloned()
        .collect();
    let attempts: Vec<_> = data
        .attempts
        .iter()
        .filter(|a| mine(&a.conversation))
        .cloned()
        .collect();
    let ctx = summary_context(&config, crate::run_notes(&config));
    let summary = summarize(&ctx, &events, &turns, &attempts);
    let shard_data = ReportData {
        config: config.clone(),
        turns,
        events,
        attempts,
        summary,
    };
    write_report(dir, &shard_data).unwrap();
    ShardManifest {
        shard,
        selection: crate::shard::SELECTION.into(),
        version: config.version.clone(),
        seed: config.seed,
        dataset_conversations: CONVERSATIONS as u32,
        dataset_sha256: config.dataset_sha256.clone().unwrap(),
        fault_profile_sha256: config.fault_profile_sha256.clone().unwrap(),
        conversations: shard
            .conversations(CONVERSATIONS)
            .map(|i| format!("c{:03}", i + 1))
            .collect(),
    }
    .write(dir)
    .unwrap();
}

/// The whole, and `n` shard directories of it (given in reverse order).
fn shards(n: u32) -> (tempfile::TempDir, Vec<PathBuf>, ReportData) {
    let data = whole();
    let root = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for k in (0..n).rev() {
        let dir = root.path().join(format!("shard-{k}"));
        write_shard(&data, Shard::new(k, n).unwrap(), &dir);
        dirs.push(dir);
    }
    (root, dirs, data)
}

#[test]
fn merged_shards_give_the_rows_and_every_figure_of_the_whole() {
    for n in [1, 4, 7] {
        let (_root, dirs, whole) = shards(n);
        let merged = merge(&dirs).unwrap();
        assert_eq!(merged.turns, whole.turns, "{n} shards");
        assert_eq!(merged.events, whole.events);
        assert_eq!(merged.attempts, whole.attempts);
        // Every statistic of every system, CLO and its percentiles, the
        // bootstrap with the same seed: equal to the whole's, not close.
        assert_eq!(merged.summary.systems, whole.summary.systems, "{n} shards");
        assert_eq!(merged.summary.clo, whole.summary.clo);
        assert!(merged.summary.clo.as_ref().unwrap().delta_ms.n > 0);
        assert!(merged.summary.systems[1].cpr_clustered.is_some());
        assert_eq!(merged.summary.seed, whole.summary.seed);
        // The merged report is no shard; it says what it joined.
        assert_eq!(merged.config.shard, None);
        assert_eq!(merged.summary.merged_shards, Some(n));
        assert_eq!(merged.config.merged_from.len(), n as usize);
        assert_eq!(merged.summary.requests_in_flight.len(), n as usize);
        assert_eq!(merged.summary.requests_in_flight[0].peak, Some(7));
        assert_eq!(merged.config.concurrency, 100 * n as usize);
        assert!(merged
            .summary
            .notes
            .iter()
            .any(|x| x.contains("Merged by `report merge`")));
    }
}

#[test]
fn a_merged_report_is_written_and_read_back_as_a_report() {
    let (root, dirs, whole) = shards(3);
    let merged = merge(&dirs).unwrap();
    let out = root.path().join("merged");
    write_report(&out, &merged).unwrap();
    let (config, turns, events, attempts) = read_report(&out).unwrap();
    assert_eq!(config, merged.config);
    assert_eq!((turns, events), (whole.turns, whole.events));
    assert_eq!(attempts, whole.attempts);
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(json.contains("\"merged_shards\": 3"), "{json}");
}

/// The error message of merging `dirs`.
fn refusal(dirs: &[PathBuf]) -> String {
    merge(dirs).unwrap_err().to_string()
}

/// Rewrites the config.json of `dir` through `change`.
fn edit_config(dir: &Path, change: impl FnOnce(&mut ResolvedConfig)) {
    let mut config = crate::report::read::read_config(dir).unwrap();
    change(&mut config);
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_vec_pretty(&config).unwrap(),
    )
    .unwrap();
}

#[test]
fn shards_of_different_seeds_datasets_profiles_or_versions_are_refused() {
    type Change = fn(&mut ResolvedConfig);
    let cases: [(&str, Change); 5] = [
        ("seed", |c| c.seed = 7),
        ("dataset_sha256", |c| {
            c.dataset_sha256 = Some("e".repeat(64))
        }),
        ("fault_profile_sha256", |c| {
            c.fault_profile_sha256 = Some("0".repeat(64))
        }),
        ("version", |c| c.version = "0.0.9".into()),
        ("runs", |c| c.runs = 3),
    ];
    for (setting, change) in cases {
        let (_root, dirs, _) = shards(4);
        // The manifest agrees with the config, as another run's would.
        edit_config(&dirs[1], change);
        let mut manifest = ShardManifest::read(&dirs[1]).unwrap();
        let config = crate::report::read::read_config(&dirs[1]).unwrap();
        manifest.seed = config.seed;
        manifest.version = config.version.clone();
        manifest.dataset_sha256 = config.dataset_sha256.clone().unwrap();
        manifest.fault_profile_sha256 = config.fault_profile_sha256.clone().unwrap();
        manifest.write(&dirs[1]).unwrap();
        let message = refusal(&dirs);
        assert!(
            message.contains(&format!("{} has {setting} ", dirs[1].display()))
                && message.contains(&dirs[0].display().to_string())
                && message.contains("only shards of one run can be merged"),
            "{setting}: {message}"
        );
    }
    // A dataset at another path with the same bytes is the same dataset.
    let (_root, dirs, _) = shards(4);
    edit_config(&dirs[2], |c| c.dataset = "/elsewhere/d.jsonl".into());
    edit_config(&dirs[3], |c| c.concurrency = 5);
    assert!(merge(&dirs).is_ok());
}

#[test]
fn a_missing_duplicate_interrupted_or_foreign_shard_is_refused() {
    let (_root, dirs, _) = shards(4);
    // dirs are shards 3, 2, 1, 0.
    let message = refusal(&dirs[..3]);
    assert_eq!(
        message,
        "shard 0/4 of the run is missing: run it (`run --shard 0/4` with the run's other flags) and give its directory too"
    );
    assert!(refusal(&dirs[1..3]).starts_with("shards 0/4, 3/4 of the run are missing"));
    let twice = [dirs.clone(), vec![dirs[1].clone()]].concat();
    let message = refusal(&twice);
    assert!(
        message.contains(&format!(
            "{} and {} are both shard 2/4",
            dirs[1].display(),
            dirs[1].display()
        )),
        "{message}"
    );
    // Another N.
    let (_other, three, _) = shards(3);
    let mixed = [dirs[..3].to_vec(), vec![three[0].clone()]].concat();
    let message = refusal(&mixed);
    assert!(
        message.contains(&format!("{} has shard 2/3", three[0].display()))
            && message.contains("3/4"),
        "{message}"
    );
    // Interrupted.
    edit_config(&dirs[2], |c| c.interrupted = true);
    let message = refusal(&dirs);
    assert!(
        message.contains(&format!("{} is shard 1/4, interrupted", dirs[2].display())),
        "{message}"
    );
}

#[test]
fn a_directory_that_is_no_shard_or_whose_files_disagree_is_refused() {
    let (root, dirs, whole) = shards(2);
    let plain = root.path().join("whole");
    write_report(&plain, &whole).unwrap();
    let message = refusal(&[plain.clone(), dirs[0].clone()]);
    assert!(
        message.starts_with(&format!(
            "{} is not a shard (it has no shard.json)",
            plain.display()
        )),
        "{message}"
    );
    let message = refusal(&[root.path().join("nowhere")]);
    assert!(message.contains("nowhere/config.json"), "{message}");
    // A shard.json of another shard than config.json says.
    let mut manifest = ShardManifest::read(&dirs[0]).unwrap();
    manifest.shard = Shard::new(0, 2).unwrap();
    manifest.write(&dirs[0]).unwrap();
    let message = refusal(&dirs);
    assert!(
        message.contains("config.json names shard 1/2, shard.json 0/2"),
        "{message}"
    );
    // A row of another shard's conversation.
    let (_root, dirs, _) = shards(2);
    let events = std::fs::read_to_string(dirs[0].join("events.csv")).unwrap();
    // dirs[0] is shard 1/2 (even numbers: c002, c004, ...); c001 is shard 0's.
    std::fs::write(
        dirs[0].join("events.csv"),
        events.replacen(",c002,", ",c001,", 1),
    )
    .unwrap();
    let message = refusal(&dirs);
    assert!(
        message.contains("its rows hold conversation \"c001\", which is not one of shard 1/2's"),
        "{message}"
    );
    assert!(refusal(&[]).contains("needs the directories"));
}
