//! `continuity-bench upstreams`: serve one pair of simulated upstreams for an
//! external gateway until Ctrl-C, then optionally write the attempt log.

use super::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext};
use crate::dataset::Dataset;
use crate::faults::{FaultMode, FaultPlan, FaultProfile};
use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The system name the attempts of a standalone pair are logged under.
pub const STANDALONE_SYSTEM: &str = "external";

/// The validated configuration of `upstreams`.
#[derive(Debug, Clone)]
pub struct UpstreamsConfig {
    /// Where the primary listens.
    pub primary: SocketAddr,
    /// Where the fallback listens.
    pub fallback: SocketAddr,
    /// The fault profile.
    pub profile: FaultProfile,
    /// The conversations the upstreams recognise.
    pub dataset: Dataset,
    /// Master seed of the fault schedule and latency jitter.
    pub seed: u64,
    /// The run whose schedule is served (from 1).
    pub run: u32,
    /// The latency model.
    pub latency: LatencyProfile,
    /// Where to write the attempt log as CSV on stop.
    pub attempts: Option<PathBuf>,
}

/// Serves the pair until Ctrl-C, printing where it listens and what fails.
///
/// # Errors
/// When an address cannot be bound, Ctrl-C cannot be awaited, or the
/// attempts file cannot be written.
pub async fn serve_until_ctrl_c(config: UpstreamsConfig) -> anyhow::Result<()> {
    let turns: Vec<usize> = config
        .dataset
        .conversations
        .iter()
        .map(|c| c.n_turns())
        .collect();
    let index = ConversationIndex::new(&config.dataset);
    let plan = FaultPlan::new(config.profile.clone(), config.seed, turns);
    let schedule = plan.schedule(config.run);
    let ctx = UpstreamContext::new(plan, index, config.latency, config.seed, config.run);
    let pair = start_pair(
        STANDALONE_SYSTEM,
        config.primary,
        config.fallback,
        ctx.clone(),
    )
    .await
    .context(
        "cannot start the simulated upstreams; pass free addresses with --primary and --fallback",
    )?;

    println!("primary upstream:  {}/v1", pair.primary.url());
    println!("fallback upstream: {}/v1", pair.fallback.url());
    println!("fault profile: {}", config.profile.summary());
    let counts = FaultMode::ALL
        .iter()
        .map(|m| {
            format!(
                "{}={}",
                m.as_str(),
                schedule.iter().filter(|x| *x == m).count()
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    println!(
        "run {} of seed {}: {} conversations, {counts}; latency {}",
        config.run,
        config.seed,
        config.dataset.conversations.len(),
        config.latency.name()
    );
    println!("press Ctrl-C to stop");

    tokio::signal::ctrl_c()
        .await
        .context("cannot wait for Ctrl-C")?;
    pair.shutdown().await;

    println!("{} attempts served", ctx.log.len());
    if let Some(path) = &config.attempts {
        let file = std::fs::File::create(path).with_context(|| {
            format!(
                "cannot write --attempts {}; check that its directory exists",
                path.display()
            )
        })?;
        ctx.log
            .write_csv(std::io::BufWriter::new(file))
            .with_context(|| format!("cannot write --attempts {}", path.display()))?;
        println!("attempts written to {}", path.display());
    }
    Ok(())
}
