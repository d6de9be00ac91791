//! The verdict of one case for one system, from its measured checks: one
//! pure function.
//!
//! - `pass`: the ideal outcome (the whole answer, or for a permanent error
//!   the clean error) and every check clean;
//! - `partial`: the ideal outcome, an advisory check failed;
//! - `safe`: not the ideal outcome, but a bounded, clean error and every
//!   required check clean;
//! - `fail`: a required check failed, a hang, or a truncated answer
//!   presented as complete (both are required checks of every case);
//! - `inconclusive`: the case could not be exercised (the primary never
//!   saw its requests, even after waiting out a cooldown).

use super::case::{Ideal, Severity};
use super::checks::{got, CheckResult, Outcome};
use cb_faults::Role;
use serde::{Deserialize, Serialize};

/// How a case went for one system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The ideal outcome, every check clean.
    Pass,
    /// The ideal outcome, an advisory check failed.
    Partial,
    /// A bounded clean error, every required check clean.
    Safe,
    /// A required check failed.
    Fail,
    /// The case could not be exercised.
    Inconclusive,
}

impl Verdict {
    /// Every verdict, in scorecard order.
    pub const ALL: [Verdict; 5] = [
        Verdict::Pass,
        Verdict::Partial,
        Verdict::Safe,
        Verdict::Fail,
        Verdict::Inconclusive,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Partial => "partial",
            Verdict::Safe => "safe",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// A verdict with why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, when it is not `pass`.
    pub reason: String,
}

/// Judges `outcome` from its `checks` (measured in catalogue order).
pub fn judge(outcome: &Outcome<'_>, checks: &[CheckResult]) -> Judged {
    let judged = |verdict, reason: String| Judged { verdict, reason };
    let reached = outcome.requests.iter().any(|s| s.count(Role::Primary) > 0);
    if !reached {
        let client = outcome
            .requests
            .last()
            .map_or_else(|| "nothing".to_string(), got);
        return judged(
            Verdict::Inconclusive,
            format!(
                "the primary never saw the request (a cooldown after an earlier case?); the client got {client}"
            ),
        );
    }
    let failed = |severity| -> Vec<String> {
        checks
            .iter()
            .filter(|c| c.severity == severity && c.broken())
            .map(|c| format!("{}: {} (bound: {})", c.check.name(), c.value, c.bound))
            .collect()
    };
    let required = failed(Severity::Required);
    if !required.is_empty() {
        return judged(Verdict::Fail, required.join("; "));
    }
    let ideal = match outcome.case.ideal {
        Ideal::Answer => outcome
            .requests
            .iter()
            .all(|s| s.client.answered && s.client.complete),
        Ideal::WholeOrMarked => outcome
            .requests
            .iter()
            .all(|s| s.client.answered && (s.client.complete || s.client.marked_partial)),
        Ideal::CleanError => outcome.requests.iter().all(|s| !s.client.answered),
        Ideal::AnsweredAfter(outage) => outcome
            .requests
            .iter()
            .filter(|s| s.sent_ms >= outage.as_secs_f64() * 1000.0)
            .all(|s| s.client.answered && s.client.complete),
    };
    if ideal {
        let advisory = failed(Severity::Advisory);
        return if advisory.is_empty() {
            judged(Verdict::Pass, String::new())
        } else {
            judged(Verdict::Partial, advisory.join("; "))
        };
    }
    match outcome.case.ideal {
        // Every required check is clean, nothing hung and no answer was
        // truncated: what is left of a missed answer is a clean error.
        Ideal::Answer | Ideal::WholeOrMarked | Ideal::AnsweredAfter(_) => {
            let client = outcome
                .requests
                .iter()
                .find(|s| !s.client.answered)
                .map_or_else(String::new, got);
            judged(
                Verdict::Safe,
                format!("not answered, a clean error: the client got {client}"),
            )
        }
        Ideal::CleanError => judged(
            Verdict::Fail,
            "answered where only a clean error is right".to_string(),
        ),
    }
}

/// Facts worth knowing that no check rules on: retries stacked on one
/// upstream, parameters an upstream did not receive.
pub fn notes(outcome: &Outcome<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(last) = outcome.requests.last() else {
        return notes;
    };
    if outcome.requests.len() == 1 {
        for role in [Role::Primary, Role::Fallback] {
            let n = last.count(role);
            if n > 1 {
                notes.push(format!("the {} was tried {n} times", role.as_str()));
            }
        }
    }
    for role in [Role::Primary, Role::Fallback] {
        if let Some(attempt) = last.at(role).last() {
            let missing: Vec<&str> = last
                .params_sent
                .iter()
                .filter(|p| !attempt.params.contains(p))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                notes.push(format!(
                    "the {} did not receive the client's {}",
                    role.as_str(),
                    missing.join(", ")
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::super::case::{Check, CheckId, Rule};
    use super::super::catalogue::catalogue;
    use super::super::checks::measure;
    use super::super::checks::tests::attempt;
    use super::super::observe::{AttemptView, ClientView, Sent};
    use super::super::timing::{GiveUpBounds, Timing};
    use super::*;

    fn sent(status: u16, complete: bool, attempts: Vec<AttemptView>) -> Sent {
        let answered = (200..300).contains(&status);
        Sent {
            conversation: "c".into(),
            sent_ms: 0.0,
            client: ClientView {
                status: Some(status),
                error: (!answered).then(|| format!("HTTP {status}: error")),
                answered,
                complete: answered && complete,
                marked_partial: false,
                answer_chars: if complete { 300 } else { 200 },
                expected_chars: 300,
                finish_reason: None,
                model: None,
                usage: false,
                completion_tokens: None,
                prompt_tokens: None,
                models: Vec::new(),
                routing: Vec::new(),
                stated_wait_ms: None,
                headers_ms: None,
                answer_tokens: 0,
                latency_ms: 50.0,
                hung: false,
                contract_violations: Vec::new(),
            },
            attempts,
            params_sent: Vec::new(),
        }
    }

    fn verdict_of(id: &str, requests: &[Sent]) -> Judged {
        let cases = catalogue(&Timing::fast(), &GiveUpBounds::default(), false);
        let case = cases.iter().find(|c| c.id == id).unwrap();
        let outcome = Outcome {
            before: None,
            case,
            requests,
            after: None,
            health: None,
        };
        let checks: Vec<CheckResult> = case.checks.iter().map(|c| measure(c, &outcome)).collect();
        judge(&outcome, &checks)
    }

    fn alive_after(before: Option<&Sent>, after: &Sent) -> CheckResult {
        let cases = catalogue(&Timing::fast(), &GiveUpBounds::default(), true);
        let case = cases.iter().find(|c| c.id == "malformed-chunk").unwrap();
        let check = case
            .checks
            .iter()
            .find(|c| c.id == CheckId::AliveAfter)
            .unwrap();
        let requests = [sent(500, false, Vec::new())];
        let outcome = Outcome {
            before,
            case,
            requests: &requests,
            after: Some(after),
            health: None,
        };
        measure(check, &outcome)
    }

    #[test]
    fn a_system_broken_before_the_case_is_not_held_to_have_been_broken_by_it() {
        let (ok, broken) = (sent(200, true, Vec::new()), sent(500, false, Vec::new()));
        // Broken after a healthy baseline: the case broke it.
        assert!(!alive_after(Some(&ok), &broken).passed);
        // Broken before as well (Portkey 1.15.2 fails every stream): not the case's doing.
        let both = alive_after(Some(&broken), &broken);
        assert!(
            both.passed && both.value.contains("whatever the case"),
            "{both:?}"
        );
        assert!(alive_after(Some(&ok), &ok).passed);
    }

    const P: Role = Role::Primary;
    const F: Role = Role::Fallback;

    #[test]
    fn the_decision_tree_cases_pass_fail_and_stay_safe_as_defined() {
        // 401 passed through: the ideal clean error.
        let v = verdict_of("401", &[sent(401, false, vec![attempt(P, 0.0, 401)])]);
        assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
        // Failing over on it: a required check fails.
        let v = verdict_of(
            "401",
            &[sent(
                200,
                true,
                vec![attempt(P, 0.0, 401), attempt(F, 1.0, 200)],
            )],
        );
        assert_eq!(v.verdict, Verdict::Fail);
        assert!(
            v.reason.starts_with("no_failover: 1 fallback attempts"),
            "{}",
            v.reason
        );
        // 503 without a failover: fail (the tree says fail over).
        let v = verdict_of("503", &[sent(503, false, vec![attempt(P, 0.0, 503)])]);
        assert_eq!(v.verdict, Verdict::Fail);
        // 503-persistent passed through cleanly: safe.
        let v = verdict_of(
            "503-persistent",
            &[sent(503, false, vec![attempt(P, 0.0, 503)])],
        );
        assert_eq!(v.verdict, Verdict::Safe, "{v:?}");
        // A truncated answer presented as complete: fail.
        let v = verdict_of(
            "stream-cut",
            &[sent(200, false, vec![attempt(P, 0.0, 200)])],
        );
        assert_eq!(v.verdict, Verdict::Fail);
        assert!(v.reason.contains("no_truncated_success"), "{}", v.reason);
    }

    /// A 200 answered in part, with `finish` as its finish reason, marked
    /// partial when the check says so.
    fn part(finish: &str, marked: bool) -> Sent {
        let mut s = sent(200, false, vec![attempt(P, 0.0, 200)]);
        s.client.finish_reason = Some(finish.into());
        s.client.marked_partial = marked;
        s
    }

    #[test]
    fn an_honest_part_passes_only_where_the_case_accepts_one() {
        // finish-length: the primary's part with its `length` kept passes;
        // relabelled `stop` (or not the answer's beginning) it fails.
        let v = verdict_of("finish-length", &[part("length", true)]);
        assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
        let v = verdict_of("finish-length", &[part("stop", false)]);
        assert_eq!(v.verdict, Verdict::Fail, "{v:?}");
        assert!(v.reason.starts_with("no_truncated_success"), "{}", v.reason);
        let v = verdict_of("finish-length", &[part("length", false)]);
        assert_eq!(v.verdict, Verdict::Fail, "not its beginning: {v:?}");
        // No answer: a clean error.
        let v = verdict_of(
            "finish-length",
            &[sent(502, false, vec![attempt(P, 0.0, 200)])],
        );
        assert_eq!(v.verdict, Verdict::Safe, "{v:?}");
        // Elsewhere a part marked `length` is still a truncated answer
        // presented as an answer: the cut stream must fail over or error.
        let v = verdict_of("stream-cut", &[part("length", true)]);
        assert_eq!(v.verdict, Verdict::Fail, "{v:?}");
        assert!(v.reason.starts_with("no_truncated_success"), "{}", v.reason);
    }

    #[test]
    fn advisory_checks_make_partial_and_required_ones_fail() {
        // 500-once failed over at once: answered, no same-route retry.
        let over = vec![attempt(P, 0.0, 500), attempt(F, 5.0, 200)];
        let v = verdict_of("500-once", &[sent(200, true, over)]);
        assert_eq!(v.verdict, Verdict::Partial);
        assert!(v.reason.starts_with("retried_same_route"), "{}", v.reason);
        let retried = vec![attempt(P, 0.0, 500), attempt(P, 100.0, 200)];
        assert_eq!(
            verdict_of("500-once", &[sent(200, true, retried)]).verdict,
            Verdict::Pass
        );
        // 429-retry-after retried too early: fail, with the gap measured.
        let early = vec![attempt(P, 0.0, 429), attempt(P, 10.0, 200)];
        let v = verdict_of("429-retry-after", &[sent(200, true, early)]);
        assert_eq!(v.verdict, Verdict::Fail);
        assert!(
            v.reason
                .contains("second primary attempt 0.0 s after the first"),
            "{}",
            v.reason
        );
        let patient = vec![attempt(P, 0.0, 429), attempt(P, 1000.0, 200)];
        assert_eq!(
            verdict_of("429-retry-after", &[sent(200, true, patient)]).verdict,
            Verdict::Pass
        );
    }

    #[test]
    fn an_untouched_primary_is_inconclusive_and_a_hang_fails() {
        let v = verdict_of("503", &[sent(200, true, vec![attempt(F, 0.0, 200)])]);
        assert_eq!(v.verdict, Verdict::Inconclusive);
        let mut hung = sent(503, false, vec![attempt(P, 0.0, 503)]);
        hung.client.hung = true;
        let v = verdict_of("503-persistent", &[hung]);
        assert_eq!(v.verdict, Verdict::Fail);
        assert!(v.reason.starts_with("no_hang"), "{}", v.reason);
    }

    #[test]
    fn both_fail_spells_out_stacked_retries() {
        let mut attempts = Vec::new();
        for layer in 0..2 {
            for k in 0..3 {
                attempts.push(attempt(P, f64::from(layer * 10 + k), 503));
            }
            attempts.push(attempt(F, f64::from(layer * 10 + 5), 503));
        }
        let v = verdict_of("both-fail", &[sent(503, false, attempts)]);
        assert_eq!(v.verdict, Verdict::Fail);
        assert!(
            v.reason.contains("primary 3 x 2 layers = 6 attempts"),
            "{}",
            v.reason
        );
        let clean = vec![attempt(P, 0.0, 503), attempt(F, 1.0, 503)];
        assert_eq!(
            verdict_of("both-fail", &[sent(503, false, clean)]).verdict,
            Verdict::Pass
        );
    }

    #[test]
    fn notes_name_retries_and_missing_parameters() {
        let cases = catalogue(&Timing::fast(), &GiveUpBounds::default(), false);
        let case = cases.iter().find(|c| c.id == "503").unwrap();
        let mut s = sent(
            200,
            true,
            vec![
                attempt(P, 0.0, 503),
                attempt(P, 1.0, 503),
                attempt(F, 2.0, 200),
            ],
        );
        s.params_sent = vec!["seed".into(), "user".into()];
        s.attempts[2].params = vec!["seed".into()];
        s.attempts[1].params = vec!["seed".into(), "user".into()];
        let outcome = Outcome {
            before: None,
            case,
            requests: std::slice::from_ref(&s),
            after: None,
            health: None,
        };
        assert_eq!(
            notes(&outcome),
            [
                "the primary was tried 2 times",
                "the fallback did not receive the client's user"
            ]
        );
        // Informational checks never fail a case.
        let info = Check::informational(CheckId::ProbeDiscipline, Rule::FailedOver);
        assert_eq!(measure(&info, &outcome).severity, Severity::Informational);
    }
}
