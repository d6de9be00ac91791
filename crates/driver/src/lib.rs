//! The driver: starts the systems under test ([`systems`]), then replays
//! conversations through them as a chat client does, with C concurrent
//! workers and one collector; the request gate ([`gate`]) bounds what is in
//! flight, and a shard ([`shard`]) picks this process's conversations.
//!
//! Every conversation of every system in a run is one job; jobs are shuffled
//! with a seeded generator so that systems interleave in one pool and none
//! runs in a quieter minute than another, and the runs overlap under one
//! rule ([`schedule`]). Workers send each finished
//! conversation down a channel; the caller owns the single collector. A
//! cancellation token stops workers between requests and aborts requests in
//! flight; what finished is still delivered.

pub mod gate;
pub mod replay;
pub mod schedule;
pub mod shard;
pub mod spec;
pub mod systems;

pub use gate::{Bound, GatePlan, RequestGate};
pub use replay::replay_conversation;
pub use shard::{Shard, ShardError};
pub use spec::{EnvLookup, GatewaySpec, Replay, SystemsConfig, DRIVER_MODEL, FALLBACK_MODEL};
pub use systems::{BuiltinProxyOptions, Systems, SystemsSpec, SYSTEM_PROMPT};

use cb_base::record::TurnRecord;
use cb_client::Target;
use cb_dataset::Dataset;
use rand::seq::SliceRandom;
use schedule::{Next, Schedule};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the driver talks to the systems under test.
#[derive(Debug, Clone)]
pub struct DriverOptions {
    /// Conversations in flight at once, across all systems.
    pub concurrency: usize,
    /// Live or fast-forward replay.
    pub replay: Replay,
    /// Deadline of every request.
    pub request_timeout: Duration,
    /// Largest response body read (`--max-response-bytes`).
    pub max_response_bytes: u64,
    /// The model id sent in every request.
    pub model: String,
    /// Whether every request asks for a streamed answer.
    pub stream: bool,
    /// The system prompt sent first in every request.
    pub system_prompt: String,
    /// Master seed (the job order derives from it).
    pub seed: u64,
    /// Room for requests in flight under the open-file limit.
    pub gate: Arc<RequestGate>,
    /// The conversations replayed: this shard's ([`Shard::WHOLE`]: all).
    pub shard: Shard,
    /// The API the driver speaks to every system.
    pub api: cb_client::Api,
}

/// One conversation of one system in one run, finished.
#[derive(Debug, Clone)]
pub struct ConversationOutcome {
    /// Run index, from 1.
    pub run: u32,
    /// Index of the system in the target list.
    pub system: usize,
    /// Index of the conversation in the dataset.
    pub conversation: usize,
    /// One record per request sent, in order.
    pub turns: Vec<TurnRecord>,
    /// Whether cancellation cut the conversation short (its turns so far
    /// are kept; it is not scored).
    pub interrupted: bool,
}

/// Which run, and which of its conversations hold a connection.
#[derive(Debug, Clone, Copy)]
pub struct RunOf<'a> {
    /// Run index, from 1.
    pub run: u32,
    /// Per conversation, whether its fault holds a connection (a TIMEOUT);
    /// empty: none known.
    pub held: &'a [bool],
}

/// The order of one run's jobs (system, conversation): shuffled from the
/// seed, then the held conversations first (a stable sort, so each group
/// keeps the shuffled order).
pub fn job_order(
    run: RunOf<'_>,
    systems: usize,
    conversations: usize,
    options: &DriverOptions,
) -> Vec<(usize, usize)> {
    let shard = options.shard;
    let mut jobs: Vec<(usize, usize)> = (0..systems)
        .flat_map(|s| shard.conversations(conversations).map(move |c| (s, c)))
        .collect();
    jobs.shuffle(&mut cb_base::seed::rng(
        options.seed,
        "job-order",
        u64::from(run.run),
    ));
    jobs.sort_by_key(|&(_, c)| !run.held.get(c).copied().unwrap_or(false));
    jobs
}

/// What changed in the runs in progress, told before any request it
/// concerns is sent: the upstreams take the run of a request from its
/// conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunChange {
    /// A conversation (its index) moved on to a run.
    Conversation(usize, u32),
    /// Every job of the runs before this one has finished: a request that
    /// names no known conversation is taken for this run.
    Earliest(u32),
}

/// Told every [`RunChange`].
pub type OnRunChange = Arc<dyn Fn(RunChange) + Send + Sync>;

/// Replays every conversation of `dataset` (of `options.shard`) through
/// every target once for each of `runs` (consecutive, in order), and sends
/// each finished conversation to `results`.
///
/// Each run's jobs go in an order shuffled from the seed, except that the
/// conversations `held` marks (whose fault holds a connection, a TIMEOUT)
/// start first, every system's alike: their holds then overlap the rest
/// of the run instead of trailing after it, and each system's held
/// conversations come first for it as for every other system. A gateway that trips a
/// circuit breaker on timeouts sees them together at the start of a run
/// (interleaving them one for one with the others, tried, cost a third of
/// the saving: they outnumber the first wave of workers).
///
/// The runs overlap ([`schedule`]): a conversation starts its next run as
/// soon as every system has finished it in this one (`on_change` is told
/// first), so that the next run's jobs fill the workers a run's last held
/// conversations leave idle. Every conversation starts in the first run.
///
/// Returns when every job is done or, after `cancel`, when the workers have
/// stopped; a conversation cut short by cancellation is sent with what it
/// sent so far, marked interrupted. Workers are capped at the number of
/// jobs.
#[allow(clippy::too_many_arguments)]
pub async fn run_all(
    runs: &[RunOf<'_>],
    targets: &[Target],
    dataset: Arc<Dataset>,
    options: &DriverOptions,
    client: cb_client::DriverClient,
    cancel: CancellationToken,
    results: mpsc::Sender<ConversationOutcome>,
    on_change: OnRunChange,
) {
    let per_run: Vec<(u32, Vec<(usize, usize)>)> = runs
        .iter()
        .map(|&run| {
            let jobs = job_order(run, targets.len(), dataset.conversations.len(), options);
            (run.run, jobs)
        })
        .collect();
    let jobs: usize = per_run.iter().map(|(_, jobs)| jobs.len()).sum();
    let first = runs.first().map_or(1, |r| r.run);
    let starts: Arc<[OnceLock<Instant>]> = runs.iter().map(|_| OnceLock::new()).collect();
    let schedule = Arc::new(Mutex::new(Schedule::new(per_run, targets.len())));
    let moved = Arc::new(Notify::new());
    let workers = options.concurrency.clamp(1, jobs.max(1));
    let targets: Arc<[Target]> = targets.to_vec().into();
    let mut handles = Vec::with_capacity(workers);
    for _ in 0..workers {
        let schedule = Arc::clone(&schedule);
        let moved = Arc::clone(&moved);
        let starts = Arc::clone(&starts);
        let on_change = Arc::clone(&on_change);
        let targets = Arc::clone(&targets);
        let dataset = Arc::clone(&dataset);
        let options = options.clone();
        let client = client.clone();
        let cancel = cancel.clone();
        let results = results.clone();
        handles.push(tokio::spawn(async move {
            let lock = || schedule.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if cancel.is_cancelled() {
                    break;
                }
                // Listening before looking: a conversation that moves on
                // between the look and the wait still wakes this worker.
                let notified = moved.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let next = lock().take();
                let job = match next {
                    Next::Start(job) => job,
                    Next::Done => break,
                    Next::Wait => {
                        tokio::select! {
                            () = &mut notified => continue,
                            () = cancel.cancelled() => break,
                        }
                    }
                };
                let (run, system, conversation) = job;
                let run_start = *starts[(run - first) as usize].get_or_init(Instant::now);
                let target = &targets[system];
                let conv = &dataset.conversations[conversation];
                let (turns, interrupted) =
                    replay_conversation(&client, target, conv, run, &options, run_start, &cancel)
                        .await;
                if !interrupted {
                    let mut schedule = lock();
                    let earliest = schedule.earliest_run();
                    let next = schedule.finish(job);
                    if schedule.earliest_run() != earliest {
                        on_change(RunChange::Earliest(schedule.earliest_run()));
                    }
                    if let Some(next) = next {
                        on_change(RunChange::Conversation(conversation, next));
                        drop(schedule);
                        moved.notify_waiters();
                    }
                }
                let outcome = ConversationOutcome {
                    run,
                    system,
                    conversation,
                    turns,
                    interrupted,
                };
                if results.send(outcome).await.is_err() || interrupted {
                    break;
                }
            }
        }));
    }
    for handle in handles {
        let _ = handle.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(seed: u64) -> DriverOptions {
        let plan = GatePlan::new(4, &[], None, None).unwrap();
        DriverOptions {
            concurrency: 4,
            replay: Replay::Live,
            request_timeout: Duration::from_secs(1),
            max_response_bytes: 1 << 20,
            model: "m".into(),
            stream: false,
            system_prompt: String::new(),
            seed,
            gate: Arc::new(RequestGate::new(&plan)),
            shard: Shard::WHOLE,
            api: cb_client::Api::Chat,
        }
    }

    /// The conversations whose fault holds a connection start first, for
    /// every system alike; the rest keep the seed's shuffled order; the
    /// same seed gives the same order.
    #[test]
    fn held_conversations_start_first_and_the_rest_keep_the_seed_s_order() {
        let held: Vec<bool> = (0..40).map(|c| c % 7 == 3).collect();
        let o = options(42);
        let none = job_order(RunOf { run: 2, held: &[] }, 2, 40, &o);
        let jobs = job_order(
            RunOf {
                run: 2,
                held: &held,
            },
            2,
            40,
            &o,
        );
        assert_eq!(jobs.len(), 80);
        let first = held.iter().filter(|h| **h).count() * 2;
        assert!(jobs[..first].iter().all(|&(_, c)| held[c]), "{jobs:?}");
        assert!(jobs[first..].iter().all(|&(_, c)| !held[c]));
        // Within each group, the order is the shuffled one.
        let rest: Vec<_> = none.iter().filter(|&&(_, c)| !held[c]).copied().collect();
        assert_eq!(jobs[first..], rest[..]);
        assert_eq!(
            jobs,
            job_order(
                RunOf {
                    run: 2,
                    held: &held
                },
                2,
                40,
                &o
            )
        );
        assert_ne!(none, job_order(RunOf { run: 3, held: &[] }, 2, 40, &o));
    }
}
