//! `continuity-bench upstreams`: serve one pair of simulated upstreams for an
//! external gateway until Ctrl-C, writing each attempt to the attempts file
//! as it finishes (or only counting it), so that memory follows the attempts
//! in flight however long it serves.

use super::provider::{PassThrough, Providers};
use super::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext, UpstreamPair};
use anyhow::Context;
use cb_dataset::Dataset;
use cb_faults::{FaultMode, FaultPlan, FaultProfile};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The attempts file, created at its first write.
struct LazyFile {
    path: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl std::io::Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let file = match &mut self.file {
            Some(file) => file,
            None => self
                .file
                .insert(std::io::BufWriter::new(std::fs::File::create(&self.path)?)),
        };
        file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), std::io::Write::flush)
    }
}

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
    /// The real providers to forward to (pass-through), if any; the
    /// simulated model answers otherwise.
    pub providers: Option<Providers>,
    /// Deadline of one request to a provider.
    pub provider_timeout: std::time::Duration,
    /// Largest request body read (`--max-body-bytes`).
    pub max_body_bytes: usize,
}

/// A running standalone pair: started, then stopped (which writes the
/// attempts file when one was asked for).
#[derive(Debug)]
pub struct Standalone {
    /// The running servers.
    pub pair: UpstreamPair,
    /// What they share (the attempt log among it).
    pub ctx: UpstreamContext,
    config: UpstreamsConfig,
    schedule: Vec<FaultMode>,
}

impl Standalone {
    /// Binds both addresses and starts serving.
    ///
    /// # Errors
    /// When an address cannot be bound.
    pub async fn start(config: UpstreamsConfig) -> anyhow::Result<Standalone> {
        let turns: Vec<usize> = config
            .dataset
            .conversations
            .iter()
            .map(|c| c.n_turns())
            .collect();
        let index = ConversationIndex::of_dataset(&config.dataset);
        let plan = FaultPlan::new(config.profile.clone(), config.seed, turns);
        let schedule = plan.schedule(config.run);
        let ctx = match &config.providers {
            Some(providers) => {
                let responder = PassThrough::new(
                    providers,
                    config.provider_timeout,
                    cb_wire::DEFAULT_MAX_RESPONSE_BYTES,
                )?;
                UpstreamContext::with_responder(plan, index, Arc::new(responder), config.run)
            }
            None => UpstreamContext::new(plan, index, config.latency, config.seed, config.run),
        }
        .with_max_body_bytes(config.max_body_bytes);
        // A standalone pair serves for as long as someone points a gateway
        // at it: its rows go to the attempts file as they finish (or are
        // counted only), so that memory follows what is in flight. The
        // file is created at its first row, so that a start that fails (a
        // port in use) leaves an earlier one as it was.
        let sink: Option<Box<dyn std::io::Write + Send>> = config
            .attempts
            .clone()
            .map(|path| Box::new(LazyFile { path, file: None }) as _);
        ctx.log.stream_to(sink);
        let pair = start_pair(STANDALONE_SYSTEM, config.primary, config.fallback, ctx.clone())
            .await
            .context(
                "cannot start the simulated upstreams; pass free addresses with --primary and --fallback",
            )?;
        Ok(Standalone {
            pair,
            ctx,
            config,
            schedule,
        })
    }

    /// What is served: addresses, fault profile, this run's schedule, latency.
    pub fn banner(&self) -> String {
        let counts = FaultMode::ALL
            .iter()
            .map(|m| {
                let n = self.schedule.iter().filter(|x| *x == m).count();
                format!("{}={n}", m.as_str())
            })
            .collect::<Vec<_>>()
            .join(" ");
        let answers = match &self.config.providers {
            Some(p) => p.resolved().answered_by(),
            None => format!("simulated model, latency {}", self.config.latency.name()),
        };
        format!(
            "primary upstream:  {}/v1\nfallback upstream: {}/v1\nfault profile: {}\nrun {} of seed {}: {} conversations, {counts}; {answers}",
            self.pair.primary.url(),
            self.pair.fallback.url(),
            self.config.profile.summary(),
            self.config.run,
            self.config.seed,
            self.config.dataset.conversations.len(),
        )
    }

    /// Stops both servers (held connections are cut and logged as
    /// abandoned) and writes the attempts CSV if asked. Returns the number
    /// of attempts served.
    ///
    /// # Errors
    /// When the attempts file cannot be written.
    pub async fn stop(self) -> anyhow::Result<usize> {
        self.pair.shutdown().await;
        let ended = self.ctx.log.end_stream();
        if let Some(path) = &self.config.attempts {
            if let Err(e) = ended {
                anyhow::bail!("cannot write --attempts {}: {e}", path.display());
            }
            if self.ctx.log.is_empty() {
                // No attempt: the file says so (empty), not an earlier run.
                std::fs::File::create(path).with_context(|| {
                    format!(
                        "cannot write --attempts {}; check that its directory exists",
                        path.display()
                    )
                })?;
            }
        }
        Ok(self.ctx.log.len())
    }
}

/// Serves the pair until `stop` resolves (the command's SIGINT or SIGTERM),
/// printing where it listens and what fails, then writes the attempts
/// file if asked; returns what `stop` gave. The banner's last line,
/// `press Ctrl-C to stop`, says it is serving.
///
/// # Errors
/// When an address cannot be bound or the attempts file cannot be
/// written.
pub async fn serve_until<S>(
    config: UpstreamsConfig,
    stop: impl std::future::Future<Output = S>,
) -> anyhow::Result<S> {
    let attempts = config.attempts.clone();
    let running = Standalone::start(config).await?;
    println!("{}", running.banner());
    println!("press Ctrl-C to stop (or send SIGTERM)");
    let signal = stop.await;
    let served = running.stop().await?;
    println!("{served} attempts served");
    if let Some(path) = attempts {
        println!("attempts written to {}", path.display());
    }
    Ok(signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn serves_then_writes_attempts_csv() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("attempts.csv");
        let profile = FaultProfile::parse("[modes.api_error]\n", "t.toml").unwrap();
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let running = Standalone::start(UpstreamsConfig {
            primary: any,
            fallback: any,
            profile,
            dataset: Dataset {
                conversations: vec![],
            },
            seed: 1,
            run: 1,
            latency: LatencyProfile::INSTANT,
            attempts: Some(out.clone()),
            providers: None,
            provider_timeout: std::time::Duration::from_secs(5),
            max_body_bytes: crate::DEFAULT_MAX_BODY_BYTES,
        })
        .await
        .unwrap();
        let banner = running.banner();
        assert!(banner.contains(&running.pair.primary.url()), "{banner}");
        assert!(banner.contains("API_ERROR"), "{banner}");
        let resp = reqwest::Client::new()
            .post(format!(
                "{}/v1/chat/completions",
                running.pair.fallback.url()
            ))
            .timeout(std::time::Duration::from_secs(5))
            .json(
                &serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(running.stop().await.unwrap(), 1);
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("1,external,fallback,,1,1,"));
    }
}
