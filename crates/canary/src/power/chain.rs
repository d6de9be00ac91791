//! The closed form the simulation is checked against: the quarantine rule
//! as a Markov chain over the length of a route's failing run.
//!
//! Each round the route's checked contract fails (probability `fail`),
//! passes (`pass`: the run ends) or says nothing (frozen by a transport
//! error, or undetermined: the run is kept). The run reaching
//! `failing_rounds` quarantines the route. With rounds independent and
//! alike, the probability of a quarantine within `n` rounds is exact by
//! dynamic programming over the run's length. It is exact for one
//! degraded contract when the other contracts never fail (no false
//! positives); otherwise it is an approximation, as the contracts of one
//! probe are not independent (a lost copy freezes them together) and a
//! run another contract started is ended by that contract's pass.

use super::model::{Detector, Incidence};

/// One contract's odds in one round on one route.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundOdds {
    /// The contract fails on some checked reply this round.
    pub fail: f64,
    /// Every checked reply came back and passed: a failing run ends.
    pub pass: f64,
}

impl RoundOdds {
    /// Odds of `fail` or `pass` on any of several contracts: the round
    /// fails when any fails, passes when all pass.
    pub fn any(odds: &[RoundOdds]) -> RoundOdds {
        RoundOdds {
            fail: 1.0 - odds.iter().map(|o| 1.0 - o.fail).product::<f64>(),
            pass: odds.iter().map(|o| o.pass).product(),
        }
    }
}

/// What one checker says of one reply: fail, pass, or neither
/// (undetermined: the machine counts it as silence, which keeps a failing
/// run and breaks a clean one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplyOdds {
    /// The checker fails the reply.
    pub fail: f64,
    /// The checker passes it.
    pub pass: f64,
}

impl ReplyOdds {
    /// A reply degraded with probability `degraded`, judged by `detector`.
    pub fn of(degraded: f64, detector: Detector) -> ReplyOdds {
        let d = degraded.clamp(0.0, 1.0);
        let on_degraded = 1.0 - detector.recall - detector.undetermined_degraded;
        let on_clean = 1.0 - detector.fpr - detector.undetermined_clean;
        ReplyOdds {
            fail: d * detector.recall + (1.0 - d) * detector.fpr,
            pass: d * on_degraded.max(0.0) + (1.0 - d) * on_clean.max(0.0),
        }
    }

    fn mix(a: ReplyOdds, b: ReplyOdds, share: f64) -> ReplyOdds {
        ReplyOdds {
            fail: share * a.fail + (1.0 - share) * b.fail,
            pass: share * a.pass + (1.0 - share) * b.pass,
        }
    }
}

/// What one checked reply (one copy of a probe) gives the contract, given
/// that it came back: the reply is degraded with the incidence (per reply,
/// or per session when sticky), the checker judges it with its measured
/// rates. A language failure is confirmed by two more samples of the same
/// request (same session), each lost to a transport error at `transient`,
/// a majority of three deciding ([`crate::language::confirm`]): two
/// failures fail, two passes pass, anything else is undetermined.
pub fn copy_odds(
    incidence: Incidence,
    detector: Detector,
    transient: f64,
    majority_of_three: bool,
) -> ReplyOdds {
    let confirmed = |first: ReplyOdds, again: ReplyOdds| {
        if !majority_of_three {
            return first;
        }
        let fail = (1.0 - transient) * again.fail;
        let pass = (1.0 - transient) * again.pass;
        ReplyOdds {
            // The first failed, and at least one confirmation failed.
            fail: first.fail * (1.0 - (1.0 - fail).powi(2)),
            // The first passed, or it failed and both confirmations passed.
            pass: first.pass + first.fail * pass * pass,
        }
    };
    let p = incidence.share.clamp(0.0, 1.0);
    if incidence.sticky {
        // The session is degraded or not; every reply in it alike.
        let degraded = ReplyOdds::of(1.0, detector);
        let clean = ReplyOdds::of(0.0, detector);
        ReplyOdds::mix(confirmed(degraded, degraded), confirmed(clean, clean), p)
    } else {
        let reply = ReplyOdds::of(p, detector);
        confirmed(reply, reply)
    }
}

/// A contract's round odds over `copies` checked replies, each lost to a
/// transport error at `transient`: the contract fails when a copy that
/// came back failed, passes when every copy came back and passed, and
/// says nothing otherwise (a lost copy freezes its probe's contracts
/// unless another copy failed them; an undetermined copy is silence).
pub fn round_odds(copy: ReplyOdds, transient: f64, copies: u32) -> RoundOdds {
    let n = i32::try_from(copies).unwrap_or(i32::MAX);
    let ok = 1.0 - transient;
    RoundOdds {
        fail: 1.0 - (1.0 - ok * copy.fail).powi(n),
        pass: (ok * copy.pass).powi(n),
    }
}

/// The probability that the failing run reaches `failing_rounds` within
/// `rounds` rounds, from no run.
pub fn within(odds: RoundOdds, failing_rounds: u32, rounds: u64) -> f64 {
    let k = failing_rounds.max(1) as usize;
    // state[i]: probability of a run of length i (i < k), not yet absorbed.
    let mut state = vec![0.0f64; k];
    state[0] = 1.0;
    let mut absorbed = 0.0;
    let still = (1.0 - odds.fail - odds.pass).max(0.0);
    for _ in 0..rounds {
        let mut next = vec![0.0f64; k];
        for (i, &p) in state.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            // A pass ends the run; a silent round keeps it; a failure grows it.
            next[0] += p * odds.pass;
            next[i] += p * still;
            if i + 1 >= k {
                absorbed += p * odds.fail;
            } else {
                next[i + 1] += p * odds.fail;
            }
        }
        state = next;
        if state.iter().sum::<f64>() < 1e-15 {
            break;
        }
    }
    absorbed.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perfect() -> Detector {
        Detector::PERFECT
    }

    fn per_reply(share: f64) -> Incidence {
        Incidence {
            share,
            sticky: false,
        }
    }

    /// Two successes in a row within n Bernoulli(q) trials, by the
    /// recurrence on the first failure: P(n) = q^2 + (1-q) P(n-1) + q (1-q) P(n-2).
    fn two_in_a_row(q: f64, n: u64) -> f64 {
        let mut p = vec![0.0f64; n as usize + 1];
        for i in 2..=n as usize {
            p[i] = q * q + (1.0 - q) * p[i - 1] + q * (1.0 - q) * p[i - 2];
        }
        p[n as usize]
    }

    #[test]
    fn the_chain_matches_the_recurrence_for_two_in_a_row() {
        for q in [0.01, 0.05, 0.16, 0.5, 0.9] {
            let odds = round_odds(copy_odds(per_reply(q), perfect(), 0.0, false), 0.0, 1);
            for n in [2, 12, 48, 336] {
                let chain = within(odds, 2, n);
                assert!((chain - two_in_a_row(q, n)).abs() < 1e-12, "q {q} n {n}");
            }
        }
        // A published value: two heads in a row within 4 fair tosses is 8/16.
        let fair = RoundOdds {
            fail: 0.5,
            pass: 0.5,
        };
        assert!((within(fair, 2, 4) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn silent_rounds_delay_but_do_not_end_a_run() {
        let odds = RoundOdds {
            fail: 0.5,
            pass: 0.0,
        };
        // Fail, silent, fail still quarantines: with fail 0.5 and silence 0.5
        // every run only grows, so two failures within n rounds is
        // 1 - P(at most one failure) = 1 - (1 + n) / 2^n.
        let n = 6u64;
        let expected = 1.0 - (1.0 + n as f64) / 2f64.powi(6);
        assert!((within(odds, 2, n) - expected).abs() < 1e-12);
    }

    #[test]
    fn the_majority_of_three_squares_a_rare_language_fault() {
        let one = copy_odds(per_reply(0.05), perfect(), 0.0, true);
        // 5 % of replies: the first sample fails, then one of two more.
        assert!((one.fail - 0.05 * (1.0 - 0.95f64.powi(2))).abs() < 1e-12);
        // It passes when the first passes, or both confirmations do.
        assert!((one.pass - (0.95 + 0.05 * 0.95 * 0.95)).abs() < 1e-12);
        // Stuck to 5 % of sessions: the confirmations hit the same session.
        let sticky = Incidence {
            share: 0.05,
            sticky: true,
        };
        let stuck = copy_odds(sticky, perfect(), 0.0, true);
        assert!((stuck.fail - 0.05).abs() < 1e-12 && (stuck.pass - 0.95).abs() < 1e-12);
        // A lost confirmation leaves no majority: neither fail nor pass.
        let lossy = copy_odds(sticky, perfect(), 0.5, true);
        assert!((lossy.fail - 0.05 * (1.0 - 0.5f64.powi(2))).abs() < 1e-12);
        assert!(lossy.fail + lossy.pass < 1.0);
    }

    #[test]
    fn copies_raise_the_odds_and_errors_freeze_them() {
        let copy = |fail: f64| ReplyOdds {
            fail,
            pass: 1.0 - fail,
        };
        let one = round_odds(copy(0.1), 0.0, 1);
        let ten = round_odds(copy(0.1), 0.0, 10);
        assert!(
            (one.fail - 0.1).abs() < 1e-12 && (ten.fail - (1.0 - 0.9f64.powi(10))).abs() < 1e-12
        );
        let lossy = round_odds(copy(0.0), 0.2, 3);
        assert_eq!(lossy.fail, 0.0);
        assert!((lossy.pass - 0.8f64.powi(3)).abs() < 1e-12);
    }
}
