//! The one test kit of continuity-bench: fixtures that tests of several
//! crates share, so that every test builds its rows ([`record`]),
//! conversations (`conversation`, with the `dataset` feature), ports
//! ([`ports`]) and schema checks ([`schema`]) the same way. A
//! dev-dependency only; nothing in the product depends on it.
//!
//! It depends on cb-base and registry crates only, and on cb-dataset behind
//! the `dataset` feature: a crate's tests cannot use a kit built on that
//! same crate, so cb-dataset and the crates below it do without the
//! feature.

#[cfg(feature = "dataset")]
pub mod conversation;
pub mod ports;
pub mod record;
pub mod schema;

pub use ports::free_port;
pub use schema::Schema;
