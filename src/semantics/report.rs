//! What `semantics` found, as one documented result type: the table and
//! findings printed on stdout, and the JSON file (`--json`) whose shape is
//! `schema/semantics.schema.json`, checked by a test.

use super::cases::CASES;
use super::verdict::{CaseStatus, CaseVerdict, Observation};
use crate::report::{json::pretty, Exporter, ReportError, Table};
use serde::Serialize;

/// Everything `semantics` found.
#[derive(Debug, Clone, Serialize)]
pub struct SemanticsReport {
    /// The tool and its version.
    pub tool: String,
    /// The model id every request asked for.
    pub model: String,
    /// One entry per system, in start order.
    pub systems: Vec<SystemResult>,
}

/// The cases of one system.
#[derive(Debug, Clone, Serialize)]
pub struct SystemResult {
    /// The system's name.
    pub system: String,
    /// One entry per case, in [`CASES`] order.
    pub cases: Vec<CaseResult>,
}

/// One case for one system.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The case id (`401`, `timeout`, ...).
    pub case: String,
    /// What the primary did.
    pub primary: String,
    /// What the decision tree says: `deliver`, `pass through` or `fail over`.
    pub expected: String,
    /// What was seen.
    pub observation: Observation,
    /// Whether that is what the decision tree says.
    pub verdict: CaseVerdict,
}

impl SemanticsReport {
    /// Cases that deviate from the decision tree, over all systems.
    pub fn deviations(&self) -> usize {
        self.count(CaseStatus::Deviates)
    }

    /// Cases that showed nothing (the primary never saw the request).
    pub fn inconclusive(&self) -> usize {
        self.count(CaseStatus::Inconclusive)
    }

    fn count(&self, status: CaseStatus) -> usize {
        self.systems
            .iter()
            .flat_map(|s| &s.cases)
            .filter(|c| c.verdict.status == status)
            .count()
    }

    /// The result table and, under it, every finding and note.
    pub fn render(&self) -> String {
        let mut table = Table::new([
            "system",
            "case",
            "expected",
            "client got",
            "primary/fallback attempts",
            "fallback model",
            "verdict",
        ]);
        for system in &self.systems {
            for c in &system.cases {
                let o = &c.observation;
                table.push([
                    system.system.clone(),
                    c.case.clone(),
                    c.expected.clone(),
                    o.client_status
                        .map_or_else(|| "no answer".to_string(), |s| s.to_string()),
                    format!("{} / {}", o.primary_attempts, o.fallback_attempts),
                    o.fallback_model.clone().unwrap_or_else(|| "-".to_string()),
                    match c.verdict.status {
                        CaseStatus::Expected => "ok",
                        CaseStatus::Deviates => "DEVIATES",
                        CaseStatus::Inconclusive => "inconclusive",
                    }
                    .to_string(),
                ]);
            }
        }
        let mut out = table.render();
        let mut findings = Vec::new();
        for system in &self.systems {
            for c in &system.cases {
                if !c.verdict.finding.is_empty() {
                    findings.push(format!(
                        "{} {}: {}",
                        system.system, c.case, c.verdict.finding
                    ));
                }
            }
            // A note that holds for many cases (a parameter never
            // forwarded) is printed once, with the cases it holds for.
            let mut notes: Vec<(&str, Vec<&str>)> = Vec::new();
            for c in &system.cases {
                for note in &c.verdict.notes {
                    match notes.iter_mut().find(|(n, _)| n == note) {
                        Some((_, cases)) => cases.push(&c.case),
                        None => notes.push((note, vec![&c.case])),
                    }
                }
            }
            for (note, cases) in notes {
                let which = if cases.len() == system.cases.len() {
                    "every case".to_string()
                } else {
                    cases.join(", ")
                };
                findings.push(format!("{} {which}: note: {note}", system.system));
            }
        }
        if !findings.is_empty() {
            out.push('\n');
            out.push_str(&findings.join("\n"));
            out.push('\n');
        }
        let n = self.systems.len();
        out.push_str(&format!(
            "\n{} cases x {n} system{}: {} deviate from the decision tree, {} inconclusive\n",
            CASES.len(),
            if n == 1 { "" } else { "s" },
            self.deviations(),
            self.inconclusive()
        ));
        out
    }
}

/// `--json`: the report as pretty JSON.
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
mod tests {
    use super::*;

    fn fixture() -> SemanticsReport {
        let observation = Observation {
            client_status: Some(200),
            client_error: None,
            contract_violations: Vec::new(),
            primary_attempts: 1,
            fallback_attempts: 1,
            fallback_model: Some("continuity-sim-fallback".into()),
            primary_params_missing: Some(Vec::new()),
            fallback_params_missing: None,
            latency_ms: 3.5,
        };
        let case = |id: &str, status, finding: &str| CaseResult {
            case: id.into(),
            primary: "answers 503".into(),
            expected: "fail over".into(),
            observation: observation.clone(),
            verdict: CaseVerdict {
                status,
                finding: finding.into(),
                notes: vec!["the fallback did not receive the client's user".into()],
            },
        };
        SemanticsReport {
            tool: "continuity-bench 0.1.0".into(),
            model: "continuity-sim".into(),
            systems: vec![SystemResult {
                system: "gw".into(),
                cases: vec![
                    case("503", CaseStatus::Expected, ""),
                    case("401", CaseStatus::Deviates, "failed over on a 401"),
                ],
            }],
        }
    }

    fn errors(instance: &serde_json::Value) -> Vec<String> {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schema/semantics.schema.json")).unwrap();
        assert!(jsonschema::draft202012::meta::is_valid(&schema));
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect()
    }

    #[test]
    fn the_json_matches_its_schema_and_the_schema_bites() {
        let json: serde_json::Value =
            serde_json::from_slice(&SemanticsJson.render(&fixture()).unwrap()).unwrap();
        assert_eq!(errors(&json), Vec::<String>::new());
        let mut broken = json.clone();
        broken["systems"][0]["cases"][0]["verdict"]["status"] = "fine".into();
        assert!(!errors(&broken).is_empty());
    }

    #[test]
    fn the_table_counts_and_prints_findings() {
        let report = fixture();
        assert_eq!((report.deviations(), report.inconclusive()), (1, 0));
        let text = report.render();
        assert!(text.starts_with("system  case  expected"), "{text}");
        assert!(text.contains("DEVIATES"), "{text}");
        assert!(text.contains("gw 401: failed over on a 401"), "{text}");
        assert!(
            text.contains("gw every case: note: the fallback did not receive"),
            "{text}"
        );
    }
}
