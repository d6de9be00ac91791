//! Simulated OpenAI-compatible providers.
//!
//! Each system under test gets a pair (primary, fallback). An upstream
//! recognises the conversation and turn from the request content, executes
//! the fault the plan gives it on the wire, otherwise answers with the
//! simulated model after a modelled latency, and logs every attempt.

pub mod index;
pub mod latency;
pub mod log;
pub mod model;
pub mod server;
pub mod standalone;
#[cfg(test)]
mod tests;

pub use index::ConversationIndex;
pub use latency::LatencyProfile;
pub use log::AttemptLog;
pub use server::{router, start_pair, UpstreamPair, UpstreamState};

use crate::faults::FaultPlan;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What every upstream of a run shares: the plan, the conversation index, the
/// latency model, the current run, the attempt log and the clock.
#[derive(Debug, Clone)]
pub struct UpstreamContext {
    /// The fault plan of this run.
    pub plan: Arc<FaultPlan>,
    /// First user message -> conversation, for recognising requests.
    pub index: Arc<ConversationIndex>,
    /// How long answers take.
    pub latency: LatencyProfile,
    /// Master seed (latency jitter derives from it).
    pub seed: u64,
    /// The run being served, from 1; the driver advances it between runs.
    pub run: Arc<AtomicU32>,
    /// Where attempts are recorded.
    pub log: AttemptLog,
    /// The epoch `arrived_ms` counts from.
    pub epoch: Instant,
}

impl UpstreamContext {
    /// A context serving `run` (from 1) with an empty log and its clock
    /// starting now.
    pub fn new(
        plan: FaultPlan,
        index: ConversationIndex,
        latency: LatencyProfile,
        seed: u64,
        run: u32,
    ) -> Self {
        UpstreamContext {
            plan: Arc::new(plan),
            index: Arc::new(index),
            latency,
            seed,
            run: Arc::new(AtomicU32::new(run)),
            log: AttemptLog::new(),
            epoch: Instant::now(),
        }
    }

    /// The run being served.
    pub fn current_run(&self) -> u32 {
        self.run.load(Ordering::SeqCst)
    }

    /// Switches every upstream sharing this context to `run`.
    pub fn set_run(&self, run: u32) {
        self.run.store(run, Ordering::SeqCst);
    }
}
