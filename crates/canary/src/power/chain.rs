//! The closed form the simulation is checked against: the quarantine rule
//! as a Markov chain over the length of a route's failing run.
//!
//! Each round the route's checked contract fails (probability `fail`),
//! passes (`pass`: the run ends) or says nothing (frozen by a transport
//! error, or undetermined: the run is kept). The run reaching
//! `failing_rounds` quarantines the route. With rounds independent and
//! alike, the probability of a quarantine within `n` rounds is exact by
//! dynamic programming over the run's length. It is exact for one
//! degraded contract with no false positives elsewhere; with false
//! positives of other contracts it is a close approximation (a run those
//! started is ended by its own contracts' passes, not the degraded one's).

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

/// The probability that one checked reply (one copy of a probe) makes the
/// contract fail, given that it came back: the reply is degraded with the
/// incidence (per reply, or per session when sticky), the detector catches
/// a degraded reply with its recall and flags a clean one at its false-
/// positive rate. A language failure needs two of three samples
/// ([`crate::language::confirm`]): the two confirmations re-send the same
/// request (same session), each lost to a transport error at `transient`.
pub fn copy_fails(
    incidence: Incidence,
    detector: Detector,
    transient: f64,
    majority_of_three: bool,
) -> f64 {
    let confirmed = |x: f64| {
        if majority_of_three {
            let second = (1.0 - transient) * x;
            x * (1.0 - (1.0 - second).powi(2))
        } else {
            x
        }
    };
    let p = incidence.share.clamp(0.0, 1.0);
    if incidence.sticky {
        // The session is degraded or not; every reply in it alike.
        p * confirmed(detector.recall) + (1.0 - p) * confirmed(detector.fpr)
    } else {
        confirmed(p * detector.recall + (1.0 - p) * detector.fpr)
    }
}

/// A contract's round odds over `copies` checked replies, each lost to a
/// transport error at `transient` (a lost copy freezes the contract unless
/// another copy failed).
pub fn round_odds(copy_fail: f64, transient: f64, copies: u32) -> RoundOdds {
    let n = i32::try_from(copies).unwrap_or(i32::MAX);
    let ok = 1.0 - transient;
    RoundOdds {
        fail: 1.0 - (1.0 - ok * copy_fail).powi(n),
        pass: (ok * (1.0 - copy_fail)).powi(n),
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
        Detector {
            recall: 1.0,
            fpr: 0.0,
        }
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
            let odds = round_odds(copy_fails(per_reply(q), perfect(), 0.0, false), 0.0, 1);
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
        let one = copy_fails(per_reply(0.05), perfect(), 0.0, true);
        // 5 % of replies: the first sample fails, then one of two more.
        assert!((one - 0.05 * (1.0 - 0.95f64.powi(2))).abs() < 1e-12);
        // Stuck to 5 % of sessions: the confirmations hit the same session.
        let sticky = Incidence {
            share: 0.05,
            sticky: true,
        };
        assert!((copy_fails(sticky, perfect(), 0.0, true) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn copies_raise_the_odds_and_errors_freeze_them() {
        let one = round_odds(0.1, 0.0, 1);
        let ten = round_odds(0.1, 0.0, 10);
        assert!(
            (one.fail - 0.1).abs() < 1e-12 && (ten.fail - (1.0 - 0.9f64.powi(10))).abs() < 1e-12
        );
        let lossy = round_odds(0.0, 0.2, 3);
        assert_eq!(lossy.fail, 0.0);
        assert!((lossy.pass - 0.8f64.powi(3)).abs() < 1e-12);
    }
}
