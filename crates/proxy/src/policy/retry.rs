//! The bounded same-route retry, as one pure function: whether a reference
//! proxy tries the primary again before failing over, and after how long.
//! It never turns a failure the decision tree passes through into a retry,
//! and never waits less than the wait the primary stated (`Retry-After`,
//! or for a 429 a reset header or its body: `cb_wire::stated_wait`).
//!
//! | Primary outcome                        | Retried on the same route                   |
//! |----------------------------------------|---------------------------------------------|
//! | 429 stating a wait <= the cap          | after the wait                              |
//! | 429 stating none, or a longer one      | no: fail over at once                       |
//! | a status in the retry list (500)       | after `Retry-After` (<= the cap) or a delay |
//! | timeout, connection error, others      | no (a silent route is not tried again)      |
//!
//! At most `max` retries per request; the caller also keeps the wait
//! inside the request's deadline.

use super::failover::Outcome;
use std::time::Duration;

/// When the primary is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryRules<'a> {
    /// Most retries per request.
    pub max: u32,
    /// Statuses retried besides a 429 with a short `Retry-After`.
    pub statuses: &'a [u16],
    /// Longest `Retry-After` waited.
    pub retry_after_cap: Duration,
    /// Wait before retrying a listed status without `Retry-After`.
    pub delay: Duration,
}

/// How long to wait before trying the primary again after `outcome`, which
/// came with `retry_after` and after `retries_done` retries; `None`: do
/// not retry (fail over or pass through as the decision tree says).
pub fn same_route_wait(
    outcome: Outcome,
    retry_after: Option<Duration>,
    retries_done: u32,
    rules: &RetryRules<'_>,
) -> Option<Duration> {
    if retries_done >= rules.max {
        return None;
    }
    let short = retry_after.filter(|d| *d <= rules.retry_after_cap);
    match outcome {
        Outcome::Status(429) => short,
        Outcome::Status(code) if rules.statuses.contains(&code) => match retry_after {
            Some(_) => short,
            None => Some(rules.delay),
        },
        Outcome::Status(_) | Outcome::Timeout | Outcome::ConnectError | Outcome::BodyError => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: RetryRules<'static> = RetryRules {
        max: 1,
        statuses: &[500],
        retry_after_cap: Duration::from_secs(2),
        delay: Duration::from_millis(100),
    };

    fn s(secs: u64) -> Option<Duration> {
        Some(Duration::from_secs(secs))
    }

    #[test]
    fn a_short_retry_after_is_waited_once() {
        assert_eq!(same_route_wait(Outcome::Status(429), s(2), 0, &RULES), s(2));
        assert_eq!(same_route_wait(Outcome::Status(429), s(2), 1, &RULES), None);
        assert_eq!(
            same_route_wait(Outcome::Status(429), s(3), 0, &RULES),
            None,
            "past the cap"
        );
        assert_eq!(same_route_wait(Outcome::Status(429), None, 0, &RULES), None);
    }

    #[test]
    fn a_listed_status_is_retried_once_and_nothing_else() {
        let delay = Some(RULES.delay);
        assert_eq!(
            same_route_wait(Outcome::Status(500), None, 0, &RULES),
            delay
        );
        assert_eq!(same_route_wait(Outcome::Status(500), s(1), 0, &RULES), s(1));
        assert_eq!(same_route_wait(Outcome::Status(500), s(9), 0, &RULES), None);
        assert_eq!(same_route_wait(Outcome::Status(500), None, 1, &RULES), None);
        for outcome in [
            Outcome::Status(503),
            Outcome::Status(400),
            Outcome::Status(401),
            Outcome::Status(200),
            Outcome::Timeout,
            Outcome::ConnectError,
            Outcome::BodyError,
        ] {
            assert_eq!(
                same_route_wait(outcome, None, 0, &RULES),
                None,
                "{outcome:?}"
            );
        }
        let off = RetryRules { max: 0, ..RULES };
        assert_eq!(same_route_wait(Outcome::Status(429), s(1), 0, &off), None);
    }
}
