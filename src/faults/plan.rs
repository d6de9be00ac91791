//! The deterministic fault plan.

use super::{FaultAction, FaultMode, FaultProfile, Role};

/// Which fault every (run, conversation, turn, role) gets.
#[derive(Debug, Clone)]
pub struct FaultPlan {
    profile: FaultProfile,
}

impl FaultPlan {
    /// Builds the plan for a dataset whose conversation `i` has
    /// `turns_per_conversation[i]` turns.
    pub fn new(
        profile: FaultProfile,
        _master_seed: u64,
        _turns_per_conversation: Vec<usize>,
    ) -> Self {
        FaultPlan { profile }
    }

    /// The profile.
    pub fn profile(&self) -> &FaultProfile {
        &self.profile
    }

    /// The fault mode scheduled for the final turn of conversation index
    /// `conversation` in `run` (from 1), if any.
    pub fn final_turn_mode(&self, _run: u32, _conversation: usize) -> Option<FaultMode> {
        todo!()
    }

    /// What the `role` upstream does on `turn` (from 1) of conversation index
    /// `conversation` in `run`: `None` means answer normally.
    pub fn action(
        &self,
        _run: u32,
        _conversation: usize,
        _turn: usize,
        _role: Role,
    ) -> Option<FaultAction> {
        todo!()
    }
}
