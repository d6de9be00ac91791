//! The quarantine rules as a pure state machine over all routes. The caller
//! passes the time, the round's evidence and the policy; the machine returns
//! its decisions and the log records, and reads no clock and does no I/O, so
//! two weeks of rounds replay in a unit test.
//!
//! One round, in order:
//! 1. a mode change is logged for every tracked quarantine;
//! 2. quarantines whose time is up end; a route whose last quarantine began
//!    `history_reset` ago (and is not quarantined) starts escalation over;
//! 3. the positive control, if any, says whether the filtering probe is weak;
//! 4. each route's evidence is scored, each probe on its own outcome: a
//!    route frozen as a whole (no probe got a reply, or pinning not
//!    honoured) changes nothing; a probe that got a transport error freezes
//!    only its own contracts. A round in which the route failed any contract
//!    extends the route's failing run (the per-contract runs are kept for
//!    the log); a round that failed nothing ends it when a contract of the
//!    run passed on a trusted probe, and leaves it as it was otherwise
//!    (undetermined, weak or frozen). A fully passing round extends the
//!    clean run, a round with a failure ends it; enough clean rounds lift a
//!    quarantine early;
//! 5. a route (not quarantined) whose failing run reached `failing_rounds`
//!    this round is quarantined, worst evidence first (most contracts failed
//!    during the run, then the longest run, then the route name), unless
//!    that would leave fewer than `min_healthy` routes in production: then
//!    it stays healthy and an alert names it, the contracts and the routes
//!    left. The routes in production are this round's routes (the routes
//!    listed this round; the control excepted) that are neither excluded
//!    by the reviewed or runtime lists nor quarantined; a frozen route
//!    counts, a route missing from the round's evidence does not (it is
//!    marked absent in the state).
//!
//! The control route is never scored (it is known to fail), and any release
//! clears the failing runs, as Envoy clears its consecutive-error counters on
//! un-ejection: a released route needs `failing_rounds` new failing rounds to
//! go back.
//!
//! Observe mode runs exactly the same rules and tracks the quarantines it
//! would impose (so "would release" and escalation mean what they will mean
//! under `--enforce`); only the ignore list leaves them out.

use super::clock::{human_span, Timestamp};
use super::control::{self, ControlCheck};
use super::evidence::{FreezeReason, ProbeKind, RouteEvidence};
use super::language::{next_language, Language};
use super::policy::{Mode, Policy};
use super::record::{LogRecord, RecordKind};
pub use super::score::RouteRound;
use super::score::{candidate, score, Candidate};
use super::state::{ClockKind, IgnoreOutputs, MachineState, Quarantine, RouteState, RouteStreak};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The quarantine state machine over all routes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    state: MachineState,
}

/// What one round decided, for the summary and the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundDecisions {
    /// The round number (1 for the first).
    pub round: u64,
    /// When it ran.
    pub time: Timestamp,
    /// Observe or enforce.
    pub mode: Mode,
    /// The positive control's verdict, when a control is configured.
    pub control: Option<ControlCheck>,
    /// Probes whose passes were not evidence of health this round.
    pub weak_probes: Vec<ProbeKind>,
    /// Per route in the evidence (the control included), what was scored.
    pub routes: Vec<RouteRound>,
    /// Every decision and state change, in order: the log lines.
    pub records: Vec<LogRecord>,
}

impl RoundDecisions {
    /// The records of one kind.
    pub fn of_kind(&self, kind: RecordKind) -> impl Iterator<Item = &LogRecord> {
        self.records.iter().filter(move |r| r.kind == kind)
    }

    /// Capacity alerts: quarantines a person must decide on.
    pub fn alerts(&self) -> impl Iterator<Item = &LogRecord> {
        self.of_kind(RecordKind::CapacityAlert)
    }
}

/// Why a manual release was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseError {
    /// The route was never seen.
    #[error("route `{0}` is unknown to the canary state; check the name against the summary's route column")]
    UnknownRoute(String),
    /// The route is not quarantined.
    #[error("route `{0}` is not quarantined; there is nothing to release")]
    NotQuarantined(String),
}

impl Machine {
    /// A machine with no history.
    pub fn new() -> Self {
        Machine::default()
    }

    /// A machine continuing from saved state.
    pub fn from_state(state: MachineState) -> Self {
        Machine { state }
    }

    /// The state, to save after a round.
    pub fn state(&self) -> &MachineState {
        &self.state
    }

    /// Records the clock the rounds run on and the ignore list the canary
    /// writes, so that `canary release` reads them from the state.
    pub fn set_context(&mut self, clock: ClockKind, outputs: IgnoreOutputs) {
        self.state.clock = Some(clock);
        self.state.outputs = Some(outputs);
    }

    /// One route's state.
    pub fn route(&self, route: &str) -> Option<&RouteState> {
        self.state.routes.get(route)
    }

    /// The language to probe `route` with in the next round (a language that
    /// failed last round is asked again).
    pub fn language_for(&self, route: &str) -> Language {
        let memory = self
            .state
            .routes
            .get(route)
            .map(|r| r.language.clone())
            .unwrap_or_default();
        next_language(self.state.rounds + 1, &memory)
    }

    /// [`Machine::language_for`] on the rotation `rotation` (`--languages`;
    /// empty: the built-in rotation): a re-check first, else round `n`
    /// asks `rotation[n % len]`.
    pub fn language_in(&self, route: &str, rotation: &[Language]) -> Language {
        let recheck = self
            .state
            .routes
            .get(route)
            .and_then(|r| r.language.recheck);
        match (recheck, rotation.len()) {
            (Some(language), _) => language,
            (None, 0) => self.language_for(route),
            (None, len) => {
                let round = self.state.rounds + 1;
                rotation[usize::try_from(round % len as u64).unwrap_or(0)]
            }
        }
    }

    /// Quarantines still running at `now`, tracked in either mode, by route.
    pub fn active_quarantines(&self, now: Timestamp) -> Vec<(&str, &Quarantine)> {
        self.state
            .routes
            .iter()
            .filter_map(|(name, r)| r.quarantine.as_ref().map(|q| (name.as_str(), q)))
            .filter(|(_, q)| q.until > now)
            .collect()
    }

    /// A person lifts `route`'s quarantine. The escalation history stays.
    ///
    /// # Errors
    /// The route is unknown or not quarantined.
    pub fn release(&mut self, route: &str, now: Timestamp) -> Result<LogRecord, ReleaseError> {
        let mode = self.state.mode;
        let round = self.state.rounds;
        let state = self
            .state
            .routes
            .get_mut(route)
            .ok_or_else(|| ReleaseError::UnknownRoute(route.to_string()))?;
        let quarantine = state
            .quarantine
            .clone()
            .ok_or_else(|| ReleaseError::NotQuarantined(route.to_string()))?;
        lift(state);
        let mut record = LogRecord::new(
            now,
            round,
            route,
            RecordKind::ManualRelease,
            mode,
            format!(
                "released by a person; the quarantine for {} had {} left",
                quarantine.contract,
                human_span(quarantine.until.since(now))
            ),
        );
        record.contract = Some(quarantine.contract);
        Ok(record)
    }

    /// Runs one round at `now` on `evidence` (one entry per probed route; a
    /// later duplicate of a route is ignored), with no route excluded.
    pub fn round(
        &mut self,
        now: Timestamp,
        evidence: &[RouteEvidence],
        policy: &Policy,
    ) -> RoundDecisions {
        self.round_excluding(now, evidence, policy, &BTreeSet::new())
    }

    /// [`Machine::round`] with `excluded` the routes the reviewed and
    /// runtime lists keep out of production this round: still probed and
    /// scored, but never counted by the capacity floor.
    pub fn round_excluding(
        &mut self,
        now: Timestamp,
        evidence: &[RouteEvidence],
        policy: &Policy,
        excluded: &BTreeSet<String>,
    ) -> RoundDecisions {
        let mode = policy.mode();
        self.state.rounds += 1;
        self.state.last_round_at = Some(now);
        let round = self.state.rounds;
        let mut out = RoundDecisions {
            round,
            time: now,
            mode,
            control: None,
            weak_probes: Vec::new(),
            routes: Vec::new(),
            records: Vec::new(),
        };
        let record = |route: &str, kind: RecordKind, text: String| {
            LogRecord::new(now, round, route, kind, mode, text)
        };

        self.note_mode_change(mode, &mut out, &record);
        self.expire(now, policy, &mut out, &record);

        let mut by_route: BTreeMap<&str, &RouteEvidence> = BTreeMap::new();
        for e in evidence {
            by_route.entry(e.route.as_str()).or_insert(e);
        }
        for (name, state) in self.state.routes.iter_mut() {
            state.absent = !by_route.contains_key(name.as_str());
        }

        if let Some(name) = &policy.control {
            let check = control::check(name, by_route.get(name.as_str()).copied());
            if check.probe_is_weak() {
                out.weak_probes.push(check.probe);
                let mut r = record(name, RecordKind::ProbeWeak, check.evidence.clone());
                r.probe = Some(check.probe);
                out.records.push(r);
            }
            out.control = Some(check);
        }

        let mut candidates = Vec::new();
        for (&name, &e) in &by_route {
            if policy.is_control(name) {
                out.routes.push(RouteRound {
                    route: name.to_string(),
                    control: true,
                    frozen: e.freeze_reason(),
                    verdicts: e.verdicts(&[]),
                    clean: false,
                });
                continue;
            }
            let state = self.state.routes.entry(name.to_string()).or_default();
            let scored = score(state, e, &out.weak_probes, policy);
            if let Some(reason) = &scored.frozen {
                let kind = match reason {
                    FreezeReason::Transport(_) => RecordKind::Frozen,
                    FreezeReason::PinningNotHonoured { .. } => RecordKind::PinningNotHonoured,
                };
                out.records.push(record(name, kind, reason.to_string()));
            } else if let (true, Some(error)) = (e.partly_frozen(), &e.transport_error) {
                let probes: Vec<String> = e.frozen_probes.iter().map(|p| p.to_string()).collect();
                let mut r = record(
                    name,
                    RecordKind::Frozen,
                    format!(
                        "transport error ({}) on the {} probe(s): {}; only their contracts are \
                         frozen, the other probes were scored",
                        error.kind,
                        probes.join(", "),
                        error.detail
                    ),
                );
                r.probe = e.frozen_probes.first().copied();
                out.records.push(r);
            }
            if state.quarantine.is_some() && state.clean_rounds >= policy.clean_rounds() {
                let contract = state.quarantine.as_ref().map(|q| q.contract);
                lift(state);
                let mut r = record(
                    name,
                    RecordKind::EarlyRelease,
                    format!("{} consecutive fully passing rounds", policy.clean_rounds()),
                );
                r.contract = contract;
                out.records.push(r);
            }
            if state.quarantine.is_none() {
                candidates.extend(candidate(name, state, &scored, policy));
            }
            out.routes.push(scored);
        }

        self.decide(
            now, candidates, &by_route, excluded, policy, &mut out, &record,
        );
        out
    }

    fn note_mode_change(
        &mut self,
        mode: Mode,
        out: &mut RoundDecisions,
        record: &impl Fn(&str, RecordKind, String) -> LogRecord,
    ) {
        if mode == self.state.mode {
            return;
        }
        for (name, state) in &self.state.routes {
            if let Some(q) = &state.quarantine {
                let text = match mode {
                    Mode::Enforce => "the tracked quarantine is now enforced",
                    Mode::Observe => "the quarantine is no longer enforced (observe mode)",
                };
                let mut r = record(name, RecordKind::ModeChange, text.to_string());
                r.contract = Some(q.contract);
                r.until = Some(q.until);
                out.records.push(r);
            }
        }
        self.state.mode = mode;
    }

    fn expire(
        &mut self,
        now: Timestamp,
        policy: &Policy,
        out: &mut RoundDecisions,
        record: &impl Fn(&str, RecordKind, String) -> LogRecord,
    ) {
        for (name, state) in self.state.routes.iter_mut() {
            if let Some(q) = state.quarantine.clone() {
                if q.until <= now {
                    lift(state);
                    let mut r = record(
                        name,
                        RecordKind::Expiry,
                        format!("quarantine step {} ran its full length", q.step),
                    );
                    r.contract = Some(q.contract);
                    out.records.push(r);
                }
            }
            if let (None, Some(last)) = (&state.quarantine, state.last_quarantine_at) {
                if state.quarantines > 0 && now.since(last) >= policy.history_reset {
                    let text = format!(
                        "{} without a new quarantine: the next one lasts {}",
                        human_span(policy.history_reset),
                        human_span(policy.durations.first)
                    );
                    state.quarantines = 0;
                    out.records
                        .push(record(name, RecordKind::HistoryReset, text));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn decide(
        &mut self,
        now: Timestamp,
        mut candidates: Vec<Candidate>,
        by_route: &BTreeMap<&str, &RouteEvidence>,
        excluded: &BTreeSet<String>,
        policy: &Policy,
        out: &mut RoundDecisions,
        record: &impl Fn(&str, RecordKind, String) -> LogRecord,
    ) {
        // Worst evidence first: most contracts failed during the run, then
        // the longest run, then the route name (for a stable order).
        candidates.sort_by(|a, b| {
            b.contracts
                .len()
                .cmp(&a.contracts.len())
                .then(b.rounds.cmp(&a.rounds))
                .then(a.route.cmp(&b.route))
        });
        let mut healthy: BTreeSet<&str> = by_route
            .keys()
            .copied()
            .filter(|name| !policy.is_control(name))
            .filter(|name| !excluded.contains(*name))
            .filter(|name| {
                self.state
                    .routes
                    .get(*name)
                    .is_some_and(|r| r.quarantine.is_none())
            })
            .collect();
        for c in candidates {
            let left: Vec<String> = healthy
                .iter()
                .filter(|n| **n != c.route)
                .map(|n| n.to_string())
                .collect();
            // A route already out of production (excluded) takes no capacity.
            let in_production = healthy.contains(c.route.as_str());
            if in_production && left.len() < policy.min_healthy {
                let mut r = record(
                    &c.route,
                    RecordKind::CapacityAlert,
                    format!(
                        "quarantining it for {} would leave {} route(s) in production, below the \
                         floor of {}; not applied, a person must decide. Evidence: {}",
                        c.contracts_text(),
                        left.len(),
                        policy.min_healthy,
                        c.evidence
                    ),
                );
                r.contract = Some(c.contract);
                r.healthy_routes = left;
                out.records.push(r);
                continue;
            }
            let Some(state) = self.state.routes.get_mut(&c.route) else {
                continue;
            };
            let step = state.quarantines + 1;
            let length = policy.durations.for_previous(state.quarantines);
            let until = now.plus(length);
            state.quarantine = Some(Quarantine {
                contract: c.contract,
                contracts: c.contracts.clone(),
                since: now,
                until,
                step,
                decided_in: out.mode,
                evidence: c.evidence.clone(),
            });
            state.quarantines = step;
            state.last_quarantine_at = Some(now);
            state.clean_rounds = 0;
            healthy.remove(c.route.as_str());
            let mut r = record(
                &c.route,
                RecordKind::Quarantine,
                format!(
                    "failed {} in {} consecutive rounds ({}); quarantine step {step} for {}",
                    c.contracts_text(),
                    c.rounds,
                    c.evidence,
                    human_span(length)
                ),
            );
            r.contract = Some(c.contract);
            r.until = Some(until);
            out.records.push(r);
        }
    }
}

/// Ends a quarantine and the runs that led to it, as after any release.
fn lift(state: &mut RouteState) {
    state.quarantine = None;
    state.failing.clear();
    state.streak = RouteStreak::default();
    state.clean_rounds = 0;
}
