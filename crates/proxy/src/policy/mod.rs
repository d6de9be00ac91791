//! Pure decision rules, apart from the I/O that acts on them: the failover
//! decision tree every gateway is held to, and the bounded same-route
//! retry the reference proxies make before it.

pub mod failover;
pub mod retry;

pub use failover::{classify, Decision, FailoverReason, Outcome};
pub use retry::{same_route_wait, RetryRules};
