//! Canary replay speed: how long two weeks of half-hour rounds take with
//! `--no-wait` against the built-in simulated endpoint, the README's claim
//! ("two weeks replay in seconds"). A test asserts what such a replay
//! decides; how fast the machine decided it is this bench's figure, so no
//! test depends on the machine's speed.
//!
//! The canary runs in process, exactly as `continuity-bench canary
//! --rounds 672 --no-wait --out DIR` does (the slow route is left out, as
//! it waits twice the ttft limit for its first token on purpose). Printed:
//! wall time, rounds per second, and the time per round.
//!
//! Run with `cargo bench --bench canary_replay`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use clap::Parser;
use std::time::Instant;

/// Two weeks of half-hour rounds.
const ROUNDS: u32 = 14 * 48;

/// The simulated routes but the slow one.
const ROUTES: &str =
    "atlas/bf16,borealis/fp8,cirrus,dune/fp8,ember/fp4,granite/fp8,harbor,isle/fp8";

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("canary");
    let rounds = ROUNDS.to_string();
    let args = [
        "continuity-bench",
        "canary",
        "--rounds",
        &rounds,
        "--no-wait",
        "--routes",
        ROUTES,
        "--out",
        out.to_str()
            .context("temporary directory path is not UTF-8")?,
    ];
    let cli = continuity_bench::cli::Cli::try_parse_from(args)?;
    let started = Instant::now();
    let code = continuity_bench::run(cli)?;
    let took = started.elapsed();
    anyhow::ensure!(
        code == std::process::ExitCode::SUCCESS,
        "the canary exited {code:?}"
    );
    println!(
        "canary_replay: {ROUNDS} rounds (two weeks at 30m) in {:.2} s: {:.0} rounds/s, {:.1} ms a round",
        took.as_secs_f64(),
        f64::from(ROUNDS) / took.as_secs_f64(),
        took.as_secs_f64() * 1000.0 / f64::from(ROUNDS)
    );
    Ok(())
}
