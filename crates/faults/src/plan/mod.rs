//! The deterministic fault plan: which fault every (run, conversation, turn,
//! upstream role) gets.
//!
//! For each run, the plan fills a list of N conversations with fault modes in
//! proportion to the profile's weights (largest-remainder rounding, ties to
//! the mode listed first in [`FaultMode::ALL`]) and shuffles it with
//! `seed::rng(master_seed, "faults", run)`. The schedule is therefore balanced
//! within a run, differs between runs, and is the same for every system of a
//! run, because it depends on nothing but the seed, the run and the dataset's
//! shape. A conversation's mode applies to every turn the profile targets,
//! and to every attempt at the targeted upstream for that turn: a gateway that
//! retries the faulted upstream never suddenly succeeds.
//!
//! Each conversation's *event* ([`PlannedEvent`]) is its first faulted turn
//! within its length (for `turns = "final"`, the last turn): a fault on turn
//! k makes turn k the failover event, and the probe still decides whether
//! the conversation kept its anchor. Later faulted turns
//! ([`FaultPlan::faulted_turns`]) get the same fault.

use super::checks::Reach;
use super::script::CaseScript;
use super::{ErrorKind, ErrorSpec, FaultAction, FaultError, FaultMode, FaultProfile, Role};
use cache::ModesCache;
use rand::seq::SliceRandom;
use std::sync::Arc;

mod cache;

/// A conversation's failover event as planned: the turn whose request the
/// faulted upstream fails, how, and which upstream that is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedEvent {
    /// The event turn (from 1): the conversation's first faulted turn.
    pub turn: u32,
    /// The fault executed there.
    pub mode: FaultMode,
    /// The faulted upstream.
    pub role: Role,
}

/// Where a plan's faults come from.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// A profile's modes, apportioned by weight and shuffled per run.
    Profile(Box<ProfileSchedule>),
    /// One exact fault per conversation at the primary, on every turn and
    /// every attempt (`None`: the primary answers); for checks such as
    /// `semantics`.
    Script(Vec<Option<FaultAction>>),
    /// One [`CaseScript`] per conversation: rules for both upstreams, on
    /// every turn (the failover catalogue). No profile mode, so no
    /// failover event is planned.
    Cases(Vec<CaseScript>),
}

/// A profile applied to a dataset's shape with a master seed.
#[derive(Debug, Clone)]
pub struct ProfileSchedule {
    /// The profile.
    pub profile: FaultProfile,
    /// The master seed of the shuffle.
    pub master_seed: u64,
    /// Turns of each conversation, in dataset order.
    pub turns_per_conversation: Vec<usize>,
    /// Each run's modes, shuffled once ([`cache`]).
    modes: ModesCache,
}

impl ProfileSchedule {
    /// The fault mode of every conversation of `run`: balanced by weight,
    /// then shuffled with the run's seed.
    pub fn modes(&self, run: u32) -> Vec<FaultMode> {
        self.shared_modes(run).to_vec()
    }

    /// [`ProfileSchedule::modes`], shuffled once per run and shared.
    fn shared_modes(&self, run: u32) -> Arc<[FaultMode]> {
        self.modes.get_or(run, || self.shuffled(run))
    }

    /// The shuffle itself: the modes apportioned by weight, in
    /// [`FaultMode::ALL`] order, shuffled with `seed::rng(master_seed,
    /// "faults", run)`.
    fn shuffled(&self, run: u32) -> Vec<FaultMode> {
        let weights: Vec<f64> = FaultMode::ALL
            .iter()
            .map(|m| self.profile.weight(*m))
            .collect();
        let counts = apportion(self.turns_per_conversation.len(), &weights);
        let mut modes: Vec<FaultMode> = FaultMode::ALL
            .iter()
            .zip(counts)
            .flat_map(|(m, c)| std::iter::repeat_n(*m, c))
            .collect();
        let mut rng = cb_base::seed::rng(self.master_seed, "faults", u64::from(run));
        modes.shuffle(&mut rng);
        modes
    }

    /// The mode of `conversation` in `run` when the profile faults `turn`
    /// of it at `role`: a look-up in the run's shuffled modes.
    fn mode_at(&self, run: u32, conversation: usize, turn: usize, role: Role) -> Option<FaultMode> {
        let n_turns = *self.turns_per_conversation.get(conversation)?;
        if role != self.profile.upstream || !self.profile.turns.includes(turn, n_turns) {
            return None;
        }
        self.shared_modes(run).get(conversation).copied()
    }
}

/// Which fault every (run, conversation, turn, role) gets.
#[derive(Debug, Clone)]
pub struct FaultPlan {
    schedule: Schedule,
}

/// Splits `n` slots among `weights` in proportion, by largest remainder.
/// Ties in the remainder go to the earlier entry. The counts sum to `n`
/// whenever the weights sum to more than zero.
pub fn apportion(n: usize, weights: &[f64]) -> Vec<usize> {
    let total: f64 = weights.iter().filter(|w| **w > 0.0).sum();
    if total <= 0.0 || n == 0 {
        return vec![0; weights.len()];
    }
    let quotas: Vec<f64> = weights
        .iter()
        .map(|w| if *w > 0.0 { n as f64 * w / total } else { 0.0 })
        .collect();
    let mut counts: Vec<usize> = quotas.iter().map(|q| q.floor() as usize).collect();
    let assigned: usize = counts.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).filter(|i| weights[*i] > 0.0).collect();
    // Stable sort keeps the earlier entry first on equal remainders.
    order.sort_by(|a, b| {
        let ra = quotas[*a] - quotas[*a].floor();
        let rb = quotas[*b] - quotas[*b].floor();
        rb.total_cmp(&ra)
    });
    for i in order.into_iter().cycle().take(n.saturating_sub(assigned)) {
        counts[i] += 1;
    }
    counts
}

impl FaultPlan {
    /// Builds the plan for a dataset whose conversation `i` has
    /// `turns_per_conversation[i]` turns.
    pub fn new(
        profile: FaultProfile,
        master_seed: u64,
        turns_per_conversation: Vec<usize>,
    ) -> Self {
        FaultPlan {
            schedule: Schedule::Profile(Box::new(ProfileSchedule {
                profile,
                master_seed,
                turns_per_conversation,
                modes: ModesCache::default(),
            })),
        }
    }

    /// A plan that gives conversation `i` exactly `script[i]` at the primary
    /// upstream, on every turn and every attempt (`None`: the primary
    /// answers).
    pub fn scripted(script: Vec<Option<FaultAction>>) -> Self {
        FaultPlan {
            schedule: Schedule::Script(script),
        }
    }

    /// A plan that gives conversation `i` the rules of `scripts[i]` at
    /// both upstreams, on every turn and attempt.
    pub fn cases(scripts: Vec<CaseScript>) -> Self {
        FaultPlan {
            schedule: Schedule::Cases(scripts),
        }
    }

    /// The case script of conversation index `conversation`, when the plan
    /// is made of case scripts.
    pub fn case_script(&self, conversation: usize) -> Option<&CaseScript> {
        match &self.schedule {
            Schedule::Cases(scripts) => scripts.get(conversation),
            Schedule::Profile(_) | Schedule::Script(_) => None,
        }
    }

    /// The profile, when the plan is made from one.
    pub fn profile(&self) -> Option<&FaultProfile> {
        match &self.schedule {
            Schedule::Profile(s) => Some(&s.profile),
            Schedule::Script(_) | Schedule::Cases(_) => None,
        }
    }

    /// Number of conversations the plan covers.
    pub fn conversations(&self) -> usize {
        match &self.schedule {
            Schedule::Profile(s) => s.turns_per_conversation.len(),
            Schedule::Script(script) => script.len(),
            Schedule::Cases(scripts) => scripts.len(),
        }
    }

    /// The fault mode of every conversation in `run` (from 1), in dataset
    /// order (for a script, the modes its faults stand for).
    pub fn schedule(&self, run: u32) -> Vec<FaultMode> {
        match &self.schedule {
            Schedule::Profile(s) => s.modes(run),
            Schedule::Script(script) => script
                .iter()
                .filter_map(|a| a.as_ref().and_then(action_mode))
                .collect(),
            Schedule::Cases(_) => Vec::new(),
        }
    }

    /// The failover event of conversation index `conversation` in `run`
    /// (from 1): its first faulted turn, the mode and the faulted upstream.
    /// `None` when no turn of it is faulted (a turn list past its length, a
    /// script entry that lets the primary answer or cuts a body, an index
    /// out of range). A scripted conversation's event is turn 1 at the
    /// primary: scripts fault every turn, and today every scripted case is
    /// one turn long.
    pub fn event(&self, run: u32, conversation: usize) -> Option<PlannedEvent> {
        match &self.schedule {
            Schedule::Script(script) => {
                let mode = script.get(conversation)?.as_ref().and_then(action_mode)?;
                Some(PlannedEvent {
                    turn: 1,
                    mode,
                    role: Role::Primary,
                })
            }
            Schedule::Cases(_) => None,
            Schedule::Profile(s) => {
                let n_turns = *s.turns_per_conversation.get(conversation)?;
                let turn = *s.profile.turns.turns_in(n_turns).first()?;
                let mode = s.shared_modes(run).get(conversation).copied()?;
                Some(PlannedEvent {
                    turn: u32::try_from(turn).ok()?,
                    mode,
                    role: s.profile.upstream,
                })
            }
        }
    }

    /// Every faulted turn (from 1, ascending) of conversation index
    /// `conversation` in `run`; the first is the event turn. Empty when it
    /// has no event. For a scripted conversation, `[1]` (see
    /// [`FaultPlan::event`]).
    pub fn faulted_turns(&self, run: u32, conversation: usize) -> Vec<u32> {
        match (&self.schedule, self.event(run, conversation)) {
            (_, None) | (Schedule::Cases(_), _) => Vec::new(),
            (Schedule::Script(_), Some(_)) => vec![1],
            (Schedule::Profile(s), Some(_)) => s
                .turns_per_conversation
                .get(conversation)
                .map(|n| s.profile.turns.turns_in(*n))
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| u32::try_from(t).ok())
                .collect(),
        }
    }

    /// How far the profile's faulted turns reach into the plan's dataset;
    /// see [`FaultProfile::check_reach`]. A scripted plan reaches every
    /// conversation that has a fault.
    ///
    /// # Errors
    /// [`FaultError::Unreachable`] when the turns reach no conversation.
    pub fn check_reach(&self) -> Result<Reach, FaultError> {
        match &self.schedule {
            Schedule::Profile(s) => s.profile.check_reach(&s.turns_per_conversation),
            Schedule::Script(script) => Ok(Reach {
                conversations: script.len(),
                with_event: (0..script.len())
                    .filter(|c| self.event(1, *c).is_some())
                    .count(),
                turns: Vec::new(),
            }),
            Schedule::Cases(scripts) => Ok(Reach {
                conversations: scripts.len(),
                with_event: 0,
                turns: Vec::new(),
            }),
        }
    }

    /// What the `role` upstream does on `turn` (from 1) of conversation index
    /// `conversation` in `run`: `None` means answer normally. The same for
    /// every attempt at that turn.
    pub fn action(
        &self,
        run: u32,
        conversation: usize,
        turn: usize,
        role: Role,
    ) -> Option<FaultAction> {
        match &self.schedule {
            Schedule::Script(script) => match role {
                Role::Primary => script.get(conversation)?.clone(),
                Role::Fallback => None,
            },
            // Case scripts are read with `case_script`, by the upstream.
            Schedule::Cases(_) => None,
            Schedule::Profile(s) => {
                // A failure on the turn wins over a degradation.
                if let Some(mode) = s.mode_at(run, conversation, turn, role) {
                    if let Some(action) = action_for(&s.profile, mode) {
                        return Some(action);
                    }
                }
                let n_turns = *s.turns_per_conversation.get(conversation)?;
                s.profile
                    .degrade
                    .as_ref()?
                    .draw(s.master_seed, run, conversation, turn, n_turns, role)
                    .map(FaultAction::Degrade)
            }
        }
    }
}

/// The profile mode a scripted action stands for; `None` for a
/// [`FaultAction::BodyCut`] and for errors no profile mode sends.
fn action_mode(action: &FaultAction) -> Option<FaultMode> {
    match action {
        FaultAction::Timeout { .. } => Some(FaultMode::Timeout),
        FaultAction::Error(e) if e.kind == ErrorKind::RateLimit => Some(FaultMode::RateLimit),
        FaultAction::Error(_) => Some(FaultMode::ApiError),
        FaultAction::BodyCut { .. } | FaultAction::Degrade(_) => None,
    }
}

/// The fully resolved action of `mode` under `profile`, if the profile has
/// the mode.
pub fn action_for(profile: &FaultProfile, mode: FaultMode) -> Option<FaultAction> {
    match mode {
        FaultMode::Timeout => profile
            .timeout
            .as_ref()
            .map(|t| FaultAction::Timeout { hold: t.hold }),
        FaultMode::ApiError => profile.api_error.as_ref().map(|a| {
            FaultAction::Error(ErrorSpec::new(
                a.status,
                ErrorKind::Server,
                a.message.clone(),
            ))
        }),
        FaultMode::RateLimit => profile.rate_limit.as_ref().map(|r| {
            FaultAction::Error(
                ErrorSpec::new(r.status, ErrorKind::RateLimit, r.message.clone())
                    .with_retry_after(r.retry_after),
            )
        }),
    }
}

#[cfg(test)]
mod tests;
