//! One sentence per system, generated from its figures, at the top of the
//! grade: what it does right and, after "but", what it gets wrong, by
//! family of failure ("rides out every transient error, but presents
//! truncated answers as complete (stream-cut, stream-truncated)"). Every
//! word comes from a verdict or a figure on the same page; a family the
//! catalogue did not run is not mentioned.

use super::summary::{CaseEvidence, GradeSummary, GradeSystem};
use cb_base::contract::ContractName;
use cb_semantics::case::CheckId;
use cb_semantics::verdict::Verdict;

/// A family of cases and how the sentence speaks of it.
struct Family {
    /// The cases in it, by id.
    cases: &'static [&'static str],
    /// What every case passing says.
    good: &'static str,
    /// What a failed case says (its ids follow in brackets).
    bad: &'static str,
}

const TRANSIENT: Family = Family {
    cases: &[
        "404",
        "429",
        "500",
        "502",
        "503",
        "504",
        "timeout",
        "cut",
        "429-retry-after",
        "429-reset-header",
        "429-reset-tokens",
        "429-retry-in-body",
        "429-retry-in-message",
        "429-persistent",
        "500-once",
        "503-persistent",
        "reset-before-headers",
        "no-response",
        "flap",
        "429-stuck",
        "all-cooling",
        "recooled",
        "both-fail",
    ],
    good: "rides out every transient error, rate limit and cooldown",
    bad: "mishandles transient errors, rate limits or cooldowns",
};

const PERMANENT: Family = Family {
    cases: &[
        "400",
        "401",
        "402",
        "403",
        "content-filter",
        "context-length",
    ],
    good: "passes permanent errors through",
    bad: "mishandles permanent errors",
};

const STREAMS: Family = Family {
    cases: &[
        "slow-first-token",
        "stream-cut",
        "stream-stall",
        "stream-truncated",
        "stream-error-first",
        "stream-error-midway",
        "fallback-stream-error",
        "stream-keepalive",
        "malformed-chunk",
        "no-done",
        "prefill-rejected",
        "broken-200",
        "body-stall",
        "finish-length",
        "continuation-usage",
        "slow-reasoning-primary",
    ],
    good: "recovers from broken, stalled and cut answers",
    bad: "mishandles broken answers",
};

/// The cases of no family: each is named by its id when it fails.
const OTHERS: &[&str] = &[
    "ok",
    "schema",
    "accounting",
    "model-id-map",
    "extra-params",
    "fallback-health",
];

/// Each system of `s` with its sentence, those with one only.
pub fn headlines(s: &GradeSummary) -> Vec<(&GradeSystem, String)> {
    s.systems
        .iter()
        .map(|sys| (sys, headline(sys)))
        .filter(|(_, line)| !line.is_empty())
        .collect()
}

/// The sentence for `sys`; empty when neither the catalogue nor a
/// continuity run measured it.
pub fn headline(sys: &GradeSystem) -> String {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    let scored: Vec<&CaseEvidence> = sys.cases.iter().filter(|c| c.scored).collect();
    if let Some(paper) = sys.continuity.iter().find(|c| c.profile == "paper") {
        if let Some(r) = paper.cpr.rate {
            let kept = format!(
                "keeps {:.1} % of conversations through a failover ({}/{})",
                100.0 * r,
                paper.cpr.successes,
                paper.cpr.trials
            );
            if r >= 0.95 {
                good.push(kept);
            } else {
                bad.push(kept.replacen("keeps", "keeps only", 1));
            }
        }
    }
    // Answers cut but presented as whole are named first, whatever their
    // family: it is what a user would not notice.
    let truncated: Vec<&str> = scored
        .iter()
        .filter(|c| c.verdict == Verdict::Fail && fails(c, &CheckId::NoTruncatedSuccess.name()))
        .map(|c| c.case.as_str())
        .collect();
    if !truncated.is_empty() {
        bad.push(format!(
            "presents truncated answers as complete ({})",
            truncated.join(", ")
        ));
    }
    for family in [TRANSIENT, PERMANENT, STREAMS] {
        let mine: Vec<&&CaseEvidence> = scored
            .iter()
            .filter(|c| family.cases.contains(&c.case.as_str()))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let failed: Vec<&str> = mine
            .iter()
            .filter(|c| c.verdict == Verdict::Fail && !truncated.contains(&c.case.as_str()))
            .map(|c| c.case.as_str())
            .collect();
        if !failed.is_empty() {
            bad.push(format!("{} ({})", family.bad, failed.join(", ")));
        }

        let all_ok = mine
            .iter()
            .all(|c| matches!(c.verdict, Verdict::Pass | Verdict::Partial));
        if all_ok {
            good.push(family.good.to_string());
        }
    }
    let safe_all: Vec<&str> = scored
        .iter()
        .filter(|c| c.verdict == Verdict::Safe)
        .map(|c| c.case.as_str())
        .collect();
    if !safe_all.is_empty() {
        bad.push(format!(
            "gives a clean error where an answer was possible ({})",
            safe_all.join(", ")
        ));
    }
    let other: Vec<&str> = scored
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        // The cases of no family, and any case a family does not list yet
        // (a new one): named by id rather than left out.
        .filter(|c| {
            let id = c.case.as_str();
            OTHERS.contains(&id)
                || ![TRANSIENT, PERMANENT, STREAMS]
                    .iter()
                    .any(|f| f.cases.contains(&id))
        })
        .filter(|c| !truncated.contains(&c.case.as_str()))
        .map(|c| c.case.as_str())
        .collect();
    if !other.is_empty() {
        bad.push(format!("fails {}", other.join(", ")));
    }
    match (good.is_empty(), bad.is_empty()) {
        (true, true) => String::new(),
        (false, true) => capitalised(&good.join(", ")),
        (true, false) => capitalised(&bad.join("; ")),
        (false, false) => capitalised(&format!("{}, but {}", good.join(", "), bad.join("; "))),
    }
}

/// The line under the contract rates of `profile` when every system
/// measured there shows the same counts, some of them broken: the counts
/// do not tell the systems apart (equal counts are not proof that no
/// system changed an answer, only that the rates cannot show it). `None`
/// with fewer than two systems, or when they differ.
pub fn same_contract_rates(s: &GradeSummary, profile: &str) -> Option<String> {
    let counts: Vec<Vec<(ContractName, u64, u64)>> = s
        .systems
        .iter()
        .filter_map(|sys| sys.continuity.iter().find(|c| c.profile == profile))
        .map(|f| {
            f.contracts
                .iter()
                .map(|c| (c.contract, c.broken.successes, c.broken.trials))
                .collect()
        })
        .collect();
    let first = counts.first()?;
    let broken = first.iter().any(|(_, b, _)| *b > 0);
    (counts.len() >= 2 && broken && counts.iter().all(|c| c == first)).then(|| {
        format!(
            "Under {profile}, every system shows the same counts for every contract: the degradations come from the upstreams, and these counts do not tell the systems apart (what a system that passes its upstreams' answers on unchanged would show; each run's turns.csv has the answers)."
        )
    })
}

/// Whether the required check `id` broke in case `c`.
fn fails(c: &CaseEvidence, id: &str) -> bool {
    c.checks
        .iter()
        .any(|k| k.check == id && k.applicable && !k.passed)
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::summary::{CheckEvidence, GradedKind};
    use cb_semantics::case::Severity;

    fn case(id: &str, verdict: Verdict, broken: Option<&str>) -> CaseEvidence {
        CaseEvidence {
            case: id.into(),
            verdict,
            scored: true,
            reason: String::new(),
            checks: broken
                .map(|check| CheckEvidence {
                    check: check.into(),
                    severity: Severity::Required,
                    passed: false,
                    applicable: true,
                    value: String::new(),
                    bound: String::new(),
                })
                .into_iter()
                .collect(),
            notes: Vec::new(),
            requests: Vec::new(),
        }
    }

    fn system(cases: Vec<CaseEvidence>) -> GradeSystem {
        GradeSystem {
            name: "gw".into(),
            kind: GradedKind::Gateway,
            url: None,
            notes: String::new(),
            control: false,
            continuity: Vec::new(),
            scorecard: None,
            honesty: None,
            load: None,
            cases,
            unmeasured: Vec::new(),
        }
    }

    #[test]
    fn every_case_of_the_catalogue_has_a_family() {
        let cases = cb_semantics::catalogue::catalogue(
            &cb_semantics::timing::Timing::fast(),
            &cb_semantics::timing::GiveUpBounds::default(),
            false,
        );
        for case in cases {
            let listed = [TRANSIENT, PERMANENT, STREAMS]
                .iter()
                .filter(|f| f.cases.contains(&case.id))
                .count()
                + usize::from(OTHERS.contains(&case.id));
            assert_eq!(listed, 1, "{} is in {listed} families", case.id);
        }
    }

    #[test]
    fn a_gateway_that_relays_cut_streams_is_told_so() {
        let sys = system(vec![
            case("503", Verdict::Pass, None),
            case("timeout", Verdict::Pass, None),
            case("401", Verdict::Pass, None),
            case("stream-cut", Verdict::Fail, Some("no_truncated_success")),
            case(
                "stream-truncated",
                Verdict::Fail,
                Some("no_truncated_success"),
            ),
            case("stream-stall", Verdict::Fail, Some("stall_bounded")),
        ]);
        assert_eq!(
            headline(&sys),
            "Rides out every transient error, rate limit and cooldown, passes permanent errors through, but presents truncated answers as complete (stream-cut, stream-truncated); mishandles broken answers (stream-stall)."
        );
    }

    #[test]
    fn the_same_contract_counts_everywhere_are_said_once_and_differences_are_not() {
        use crate::grade::summary::ContinuityFigures;
        let figures = |broken: u64| ContinuityFigures {
            profile: "degraded".into(),
            planned: 0,
            events: 0,
            cpr: cb_stats::rate(0, 0),
            cpr_clustered: None,
            clean_cpr: cb_stats::rate(0, 0),
            availability: cb_stats::rate(0, 0),
            contracts: vec![cb_continuity::summary::ContractRate {
                contract: ContractName::JunkPrefix,
                applied: 40,
                undetermined: 0,
                broken: cb_stats::rate(broken, 40),
            }],
            latency_by_length: Vec::new(),
            latency_by_mode: Vec::new(),
            storm: false,
            warning: None,
            past_fault: None,
        };
        let mut summary = crate::grade::tests::fixture();
        summary.systems.truncate(2);
        for (sys, broken) in summary.systems.iter_mut().zip([3, 3]) {
            sys.continuity = vec![figures(broken)];
        }
        let line = same_contract_rates(&summary, "degraded").unwrap();
        assert!(
            line.contains("these counts do not tell the systems apart"),
            "{line}"
        );
        assert_eq!(same_contract_rates(&summary, "paper"), None);
        summary.systems[1].continuity = vec![figures(4)];
        assert_eq!(same_contract_rates(&summary, "degraded"), None);
        for sys in &mut summary.systems {
            sys.continuity = vec![figures(0)];
        }
        assert_eq!(
            same_contract_rates(&summary, "degraded"),
            None,
            "nothing broken"
        );
    }

    #[test]
    fn a_clean_gateway_gets_only_praise_and_nothing_measured_gets_nothing() {
        let sys = system(vec![
            case("503", Verdict::Pass, None),
            case("stream-cut", Verdict::Partial, None),
        ]);
        assert_eq!(
            headline(&sys),
            "Rides out every transient error, rate limit and cooldown, recovers from broken, stalled and cut answers."
        );
        let never = system(vec![
            case("503", Verdict::Fail, Some("failed_over")),
            case("no-response", Verdict::Safe, None),
        ]);
        assert_eq!(
            headline(&never),
            "Mishandles transient errors, rate limits or cooldowns (503); gives a clean error where an answer was possible (no-response)."
        );
        assert_eq!(headline(&system(Vec::new())), "");
    }
}
