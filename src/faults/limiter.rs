//! A token-bucket rate limiter, the state behind a profile's `[rate_limiter]`.
//!
//! A "storm" profile puts one in front of the fallback: every request takes a
//! token, the bucket refills at a steady rate, and an empty bucket answers
//! 429 with `Retry-After`. A gateway that retries a 429 in a tight loop drains
//! it and keeps getting 429s; one that backs off gets through. Time is passed
//! in explicitly so the arithmetic is testable without clocks.

use super::profile::RateLimiterSpec;
use std::time::Instant;

/// A token bucket.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    capacity: f64,
    refill_per_second: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `capacity` tokens refilling at `refill_per_second`,
    /// with its clock starting at `now`.
    pub fn new(capacity: u32, refill_per_second: f64, now: Instant) -> Self {
        TokenBucket {
            capacity: f64::from(capacity),
            refill_per_second: refill_per_second.max(0.0),
            tokens: f64::from(capacity),
            last: now,
        }
    }

    /// The bucket a profile's limiter describes.
    pub fn from_spec(spec: &RateLimiterSpec, now: Instant) -> Self {
        TokenBucket::new(spec.capacity, spec.refill_per_second, now)
    }

    /// Takes one token at time `now`; false when the bucket is empty.
    pub fn try_take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.refill_per_second).min(self.capacity);
        self.last = self.last.max(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn drains_then_refills() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(2, 1.0, t0);
        assert!(b.try_take(t0));
        assert!(b.try_take(t0));
        assert!(!b.try_take(t0), "a tight loop gets refused");
        assert!(!b.try_take(t0 + Duration::from_millis(500)));
        assert!(
            b.try_take(t0 + Duration::from_millis(1100)),
            "refilled after a second"
        );
        // Never above capacity after a long pause.
        let later = t0 + Duration::from_secs(100);
        assert!(b.try_take(later));
        assert!(b.try_take(later));
        assert!(!b.try_take(later));
    }

    #[test]
    fn zero_refill_stays_empty() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(1, 0.0, t0);
        assert!(b.try_take(t0));
        assert!(!b.try_take(t0 + Duration::from_secs(60)));
    }
}
