//! What an operator does beside the canary, through the state lock
//! ([`crate::lock`]): `canary release ROUTE`.
//!
//! - No canary holds the state: `release` takes the lock itself, lifts the
//!   quarantine in the state file, appends the release to the log and
//!   rewrites the ignore list the state names, then lets the lock go.
//! - A canary holds it: `release` leaves a request ([`crate::requests`]) and
//!   rewrites the ignore list at once (from the state as last saved, with
//!   the route lifted); the running canary applies the request at the end of
//!   its next round, logs it, notifies, and every later write of the state
//!   and the ignore list keeps the route released.
//!
//! The time left in the quarantine is computed on the clock the state was
//! written with: the wall clock, or under `--no-wait` the simulated clock,
//! whose "now" is the last round's time.

use super::clock::Timestamp;
use super::ignore::{self, IgnoreList, ListKind};
use super::lock::{LockError, StateLock};
use super::machine::Machine;
use super::output::decision_line;
use super::record::LogRecord;
use super::requests::{self, Request};
use super::state::{self, ClockKind, MachineState};
use crate::config::CanaryReleaseConfig;
use crate::runner::{append_log, CanaryError};
use std::path::Path;

/// What `canary release` did.
#[derive(Debug)]
pub struct Released {
    /// The release record.
    pub record: LogRecord,
    /// Lines for a person: the decision, and how it was applied.
    pub lines: Vec<String>,
}

/// "Now" on the clock `state` was written with: the last round's time on
/// the simulated clock, else the wall time `wall` (never before the last
/// round).
pub fn now_on_clock(state: &MachineState, wall: Timestamp) -> Timestamp {
    match (state.clock, state.last_round_at) {
        (Some(ClockKind::Simulated), Some(last)) => last,
        (_, Some(last)) => last.max(wall),
        (_, None) => wall,
    }
}

/// The ignore list `machine` calls for, as the state's recorded outputs
/// merge it (the runtime list re-read), at `now`.
fn merged_ignore(machine: &Machine, now: Timestamp) -> Option<(IgnoreList, &Path)> {
    let outputs = machine.state().outputs.as_ref()?;
    let runtime = outputs
        .runtime
        .as_deref()
        .and_then(|p| ignore::read_list(p, ListKind::Runtime).ok())
        .unwrap_or_default();
    let list = IgnoreList::merged(
        &outputs.reviewed,
        &runtime,
        machine,
        now,
        machine.state().mode,
    );
    Some((list, outputs.ignore_out.as_path()))
}

/// Rewrites the ignore list the state names; returns a line saying so.
fn rewrite_ignore(machine: &Machine, now: Timestamp) -> Result<String, CanaryError> {
    match merged_ignore(machine, now) {
        Some((list, path)) => {
            list.write(path)?;
            Ok(format!("ignore list {} rewritten", path.display()))
        }
        None => Ok("the state names no ignore list (written before it recorded one); the next round writes it".into()),
    }
}

/// `canary release`: lifts `config.route`'s quarantine (at `wall`, on the
/// state's clock), directly or through the running canary.
///
/// # Errors
/// The state cannot be read or written, the route is unknown or not
/// quarantined, the lock or the request folder cannot be used, or the log
/// or the ignore list cannot be written.
pub fn release(config: &CanaryReleaseConfig, wall: Timestamp) -> Result<Released, CanaryError> {
    match StateLock::acquire(&config.state, &wall.to_string()) {
        Ok(_lock) => {
            let mut machine = Machine::from_state(state::load(&config.state)?);
            let now = now_on_clock(machine.state(), wall);
            let record = machine.release(&config.route, now)?;
            state::save(&config.state, machine.state())?;
            if let Some(log) = &config.log {
                append_log(log, std::slice::from_ref(&record))?;
            }
            let ignore = rewrite_ignore(&machine, now)?;
            Ok(Released {
                lines: vec![decision_line(&record), ignore],
                record,
            })
        }
        Err(LockError::Held { holder, .. }) => {
            // The state as last saved: the running canary saves atomically.
            let mut machine = Machine::from_state(state::load(&config.state)?);
            let now = now_on_clock(machine.state(), wall);
            let record = machine.release(&config.route, now)?;
            let file = requests::submit(
                &config.state,
                &Request::Release {
                    route: config.route.clone(),
                },
            )
            .map_err(CanaryError::Request)?;
            let ignore = rewrite_ignore(&machine, now)?;
            Ok(Released {
                lines: vec![
                    decision_line(&record),
                    ignore,
                    format!(
                        "a canary is running on this state ({holder}): the release was handed to it ({}) and takes effect at the end of its round in progress",
                        file.display()
                    ),
                ],
                record,
            })
        }
        Err(e) => Err(e.into()),
    }
}
