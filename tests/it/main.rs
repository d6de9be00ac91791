//! The integration tests: one binary, one module per area, sharing the
//! fixtures in [`common`] (control gateways built to trip each detector,
//! quick run configurations, CSV readers).
//!
//! - [`accounting`]: stages, and figures that count only what was measured;
//! - [`canary`]: the canary end to end, offline and against an
//!   OpenRouter-compatible endpoint written for the tests;
//! - [`canary_power`]: `canary power`'s recommended budget against the canary;
//! - [`contracts`]: a gateway that trips each answer contract, and the
//!   reference systems that must trip none;
//! - [`end_to_end`]: `run` as a user runs it, in process and as a binary;
//! - [`grade`]: `grade` over a systems file, its page in a headless
//!   browser, `--fail-under` and `report DIR`;
//! - [`controls`]: positive and negative controls of every `run` metric;
//! - [`docs`]: every relative link in the README and the book resolves;
//!   `docs/SUMMARY.md` lists every chapter;
//! - [`dialects`]: fallbacks in the Anthropic and Gemini dialects: what
//!   reaches them, lossy translations caught, the context squeeze;
//! - [`interrupt`]: Ctrl-C in every phase;
//! - [`kubernetes`]: the Indexed Job example's manifests and command lines;
//! - [`ranges`]: every absurd flag or profile value exits 2 naming its key;
//! - [`redaction`]: credentials in a gateway URL in no output of any command;
//! - [`overhead`]: `bench overhead` against a gateway that adds latency
//!   and one that adds none;
//! - [`past_fault`]: an outage over several turns: survival, return to
//!   primary and tool-call integrity, each control caught by its figure;
//! - [`passthrough`]: the upstreams in front of a provider stand-in (same
//!   verdicts as the simulated model, faults never forwarded, no key in any
//!   output, a wrong key, the cost gate);
//! - [`semantics`]: the failover-semantics catalogue against its controls;
//! - [`shards`]: a run split into shard processes and merged, against the
//!   whole run; the merge's refusals;
//! - [`hostile_numbers`]: absurd Content-Length and usage on every client path;
//! - [`hostile`]: redirects, oversized bodies, long answers, non-text content
//!   and echoed secrets against the driver.
//!
//! No test here loads the CPU on purpose: those live in their own binary,
//! `tests/load`, which cargo runs after this one, so that no test that
//! waits on real time runs beside a busy loop of the suite's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod accounting;
mod canary;
mod canary_design;
mod canary_operator;
mod canary_power;
mod client_profiles;
mod common;
mod contracts;
mod controls;
mod dialects;
mod docs;
mod end_to_end;
mod grade;
mod hostile;
mod hostile_numbers;
mod interrupt;
mod kubernetes;
mod overhead;
mod passthrough;
mod past_fault;
mod ranges;
mod redaction;
mod semantics;
mod shards;
mod terminate;
