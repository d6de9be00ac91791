//! Simulated OpenAI-compatible providers.
//!
//! Each system under test gets a pair (primary, fallback). A request goes
//! through one pipeline, one file a step:
//!
//! - [`identify`]: which conversation and turn, from the content alone;
//! - [`attempt`] and [`log`]: every attempt recorded once, with what was done;
//! - [`wire`]: the plan's fault executed on the wire (a held connection, an
//!   error status with its body, a body broken off);
//! - [`responder`]: otherwise the answer, from the simulated [`model`] with
//!   its [`latency`] profile (or any other [`responder::Responder`]);
//! - [`render`]: the OpenAI rendering of errors and answers (JSON or SSE).
//!
//! [`server`] wires the steps into a router; [`standalone`] serves a pair
//! for an external gateway.

pub mod attempt;
pub mod degrade;
pub mod identify;
pub mod latency;
pub mod log;
pub mod model;
pub mod render;
pub mod responder;
pub mod server;
pub mod standalone;
#[cfg(test)]
mod tests;
pub mod wire;

pub use identify::{ConversationIndex, IndexEntry};
pub use latency::LatencyProfile;
pub use log::AttemptLog;
pub use responder::{Responder, SimulatedModel};
pub use server::{router, start_pair, UpstreamPair, UpstreamState};

use crate::faults::FaultPlan;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What every upstream of a run shares: the plan, the conversation index,
/// the responder, the current run, the attempt log and the clock.
#[derive(Debug, Clone)]
pub struct UpstreamContext {
    /// The fault plan of this run.
    pub plan: Arc<FaultPlan>,
    /// First user message -> conversation, for recognising requests.
    pub index: Arc<ConversationIndex>,
    /// What answers when no fault stops a request.
    pub responder: Arc<dyn Responder>,
    /// The run being served, from 1; the driver advances it between runs.
    pub run: Arc<AtomicU32>,
    /// Where attempts are recorded.
    pub log: AttemptLog,
    /// The epoch `arrived_ms` counts from.
    pub epoch: Instant,
}

impl UpstreamContext {
    /// A context answering with the simulated model (with `latency`, jitter
    /// seeded from `seed`), serving `run` (from 1), with an empty log and
    /// its clock starting now.
    pub fn new(
        plan: FaultPlan,
        index: ConversationIndex,
        latency: LatencyProfile,
        seed: u64,
        run: u32,
    ) -> Self {
        Self::with_responder(plan, index, Arc::new(SimulatedModel { latency, seed }), run)
    }

    /// A context answering with `responder`.
    pub fn with_responder(
        plan: FaultPlan,
        index: ConversationIndex,
        responder: Arc<dyn Responder>,
        run: u32,
    ) -> Self {
        UpstreamContext {
            plan: Arc::new(plan),
            index: Arc::new(index),
            responder,
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
