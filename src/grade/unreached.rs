//! What the page says about a system's inconclusive semantics cases. A case
//! is inconclusive when the primary never saw its request, and there are
//! two unlike reasons: the system skipped the primary (a cooldown after an
//! earlier case), or the system itself could not be connected to, because
//! it stopped (a gateway that crashes mid-catalogue, as
//! `@nullplatform/llm-gateway` does on an aborted stream) or never started.
//! The second kind is told once, with the case where it began, rather than
//! as a cooldown per case: those cases are unmeasured, and the system's
//! log, not its failover policy, says why.

use super::summary::CaseEvidence;
use cb_semantics::verdict::Verdict;

/// The client text of a request that found no system to connect to
/// (`cb_client`'s transport reason for a connect error).
const NO_CONNECTION: &str = cb_client::CONNECT_FAILED;

/// Whether nothing of `case` reached the system: inconclusive, and every
/// request failed to connect with no attempt at either upstream.
fn unreached(case: &CaseEvidence) -> bool {
    case.verdict == Verdict::Inconclusive
        && !case.requests.is_empty()
        && case
            .requests
            .iter()
            .all(|r| r.attempts.is_empty() && r.client.starts_with(NO_CONNECTION))
}

/// The unmeasured notes for the inconclusive cases of one system, `cases`
/// in the order they ran (the catalogue's order, one after another).
pub fn inconclusive_notes(cases: &[CaseEvidence]) -> Vec<String> {
    let mut notes = Vec::new();
    let gone: Vec<usize> = (0..cases.len()).filter(|&i| unreached(&cases[i])).collect();
    if let (Some(&first), Some(&last)) = (gone.first(), gone.last()) {
        let got = cases[first]
            .requests
            .first()
            .map_or("", |r| r.client.as_str());
        let to_the_end = last + 1 == cases.len() && gone.len() == last - first + 1;
        notes.push(if to_the_end && gone.len() > 1 {
            format!(
                "semantics: the system stopped accepting connections at case `{}` and did not come back: the last {} of the {} cases found nothing to connect to ({got}); they are unmeasured, not failed, and the system's own log says why it stopped",
                cases[first].case,
                gone.len(),
                cases.len()
            )
        } else {
            let names: Vec<String> = gone.iter().map(|&i| format!("`{}`", cases[i].case)).collect();
            format!(
                "semantics: the system could not be connected to in {} case(s): {} ({got}); unmeasured, not failed",
                gone.len(),
                names.join(", ")
            )
        });
    }
    for (i, c) in cases.iter().enumerate() {
        if c.verdict == Verdict::Inconclusive && !gone.contains(&i) {
            notes.push(format!(
                "semantics case `{}`: inconclusive: {}",
                c.case, c.reason
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::super::summary::{AttemptEvidence, RequestEvidence};
    use super::*;

    fn case(id: &str, verdict: &str, client: &str, attempts: usize) -> CaseEvidence {
        CaseEvidence {
            case: id.into(),
            verdict: serde_json::from_value(serde_json::json!(verdict)).unwrap(),
            scored: true,
            reason: format!("the primary never saw the request; the client got {client}"),
            checks: vec![],
            notes: vec![],
            requests: vec![RequestEvidence {
                client: client.into(),
                attempts: (0..attempts)
                    .map(|n| AttemptEvidence {
                        role: cb_base::Role::Fallback,
                        attempt: u32::try_from(n + 1).unwrap_or(u32::MAX),
                        at_ms: 1.0,
                        status: Some(200),
                        action: cb_base::record::AttemptAction::Ok,
                        detail: "answer".into(),
                        model: "continuity-sim-fallback".into(),
                    })
                    .collect(),
            }],
        }
    }

    const REFUSED: &str = "connection failed: Connection refused (os error 111)";

    #[test]
    fn a_system_that_stops_mid_catalogue_is_told_once_from_where_it_stopped() {
        let cases = vec![
            case("ok", "pass", "HTTP 200 with the whole answer", 0),
            case("stream-stall", "inconclusive", REFUSED, 0),
            case("no-done", "inconclusive", REFUSED, 0),
            case("flap", "inconclusive", REFUSED, 0),
        ];
        let notes = inconclusive_notes(&cases);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("stopped accepting connections at case `stream-stall`")
                && notes[0].contains("the last 3 of the 4 cases")
                && notes[0].contains("Connection refused"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_cooldown_is_not_a_stopped_system() {
        // The fallback answered (an attempt was logged) and the client got a 200:
        // the primary was skipped, the system was up.
        let cases = vec![
            case("401", "fail", "HTTP 200 with the whole answer", 1),
            case("402", "inconclusive", "HTTP 200 with the whole answer", 1),
            case("403", "inconclusive", "HTTP 200 with the whole answer", 1),
        ];
        let notes = inconclusive_notes(&cases);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes.iter().all(|n| n.starts_with("semantics case `40")));
        assert!(notes.iter().all(|n| !n.contains("connect")), "{notes:?}");
        // The reason is quoted once, not wrapped in a second copy of itself.
        assert_eq!(notes[0].matches("the primary never saw").count(), 1);
    }

    #[test]
    fn unreachable_cases_in_the_middle_are_listed_not_called_a_stop() {
        let cases = vec![
            case("ok", "inconclusive", REFUSED, 0),
            case("401", "pass", "HTTP 401", 0),
            case("402", "inconclusive", REFUSED, 0),
            case("403", "pass", "HTTP 403", 0),
        ];
        let notes = inconclusive_notes(&cases);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("in 2 case(s): `ok`, `402`") && !notes[0].contains("stopped"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_connection_error_with_upstream_attempts_is_not_unreached() {
        // The system was reached (it called the fallback) and then the
        // connection failed: that is the system's answer, not its absence.
        let cases = vec![case("cut", "inconclusive", REFUSED, 1)];
        let notes = inconclusive_notes(&cases);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("semantics case `cut`: inconclusive: "));
    }
}
