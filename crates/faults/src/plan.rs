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
use rand::seq::SliceRandom;

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
}

impl ProfileSchedule {
    /// The fault mode of every conversation of `run`: balanced by weight,
    /// then shuffled with the run's seed.
    pub fn modes(&self, run: u32) -> Vec<FaultMode> {
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
    /// of it at `role`. One shuffle per call: cheap (N elements) and keeps
    /// the plan immutable.
    fn mode_at(&self, run: u32, conversation: usize, turn: usize, role: Role) -> Option<FaultMode> {
        let n_turns = *self.turns_per_conversation.get(conversation)?;
        if role != self.profile.upstream || !self.profile.turns.includes(turn, n_turns) {
            return None;
        }
        self.modes(run).get(conversation).copied()
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
                let mode = s.modes(run).get(conversation).copied()?;
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
mod tests {
    use super::*;
    use std::time::Duration;

    fn paper() -> FaultProfile {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join(crate::DEFAULT_PROFILE);
        FaultProfile::load(&path).unwrap()
    }

    fn plan(seed: u64) -> FaultPlan {
        let turns = (0..150).map(|i| 7 + i % 5).collect();
        FaultPlan::new(paper(), seed, turns)
    }

    fn count(s: &[FaultMode], m: FaultMode) -> usize {
        s.iter().filter(|x| **x == m).count()
    }

    #[test]
    fn a_scripted_plan_faults_exactly_what_it_says() {
        let hold = Duration::from_secs(3);
        let script = vec![None, Some(FaultAction::Timeout { hold })];
        let p = FaultPlan::scripted(script);
        assert_eq!(p.conversations(), 2);
        for turn in [1, 5] {
            assert_eq!(p.action(1, 0, turn, Role::Primary), None);
            assert_eq!(
                p.action(3, 1, turn, Role::Primary),
                Some(FaultAction::Timeout { hold })
            );
            assert_eq!(p.action(1, 1, turn, Role::Fallback), None);
        }
        assert_eq!(p.event(1, 0).map(|e| e.mode), None);
        assert_eq!(p.event(1, 1).map(|e| e.mode), Some(FaultMode::Timeout));
        assert_eq!(p.action(1, 2, 1, Role::Primary), None);
    }

    #[test]
    fn balanced_within_each_run() {
        let p = plan(42);
        for run in 1..=5 {
            let s: Vec<FaultMode> = (0..150)
                .filter_map(|c| p.event(run, c).map(|e| e.mode))
                .collect();
            assert_eq!(s.len(), 150);
            for m in FaultMode::ALL {
                assert_eq!(count(&s, m), 50, "run {run} {m:?}");
            }
        }
    }

    #[test]
    fn differs_between_runs_and_reproducible() {
        let a = plan(42);
        assert_ne!(a.schedule(1), a.schedule(2));
        assert_eq!(a.schedule(1), plan(42).schedule(1));
        assert_ne!(a.schedule(1), plan(43).schedule(1));
        // Two plans from the same seed agree on every action (as two systems
        // of one run see it).
        let b = plan(42);
        for c in 0..150 {
            for t in 1..=11 {
                assert_eq!(
                    a.action(3, c, t, Role::Primary),
                    b.action(3, c, t, Role::Primary)
                );
            }
        }
    }

    #[test]
    fn only_final_turn_of_primary_is_faulted() {
        let p = plan(7);
        let n = 7; // conversation 0 has 7 turns
        for t in 1..n {
            assert_eq!(p.action(1, 0, t, Role::Primary), None);
        }
        let action = p.action(1, 0, n, Role::Primary).unwrap();
        assert_eq!(action_mode(&action), p.event(1, 0).map(|e| e.mode));
        assert_eq!(p.action(1, 0, n, Role::Fallback), None);
        assert_eq!(p.action(1, 0, n + 1, Role::Primary), None);
        assert_eq!(p.action(1, 999, n, Role::Primary), None);
        assert_eq!(p.event(1, 999).map(|e| e.mode), None);
    }

    #[test]
    fn actions_carry_profile_parameters() {
        let p = paper();
        assert_eq!(
            action_for(&p, FaultMode::Timeout),
            Some(FaultAction::Timeout {
                hold: Duration::from_secs(30)
            })
        );
        let Some(FaultAction::Error(e)) = action_for(&p, FaultMode::ApiError) else {
            panic!("no api error")
        };
        assert_eq!(
            (e.status, e.kind, e.retry_after),
            (503, ErrorKind::Server, None)
        );
        let Some(FaultAction::Error(e)) = action_for(&p, FaultMode::RateLimit) else {
            panic!("no rate limit")
        };
        assert_eq!(
            (e.status, e.kind, e.retry_after),
            (429, ErrorKind::RateLimit, Some(Duration::from_secs(1)))
        );
    }

    #[test]
    fn largest_remainder_apportionment() {
        assert_eq!(apportion(150, &[1.0, 1.0, 1.0]), vec![50, 50, 50]);
        assert_eq!(apportion(10, &[1.0, 1.0, 1.0]), vec![4, 3, 3]);
        assert_eq!(apportion(10, &[2.0, 1.0, 0.0]), vec![7, 3, 0]);
        assert_eq!(apportion(7, &[0.0, 0.0, 1.0]), vec![0, 0, 7]);
        assert_eq!(apportion(5, &[0.0, 0.0, 0.0]), vec![0, 0, 0]);
        let c = apportion(101, &[0.2, 0.3, 0.5]);
        assert_eq!(c.iter().sum::<usize>(), 101);
    }

    #[test]
    fn a_turn_list_faults_each_listed_turn_and_the_first_is_the_event() {
        let p = FaultProfile::parse("turns = [2, 4, 6]\n[modes.api_error]\n", "t.toml").unwrap();
        let plan = FaultPlan::new(p, 1, vec![5, 3, 1]);
        for turn in [2, 4] {
            assert!(
                plan.action(1, 0, turn, Role::Primary).is_some(),
                "turn {turn}"
            );
        }
        for turn in [1, 3, 5, 6] {
            assert!(
                plan.action(1, 0, turn, Role::Primary).is_none(),
                "turn {turn}"
            );
        }
        assert!(plan.action(1, 0, 2, Role::Fallback).is_none());
        let event = plan.event(1, 0).unwrap();
        assert_eq!(
            event,
            PlannedEvent {
                turn: 2,
                mode: FaultMode::ApiError,
                role: Role::Primary
            }
        );
        assert_eq!(plan.faulted_turns(1, 0), vec![2, 4]);
        // Three turns: only turn 2 is within reach.
        assert_eq!(plan.event(1, 1).map(|e| e.turn), Some(2));
        assert_eq!(plan.faulted_turns(1, 1), vec![2]);
        assert!(plan.action(1, 1, 4, Role::Primary).is_none());
        // One turn: no listed turn occurs, so no event.
        assert_eq!(plan.event(1, 2), None);
        assert!(plan.faulted_turns(1, 2).is_empty());
        let reach = plan.check_reach().unwrap();
        assert_eq!((reach.with_event, reach.conversations), (2, 3));
    }

    #[test]
    fn final_events_are_the_last_turn_with_the_scheduled_mode() {
        let p = plan(5);
        for run in 1..=3 {
            for (c, mode) in p.schedule(run).into_iter().enumerate() {
                let n = 7 + (c % 5) as u32;
                let e = p.event(run, c).unwrap();
                assert_eq!((e.turn, e.mode, e.role), (n, mode, Role::Primary));
                assert_eq!(p.faulted_turns(run, c), vec![n]);
                assert_eq!(p.event(run, c).map(|e| e.mode), Some(e.mode));
            }
        }
        assert_eq!(p.event(1, 150), None);
        assert!(p.faulted_turns(1, 150).is_empty());
    }

    #[test]
    fn scripted_events_are_turn_one_at_the_primary() {
        let hold = Duration::from_secs(3);
        let p = FaultPlan::scripted(vec![
            None,
            Some(FaultAction::Timeout { hold }),
            Some(FaultAction::BodyCut { chunks: 2 }),
        ]);
        assert_eq!(p.event(1, 0), None);
        assert_eq!(
            p.event(1, 1),
            Some(PlannedEvent {
                turn: 1,
                mode: FaultMode::Timeout,
                role: Role::Primary
            })
        );
        assert_eq!(p.faulted_turns(1, 1), vec![1]);
        assert_eq!(p.event(1, 2), None, "a body cut is no profile mode");
        assert!(p.faulted_turns(1, 0).is_empty());
        assert_eq!(p.check_reach().unwrap().with_event, 1);
    }
}
