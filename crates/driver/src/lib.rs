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
//! flight; what finished is still delivered. A worker that panics stops the
//! others the same way and the replay ends with [`WorkerPanic`], never a
//! wait for a conversation that will not move on.

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
    /// Whose reading of a stream decides whether it is an answer (the
    /// user's client: the official SDKs by default).
    pub client: cb_client::sse::ClientProfile,
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

/// A replay worker panicked: a defect of this tool, not of a system under
/// test. The other workers were stopped (the replay cannot finish: the
/// conversation the worker held would never move on to its next run), so
/// what was delivered is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a replay worker panicked ({message}): this is a defect of continuity-bench, not of the systems under test, and the replay was stopped"
)]
pub struct WorkerPanic {
    /// The panic's message (`"(not a text)"` when it carried none).
    pub message: String,
}

impl WorkerPanic {
    /// The panic of a worker task that ended with `error`, if it panicked
    /// (a task cancelled by the runtime shutting down is not one).
    fn of(error: tokio::task::JoinError) -> Option<Self> {
        let payload = error.try_into_panic().ok()?;
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(not a text)".to_string());
        Some(WorkerPanic {
            message: cb_base::record::bounded_field(&message),
        })
    }
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
///
/// # Errors
/// [`WorkerPanic`] when a worker panicked: the others are stopped at once
/// (as by `cancel`, without cancelling it) rather than left waiting for a
/// conversation that will never move on, and the error is returned when
/// they have stopped.
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
) -> Result<(), WorkerPanic> {
    // The workers stop on Ctrl-C (`cancel`) or when one of them panicked
    // (this token alone).
    let cancel = cancel.child_token();
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
    let mut handles = tokio::task::JoinSet::new();
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
        handles.spawn(async move {
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
        });
    }
    let mut panicked = None;
    while let Some(ended) = handles.join_next().await {
        if let Some(panic) = ended.err().and_then(WorkerPanic::of) {
            cancel.cancel();
            panicked.get_or_insert(panic);
        }
    }
    panicked.map_or(Ok(()), Err)
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
            client: cb_client::sse::ClientProfile::OpenAiSdk,
            system_prompt: String::new(),
            seed,
            gate: Arc::new(RequestGate::new(&plan)),
            shard: Shard::WHOLE,
            api: cb_client::Api::Chat,
        }
    }

    /// A worker that panics (here in the run-change callback, after it
    /// finished run 1 of the only conversation) stops the replay with an
    /// error naming the panic, instead of leaving the other worker waiting
    /// for run 2 of that conversation for ever. The paused clock jumps to
    /// the guard's deadline as soon as every task waits, so a hang fails
    /// the test at once.
    #[tokio::test(start_paused = true)]
    async fn a_panicking_worker_stops_the_replay_with_an_error_instead_of_a_hang() {
        // Nothing listens on the target's port: every request fails fast
        // and the conversation finishes (broken), which is all the
        // schedule needs.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let target = Target {
            name: "gateway".into(),
            kind: cb_client::SystemKind::Gateway,
            url,
            headers: Vec::new(),
            model: None,
        };
        let mut dataset = Dataset::builtin_default();
        dataset.conversations.truncate(1);
        let options = DriverOptions {
            concurrency: 2,
            ..options(7)
        };
        let runs = [RunOf { run: 1, held: &[] }, RunOf { run: 2, held: &[] }];
        let (tx, mut rx) = mpsc::channel(16);
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let on_change: OnRunChange = Arc::new(|change| {
            if let RunChange::Conversation(..) = change {
                panic!("the callback broke");
            }
        });
        let cancel = CancellationToken::new();
        let replay = run_all(
            &runs,
            std::slice::from_ref(&target),
            Arc::new(dataset),
            &options,
            cb_client::DriverClient::new(reqwest::Client::new()),
            cancel.clone(),
            tx,
            on_change,
        );
        let ended = tokio::time::timeout(Duration::from_secs(3600), replay)
            .await
            .expect("the replay hung after a worker panicked");
        let error = ended.expect_err("a worker panicked: the replay must fail");
        assert_eq!(error.message, "the callback broke");
        assert!(
            error.to_string().contains("the replay was stopped"),
            "{error}"
        );
        assert!(
            !cancel.is_cancelled(),
            "the caller's Ctrl-C token is left alone"
        );
        drain.await.unwrap();
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
