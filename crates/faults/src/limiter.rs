//! The deterministic rate limiter behind a profile's `[rate_limiter]`.
//!
//! A "storm" profile puts one in front of the fallback. Its decisions depend
//! only on attempt numbers and on whether the client waited the time it was
//! told, never on a refill rate or on how loaded the machine is, so the same
//! seed gives the same verdicts. Per turn (the caller's key: run, system,
//! role, conversation and turn):
//!
//! - the first `rejections` attempts get a 429 with `Retry-After`;
//! - any later attempt that arrives sooner than the `Retry-After` it was
//!   given, measured from the previous 429's send, less
//!   [`RETRY_AFTER_SLACK`], gets a 429 too (and the wait starts again);
//! - every other attempt passes.
//!
//! A gateway that retries a 429 in a tight loop keeps getting 429s and piles
//! up attempts; one that honours `Retry-After` gets through on the retry
//! after the last counted rejection. A slow machine only makes a client
//! wait longer, which never turns a pass into a 429. Time is passed in, so
//! the rules are tested without clocks.

use super::profile::RateLimiterSpec;
use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

/// How much sooner than its `Retry-After` a retry may arrive and still pass:
/// timer granularity of the client. The same slack as the report's check
/// for early retries, so a retry this limiter lets through is never counted
/// as early there.
pub const RETRY_AFTER_SLACK: Duration = Duration::from_millis(10);

/// The wait a `Retry-After` of `retry_after` tells a client: whole seconds
/// on the wire, rounded up, at least 1 (as the upstream renders it).
pub fn told_wait(retry_after: Duration) -> Duration {
    let secs = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    Duration::from_secs(secs.max(1))
}

/// What the limiter decided for one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The attempt goes through.
    Pass,
    /// One of the turn's first `rejections` attempts: a 429.
    Rejected {
        /// Which of them (from 1).
        rejection: u32,
    },
    /// A retry that came sooner than it was told: a 429.
    Early {
        /// How long after the previous 429 it arrived.
        waited: Duration,
        /// The wait it was told.
        told: Duration,
    },
}

impl Decision {
    /// Whether the attempt gets a 429.
    pub fn is_limited(self) -> bool {
        !matches!(self, Decision::Pass)
    }
}

/// What the limiter remembers of one turn.
#[derive(Debug, Clone, Copy, Default)]
struct TurnState {
    attempts: u32,
    last_429: Option<Duration>,
}

/// The limiter of one upstream, keyed by turn (`K` is the caller's key).
#[derive(Debug, Clone)]
pub struct RetryLimiter<K> {
    rejections: u32,
    told: Duration,
    turns: HashMap<K, TurnState>,
}

impl<K: Eq + Hash> RetryLimiter<K> {
    /// A limiter with the spec's number of rejections and `Retry-After`.
    pub fn new(spec: &RateLimiterSpec) -> Self {
        RetryLimiter {
            rejections: spec.rejections,
            told: told_wait(spec.retry_after),
            turns: HashMap::new(),
        }
    }

    /// Decides the attempt of turn `key` arriving at `now`, a time since
    /// the caller's epoch (the upstream's clock: virtual in tests). A 429 is
    /// sent as soon as the attempt is read, so `now` also stamps the 429's
    /// send, from which the next wait counts. (The upstream passes each
    /// attempt's arrival, the same stamp the report's early-retry check
    /// compares.)
    pub fn decide(&mut self, key: K, now: Duration) -> Decision {
        let state = self.turns.entry(key).or_default();
        state.attempts = state.attempts.saturating_add(1);
        let decision = if state.attempts <= self.rejections {
            Decision::Rejected {
                rejection: state.attempts,
            }
        } else {
            match state.last_429 {
                Some(sent) => {
                    let waited = now.saturating_sub(sent);
                    if waited + RETRY_AFTER_SLACK < self.told {
                        Decision::Early {
                            waited,
                            told: self.told,
                        }
                    } else {
                        Decision::Pass
                    }
                }
                None => Decision::Pass,
            }
        };
        if decision.is_limited() {
            state.last_429 = Some(now);
        }
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;

    fn spec(rejections: u32, retry_after: Duration) -> RateLimiterSpec {
        RateLimiterSpec {
            upstream: Role::Fallback,
            rejections,
            retry_after,
            status: 429,
            message: "slow down".into(),
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_client_that_honours_retry_after_gets_through_on_its_first_retry() {
        let t0 = Duration::from_secs(1000);
        let mut l = RetryLimiter::new(&spec(1, Duration::from_secs(1)));
        assert_eq!(l.decide("a", t0), Decision::Rejected { rejection: 1 });
        assert_eq!(l.decide("a", t0 + ms(1000)), Decision::Pass);
        // Once through, later attempts pass as well.
        assert_eq!(l.decide("a", t0 + ms(1001)), Decision::Pass);
    }

    #[test]
    fn a_tight_loop_keeps_getting_429s() {
        let t0 = Duration::from_secs(1000);
        let mut l = RetryLimiter::new(&spec(1, Duration::from_secs(1)));
        assert!(l.decide("a", t0).is_limited());
        // Twenty retries 10 ms apart, far longer than one Retry-After in
        // total: each is early against the 429 just before it.
        for k in 1..=20u64 {
            let d = l.decide("a", t0 + ms(10 * k));
            assert_eq!(
                d,
                Decision::Early {
                    waited: ms(10),
                    told: Duration::from_secs(1)
                },
                "retry {k}"
            );
        }
        // A full wait after the last 429 passes.
        assert_eq!(l.decide("a", t0 + ms(200 + 1000)), Decision::Pass);
    }

    #[test]
    fn rejections_are_counted_whatever_the_wait() {
        let t0 = Duration::from_secs(1000);
        let mut l = RetryLimiter::new(&spec(3, Duration::from_secs(2)));
        assert_eq!(l.decide(1, t0), Decision::Rejected { rejection: 1 });
        assert_eq!(
            l.decide(1, t0 + Duration::from_secs(60)),
            Decision::Rejected { rejection: 2 }
        );
        assert_eq!(
            l.decide(1, t0 + Duration::from_secs(120)),
            Decision::Rejected { rejection: 3 }
        );
        assert_eq!(
            l.decide(1, t0 + ms(121_500)),
            Decision::Early {
                waited: ms(1500),
                told: Duration::from_secs(2)
            }
        );
        assert_eq!(l.decide(1, t0 + ms(123_500)), Decision::Pass);
    }

    #[test]
    fn turns_are_limited_independently() {
        let t0 = Duration::from_secs(1000);
        let mut l = RetryLimiter::new(&spec(1, Duration::from_secs(1)));
        // A hundred turns at the same instant each get their own first 429
        // and their own pass: no turn drains another's allowance.
        for turn in 0..100 {
            assert!(l.decide(turn, t0).is_limited());
        }
        for turn in 0..100 {
            assert_eq!(l.decide(turn, t0 + ms(1000)), Decision::Pass);
        }
    }

    #[test]
    fn the_slack_forgives_timer_granularity_only() {
        let t0 = Duration::from_secs(1000);
        let mut l = RetryLimiter::new(&spec(1, Duration::from_secs(1)));
        l.decide("a", t0);
        assert_eq!(l.decide("a", t0 + ms(990)), Decision::Pass);
        let mut l = RetryLimiter::new(&spec(1, Duration::from_secs(1)));
        l.decide("a", t0);
        assert!(l.decide("a", t0 + ms(989)).is_limited());
    }

    #[test]
    fn the_wait_is_what_the_wire_says() {
        assert_eq!(told_wait(Duration::ZERO), Duration::from_secs(1));
        assert_eq!(told_wait(ms(200)), Duration::from_secs(1));
        assert_eq!(told_wait(ms(1500)), Duration::from_secs(2));
        assert_eq!(told_wait(Duration::from_secs(3)), Duration::from_secs(3));
        // Told 2 s for a configured 1.5 s: 1.6 s is early.
        let t0 = Duration::from_secs(1000);
        let mut l = RetryLimiter::new(&spec(1, ms(1500)));
        l.decide("a", t0);
        assert!(l.decide("a", t0 + ms(1600)).is_limited());
        assert_eq!(l.decide("a", t0 + ms(1600 + 2000)), Decision::Pass);
    }
}
