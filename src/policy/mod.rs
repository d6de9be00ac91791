//! Pure decision rules, apart from the I/O that acts on them: the failover
//! decision tree every gateway is held to.

pub mod failover;

pub use failover::{classify, Decision, FailoverReason, Outcome};
