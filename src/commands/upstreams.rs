//! `upstreams`: serve a simulated primary and fallback for any gateway until
//! Ctrl-C.

use crate::cli::{LatencyArg, UpstreamsArgs};
use std::process::ExitCode;

/// `upstreams`: validate the arguments into an [`UpstreamsConfig`] and serve
/// until Ctrl-C.
///
/// [`UpstreamsConfig`]: crate::upstream::standalone::UpstreamsConfig
pub async fn upstreams(args: UpstreamsArgs) -> anyhow::Result<ExitCode> {
    use crate::upstream::standalone::{serve_until_ctrl_c, UpstreamsConfig};
    use crate::upstream::LatencyProfile;
    if args.run == 0 {
        anyhow::bail!("--run counts from 1; pass --run 1 or more");
    }
    let profile = crate::faults::FaultProfile::load(&args.faults)?;
    let dataset = crate::dataset::Dataset::load(&args.dataset)?;
    let latency = match args.latency {
        LatencyArg::Instant => LatencyProfile::INSTANT,
        LatencyArg::Fast => LatencyProfile::FAST,
        LatencyArg::Realistic => LatencyProfile::REALISTIC,
    };
    serve_until_ctrl_c(UpstreamsConfig {
        primary: args.primary,
        fallback: args.fallback,
        profile,
        dataset,
        seed: args.seed,
        run: args.run,
        latency,
        attempts: args.attempts,
    })
    .await?;
    Ok(ExitCode::SUCCESS)
}
