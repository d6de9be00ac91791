//! The one test kit of continuity-bench: fixtures that tests of several
//! crates share, so that every test builds its rows ([`record`]), ports
//! ([`ports`]) and schema checks ([`schema`]) the same way. A
//! dev-dependency only; nothing in the product depends on it.
//!
//! It depends on cb-base and registry crates only, so a crate's tests never
//! need a kit built on that same crate.

pub mod ports;
pub mod record;
pub mod schema;

pub use ports::free_port;
pub use schema::Schema;
