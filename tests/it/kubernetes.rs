//! The Kubernetes example (`examples/kubernetes/`): the manifests parse,
//! the shards' Job is an Indexed Job whose count of shards agrees with its
//! completions, and every container's command line, with the variables
//! Kubernetes expands put in for each index, is one this binary accepts:
//! every index a shard of N, the shards all of the run, the merge reading
//! the volume the shards write.

use continuity_bench::cli::{Cli, Command};
use continuity_bench::driver::Shard;
use serde_norway::Value;
use std::path::Path;

fn manifest(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/kubernetes")
        .join(name);
    serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_sequence()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn named<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_sequence()
        .unwrap()
        .iter()
        .find(|c| c["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {name}"))
}

/// Kubernetes' `$(VAR)` expansion of one argument.
fn expand(arg: &str, vars: &[(&str, String)]) -> String {
    vars.iter().fold(arg.to_string(), |a, (k, v)| {
        a.replace(&format!("$({k})"), v)
    })
}

fn parse(args: &[String]) -> Command {
    let argv = std::iter::once("continuity-bench".to_string()).chain(args.iter().cloned());
    match <Cli as clap::Parser>::try_parse_from(argv) {
        Ok(cli) => cli.command,
        Err(e) => panic!("{args:?}: {e}"),
    }
}

#[test]
fn the_indexed_job_runs_every_shard_once_and_the_merge_reads_them_all() {
    let job = manifest("shards-job.yaml");
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(job["kind"].as_str(), Some("Job"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let completions = spec["completions"].as_u64().unwrap();
    let parallelism = spec["parallelism"].as_u64().unwrap();
    assert!(completions >= 1 && (1..=completions).contains(&parallelism));
    let pod = &spec["template"]["spec"];
    assert!(matches!(
        pod["restartPolicy"].as_str(),
        Some("Never" | "OnFailure")
    ));
    let bench = named(&pod["containers"], "bench");
    let env = named(&bench["env"], "SHARDS");
    assert_eq!(
        env["value"].as_str().unwrap().parse::<u64>().unwrap(),
        completions,
        "SHARDS must equal completions"
    );
    let args = strings(&bench["args"]);
    assert!(
        args.iter()
            .any(|a| a == "$(JOB_COMPLETION_INDEX)/$(SHARDS)"),
        "{args:?}"
    );
    // The reports volume is the claim the merge reads.
    let reports = named(&pod["volumes"], "reports");
    let claim = reports["persistentVolumeClaim"]["claimName"]
        .as_str()
        .unwrap();
    let mount = named(&bench["volumeMounts"], "reports")["mountPath"]
        .as_str()
        .unwrap()
        .to_string();
    let mut covered = vec![false; 10_000];
    for k in 0..completions {
        let vars = [
            ("JOB_COMPLETION_INDEX", k.to_string()),
            ("SHARDS", completions.to_string()),
        ];
        let expanded: Vec<String> = args.iter().map(|a| expand(a, &vars)).collect();
        let Command::Run(run) = parse(&expanded) else {
            panic!("the bench container runs `run`");
        };
        let shard = run.shard.expect("--shard");
        assert_eq!(
            (u64::from(shard.index), u64::from(shard.count)),
            (k, completions)
        );
        assert_eq!(shard, Shard::new(k as u32, completions as u32).unwrap());
        for i in shard.conversations(covered.len()) {
            covered[i] = true;
        }
        let out = run.out.expect("--out");
        assert!(
            out.starts_with(&mount),
            "{out:?} is not on the reports volume {mount}"
        );
        assert!(out.ends_with(format!("shard-{k}")), "{out:?}");
        assert_eq!(run.systems.gateways.len(), 1, "one gateway under test");
    }
    assert!(
        covered.iter().all(|c| *c),
        "the shards cover every conversation"
    );
    // The init containers: the dataset, and the gateway as a native sidecar.
    let dataset = named(&pod["initContainers"], "dataset");
    assert!(matches!(
        parse(&strings(&dataset["args"])),
        Command::Generate(_)
    ));
    let gateway = named(&pod["initContainers"], "gateway");
    assert_eq!(gateway["restartPolicy"].as_str(), Some("Always"));
    assert!(matches!(
        parse(&strings(&gateway["args"])),
        Command::Proxy(_)
    ));

    let merge = manifest("merge-job.yaml");
    assert_eq!(merge["kind"].as_str(), Some("Job"));
    let merge_pod = &merge["spec"]["template"]["spec"];
    assert_eq!(
        named(&merge_pod["volumes"], "reports")["persistentVolumeClaim"]["claimName"].as_str(),
        Some(claim)
    );
    let container = named(&merge_pod["containers"], "merge");
    let merge_mount = named(&container["volumeMounts"], "reports")["mountPath"]
        .as_str()
        .unwrap();
    assert_eq!(merge_mount, mount);
    let script = strings(&container["args"]).join(" ");
    let words: Vec<String> = script
        .trim_start_matches("exec ")
        .split_whitespace()
        .skip(1)
        .map(|w| w.replace("shard-*", "shard-0"))
        .collect();
    assert!(script.contains(&format!("{mount}/shard-*")), "{script}");
    match parse(&words) {
        Command::Report(report) => assert!(report.action.is_some(), "{script}"),
        _ => panic!("the merge runs `report merge`: {script}"),
    }
    let pvc = manifest("reports-pvc.yaml");
    assert_eq!(pvc["kind"].as_str(), Some("PersistentVolumeClaim"));
    assert_eq!(pvc["metadata"]["name"].as_str(), Some(claim));
}
