//! The times of the catalogue, as parameters: the full profile uses the
//! numbers of the issue (a first token after 20 s, a 30 s stall, a
//! 60 s flap, ...), the fast one (`--fast`) the same shapes in seconds, so
//! the whole catalogue runs in about a minute per system. The bounds the
//! user sets on a total failure (`both-fail`) are kept beside them.

use serde::Serialize;
use std::time::Duration;

/// Which set of times the catalogue runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// The numbers.
    Full,
    /// The same cases in seconds (`--fast`).
    Fast,
}

/// Every time a case uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Which profile these are.
    pub profile: Profile,
    /// The bound of a case that sets none of its own (a request not
    /// answered by then is a hang).
    pub default_bound: Duration,
    /// `Retry-After` of `429-retry-after`.
    pub retry_after: Duration,
    /// How much earlier than `Retry-After` a retry may come and still
    /// count as honouring it (clock and rounding slack).
    pub retry_after_slack: Duration,
    /// `429-persistent`: the window of the no-hammer check.
    pub hammer_window: Duration,
    /// When the first content token of `slow-first-token` comes.
    pub slow_first_token: Duration,
    /// Wall time under which `slow-first-token` counts as failed over on
    /// a time-to-first-token limit.
    pub ttft_failover_bound: Duration,
    /// Bound of `slow-first-token`.
    pub slow_first_token_bound: Duration,
    /// How long `stream-stall` goes silent.
    pub stall_silence: Duration,
    /// Wall time `stream-stall` must end in.
    pub stall_wall_bound: Duration,
    /// Bound of `stream-stall` (the hang cut).
    pub stall_bound: Duration,
    /// How long `no-response` holds the connection.
    pub no_response_hold: Duration,
    /// Wall time `no-response` must end in (the configured budget).
    pub no_response_budget: Duration,
    /// How long the primary of `slow-reasoning-primary` takes.
    pub slow_primary: Duration,
    /// Wall time under which `slow-reasoning-primary` counts as switched
    /// to a faster sibling.
    pub faster_bound: Duration,
    /// Bound of `slow-reasoning-primary`.
    pub slow_primary_bound: Duration,
    /// How long the primary of `flap` answers 503.
    pub flap_outage: Duration,
    /// Requests `flap` sends.
    pub flap_requests: u32,
    /// Time between the starts of two `flap` requests.
    pub flap_interval: Duration,
    /// Bound of one `flap` request.
    pub flap_request_bound: Duration,
    /// How soon after the outage `flap` requests must be back on the
    /// primary.
    pub flap_recovery_bound: Duration,
    /// Wall time `no-done` must end in.
    pub no_done_bound: Duration,
    /// Deadline of one health-route probe of `fallback-health`.
    pub health_probe_timeout: Duration,
    /// The reference proxies' time-to-first-token limit in this profile.
    pub builtin_first_token_timeout: Duration,
    /// The reference proxies' stall limit in this profile.
    pub builtin_stall_timeout: Duration,
    /// The reference proxies' overall deadline in this profile.
    pub builtin_deadline: Duration,
}

impl Timing {
    /// The numbers; cases without a bound of their own get
    /// `request_timeout`.
    pub fn full(request_timeout: Duration) -> Self {
        let s = Duration::from_secs;
        Timing {
            profile: Profile::Full,
            default_bound: request_timeout,
            retry_after: s(2),
            retry_after_slack: Duration::from_millis(200),
            hammer_window: s(3),
            slow_first_token: s(20),
            ttft_failover_bound: s(15),
            slow_first_token_bound: s(60),
            stall_silence: s(30),
            stall_wall_bound: s(45),
            stall_bound: s(70),
            no_response_hold: s(120),
            no_response_budget: s(60),
            slow_primary: s(25),
            faster_bound: s(15),
            slow_primary_bound: s(45),
            flap_outage: s(60),
            flap_requests: 20,
            flap_interval: s(4),
            flap_request_bound: s(30),
            flap_recovery_bound: s(30),
            no_done_bound: s(8),
            health_probe_timeout: s(10),
            builtin_first_token_timeout: s(10),
            builtin_stall_timeout: s(10),
            builtin_deadline: request_timeout,
        }
    }

    /// The same cases in seconds.
    pub fn fast() -> Self {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        Timing {
            profile: Profile::Fast,
            default_bound: s(10),
            retry_after: s(1),
            retry_after_slack: ms(150),
            hammer_window: s(3),
            slow_first_token: s(5),
            ttft_failover_bound: s(4),
            slow_first_token_bound: s(15),
            stall_silence: s(4),
            stall_wall_bound: s(8),
            stall_bound: s(12),
            no_response_hold: s(12),
            no_response_budget: s(8),
            slow_primary: s(5),
            faster_bound: s(3),
            slow_primary_bound: s(10),
            flap_outage: s(5),
            flap_requests: 8,
            flap_interval: s(1),
            flap_request_bound: s(6),
            flap_recovery_bound: s(3),
            no_done_bound: s(3),
            health_probe_timeout: s(5),
            builtin_first_token_timeout: ms(1500),
            builtin_stall_timeout: ms(1500),
            builtin_deadline: s(8),
        }
    }
}

/// What a total failure may cost (`both-fail`), as the user sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GiveUpBounds {
    /// Most attempts at each upstream (`--max-attempts-per-upstream`).
    pub max_attempts_per_upstream: u32,
    /// Longest time until the client gets a definitive error
    /// (`--max-give-up`).
    pub max_give_up: Duration,
}

impl Default for GiveUpBounds {
    fn default() -> Self {
        GiveUpBounds {
            max_attempts_per_upstream: 2,
            max_give_up: Duration::from_secs(60),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_shape_is_kept_by_the_fast_profile() {
        for t in [Timing::full(Duration::from_secs(30)), Timing::fast()] {
            // A limit that fails over must fire before the bound that
            // records it, and every hold outlasts its bound.
            assert!(t.builtin_first_token_timeout < t.ttft_failover_bound);
            assert!(t.ttft_failover_bound < t.slow_first_token);
            assert!(t.builtin_stall_timeout < t.stall_silence);
            assert!(t.stall_silence < t.stall_wall_bound);
            assert!(t.stall_wall_bound < t.stall_bound);
            assert!(t.no_response_budget < t.no_response_hold);
            assert!(t.faster_bound < t.slow_primary);
            assert!(t.slow_primary < t.slow_primary_bound);
            // At least two requests after the outage, the last one inside
            // the recovery bound.
            let last = t.flap_interval * (t.flap_requests - 1);
            assert!(last >= t.flap_outage + t.flap_interval);
            assert!(last - t.flap_outage <= t.flap_recovery_bound);
            // `all-cooling` judges at least one request sent after every
            // target's last cooldown is over (two Retry-After waits).
            assert!(last >= t.flap_outage + t.retry_after * 2);
            // `429-stuck`: a retry that honours Retry-After once, then a
            // failover, fits in the bound of a request not stuck.
            assert!(t.retry_after * 2 + t.retry_after_slack < t.flap_request_bound);
        }
    }
}
