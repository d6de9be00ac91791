//! Everything a measurement sends to, started and stopped here: a
//! simulated upstream pair for the baseline, one per reference proxy and
//! one per external gateway (on the ports its configuration names), every
//! one answering after the same fixed delay and none failing; each
//! reference proxy as a process of its own (`proxy --mode …`, this
//! program), so that it is measured as a gateway is, its memory and CPU
//! apart from the harness's; and one preflight request per subject before
//! the first slot.

use crate::load::{Endpoint, Requests};
use crate::schedule::{Mode, Subject};
use crate::OverheadConfig;
use anyhow::{bail, Context};
use cb_base::Role;
use cb_dataset::{Conversation, Dataset};
use cb_faults::FaultPlan;
use cb_upstream::{start_pair, ConversationIndex, LatencyProfile, UpstreamContext, UpstreamPair};
use std::io::BufRead;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a reference proxy process may take to say where it listens.
const PROXY_START: Duration = Duration::from_secs(20);

/// Deadline of one preflight request.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(10);

/// The turn of the conversation every request asks (from 0): the third,
/// so the request carries a history as a conversation's would.
const TURN: usize = 2;

/// One subject, started.
struct Started {
    subject: Subject,
    endpoint: Endpoint,
    /// The model id it is asked for (a gateway's own, or the run's).
    model: String,
    pid: Option<u32>,
    child: Option<Proxy>,
}

/// A reference proxy process: killed and waited for when dropped, and
/// holding the write end of its standard input, so that the proxy
/// (started with `--exit-on-stdin-eof`) stops when this process ends,
/// however it ends.
struct Proxy {
    child: Child,
    _stdin: Option<std::process::ChildStdin>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every subject of a measurement, with the servers and processes kept
/// until [`Subjects::stop`] (or drop, which kills the processes).
pub struct Subjects {
    ctx: UpstreamContext,
    conversation: Conversation,
    /// Systems that did not answer their preflight, with why: left out.
    pub left_out: Vec<(String, String)>,
    subjects: Vec<Started>,
    pairs: Vec<UpstreamPair>,
}

/// Starts every subject of `config` and sends each a preflight request.
///
/// # Errors
/// An upstream port that cannot be bound, a reference proxy that does not
/// start, or a subject that does not answer its preflight.
pub async fn start(config: &OverheadConfig) -> anyhow::Result<Subjects> {
    let conversation = Dataset::builtin_default()
        .conversations
        .into_iter()
        .next()
        .context("the built-in dataset is empty")?;
    let dataset = Dataset {
        conversations: vec![conversation.clone()],
    };
    let latency = LatencyProfile {
        name: "fixed",
        base: config.upstream_delay,
        per_input_token: Duration::ZERO,
        max_jitter: Duration::ZERO,
        tokens_per_second: 0.0,
    };
    let ctx = UpstreamContext::new(
        FaultPlan::scripted(vec![None]),
        ConversationIndex::of_dataset(&dataset),
        latency,
        config.seed,
        1,
    );
    let mut subjects = Subjects {
        ctx: ctx.clone(),
        conversation,
        left_out: Vec::new(),
        subjects: Vec::new(),
        pairs: Vec::new(),
    };
    let any = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let pair = start_pair("baseline", any, any, ctx.clone())
        .await
        .context("cannot start the baseline's simulated upstream on 127.0.0.1")?;
    subjects.subjects.push(Started {
        subject: Subject::Baseline,
        endpoint: Endpoint {
            url: cb_base::url::under_v1(&pair.primary.url(), "/chat/completions"),
            headers: Vec::new(),
        },
        model: config.systems.model.clone(),
        pid: None,
        child: None,
    });
    subjects.pairs.push(pair);
    if config.systems.builtin {
        for mode in ["stateless", "history"] {
            let pair = start_pair(mode, any, any, ctx.clone())
                .await
                .with_context(|| format!("cannot start {mode}'s simulated upstreams"))?;
            let (child, url) = spawn_proxy(&config.exe, mode, &pair).await?;
            subjects.subjects.push(Started {
                subject: Subject::System(mode.to_string()),
                endpoint: Endpoint {
                    url: cb_base::url::under_v1(&url, "/chat/completions"),
                    headers: Vec::new(),
                },
                model: config.systems.model.clone(),
                pid: Some(child.child.id()),
                child: Some(child),
            });
            subjects.pairs.push(pair);
        }
    }
    for g in &config.systems.gateways {
        let at = |port| SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let pair = start_pair(
            &g.name,
            at(g.primary_port),
            at(g.fallback_port),
            ctx.clone(),
        )
        .await
        .with_context(|| {
            format!(
                "cannot start {}'s simulated upstreams on 127.0.0.1:{} and :{} (is a \
                     `continuity-bench upstreams` or another run still holding them?)",
                g.name, g.primary_port, g.fallback_port
            )
        })?;
        let pid = config
            .pids
            .iter()
            .find(|(name, _)| name == &g.name)
            .map(|(_, pid)| *pid);
        subjects.subjects.push(Started {
            subject: Subject::System(g.name.clone()),
            endpoint: Endpoint {
                url: cb_base::url::under_v1(&g.url, "/chat/completions"),
                headers: g.headers.clone(),
            },
            model: g
                .model
                .clone()
                .unwrap_or_else(|| config.systems.model.clone()),
            pid,
            child: None,
        });
        subjects.pairs.push(pair);
    }
    // A system that does not answer is left out and said, not the whole
    // measurement: in a grade, a gateway that died in an earlier suite
    // must not cost the others their figures. The baseline must answer.
    let mut kept = Vec::new();
    for s in std::mem::take(&mut subjects.subjects) {
        let bodies = subjects.requests(config, &s.model);
        let wait = match &s.subject {
            Subject::System(name) if config.systems.gateways.iter().any(|g| &g.name == name) => {
                config.systems.gateway_wait
            }
            _ => Duration::ZERO,
        };
        match (preflight(&s, &bodies, wait).await, &s.subject) {
            (Ok(()), _) => kept.push(s),
            (Err(e), Subject::Baseline) => return Err(e),
            (Err(e), Subject::System(name)) => {
                subjects.left_out.push((name.clone(), format!("{e:#}")))
            }
        }
    }
    subjects.subjects = kept;
    if subjects.system_names().is_empty() {
        bail!(
            "no system answered its preflight request: {}",
            subjects
                .left_out
                .iter()
                .map(|(_, why)| why.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(subjects)
}

impl Subjects {
    /// The names of the systems (not the baseline), in start order.
    pub fn system_names(&self) -> Vec<String> {
        self.subjects
            .iter()
            .filter_map(|s| match &s.subject {
                Subject::System(name) => Some(name.clone()),
                Subject::Baseline => None,
            })
            .collect()
    }

    /// The request bodies a slot sends, asking for `model`: turn 3 of the
    /// built-in dataset's first conversation with its scripted replies, as
    /// the driver would send it.
    pub fn requests(&self, config: &OverheadConfig, model: &str) -> Requests {
        let messages = cb_dataset::messages::client_messages(
            &self.conversation,
            cb_driver::SYSTEM_PROMPT,
            TURN,
            |k| {
                self.conversation
                    .turns
                    .get(k)
                    .and_then(|t| t.assistant.as_deref())
                    .unwrap_or_default()
            },
        );
        let body = |stream: bool| {
            let request = cb_wire::openai::ChatRequest {
                model: model.to_string(),
                messages: messages.clone(),
                stream,
                stream_options: None,
                extra: serde_json::Map::new(),
            };
            bytes::Bytes::from(serde_json::to_vec(&request).unwrap_or_default())
        };
        Requests {
            plain: body(false),
            stream: body(true),
            deadline: config.deadline,
            max_response_bytes: config.systems.max_response_bytes,
        }
    }

    /// Where `subject`'s requests go.
    ///
    /// # Errors
    /// A subject that was not started (a bug).
    pub fn endpoint(&self, subject: &Subject) -> anyhow::Result<&Endpoint> {
        self.find(subject)
            .map(|s| &s.endpoint)
            .with_context(|| format!("{subject} was not started"))
    }

    /// The request bodies of `subject` (asking for its model).
    ///
    /// # Errors
    /// A subject that was not started (a bug).
    pub fn requests_of(
        &self,
        config: &OverheadConfig,
        subject: &Subject,
    ) -> anyhow::Result<Requests> {
        let s = self
            .find(subject)
            .with_context(|| format!("{subject} was not started"))?;
        Ok(self.requests(config, &s.model))
    }

    /// `subject`'s process, when known.
    pub fn pid(&self, subject: &Subject) -> Option<u32> {
        self.find(subject).and_then(|s| s.pid)
    }

    /// Every (system, PID) known.
    pub fn pids(&self) -> impl Iterator<Item = (&str, u32)> {
        self.subjects
            .iter()
            .filter_map(|s| Some((s.subject.name(), s.pid?)))
    }

    /// Whether the harness started `system`'s process.
    pub fn started_here(&self, system: &str) -> bool {
        self.find(&Subject::System(system.to_string()))
            .is_some_and(|s| s.child.is_some())
    }

    /// Attempts each system's gateway sent to its fallback upstream.
    pub fn fallback_attempts(&self) -> Vec<(String, usize)> {
        let attempts = self.ctx.log.snapshot();
        self.system_names()
            .into_iter()
            .map(|name| {
                let n = attempts
                    .iter()
                    .filter(|a| a.system == name && a.role == Role::Fallback)
                    .count();
                (name, n)
            })
            .collect()
    }

    /// Stops the reference proxies and the upstreams.
    pub async fn stop(mut self) {
        for s in &mut self.subjects {
            // Dropping a proxy kills it and waits for it.
            s.child = None;
        }
        for pair in self.pairs.drain(..) {
            pair.primary.shutdown().await;
            pair.fallback.shutdown().await;
        }
    }

    fn find(&self, subject: &Subject) -> Option<&Started> {
        self.subjects.iter().find(|s| &s.subject == subject)
    }
}

/// Starts `exe proxy --mode MODE` on a free port of 127.0.0.1 in front of
/// `pair`, and reads the URL it prints.
async fn spawn_proxy(
    exe: &std::path::Path,
    mode: &str,
    pair: &UpstreamPair,
) -> anyhow::Result<(Proxy, String)> {
    let mut child = Command::new(exe)
        .args([
            "proxy",
            "--mode",
            mode,
            "--listen",
            "127.0.0.1:0",
            "--exit-on-stdin-eof",
        ])
        .args(["--primary", &pair.primary.url()])
        .args(["--fallback", &pair.fallback.url()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start `{} proxy --mode {mode}`", exe.display()))?;
    let stdout = child
        .stdout
        .take()
        .context("the proxy's output was not piped")?;
    let stdin = child.stdin.take();
    let child = Proxy {
        child,
        _stdin: stdin,
    };
    let first_line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .map(|_| line)
    });
    let line = match tokio::time::timeout(PROXY_START, first_line).await {
        Ok(Ok(Ok(line))) => line,
        _ => {
            drop(child);
            bail!(
                "the {mode} proxy did not say where it listens within {} s",
                PROXY_START.as_secs()
            );
        }
    };
    match listening_url(&line) {
        Some(url) => Ok((child, url)),
        None => {
            drop(child);
            bail!("the {mode} proxy printed {line:?}, not where it listens")
        }
    }
}

/// The base URL in a proxy's banner (`… listening on URL/v1/chat/completions …`).
fn listening_url(banner: &str) -> Option<String> {
    let rest = banner.split("listening on ").nth(1)?;
    let url = rest.split_whitespace().next()?;
    Some(url.trim_end_matches("/v1/chat/completions").to_string())
}

/// A plain request must succeed before the first slot, retried for up to
/// `wait` (a gateway may still be starting): a system that never answers
/// is refused with the fix. Streams are not required here: a system whose
/// streams fail is measured anyway, and its streamed points show the
/// failures and their first reason instead of a latency.
async fn preflight(s: &Started, bodies: &Requests, wait: Duration) -> anyhow::Result<()> {
    let started = Instant::now();
    let bounded = Requests {
        deadline: PREFLIGHT_TIMEOUT.min(bodies.deadline),
        ..bodies.clone()
    };
    // Bounded by `wait`: at most one try per 250 ms until it passes.
    for _ in 0..100_000 {
        let one = crate::load::run_slot(&s.endpoint, &bounded, Mode::Plain, 1, 0, 1).await?;
        if one.failed == 0 {
            return Ok(());
        }
        if started.elapsed() >= wait {
            bail!(
                "{} did not answer its preflight request: {} (its URL, headers, model and \
                 upstream ports must match the systems file)",
                cb_report::escape::terminal(s.subject.name()),
                one.first_failure.unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    bail!("{} did not answer its preflight request", s.subject.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_gives_the_base_url() {
        let banner = "history proxy listening on http://127.0.0.1:41234/v1/chat/completions \
                      (metrics at http://127.0.0.1:41234/metrics, health at …); primary …";
        assert_eq!(
            listening_url(banner).as_deref(),
            Some("http://127.0.0.1:41234")
        );
        assert_eq!(listening_url("error: cannot bind"), None);
    }
}
