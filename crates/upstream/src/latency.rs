//! The latency model of the simulated upstreams.
//!
//! Time to first token = base + cost per input token (prefill, as providers
//! charge it) + seeded jitter; output is then paced at a fixed number of
//! tokens per second. The jitter is drawn
//! from `seed::rng(master_seed, "latency", k)` where `k` hashes (system, role,
//! conversation, turn, attempt), so a replay with the same seed waits exactly
//! as long, and a retry of the same turn gets a jitter of its own.
//!
//! Three named profiles: `instant` (no delay, for tests), `fast` (the default
//! for runs: a few milliseconds plus 20 µs per input token, so a
//! 150-conversation, 10-turn run at concurrency 100 is not dominated by it
//! while a long history still costs visibly more than a short one) and
//! `realistic` (hundreds of milliseconds to first token, 0.2 ms per input
//! token, tens of tokens per second).

use cb_faults::Role;
use rand::Rng;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// A named latency profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyProfile {
    /// Name ("instant", "fast", "realistic").
    pub name: &'static str,
    /// Fixed part of the time to first token.
    pub base: Duration,
    /// Added to the time to first token per input token.
    pub per_input_token: Duration,
    /// Largest jitter added to the time to first token (uniform from zero).
    pub max_jitter: Duration,
    /// Output pace; zero means output takes no time.
    pub tokens_per_second: f64,
}

/// Identifies one attempt for the jitter draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitterKey<'a> {
    /// System the upstream belongs to.
    pub system: &'a str,
    /// Primary or fallback.
    pub role: Role,
    /// Conversation id (empty when unrecognised).
    pub conversation: &'a str,
    /// Turn number.
    pub turn: u32,
    /// Attempt number.
    pub attempt: u32,
}

impl JitterKey<'_> {
    /// The index passed to `seed::rng(seed, "latency", index)`: the first 8
    /// bytes of SHA-256 over the length-prefixed fields.
    pub fn index(&self) -> u64 {
        let mut h = Sha256::new();
        for field in [self.system, self.role.as_str(), self.conversation] {
            h.update((field.len() as u64).to_le_bytes());
            h.update(field.as_bytes());
        }
        h.update(self.turn.to_le_bytes());
        h.update(self.attempt.to_le_bytes());
        let digest = h.finalize();
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest[..8]);
        u64::from_le_bytes(bytes)
    }
}

impl LatencyProfile {
    /// No modelled delay.
    pub const INSTANT: LatencyProfile = LatencyProfile {
        name: "instant",
        base: Duration::ZERO,
        per_input_token: Duration::ZERO,
        max_jitter: Duration::ZERO,
        tokens_per_second: 0.0,
    };

    /// A few milliseconds to first token, very fast output.
    pub const FAST: LatencyProfile = LatencyProfile {
        name: "fast",
        base: Duration::from_millis(2),
        per_input_token: Duration::from_micros(20),
        max_jitter: Duration::from_millis(3),
        tokens_per_second: 5000.0,
    };

    /// Hundreds of milliseconds to first token, tens of tokens per second.
    pub const REALISTIC: LatencyProfile = LatencyProfile {
        name: "realistic",
        base: Duration::from_millis(300),
        per_input_token: Duration::from_micros(200),
        max_jitter: Duration::from_millis(200),
        tokens_per_second: 50.0,
    };

    /// Every profile, fastest first.
    pub const ALL: [LatencyProfile; 3] = [Self::INSTANT, Self::FAST, Self::REALISTIC];

    /// The profile's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Time to first token of an attempt with `input_tokens` input tokens.
    pub fn time_to_first_token(
        &self,
        seed: u64,
        key: &JitterKey<'_>,
        input_tokens: u32,
    ) -> Duration {
        let jitter_us = self.max_jitter.as_micros() as u64;
        let jitter = if jitter_us == 0 {
            Duration::ZERO
        } else {
            let mut rng = cb_base::seed::rng(seed, "latency", key.index());
            Duration::from_micros(rng.random_range(0..=jitter_us))
        };
        self.base + self.per_input_token * input_tokens + jitter
    }

    /// Time to send `output_tokens` tokens once the first has gone.
    pub fn output_time(&self, output_tokens: u32) -> Duration {
        if self.tokens_per_second <= 0.0 || output_tokens == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(f64::from(output_tokens) / self.tokens_per_second)
        }
    }
}

impl Default for LatencyProfile {
    fn default() -> Self {
        Self::FAST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(attempt: u32) -> JitterKey<'static> {
        JitterKey {
            system: "history",
            role: Role::Fallback,
            conversation: "c001",
            turn: 9,
            attempt,
        }
    }

    #[test]
    fn names_are_distinct() {
        let names: Vec<&str> = LatencyProfile::ALL
            .iter()
            .map(LatencyProfile::name)
            .collect();
        assert_eq!(names, ["instant", "fast", "realistic"]);
    }

    #[test]
    fn deterministic_per_attempt() {
        let p = LatencyProfile::REALISTIC;
        let a = p.time_to_first_token(42, &key(1), 500);
        assert_eq!(a, p.time_to_first_token(42, &key(1), 500));
        // Another seed or another attempt draws another jitter.
        assert_ne!(a, p.time_to_first_token(43, &key(1), 500));
        assert_ne!(a, p.time_to_first_token(42, &key(2), 500));
        // Jitter stays within its bound.
        let floor = p.base + p.per_input_token * 500;
        assert!(a >= floor && a <= floor + p.max_jitter, "{a:?}");
    }

    #[test]
    fn realistic_slower_than_fast_slower_than_instant() {
        for attempt in 1..20 {
            let k = key(attempt);
            let total = |p: LatencyProfile| p.time_to_first_token(7, &k, 800) + p.output_time(40);
            let (i, f, r) = (
                total(LatencyProfile::INSTANT),
                total(LatencyProfile::FAST),
                total(LatencyProfile::REALISTIC),
            );
            assert_eq!(i, Duration::ZERO);
            assert!(f > i && r > f, "{i:?} {f:?} {r:?}");
        }
    }

    #[test]
    fn fast_stays_small_for_long_histories() {
        // A 10-turn history is a thousand tokens or so; fast must stay
        // under 150 ms even at 4,000 so it never dominates a run, while the
        // prefill of such a history still outweighs the jitter.
        let p = LatencyProfile::FAST;
        let d = p.time_to_first_token(1, &key(1), 4000) + p.output_time(100);
        assert!(d < Duration::from_millis(150), "{d:?}");
        assert!(p.per_input_token * 1000 > p.max_jitter * 2);
    }

    #[test]
    fn output_paced_by_tokens_per_second() {
        let d = LatencyProfile::REALISTIC.output_time(50);
        assert!((d.as_secs_f64() - 1.0).abs() < 1e-9);
    }
}
