//! The one test kit of continuity-bench: fixtures that tests of several
//! crates share, so that every test builds its rows, conversations and
//! schema checks the same way. A dev-dependency only; nothing in the product
//! depends on it.

pub mod ports;
pub mod record;

pub use ports::free_port;
