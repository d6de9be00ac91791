//! Shared helpers of the integration tests: paths into the repository, a
//! quick run configuration, the gateway under test beside the reference
//! systems, and running a configuration to its end.

pub mod browser;
pub mod canary;
pub mod careless;
pub mod dialect_gateways;
pub mod gateways;
pub mod hostile;
pub mod openrouter;
pub mod responses_gateway;
pub mod standin;

use continuity_bench::config::{GatewaySpec, OutDir, Replay, RunConfig, SystemsConfig};
use continuity_bench::continuity::{self, RunOutcome};
use continuity_bench::source::Source;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A path inside the repository.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The first `n` conversations of the committed dataset, as a file in
/// `dir`: a run of the same conversations, cheaper where the test needs
/// fewer than 150.
pub fn small_dataset(dir: &Path, n: usize) -> PathBuf {
    first_of("datasets/continuity-150.jsonl", dir, n)
}

/// The first `n` conversations of the committed dataset `file` (a path
/// in the repository), as a file in `dir`.
pub fn first_of(file: &str, dir: &Path, n: usize) -> PathBuf {
    let text = std::fs::read_to_string(repo(file)).unwrap();
    let lines: Vec<&str> = text.lines().take(n).collect();
    assert_eq!(lines.len(), n, "{file} has {n} conversations");
    let name = Path::new(file).file_stem().unwrap().to_string_lossy();
    let path = dir.join(format!("first-{n}-of-{name}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A run of the committed dataset under the default fault profile, with the
/// instant latency model, and a proxy timeout long enough that a loaded test
/// machine does not turn slow answers into errors.
pub fn quick_run(out: &Path, runs: u32) -> RunConfig {
    RunConfig {
        seed: 42,
        runs,
        concurrency: 100,
        max_in_flight: None,
        dataset: Source::File(repo("datasets/continuity-150.jsonl")),
        faults: Source::File(repo("fault_profiles/paper.toml")),
        latency: continuity_bench::upstream::LatencyProfile::INSTANT,
        replay: Replay::Live,
        stream: false,
        client: continuity_bench::client::sse::ClientProfile::OpenAiSdk,
        attempt_timeout: Duration::from_secs(3),
        request_timeout: Duration::from_secs(20),
        out: OutDir::Given {
            path: out.to_path_buf(),
            force: true,
        },
        quiet: true,
        fail_under_cpr: None,
        fail_system: None,
        systems: SystemsConfig {
            builtin: true,
            gateways: Vec::new(),
            model: continuity_bench::config::DRIVER_MODEL.to_string(),
            gateway_wait: Duration::from_secs(5),
            max_response_bytes: continuity_bench::client::DEFAULT_MAX_RESPONSE_BYTES,
            fallback_dialect: continuity_bench::dialect::Dialect::Openai,
            api: continuity_bench::client::Api::Chat,
        },
        judge: None,
        contracts: std::sync::Arc::new(continuity_bench::contracts::Contracts::default()),
        providers: None,
        cost_limit_tokens: continuity_bench::continuity::cost::DEFAULT_COST_LIMIT_TOKENS,
        yes: false,
        shard: continuity_bench::driver::Shard::WHOLE,
        stopped: continuity_bench::stop::Stopped::default(),
    }
}

/// Gateway `name` under test at `url`, whose simulated upstreams the
/// harness starts on `primary` and `fallback`; no extra headers.
pub fn gateway_spec(name: &str, url: String, primary: u16, fallback: u16) -> GatewaySpec {
    GatewaySpec {
        name: name.into(),
        url,
        primary_port: primary,
        fallback_port: fallback,
        headers: Vec::new(),
        model: None,
    }
}

/// Runs `config` to its end (nothing cancels it), as `run` does.
pub async fn execute(config: &RunConfig) -> RunOutcome {
    continuity::execute(
        config,
        tokio_util::sync::CancellationToken::new(),
        std::time::Instant::now(),
    )
    .await
    .unwrap()
}

/// Reads a CSV file into rows of strings, header first.
pub fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// The summary of system `name` in a finished run.
pub fn system<'a>(
    outcome: &'a continuity_bench::continuity::RunOutcome,
    name: &str,
) -> &'a continuity_bench::continuity::summary::SystemSummary {
    outcome
        .data
        .as_ref()
        .unwrap()
        .summary
        .systems
        .iter()
        .find(|s| s.name == name)
        .unwrap()
}
