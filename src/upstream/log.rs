//! The attempt log every upstream writes to.

use crate::record::AttemptRecord;
use std::sync::{Arc, Mutex};

/// Shared, append-only log of upstream attempts.
#[derive(Debug, Clone, Default)]
pub struct AttemptLog {
    rows: Arc<Mutex<Vec<AttemptRecord>>>,
}

impl AttemptLog {
    /// A copy of every attempt so far.
    pub fn snapshot(&self) -> Vec<AttemptRecord> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
