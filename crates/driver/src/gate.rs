//! How many requests the driver may have in flight at once, so that a run
//! at thousands of conversations never fails on the harness's own side
//! ("Too many open files") and reports a gateway's errors, not its own.
//!
//! Every request in flight holds sockets in this process: the driver's
//! connection to the system and, for a built-in system, the proxy's end of
//! it, the proxy's connections to both upstreams (one may sit idle in its
//! pool while the other is used) and the upstreams' ends of them. An
//! external gateway runs in its own process, so only the driver's
//! connection and the upstream's end of the gateway's connection count
//! here. Connections outlive their request in the pools of the driver and
//! of each proxy, and each system's pools can grow to the number of
//! requests that system had in flight at once, which the gate bounds by
//! its cap; so one slot of the cap costs the sum over the run's systems.
//! [`GatePlan::new`] divides the open-file limit (raised to its hard
//! maximum first, as far as the system allows) by that sum, after a
//! reserve for listeners, files and connections closing. (Measured: with
//! one system's cost per slot, 10,000 conversations through both built-in
//! systems reached the limit of 20,000 and failed with EMFILE.)
//!
//! Memory is bounded the same way: a request in flight holds buffers in
//! this process (each connection end's read and write buffers, the
//! client's dispatch channel, the request as the driver, the proxy and the
//! upstream each hold it), measured at about [`MEMORY_PER_BUILTIN_REQUEST`]
//! through a built-in system (10,000 conversations: 114 MB more at 1,478
//! requests in flight than at 728, both built-in systems) and
//! [`MEMORY_PER_GATEWAY_REQUEST`] through an external gateway (only the
//! driver's and the upstreams' ends are here), so the cap is also at most
//! [`MEMORY_BUDGET`] divided by the sum over the systems
//! ([`memory_slot`]). `--max-in-flight` replaces the memory term (the
//! descriptor term still applies).
//!
//! When `--concurrency` fits, the gate never blocks; when it does not, the
//! conversations still all start, and each request waits for room before
//! it is sent. The plan is printed before the run, and the report states
//! the limit, the cap and the peak of requests actually in flight.

use cb_client::SystemKind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Descriptors one request through a built-in system holds in this process
/// at most: client and server ends of the driver's connection, of the
/// proxy's connection to the primary and of its connection to the fallback.
pub const BUILTIN_COST: u32 = 6;

/// Descriptors one request through an external gateway holds in this
/// process: the driver's connection and the upstream's end of the
/// gateway's connection.
pub const GATEWAY_COST: u32 = 2;

/// Descriptors kept out of the budget whatever the limit: listeners, the
/// report files, the judge, standard streams.
pub const FIXED_RESERVE: u64 = 256;

/// Share of the limit also kept out: connections closing, idle ones a
/// gateway keeps open to the upstreams.
pub const RESERVE_SHARE: f64 = 0.1;

/// Memory one request through the built-in systems holds in this
/// process, bytes, both systems' pools included (measured with both; see
/// the module documentation).
pub const MEMORY_PER_BUILTIN_REQUEST: u64 = 160 * 1024;

/// Memory one request through an external gateway holds in this process,
/// bytes: the driver's connection end (a bare hyper connection: its
/// dispatch channel, 8 KiB write buffer and 4 KiB read buffer, see
/// `cb_client::plain`) and the upstream's (hyper's 8 KiB write buffer and 8 KiB
/// read buffer), their tasks, and the upstream's record of the request.
/// Measured (`scripts/scale-memory --max-in-flight 8000`: 10,000
/// conversations in fast-forward against the `proxy` command in its own
/// process): 8,000 requests in flight at 352,604 KB of peak RSS, about
/// 100 MB of it before the first request, so about 32 KB a request; 36 KiB
/// keeps a margin for runs that time differently.
pub const MEMORY_PER_GATEWAY_REQUEST: u64 = 36 * 1024;

/// Memory the requests in flight may hold together when a built-in
/// system runs, bytes: with the rows a live run of 10,000 conversations
/// keeps, the process stays under 500 MB.
pub const MEMORY_BUDGET: u64 = 64 * 1024 * 1024;

/// The same room when only external gateways run, bytes: 8,192 requests
/// at [`MEMORY_PER_GATEWAY_REQUEST`], which with a dataset of 10,000
/// conversations (about 100 MB before the first request) keeps the
/// process under 400 MB (measured: 352,604 KB at 8,000 in flight).
pub const GATEWAY_MEMORY_BUDGET: u64 = 288 * 1024 * 1024;

/// The memory room of a run over systems of `kinds`: [`MEMORY_BUDGET`]
/// with a built-in system, [`GATEWAY_MEMORY_BUDGET`] with external
/// gateways alone.
pub fn memory_budget(kinds: &[SystemKind]) -> u64 {
    if kinds.iter().any(|k| matches!(k, SystemKind::Builtin(_))) {
        MEMORY_BUDGET
    } else {
        GATEWAY_MEMORY_BUDGET
    }
}

/// Which limit set the cap of requests in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The open-file limit.
    OpenFiles,
    /// The memory budget ([`MEMORY_BUDGET`]).
    Memory,
    /// `--max-in-flight`.
    MaxInFlight,
}

impl Bound {
    /// What the cap comes from, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Bound::OpenFiles => "the open-file limit",
            Bound::Memory => "the memory budget for requests in flight",
            Bound::MaxInFlight => "--max-in-flight",
        }
    }
}

/// The memory one slot of the cap costs, bytes: as with descriptors, each
/// system's pools can grow to the cap, so the systems' costs add up; the
/// built-in systems run as a pair, and their measured cost is the pair's.
pub fn memory_slot(kinds: &[SystemKind]) -> u64 {
    let builtin = kinds.iter().any(|k| matches!(k, SystemKind::Builtin(_)));
    let gateways = kinds.iter().filter(|k| **k == SystemKind::Gateway).count() as u64;
    let cost =
        u64::from(builtin) * MEMORY_PER_BUILTIN_REQUEST + gateways * MEMORY_PER_GATEWAY_REQUEST;
    cost.max(MEMORY_PER_GATEWAY_REQUEST)
}

/// The descriptors a request through a system of `kind` costs.
pub fn cost(kind: SystemKind) -> u32 {
    match kind {
        SystemKind::Builtin(_) => BUILTIN_COST,
        SystemKind::Gateway => GATEWAY_COST,
    }
}

/// Why no request can be sent at all.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The open-file limit leaves no room for one request.
    #[error(
        "the open-file limit of this process is {limit} descriptors, too few for even one request \
         (one needs {cost}, after a reserve of {reserve}); raise it with `ulimit -n 4096` before the run"
    )]
    TooLow {
        /// The limit.
        limit: u64,
        /// Descriptors of one slot: a request through each system.
        cost: u32,
        /// Descriptors kept out of the budget.
        reserve: u64,
    },
}

/// What the gate allows, decided before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatePlan {
    /// The open-file limit the plan was made for (`None`: the platform has
    /// none the harness can read, and only memory or `--max-in-flight` caps).
    pub open_file_limit: Option<u64>,
    /// Descriptors the requests in flight may hold together.
    pub budget: u64,
    /// Requests in flight the limits allow (a slot of the descriptor budget
    /// costs the sum over the systems, see the module documentation), when
    /// that is fewer than `--concurrency`; `None` when every conversation
    /// can have its request in flight at once.
    pub cap: Option<usize>,
    /// Which limit set the cap (`None` with no cap).
    pub bound: Option<Bound>,
    /// The memory room of the run's systems ([`memory_budget`]), bytes.
    pub memory_budget: u64,
}

impl GatePlan {
    /// The plan for `concurrency` conversations over systems of `kinds`
    /// under an open-file limit of `limit`, with `--max-in-flight` as
    /// `max_in_flight` (in place of the memory budget).
    ///
    /// # Errors
    /// When the limit leaves no room for one request.
    pub fn new(
        concurrency: usize,
        kinds: &[SystemKind],
        limit: Option<u64>,
        max_in_flight: Option<usize>,
    ) -> Result<Self, GateError> {
        let (budget, files) = match limit {
            None => (u64::from(u32::MAX), None),
            Some(limit) => {
                let (budget, room) = Self::file_room(kinds, limit)?;
                (budget, Some(room))
            }
        };
        let memory = match max_in_flight {
            Some(n) => (n as u64, Bound::MaxInFlight),
            None => (
                (memory_budget(kinds) / memory_slot(kinds)).max(1),
                Bound::Memory,
            ),
        };
        let (room, bound) = match files {
            Some(files) if files < memory.0 => (files, Bound::OpenFiles),
            _ => memory,
        };
        let capped = concurrency as u64 > room;
        Ok(GatePlan {
            open_file_limit: limit,
            budget: budget.min(u64::from(u32::MAX)),
            cap: capped.then(|| usize::try_from(room).unwrap_or(usize::MAX)),
            bound: capped.then_some(bound),
            memory_budget: memory_budget(kinds),
        })
    }

    /// The descriptor budget under `limit` and the requests it has room
    /// for.
    fn file_room(kinds: &[SystemKind], limit: u64) -> Result<(u64, u64), GateError> {
        let slot: u32 = kinds
            .iter()
            .map(|k| cost(*k))
            .sum::<u32>()
            .max(GATEWAY_COST);
        // The share is of a descriptor count: far below 2^52, exact in f64.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let reserve = FIXED_RESERVE + (limit as f64 * RESERVE_SHARE) as u64;
        let budget = limit.saturating_sub(reserve);
        let room = budget / u64::from(slot);
        if room == 0 {
            return Err(GateError::TooLow {
                limit,
                cost: slot,
                reserve,
            });
        }
        Ok((budget, room))
    }

    /// The line printed before a capped run, `None` when nothing is capped.
    pub fn describe(&self, concurrency: usize) -> Option<String> {
        let (Some(cap), Some(bound)) = (self.cap, self.bound) else {
            return None;
        };
        let why = match bound {
            Bound::OpenFiles => format!(
                "the open-file limit ({}, `ulimit -n`) allows about {cap} requests in flight at once \
                 (each system's connection pools can grow to the requests it has in flight: {BUILTIN_COST} \
                 descriptors a request through a built-in system, {GATEWAY_COST} through an external gateway); \
                 raise the limit to lift the cap",
                self.open_file_limit.unwrap_or_default()
            ),
            Bound::Memory => format!(
                "the memory budget for requests in flight ({} MiB: about {} KiB a request for the built-in \
                 systems and {} KiB for each external gateway, summed over the systems) allows {cap} at once; \
                 `--max-in-flight N` sets another cap (the open-file limit still applies)",
                self.memory_budget >> 20,
                MEMORY_PER_BUILTIN_REQUEST >> 10,
                MEMORY_PER_GATEWAY_REQUEST >> 10
            ),
            Bound::MaxInFlight => format!("--max-in-flight allows {cap} requests in flight at once"),
        };
        Some(format!(
            "note: {why}; all {concurrency} conversations run, and a request waits for room before it is sent"
        ))
    }
}

/// The open-file limit of this process, raised first to its hard maximum
/// (as far as the system lets an unprivileged process). `None` where the
/// platform has no such limit or it cannot be read.
pub fn open_file_limit() -> Option<u64> {
    let raised = rlimit::increase_nofile_limit(u64::MAX).ok();
    raised.or_else(|| rlimit::Resource::NOFILE.get().ok().map(|(soft, _)| soft))
}

/// The gate itself: permits for requests in flight, and their count
/// with its peak.
#[derive(Debug)]
pub struct RequestGate {
    permits: Arc<Semaphore>,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

/// A request's room in the gate; dropping it gives the room back.
#[derive(Debug)]
pub struct Pass<'a> {
    gate: &'a RequestGate,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.gate.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl RequestGate {
    /// A gate with the room of `plan`: its cap of requests in flight, or
    /// no limit.
    pub fn new(plan: &GatePlan) -> Self {
        let permits = plan
            .cap
            .unwrap_or(Semaphore::MAX_PERMITS)
            .min(Semaphore::MAX_PERMITS);
        RequestGate {
            permits: Arc::new(Semaphore::new(permits)),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Waits for room for one request (the cap already counts every
    /// system's descriptors and memory per request).
    pub async fn enter(&self) -> Pass<'_> {
        // The semaphore is never closed, so acquiring fails only if it were.
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok();
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(now, Ordering::Relaxed);
        Pass {
            gate: self,
            _permit: permit,
        }
    }

    /// The most requests that were in flight at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_base::reference::ProxyMode;

    const BUILTIN: SystemKind = SystemKind::Builtin(ProxyMode::History);

    #[test]
    fn a_run_that_fits_is_not_capped() {
        let plan = GatePlan::new(100, &[BUILTIN, BUILTIN], Some(20_000), None).unwrap();
        assert_eq!(plan.cap, None);
        assert_eq!(plan.describe(100), None);
        // 20,000 less 256 and 10 %.
        assert_eq!(plan.budget, 17_744);
    }

    #[test]
    fn a_run_that_does_not_fit_is_capped_by_the_sum_over_its_systems() {
        // Both built-in systems: each one's pools can reach the cap.
        let both = [BUILTIN, SystemKind::Builtin(ProxyMode::Stateless)];
        let plan = GatePlan::new(10_000, &both, Some(20_000), Some(5_000)).unwrap();
        assert_eq!(plan.cap, Some(17_744 / 12));
        let line = plan.describe(10_000).unwrap();
        assert!(
            line.contains("20000") && line.contains("1478") && line.contains("ulimit -n"),
            "{line}"
        );
        let plan = GatePlan::new(
            10_000,
            &[BUILTIN, SystemKind::Gateway],
            Some(20_000),
            Some(5_000),
        )
        .unwrap();
        assert_eq!(plan.cap, Some(17_744 / 8));
        // Gateways alone cost less each.
        let plan =
            GatePlan::new(10_000, &[SystemKind::Gateway], Some(20_000), Some(10_000)).unwrap();
        assert_eq!(plan.cap, Some(8_872));
    }

    #[test]
    fn a_limit_with_no_room_is_an_error_naming_ulimit() {
        let err = GatePlan::new(10, &[BUILTIN], Some(260), None).unwrap_err();
        assert!(err.to_string().contains("ulimit -n"), "{err}");
        assert!(GatePlan::new(10, &[BUILTIN], Some(300), None).is_ok());
    }

    #[test]
    fn no_limit_caps_nothing_but_the_flag() {
        let plan = GatePlan::new(1_000_000, &[BUILTIN], None, Some(2_000_000)).unwrap();
        assert_eq!(plan.cap, None);
        let plan = GatePlan::new(1_000_000, &[BUILTIN], None, Some(300)).unwrap();
        assert_eq!(
            (plan.cap, plan.bound),
            (Some(300), Some(Bound::MaxInFlight))
        );
        assert!(plan
            .describe(1_000_000)
            .unwrap()
            .contains("--max-in-flight"));
    }

    #[test]
    fn the_memory_budget_caps_by_the_sum_over_the_systems() {
        let builtin = (MEMORY_BUDGET / MEMORY_PER_BUILTIN_REQUEST) as usize;
        let both = [BUILTIN, SystemKind::Builtin(ProxyMode::Stateless)];
        let plan = GatePlan::new(10_000, &both, None, None).unwrap();
        assert_eq!((plan.cap, plan.bound), (Some(builtin), Some(Bound::Memory)));
        assert_eq!(builtin, 409);
        let mixed =
            (MEMORY_BUDGET / (MEMORY_PER_BUILTIN_REQUEST + MEMORY_PER_GATEWAY_REQUEST)) as usize;
        let plan = GatePlan::new(10_000, &[BUILTIN, SystemKind::Gateway], None, None).unwrap();
        assert_eq!((plan.cap, plan.bound), (Some(mixed), Some(Bound::Memory)));
        let line = plan.describe(10_000).unwrap();
        assert!(
            line.contains("--max-in-flight") && line.contains("MiB"),
            "{line}"
        );
        let gateway = (GATEWAY_MEMORY_BUDGET / MEMORY_PER_GATEWAY_REQUEST) as usize;
        assert_eq!(gateway, 8192);
        let plan = GatePlan::new(10_000, &[SystemKind::Gateway], Some(1_000_000), None).unwrap();
        assert_eq!((plan.cap, plan.bound), (Some(gateway), Some(Bound::Memory)));
        let two = [SystemKind::Gateway, SystemKind::Gateway];
        let plan = GatePlan::new(10_000, &two, Some(1_000_000), None).unwrap();
        assert_eq!(plan.cap, Some(gateway / 2));
        // Below the budget's room nothing is capped; the descriptors bind
        // first when they allow less.
        assert_eq!(
            GatePlan::new(builtin, &[BUILTIN], None, None).unwrap().cap,
            None
        );
        let plan = GatePlan::new(10_000, &[BUILTIN], Some(2_000), None).unwrap();
        assert_eq!(plan.bound, Some(Bound::OpenFiles));
    }

    #[tokio::test(start_paused = true)]
    async fn the_gate_holds_requests_beyond_its_room_and_counts_the_peak() {
        let plan = GatePlan {
            open_file_limit: Some(1000),
            budget: 12,
            cap: Some(2),
            bound: Some(Bound::MaxInFlight),
            memory_budget: MEMORY_BUDGET,
        };
        let gate = RequestGate::new(&plan);
        let a = gate.enter().await;
        let b = gate.enter().await;
        let third = tokio::time::timeout(std::time::Duration::from_millis(50), gate.enter()).await;
        assert!(third.is_err(), "a third request must wait for room");
        drop(a);
        let c = tokio::time::timeout(std::time::Duration::from_millis(50), gate.enter())
            .await
            .expect("room came back");
        assert_eq!(gate.peak(), 2);
        drop((b, c));
        assert_eq!(gate.in_flight.load(Ordering::Relaxed), 0);
    }
}
