//! The canary's decision side: what a probe round observed per route
//! ([`evidence`]), the quarantine rules as a pure state machine with an
//! injected clock ([`machine`]), its persisted state ([`state`]), the
//! language rotation and confirmations ([`language`]), the positive control
//! ([`control`]), the decision log ([`record`]), the merged ignore list
//! ([`ignore`]) and the per-round summary ([`summary`]).
//!
//! The prober, the command and the simulated endpoint sit on top: each round
//! they ask [`Machine::language_for`] which language to probe, send the probe
//! set, build one [`RouteEvidence`] per route, call [`Machine::round`], append
//! the records to the log, save the state and write the ignore list.
//!
//! The rules (numbers are [`Policy`] fields with these defaults): 2
//! consecutive scored rounds in which a route failed any contract
//! quarantine it;
//! 2 consecutive fully passing rounds lift it early; quarantines last 1 d,
//! 3 d, then 7 d, and 14 days after the last one began the history resets;
//! a quarantine that would leave fewer than 2 routes in production is not
//! applied and raises an alert; a transport error freezes its probe's
//! contracts and a reply from another route freezes the round; observe mode (the default) tracks and logs every decision
//! as "would ..." and enforces nothing.

pub mod clock;
pub mod config;
pub mod control;
pub mod discover;
pub mod endpoint;
pub mod evidence;
pub mod ignore;
pub mod language;
pub mod lock;
pub mod machine;
pub mod notify;
pub mod operator;
pub mod output;
pub mod policy;
pub mod power;
pub mod probe;
pub mod prober;
pub mod record;
pub mod report;
pub mod requests;
pub mod runner;
pub mod score;
pub mod state;
pub mod summary;

#[cfg(test)]
mod tests;

pub use clock::Timestamp;
pub use evidence::{ContractName, Outcome, ProbeKind, RouteEvidence};
pub use machine::{Machine, RoundDecisions};
pub use policy::{Mode, Policy};
pub use record::{LogRecord, RecordKind};
