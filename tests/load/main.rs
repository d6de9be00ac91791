//! The tests that load the CPU on purpose, in a binary of their own: cargo
//! runs test binaries one after another, so nothing here runs beside the
//! behaviour tests of `tests/it`, some of which wait on real time (a held
//! connection, a child process's exit).
//!
//! - [`storm`]: the same seed gives the same verdicts under `storm.toml`
//!   with every core busy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../it/common/mod.rs"]
#[allow(dead_code)]
mod common;
mod storm;
