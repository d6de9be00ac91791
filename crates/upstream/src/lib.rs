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
//! - [`render`]: errors and answers in the request's dialect (JSON or SSE),
//!   written by [`cb_dialect::frames`];
//! - [`relay`]: a real provider's stream relayed piece by piece as it
//!   arrives, each piece framed at once by the same framer;
//! - [`provider`]: the pass-through responder in front of a real provider,
//!   with the same faults, limiter and degradations.
//!
//! A conversation of a case-scripted plan ([`cb_faults::CaseScript`])
//! gets what its script decides instead, at either upstream
//! ([`scripted`]: resets, holds, errors, shaped answers and streams), with
//! what the rules read kept beside the attempt ([`log::AttemptDetail`]).
//!
//! The same pipeline serves Anthropic Messages (`POST /v1/messages`) and
//! Gemini (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent`) requests: validated as strictly as the real
//! API ([`cb_dialect`]), read as an OpenAI conversation, answered and
//! faulted the same way, rendered in the dialect ([`render`]).
//! What survived of the client's request is noted per attempt
//! ([`survived`]).
//!
//! [`server`] wires the steps into a router, served by [`listen`] with a
//! handle on each connection's socket; [`standalone`] serves a pair for an
//! external gateway.

mod answer;
pub mod attempt;
pub use cb_degrade as degrade;
mod dialect_routes;
#[cfg(test)]
mod dialect_tests;
pub mod identify;
pub mod latency;
pub mod listen;
pub mod log;
pub use cb_dataset::model;
pub mod provider;
pub mod relay;
#[cfg(test)]
mod relay_tests;
pub mod render;
pub mod responder;
pub mod scripted;
#[cfg(test)]
mod scripted_tests;
pub mod server;
pub mod standalone;
pub mod survived;
#[cfg(test)]
mod tests;
pub mod wire;

pub use identify::{ConversationIndex, IndexEntry};
pub use latency::LatencyProfile;
pub use log::AttemptLog;
pub use responder::{Responder, SimulatedModel};
pub use server::{router, start_pair, UpstreamPair, UpstreamState};

use cb_faults::{FaultPlan, Role};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::time::Instant;

/// The upstreams' default body cap: 8 MiB. A simulated provider reads the
/// harness's conversations (a long history of the built-in datasets is a
/// few KiB; 20,000 messages of 400 bytes fit), and nothing larger: twenty
/// 30 MB bodies held at once, or kept by the allocator after, would be
/// most of a small box's memory. `upstreams --max-body-bytes` raises it.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

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
    /// The run being served, from 1, for a request that names no known
    /// conversation (and every request when no conversation has its own).
    pub run: Arc<AtomicU32>,
    /// The run each conversation is in, by index (0: `run`'s): runs
    /// overlap, so the run of a request is its conversation's. The driver
    /// moves a conversation on to its next run only once every system has
    /// finished it ([`UpstreamContext::set_conversation_run`]).
    conversation_runs: Arc<[AtomicU32]>,
    /// Where attempts are recorded.
    pub log: AttemptLog,
    /// What the client sends, when the harness knows it: each recognised
    /// attempt then notes what survived of it ([`survived`]).
    pub clients: Option<Arc<survived::ClientView>>,
    /// The epoch `arrived_ms` counts from.
    pub epoch: Instant,
    /// Largest request body an upstream reads ([`DEFAULT_MAX_BODY_BYTES`]
    /// unless `upstreams --max-body-bytes` set it); a larger one is
    /// answered 413 naming the cap, from its `Content-Length` when it has
    /// one, before a byte is read.
    pub max_body_bytes: usize,
    /// What the harness switches at run time: case clocks, expired keys,
    /// counts of model-list requests.
    switches: Arc<Mutex<Switches>>,
}

/// State the harness changes while upstreams serve.
#[derive(Debug, Default)]
struct Switches {
    /// When each (system, clock) was started.
    clocks: HashMap<(String, String), Instant>,
    /// Upstreams whose key has "expired": they answer 401 to everything.
    expired: HashSet<(String, Role)>,
    /// `GET /v1/models` requests per upstream.
    model_lists: HashMap<(String, Role), u32>,
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
        let conversation_runs = (0..index.len()).map(|_| AtomicU32::new(0)).collect();
        UpstreamContext {
            plan: Arc::new(plan),
            index: Arc::new(index),
            responder,
            run: Arc::new(AtomicU32::new(run)),
            conversation_runs,
            log: AttemptLog::new(),
            clients: None,
            epoch: Instant::now(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            switches: Arc::new(Mutex::new(Switches::default())),
        }
    }

    /// The same context, with a body cap of `bytes`.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The same context, comparing what reaches each upstream with what
    /// the client sent (`view`).
    pub fn with_clients(mut self, view: survived::ClientView) -> Self {
        self.clients = Some(Arc::new(view));
        self
    }

    fn switches(&self) -> MutexGuard<'_, Switches> {
        // Every change is one insert or remove: poison leaves it whole.
        self.switches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts (or restarts) `clock` for `system`'s upstreams, now: the
    /// origin of a case script's time rules.
    pub fn start_clock(&self, system: &str, clock: &str) {
        self.switches()
            .clocks
            .insert((system.to_string(), clock.to_string()), Instant::now());
    }

    /// Time since `clock` was started for `system`, if it was.
    pub fn since_clock(&self, system: &str, clock: &str) -> Option<Duration> {
        self.switches()
            .clocks
            .get(&(system.to_string(), clock.to_string()))
            .map(Instant::elapsed)
    }

    /// Makes `system`'s `role` upstream answer 401 to everything (an
    /// expired key), or stops it.
    pub fn set_expired(&self, system: &str, role: Role, expired: bool) {
        let key = (system.to_string(), role);
        let mut switches = self.switches();
        if expired {
            switches.expired.insert(key);
        } else {
            switches.expired.remove(&key);
        }
    }

    /// Whether `system`'s `role` upstream answers 401 to everything.
    pub fn is_expired(&self, system: &str, role: Role) -> bool {
        self.switches()
            .expired
            .contains(&(system.to_string(), role))
    }

    /// Counts one `GET /v1/models` at `system`'s `role` upstream.
    pub fn count_model_list(&self, system: &str, role: Role) {
        *self
            .switches()
            .model_lists
            .entry((system.to_string(), role))
            .or_insert(0) += 1;
    }

    /// `GET /v1/models` requests `system`'s `role` upstream has received.
    pub fn model_lists(&self, system: &str, role: Role) -> u32 {
        self.switches()
            .model_lists
            .get(&(system.to_string(), role))
            .copied()
            .unwrap_or(0)
    }

    /// The run being served, for a request of no known conversation.
    pub fn current_run(&self) -> u32 {
        self.run.load(Ordering::SeqCst)
    }

    /// The run a request of `who` belongs to: its conversation's, or
    /// [`UpstreamContext::current_run`] when it has none of its own.
    pub fn run_of(&self, who: &identify::Identity) -> u32 {
        who.conversation
            .and_then(|i| self.conversation_runs.get(i))
            .map(|run| run.load(Ordering::SeqCst))
            .filter(|&run| run > 0)
            .unwrap_or_else(|| self.current_run())
    }

    /// Switches every upstream sharing this context to `run`, for requests
    /// of no known conversation and of conversations without a run of
    /// their own. When runs overlap it is the earliest run in progress: a
    /// request that names no conversation cannot say which it belongs to.
    pub fn set_run(&self, run: u32) {
        self.run.store(run, Ordering::SeqCst);
    }

    /// Moves conversation `conversation` (its index) on to `run`: its
    /// requests from now on belong to that run, whatever the others'.
    pub fn set_conversation_run(&self, conversation: usize, run: u32) {
        if let Some(slot) = self.conversation_runs.get(conversation) {
            slot.store(run, Ordering::SeqCst);
        }
    }
}
