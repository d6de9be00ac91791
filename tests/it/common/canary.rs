//! The canary tests' shared readers: a configuration from a command line,
//! the decision log and the ignore list a run wrote.

use clap::Parser;
use continuity_bench::canary::record::LogRecord;
use continuity_bench::cli::{Cli, Command};
use continuity_bench::config::CanaryConfig;
use std::path::Path;

/// The validated configuration of `continuity-bench canary <line>`, with
/// `env` as the environment.
pub fn config_with_env(line: &[&str], env: &dyn Fn(&str) -> Option<String>) -> CanaryConfig {
    let mut argv = vec!["continuity-bench", "canary"];
    argv.extend_from_slice(line);
    let Command::Canary(args) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    continuity_bench::config::canary_config(&args.run, env, time::OffsetDateTime::now_utc())
        .unwrap()
}

/// [`config_with_env`] with an empty environment.
pub fn config(line: &[&str]) -> CanaryConfig {
    config_with_env(line, &|_| None)
}

/// The decision log's records.
pub fn log(path: &Path) -> Vec<LogRecord> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The routes an ignore list (`ignore.json`) names.
pub fn ignored(path: &Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["provider"]["ignore"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}
