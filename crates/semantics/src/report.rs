//! What `semantics` found, as one documented result type: the table,
//! findings and scorecard lines printed on stdout, and the JSON file
//! (`--json`, and `semantics.json` in `--out`) whose shape is
//! `schema/semantics.schema.json`, checked by a test.

use super::checks::{got, CheckResult};
use super::health::HealthView;
use super::honesty::{CaseHonesty, HonestyCard};
use super::observe::Sent;
use super::timing::Profile;
use super::verdict::Verdict;
use cb_faults::Role;
use cb_report::escape::line;
pub use cb_report::{json::pretty, Exporter, ReportError, Table};
use serde::{Deserialize, Serialize};

/// Everything `semantics` found.
#[derive(Debug, Clone, Serialize)]
pub struct SemanticsReport {
    /// The tool and its version.
    pub tool: String,
    /// The model id every request asked for.
    pub model: String,
    /// The timing profile (`full` or `fast`).
    pub profile: Profile,
    /// `--max-attempts-per-upstream`.
    pub max_attempts_per_upstream: u32,
    /// `--max-give-up`, milliseconds.
    pub max_give_up_ms: u64,
    /// Whether the cases that follow `--stream` streamed.
    pub stream: bool,
    /// Whose reading of a stream the verdicts took (`--client`).
    pub client: cb_wire::sse::ClientProfile,
    /// That client's rule, in words.
    pub client_rule: String,
    /// One entry per system, in start order.
    pub systems: Vec<SystemResult>,
}

/// The cases of one system.
#[derive(Debug, Clone, Serialize)]
pub struct SystemResult {
    /// The system's name.
    pub system: String,
    /// The model id it was asked for when not the report's `model`
    /// (`--gateway-model`, a systems file's `model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Wall time of its whole catalogue, milliseconds.
    pub wall_ms: f64,
    /// Its verdicts, counted.
    pub scorecard: Scorecard,
    /// What it said about who answered, held against the attempt log,
    /// counted per family (beside the verdicts, never in them).
    pub honesty: HonestyCard,
    /// The load phase (`--load`), when it ran.
    pub load: Option<super::load::LoadFigures>,
    /// One entry per case, in catalogue order.
    pub cases: Vec<CaseResult>,
}

/// The verdicts of one system, counted (scored cases only, except
/// `not_scored`). The grade summary holds it as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scorecard {
    /// Cases that passed.
    pub pass: u32,
    /// Cases answered with an advisory check failed.
    pub partial: u32,
    /// Cases not answered, with a clean error.
    pub safe: u32,
    /// Cases that failed.
    pub fail: u32,
    /// Cases that could not be exercised.
    pub inconclusive: u32,
    /// Cases reported but not scored.
    pub not_scored: u32,
}

impl Scorecard {
    /// Counts the verdicts of `cases`.
    pub fn of(cases: &[CaseResult]) -> Self {
        let mut card = Scorecard::default();
        for c in cases {
            if !c.scored {
                card.not_scored += 1;
                continue;
            }
            *card.slot(c.verdict) += 1;
        }
        card
    }

    fn slot(&mut self, verdict: Verdict) -> &mut u32 {
        match verdict {
            Verdict::Pass => &mut self.pass,
            Verdict::Partial => &mut self.partial,
            Verdict::Safe => &mut self.safe,
            Verdict::Fail => &mut self.fail,
            Verdict::Inconclusive => &mut self.inconclusive,
        }
    }

    /// The count of `verdict`.
    pub fn count(&self, verdict: Verdict) -> u32 {
        match verdict {
            Verdict::Pass => self.pass,
            Verdict::Partial => self.partial,
            Verdict::Safe => self.safe,
            Verdict::Fail => self.fail,
            Verdict::Inconclusive => self.inconclusive,
        }
    }

    /// `30 pass / 2 partial / 1 safe / 0 fail, 0 inconclusive`.
    pub fn line(&self) -> String {
        format!(
            "{} pass / {} partial / {} safe / {} fail, {} inconclusive",
            self.pass, self.partial, self.safe, self.fail, self.inconclusive
        )
    }
}

/// One case for one system.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The case id (`401`, `stream-cut`, ...).
    pub case: String,
    /// What the upstreams did.
    pub upstream: String,
    /// What passes.
    pub passes: String,
    /// Whether the verdict counts in the scorecard.
    pub scored: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, when it is not `pass`.
    pub reason: String,
    /// Every check, measured against its bound.
    pub checks: Vec<CheckResult>,
    /// Facts no check rules on.
    pub notes: Vec<String>,
    /// The system's claims about who answered (`model`, `usage`, routing
    /// headers), judged against the attempt log.
    pub honesty: CaseHonesty,
    /// Times the request was sent again after skipping the primary.
    pub resent: u32,
    /// The case's requests, as sent and seen.
    pub requests: Vec<Sent>,
    /// The healthy request after the case, if it has one.
    pub after: Option<Sent>,
    /// The health probes, for `fallback-health`.
    pub health: Option<HealthView>,
}

impl SemanticsReport {
    /// Scored cases that failed, over all systems.
    pub fn failures(&self) -> u32 {
        self.systems.iter().map(|s| s.scorecard.fail).sum()
    }

    /// Scored cases that were inconclusive, over all systems.
    pub fn inconclusive(&self) -> u32 {
        self.systems.iter().map(|s| s.scorecard.inconclusive).sum()
    }

    /// The result table, the findings under it, one scorecard line and
    /// one honesty line per system (with the claims the attempt log
    /// contradicts) and a summary line, safe for a terminal.
    pub fn render(&self) -> String {
        let mut table = Table::new([
            "system",
            "case",
            "client got",
            "primary/fallback attempts",
            "verdict",
            "failed checks",
        ]);
        for system in &self.systems {
            for c in &system.cases {
                let (client, attempts) = match c.requests.as_slice() {
                    [one] => (
                        one.client
                            .status
                            .map_or_else(|| "no answer".to_string(), |s| s.to_string()),
                        format!(
                            "{} / {}",
                            one.count(Role::Primary),
                            one.count(Role::Fallback)
                        ),
                    ),
                    many => {
                        let answered = many.iter().filter(|s| s.client.answered).count();
                        let p: u32 = many.iter().map(|s| s.count(Role::Primary)).sum();
                        let f: u32 = many.iter().map(|s| s.count(Role::Fallback)).sum();
                        (
                            format!("{answered}/{} answered", many.len()),
                            format!("{p} / {f}"),
                        )
                    }
                };
                let failed: Vec<String> = c
                    .checks
                    .iter()
                    .filter(|k| k.broken() && k.severity != super::case::Severity::Informational)
                    .map(|k| k.check.name())
                    .collect();
                let verdict = if c.scored {
                    c.verdict.as_str().to_string()
                } else {
                    format!("{} (not scored)", c.verdict.as_str())
                };
                table.push([
                    system.system.clone(),
                    c.case.clone(),
                    client,
                    attempts,
                    verdict,
                    if failed.is_empty() {
                        "-".to_string()
                    } else {
                        failed.join(", ")
                    },
                ]);
            }
        }
        let mut out = table.render();
        let mut findings = Vec::new();
        for system in &self.systems {
            for c in &system.cases {
                if c.verdict != Verdict::Pass && !c.reason.is_empty() {
                    findings.push(line(&format!(
                        "{} {}: {}: {}",
                        system.system,
                        c.case,
                        c.verdict.as_str(),
                        c.reason
                    )));
                }
                if let (Some(h), Verdict::Pass) = (&c.health, c.verdict) {
                    findings.push(line(&format!(
                        "{} {}: {}",
                        system.system,
                        c.case,
                        h.summary()
                    )));
                }
            }
            findings.extend(grouped_notes(system).iter().map(|n| line(n)));
        }
        if !findings.is_empty() {
            out.push('\n');
            out.push_str(&findings.join("\n"));
            out.push('\n');
        }
        out.push('\n');
        for system in &self.systems {
            out.push_str(&format!(
                "scorecard {}: {} ({:.1} s)\n",
                system.system,
                system.scorecard.line(),
                system.wall_ms / 1000.0
            ));
        }
        for system in &self.systems {
            if let Some(load) = &system.load {
                out.push_str(&format!("load {}: {}\n", system.system, load.line()));
            }
        }
        for system in &self.systems {
            let h = &system.honesty;
            let left_out = if h.unreported_tokens > 0 {
                format!(
                    "; {} tokens the attempts billed beyond what usage reports",
                    h.unreported_tokens
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "honesty {}: {}{left_out}\n",
                system.system,
                h.line()
            ));
            for c in &system.cases {
                for check in c.honesty.checks.iter().filter(|k| !k.honest) {
                    out.push_str(&line(&format!(
                        "  {} {}: {}",
                        c.case,
                        check.claim.as_str(),
                        check.value
                    )));
                    out.push('\n');
                }
            }
        }
        let cases = self.systems.first().map_or(0, |s| s.cases.len());
        let n = self.systems.len();
        out.push_str(&format!(
            "{cases} cases x {n} system{} ({} profile, streams read as {}): {} fail, {} inconclusive\n",
            if n == 1 { "" } else { "s" },
            match self.profile {
                Profile::Full => "full",
                Profile::Fast => "fast",
            },
            self.client,
            self.failures(),
            self.inconclusive()
        ));
        // What gateways sent (reasons, model names, header values) reaches
        // a terminal here: each of those lines was made one line above.
        cb_report::escape::terminal(&out)
    }
}

/// A system's notes, each printed once with the cases it holds for.
fn grouped_notes(system: &SystemResult) -> Vec<String> {
    let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
    for c in &system.cases {
        let mut all = c.notes.clone();
        if c.resent > 0 {
            all.push(format!(
                "the primary was skipped (a cooldown after an earlier case?); the request was sent {} more time(s)",
                c.resent
            ));
        }
        for note in all {
            match notes.iter_mut().find(|(n, _)| *n == note) {
                Some((_, cases)) => cases.push(&c.case),
                None => notes.push((note, vec![&c.case])),
            }
        }
    }
    notes
        .into_iter()
        .map(|(note, cases)| {
            let which = if cases.len() == system.cases.len() {
                "every case".to_string()
            } else {
                cases.join(", ")
            };
            format!("{} {which}: note: {note}", system.system)
        })
        .collect()
}

/// What a case's last request got, in words (for scorecards).
pub fn client_got(c: &CaseResult) -> String {
    c.requests.last().map_or_else(|| "nothing".to_string(), got)
}

/// `--json` and `semantics.json`: the report as pretty JSON.
#[derive(Debug, Clone, Copy)]
pub struct SemanticsJson;

impl Exporter<SemanticsReport> for SemanticsJson {
    fn file_name(&self) -> &'static str {
        "semantics.json"
    }
    fn render(&self, data: &SemanticsReport) -> Result<Vec<u8>, ReportError> {
        pretty("semantics.json", data)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::case::{CheckId, Severity};
    use super::super::observe::{AttemptView, ClientView};
    use super::*;
    use cb_testkit::Schema;

    pub(crate) fn fixture() -> SemanticsReport {
        let sent = Sent {
            conversation: "semantics-503".into(),
            sent_ms: 0.0,
            client: ClientView {
                status: Some(200),
                error: None,
                answered: true,
                complete: true,
                marked_partial: false,
                answer_chars: 300,
                expected_chars: 300,
                finish_reason: Some("stop".into()),
                model: Some("continuity-sim-fallback".into()),
                usage: true,
                completion_tokens: None,
                prompt_tokens: None,
                models: Vec::new(),
                routing: Vec::new(),
                stated_wait_ms: None,
                headers_ms: None,
                answer_tokens: 0,
                latency_ms: 3.5,
                hung: false,
                contract_violations: Vec::new(),
            },
            attempts: vec![AttemptView {
                role: Role::Fallback,
                attempt: 1,
                at_ms: 1.0,
                status: Some(200),
                action: cb_base::record::AttemptAction::Ok,
                act: "answer".into(),
                model: "continuity-sim-fallback".into(),
                params: vec!["seed".into()],
                prefill: false,
                max_tokens: Some(serde_json::json!(256)),
                thinking_disabled: false,
                reasoning: false,
                gave_up: false,
                duration_ms: 1.0,
                billed: None,
            }],
            params_sent: vec!["seed".into(), "user".into()],
        };
        let case = |id: &str, verdict, reason: &str| CaseResult {
            case: id.into(),
            upstream: "answers 503".into(),
            passes: "fail over".into(),
            scored: true,
            verdict,
            reason: reason.into(),
            checks: vec![CheckResult {
                check: CheckId::FailedOver,
                severity: Severity::Required,
                passed: verdict != Verdict::Fail,
                applicable: true,
                value: "1 fallback attempts".into(),
                bound: "at least 1 fallback attempt".into(),
            }],
            notes: vec!["the fallback did not receive the client's user".into()],
            honesty: crate::honesty::CaseHonesty {
                checks: vec![crate::honesty::HonestyCheck {
                    claim: crate::honesty::Claim::Model,
                    honest: verdict != Verdict::Fail,
                    value: "the answer names fb; the fallback answered as fb".into(),
                }],
                unreported_tokens: 3,
            },
            resent: 0,
            requests: vec![sent.clone()],
            after: None,
            health: None,
        };
        let cases = vec![
            case("503", Verdict::Pass, ""),
            case(
                "401",
                Verdict::Fail,
                "no_failover: 1 fallback attempts (bound: 0 fallback attempts)",
            ),
        ];
        SemanticsReport {
            tool: "continuity-bench 0.1.0".into(),
            model: "continuity-sim".into(),
            profile: Profile::Fast,
            max_attempts_per_upstream: 2,
            max_give_up_ms: 60_000,
            stream: false,
            client: cb_wire::sse::ClientProfile::OpenAiSdk,
            client_rule: cb_wire::sse::ClientProfile::OpenAiSdk.rule().into(),
            systems: vec![SystemResult {
                system: "gw".into(),
                model: Some("acme::continuity-sim".into()),
                wall_ms: 1234.0,
                scorecard: Scorecard::of(&cases),
                honesty: crate::honesty::HonestyCard::of(cases.iter().map(|c| &c.honesty)),
                load: Some(crate::load::figures(
                    &[sent.clone(), sent.clone()],
                    2,
                    crate::load::LoadFault::PrimaryLimited,
                    (
                        std::time::Duration::from_secs(1),
                        std::time::Duration::from_secs(10),
                    ),
                    42,
                )),
                cases,
            }],
        }
    }

    fn schema() -> Schema {
        Schema::new(include_str!("../../../schema/semantics.schema.json"))
    }

    fn errors(instance: &serde_json::Value) -> Vec<String> {
        schema().errors(instance)
    }

    #[test]
    fn the_json_matches_its_schema_and_the_schema_bites() {
        let json: serde_json::Value =
            serde_json::from_slice(&SemanticsJson.render(&fixture()).unwrap()).unwrap();
        assert_eq!(errors(&json), Vec::<String>::new());
        for (pointer, bad) in [
            ("/systems/0/cases/0/verdict", serde_json::json!("fine")),
            (
                "/systems/0/cases/0/checks/0/severity",
                serde_json::json!("optional"),
            ),
            ("/systems/0/scorecard/pass", serde_json::json!(-1)),
            ("/profile", serde_json::json!("slow")),
        ] {
            let mut broken = json.clone();
            *broken.pointer_mut(pointer).unwrap() = bad;
            assert!(!errors(&broken).is_empty(), "{pointer}");
        }
    }

    #[test]
    fn every_check_of_the_catalogue_is_named_in_the_schema() {
        use super::super::catalogue::catalogue;
        use super::super::timing::{GiveUpBounds, Timing};
        let schema = schema();
        let names = &schema.json()["$defs"]["check"]["properties"]["check"]["enum"];
        for case in catalogue(&Timing::fast(), &GiveUpBounds::default(), true) {
            for check in case.checks {
                let name = serde_json::to_value(check.id).unwrap();
                assert!(names.as_array().unwrap().contains(&name), "{name}");
            }
        }
    }

    #[test]
    fn the_table_counts_and_prints_findings_and_scorecards() {
        let report = fixture();
        assert_eq!((report.failures(), report.inconclusive()), (1, 0));
        let text = report.render();
        assert!(text.starts_with("system  case  client got"), "{text}");
        assert!(text.contains("gw 401: fail: no_failover"), "{text}");
        assert!(
            text.contains("gw every case: note: the fallback did not receive"),
            "{text}"
        );
        assert!(
            text.contains("scorecard gw: 1 pass / 0 partial / 0 safe / 1 fail, 0 inconclusive"),
            "{text}"
        );
        assert!(
            text.contains("2 cases x 1 system (fast profile, streams read as openai-sdk): 1 fail"),
            "{text}"
        );
    }
}
