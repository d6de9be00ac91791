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

pub use index::ConversationIndex;
pub use latency::LatencyProfile;
pub use log::AttemptLog;
pub use server::{router, start_pair, UpstreamPair, UpstreamState};

use crate::faults::FaultPlan;
use std::sync::atomic::AtomicU32;
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
