//! Builds a [`Summary`] from the recorded rows.

use super::Summary;
use crate::record::{AttemptRecord, EventRecord};
use serde::{Deserialize, Serialize};

/// What a summary needs besides the rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryContext {
    /// Master seed (the bootstrap derives its seed from it).
    pub seed: u64,
    /// Number of runs.
    pub runs: u32,
    /// Conversations in the dataset.
    pub conversations: u32,
    /// Dataset file.
    pub dataset: String,
    /// Fault profile file.
    pub fault_profile: String,
    /// Systems, in report order.
    pub systems: Vec<String>,
    /// Bootstrap resamples of the clustered interval.
    pub bootstrap_resamples: u32,
    /// Notes to carry into the summary.
    pub notes: Vec<String>,
}

/// Summarises events and attempts.
pub fn summarize(
    _ctx: &SummaryContext,
    _events: &[EventRecord],
    _attempts: &[AttemptRecord],
) -> Summary {
    todo!()
}
