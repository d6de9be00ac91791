//! Each run's shuffled fault modes, computed once and shared.
//!
//! An upstream asks the plan what to do for every request it serves, and
//! the summary asks for every conversation's event; shuffling the whole
//! schedule again for each of those cost O(N) per request (10,000 modes
//! at scale, for each of 10,000 requests). The shuffle depends only on
//! the seed, the run and the dataset's shape, so its result is kept: the
//! modes are those of the shuffle, looked up in O(1).

use crate::FaultMode;
use std::sync::{Arc, RwLock};

/// Runs whose modes are kept at once; runs are replayed one after the
/// other, so an older one is computed again if it is ever asked for.
const RUNS_KEPT: usize = 16;

/// The modes of the runs computed so far.
#[derive(Default)]
pub(super) struct ModesCache {
    runs: RwLock<Vec<(u32, Arc<[FaultMode]>)>>,
}

impl ModesCache {
    /// The modes of `run`, made with `make` the first time they are asked
    /// for.
    pub(super) fn get_or(
        &self,
        run: u32,
        make: impl FnOnce() -> Vec<FaultMode>,
    ) -> Arc<[FaultMode]> {
        let read = self.runs.read().unwrap_or_else(|e| e.into_inner());
        if let Some((_, modes)) = read.iter().find(|(r, _)| *r == run) {
            return Arc::clone(modes);
        }
        drop(read);
        let made: Arc<[FaultMode]> = make().into();
        let mut write = self.runs.write().unwrap_or_else(|e| e.into_inner());
        // Another request may have made them meanwhile: the same modes.
        if let Some((_, modes)) = write.iter().find(|(r, _)| *r == run) {
            return Arc::clone(modes);
        }
        if write.len() >= RUNS_KEPT {
            write.remove(0);
        }
        write.push((run, Arc::clone(&made)));
        made
    }

    /// The runs held now (for tests).
    #[cfg(test)]
    pub(super) fn runs(&self) -> Vec<u32> {
        let read = self.runs.read().unwrap_or_else(|e| e.into_inner());
        read.iter().map(|(r, _)| *r).collect()
    }
}

/// A clone starts empty: the modes are computed again from the same
/// inputs, so they are the same.
impl Clone for ModesCache {
    fn clone(&self) -> Self {
        ModesCache::default()
    }
}

impl std::fmt::Debug for ModesCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let read = self.runs.read().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("ModesCache")
            .field("runs", &read.iter().map(|(r, _)| *r).collect::<Vec<_>>())
            .finish()
    }
}
