//! Calibration: how far each contract can be trusted, measured on
//! hand-labelled replies (`datasets/contracts-calibration.jsonl`, compiled
//! into the binary; a path overrides it).
//!
//! Every case is a request, a reply and the expected label (`pass` or
//! `fail`) of each contract that applies to it. The report gives, per
//! contract: cases applicable, agreement with the labels on the cases it
//! decided, its false-positive rate on replies labelled clean (goal 0),
//! false negatives, how many it left undetermined, and every disagreement.

use super::{ContractInput, ContractName, Contracts, Language, Outcome};
use cb_wire::openai::{ChatMessage, ChatRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Path of the committed calibration set, relative to the repository root.
pub const DEFAULT_CASES_PATH: &str = "datasets/contracts-calibration.jsonl";

/// The committed calibration set, compiled in.
pub const DEFAULT_CASES: &str = include_str!("../../../datasets/contracts-calibration.jsonl");

/// Goal: agreement with the labels on decided cases, per contract.
pub const AGREEMENT_GOAL: f64 = 0.95;

/// The hand label of one contract on one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// The reply keeps the contract.
    Pass,
    /// The reply breaks it.
    Fail,
}

/// Where a case's reply comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Written by hand for the calibration set.
    Hand,
    /// Produced by a degradation transform (`crate::upstream::degrade`) from a
    /// hand-written reply.
    Transform,
}

/// The request of a case: what the client sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseRequest {
    /// The conversation, as sent.
    pub messages: Vec<ChatMessage>,
    /// `response_format`, when structured output was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Value>,
    /// Whether the answer was streamed.
    #[serde(default)]
    pub stream: bool,
}

/// The reply of a case: what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseReply {
    /// The assembled assistant text.
    pub text: String,
    /// The finish reason, when one was received.
    pub finish_reason: Option<String>,
    /// Streams: milliseconds to the first content token; `null` when no
    /// content token arrived or the reply was not streamed.
    pub ttft_ms: Option<u64>,
}

/// One labelled reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationCase {
    /// Unique id (`pt-lang-01`).
    pub id: String,
    /// The language the conversation is in.
    pub language: Language,
    /// Hand-written or produced by a transform.
    pub origin: Origin,
    /// What the client sent.
    pub request: CaseRequest,
    /// The language the caller expects, when it knows (a canary probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_language: Option<Language>,
    /// What came back.
    pub reply: CaseReply,
    /// The expected label of every contract that applies.
    pub labels: BTreeMap<ContractName, Label>,
    /// Why the labels are what they are.
    pub note: String,
}

impl CalibrationCase {
    /// The case's request as the wire type the contracts read.
    pub fn chat_request(&self) -> ChatRequest {
        let mut extra = serde_json::Map::new();
        if let Some(format) = &self.request.response_format {
            extra.insert("response_format".into(), format.clone());
        }
        ChatRequest {
            model: "calibration".into(),
            messages: self.request.messages.clone(),
            stream: self.request.stream,
            stream_options: None,
            extra,
        }
    }

    /// The contract input of this case over `request` (from
    /// [`CalibrationCase::chat_request`]): a 200 answer.
    pub fn input<'a>(&'a self, request: &'a ChatRequest) -> ContractInput<'a> {
        ContractInput {
            request,
            expected_language: self.expected_language,
            status: 200,
            stream: self.request.stream,
            text: &self.reply.text,
            finish_reason: self.reply.finish_reason.as_deref(),
            ttft: self.reply.ttft_ms.map(Duration::from_millis),
            ttfb: None,
        }
    }
}

/// Why a calibration set could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The file could not be read.
    #[error("cannot read contract calibration set {path}: {source}; pass an existing JSONL file")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a valid case.
    #[error("{file}:{line}: not a contract calibration case: {source}; fix the line (fields: id, language, origin, request, expected_language, reply, labels, note)")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The cause.
        source: serde_json::Error,
    },
    /// A case is well-formed JSON but inconsistent.
    #[error("{file}:{line}: case {id}: {problem}")]
    Invalid {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The case id.
        id: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// The file holds no case.
    #[error("contract calibration set {0} holds no case; add one JSON case per line")]
    Empty(String),
}

/// Loads the calibration set at `path`, or the built-in one when `None`.
/// Returns the name of the source (the path, or the default path marked
/// built in) and the cases.
///
/// # Errors
/// [`CalibrationError`] naming the file and line to fix.
pub fn load_cases(path: Option<&Path>) -> Result<(String, Vec<CalibrationCase>), CalibrationError> {
    match path {
        None => {
            let name = format!("{DEFAULT_CASES_PATH} (built in)");
            let cases = parse_cases(DEFAULT_CASES, &name)?;
            Ok((name, cases))
        }
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| CalibrationError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            let name = path.display().to_string();
            let cases = parse_cases(&text, &name)?;
            Ok((name, cases))
        }
    }
}

/// Parses and checks calibration cases from JSONL `text`; `file` names it
/// in errors. Blank lines are skipped.
///
/// # Errors
/// [`CalibrationError`] with the line to fix.
pub fn parse_cases(text: &str, file: &str) -> Result<Vec<CalibrationCase>, CalibrationError> {
    let mut cases = Vec::new();
    let mut ids = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let case: CalibrationCase =
            serde_json::from_str(raw).map_err(|source| CalibrationError::Parse {
                file: file.to_string(),
                line,
                source,
            })?;
        let invalid = |problem: &str| CalibrationError::Invalid {
            file: file.to_string(),
            line,
            id: case.id.clone(),
            problem: problem.to_string(),
        };
        if !ids.insert(case.id.clone()) {
            return Err(invalid("duplicate id; give every case its own id"));
        }
        if case.labels.is_empty() {
            return Err(invalid(
                "`labels` is empty; label every contract that applies",
            ));
        }
        if case.note.trim().is_empty() {
            return Err(invalid("`note` must say why the labels are right"));
        }
        if case.reply.ttft_ms.is_some() && !case.request.stream {
            return Err(invalid(
                "`ttft_ms` is set but the request is not streamed; set `stream` or drop `ttft_ms`",
            ));
        }
        if !case.request.messages.iter().any(|m| m.role == "user") {
            return Err(invalid("the request has no user message"));
        }
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(CalibrationError::Empty(file.to_string()));
    }
    Ok(cases)
}

/// One contract's agreement with the labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContractCalibration {
    /// The contract.
    pub name: ContractName,
    /// Cases the contract applied to (gave an outcome).
    pub applicable: usize,
    /// Labelled pass, judged pass.
    pub true_pass: usize,
    /// Labelled fail, judged fail.
    pub true_fail: usize,
    /// Labelled pass, judged fail.
    pub false_positive: usize,
    /// Labelled fail, judged pass.
    pub false_negative: usize,
    /// Labelled pass, undetermined.
    pub undetermined_pass: usize,
    /// Labelled fail, undetermined.
    pub undetermined_fail: usize,
    /// Cases where one of label and outcome is missing (the contract
    /// applied to an unlabelled case, or did not apply to a labelled one).
    pub applicability_mismatch: usize,
}

impl ContractCalibration {
    /// No case counted yet for `name`.
    pub fn new(name: ContractName) -> Self {
        ContractCalibration {
            name,
            applicable: 0,
            true_pass: 0,
            true_fail: 0,
            false_positive: 0,
            false_negative: 0,
            undetermined_pass: 0,
            undetermined_fail: 0,
            applicability_mismatch: 0,
        }
    }

    /// Cases labelled pass with an outcome.
    pub fn labelled_pass(&self) -> usize {
        self.true_pass + self.false_positive + self.undetermined_pass
    }

    /// Cases labelled fail with an outcome.
    pub fn labelled_fail(&self) -> usize {
        self.true_fail + self.false_negative + self.undetermined_fail
    }

    /// Cases decided (pass or fail).
    pub fn decided(&self) -> usize {
        self.true_pass + self.true_fail + self.false_positive + self.false_negative
    }

    /// Cases left undetermined.
    pub fn undetermined(&self) -> usize {
        self.undetermined_pass + self.undetermined_fail
    }

    /// Agreement with the labels over decided cases; `None` when none was
    /// decided.
    pub fn agreement(&self) -> Option<f64> {
        let decided = self.decided();
        (decided > 0).then(|| (self.true_pass + self.true_fail) as f64 / decided as f64)
    }

    /// False positives over decided clean (labelled pass) cases; `None`
    /// when none was decided.
    pub fn false_positive_rate(&self) -> Option<f64> {
        let clean = self.true_pass + self.false_positive;
        (clean > 0).then(|| self.false_positive as f64 / clean as f64)
    }

    /// Whether this contract meets the goals: no false positive, agreement
    /// at least [`AGREEMENT_GOAL`], and no applicability mismatch.
    pub fn meets_goals(&self) -> bool {
        self.false_positive == 0
            && self.applicability_mismatch == 0
            && self.agreement().is_none_or(|a| a >= AGREEMENT_GOAL)
    }
}

/// A case where a contract and its label disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    /// The case id.
    pub id: String,
    /// The contract.
    pub contract: ContractName,
    /// The label, `None` when the case has none for this contract.
    pub label: Option<Label>,
    /// The outcome, `None` when the contract did not apply.
    pub outcome: Option<Outcome>,
    /// The case's note.
    pub note: String,
}

/// The calibration of every contract on one set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// Where the cases came from.
    pub source: String,
    /// Number of cases.
    pub cases: usize,
    /// Cases per conversation language.
    pub languages: BTreeMap<Language, usize>,
    /// Cases per origin (hand-written, transform).
    pub transform_cases: usize,
    /// One entry per contract, in [`ContractName::ALL`] order.
    pub contracts: Vec<ContractCalibration>,
    /// Every decided disagreement and applicability mismatch.
    pub disagreements: Vec<Disagreement>,
    /// Every undetermined outcome: (case id, contract, reason).
    pub undetermined: Vec<(String, ContractName, String)>,
}

/// Runs `contracts` on every case and compares with the labels.
pub fn calibrate(
    source: &str,
    cases: &[CalibrationCase],
    contracts: &Contracts,
) -> CalibrationReport {
    let mut per: BTreeMap<ContractName, ContractCalibration> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut undetermined = Vec::new();
    let mut languages = BTreeMap::new();
    for case in cases {
        *languages.entry(case.language).or_insert(0) += 1;
        let request = case.chat_request();
        for result in contracts.check(&case.input(&request)) {
            let tally = per
                .entry(result.name)
                .or_insert_with(|| ContractCalibration::new(result.name));
            let label = case.labels.get(&result.name).copied();
            if result.outcome.is_some() {
                tally.applicable += 1;
            }
            let disagree = match (label, &result.outcome) {
                (None, None) => false,
                (Some(_), None) | (None, Some(_)) => {
                    tally.applicability_mismatch += 1;
                    true
                }
                (Some(Label::Pass), Some(Outcome::Pass)) => {
                    tally.true_pass += 1;
                    false
                }
                (Some(Label::Fail), Some(Outcome::Fail { .. })) => {
                    tally.true_fail += 1;
                    false
                }
                (Some(Label::Pass), Some(Outcome::Fail { .. })) => {
                    tally.false_positive += 1;
                    true
                }
                (Some(Label::Fail), Some(Outcome::Pass)) => {
                    tally.false_negative += 1;
                    true
                }
                (Some(l), Some(Outcome::Undetermined { reason })) => {
                    match l {
                        Label::Pass => tally.undetermined_pass += 1,
                        Label::Fail => tally.undetermined_fail += 1,
                    }
                    undetermined.push((case.id.clone(), result.name, reason.clone()));
                    false
                }
            };
            if disagree {
                disagreements.push(Disagreement {
                    id: case.id.clone(),
                    contract: result.name,
                    label,
                    outcome: result.outcome.clone(),
                    note: case.note.clone(),
                });
            }
        }
    }
    CalibrationReport {
        source: source.to_string(),
        cases: cases.len(),
        languages,
        transform_cases: cases
            .iter()
            .filter(|c| c.origin == Origin::Transform)
            .count(),
        contracts: per.into_values().collect(),
        disagreements,
        undetermined,
    }
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_string(), |r| format!("{:.1} %", r * 100.0))
}

impl CalibrationReport {
    /// Whether every contract meets the goals (no false positive, agreement
    /// at least [`AGREEMENT_GOAL`] on decided cases).
    pub fn meets_goals(&self) -> bool {
        self.contracts.iter().all(ContractCalibration::meets_goals)
    }

    /// The report as plain text: a table, then the disagreements and the
    /// undetermined outcomes.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let langs: Vec<String> = self
            .languages
            .iter()
            .map(|(l, n)| format!("{} {n}", l.code()))
            .collect();
        let _ = writeln!(
            out,
            "Contract calibration on {}: {} cases, {} from transforms; {} languages: {}",
            self.source,
            self.cases,
            self.transform_cases,
            self.languages.len(),
            langs.join(", ")
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<12} {:>10} {:>11} {:>19} {:>16} {:>4} {:>12}",
            "contract",
            "applicable",
            "labels p/f",
            "agreement (decided)",
            "FPR (clean)",
            "FN",
            "undetermined"
        );
        for c in &self.contracts {
            let name = c.name.as_str();
            let agree = format!(
                "{}/{} {}",
                c.true_pass + c.true_fail,
                c.decided(),
                percent(c.agreement())
            );
            let fpr = format!(
                "{}/{} {}",
                c.false_positive,
                c.true_pass + c.false_positive,
                percent(c.false_positive_rate())
            );
            let _ = writeln!(
                out,
                "{:<12} {:>10} {:>11} {:>19} {:>16} {:>4} {:>12}",
                name,
                c.applicable,
                format!("{}/{}", c.labelled_pass(), c.labelled_fail()),
                agree,
                fpr,
                c.false_negative,
                c.undetermined()
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Goals: false-positive rate 0 on clean replies, agreement >= {:.0} % on decided cases: {}",
            AGREEMENT_GOAL * 100.0,
            if self.meets_goals() { "met" } else { "NOT met" }
        );
        let _ = writeln!(out);
        let _ = writeln!(out, "Disagreements ({}):", self.disagreements.len());
        for d in &self.disagreements {
            let label = d.label.map_or("unlabelled", |l| match l {
                Label::Pass => "pass",
                Label::Fail => "fail",
            });
            let outcome = d
                .outcome
                .as_ref()
                .map_or_else(|| "not applicable".to_string(), Outcome::to_string);
            let _ = writeln!(
                out,
                "  {} {}: label {label}, contract says {outcome} ({})",
                d.id, d.contract, d.note
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "Undetermined ({}):", self.undetermined.len());
        for (id, contract, reason) in &self.undetermined {
            let _ = writeln!(out, "  {id} {contract}: {reason}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_set_meets_the_goals() {
        let (source, cases) = load_cases(None).unwrap();
        assert!(cases.len() >= 240, "{} cases", cases.len());
        let report = calibrate(&source, &cases, &Contracts::default());
        assert!(report.languages.len() >= 8);
        for c in &report.contracts {
            let name = c.name;
            assert_eq!(
                c.false_positive,
                0,
                "{name}: false positives\n{}",
                report.render()
            );
            assert!(
                c.labelled_pass() > 0 && c.labelled_fail() > 0,
                "{name} needs both labels"
            );
            let agreement = c.agreement().unwrap();
            assert!(
                agreement >= AGREEMENT_GOAL,
                "{name}: agreement {agreement}\n{}",
                report.render()
            );
        }
        assert!(report.meets_goals(), "{}", report.render());
    }

    #[test]
    fn every_contract_is_covered_by_the_report() {
        let (source, cases) = load_cases(None).unwrap();
        let report = calibrate(&source, &cases, &Contracts::default());
        let names: Vec<_> = report.contracts.iter().map(|c| c.name).collect();
        assert_eq!(names, ContractName::ALL.to_vec());
        let text = report.render();
        assert!(text.contains("junk_prefix") && text.contains("Disagreements"));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let good = DEFAULT_CASES.lines().next().unwrap();
        let err = parse_cases(&format!("{good}\n{{nope\n"), "x.jsonl").unwrap_err();
        assert!(err.to_string().starts_with("x.jsonl:2:"), "{err}");
        let err = parse_cases(&format!("{good}\n\n{good}\n"), "x.jsonl").unwrap_err();
        assert!(
            err.to_string().contains("x.jsonl:3: case") && err.to_string().contains("duplicate")
        );
        assert!(matches!(
            parse_cases("\n", "x.jsonl"),
            Err(CalibrationError::Empty(_))
        ));
        let missing = load_cases(Some(Path::new("/no/such/file.jsonl"))).unwrap_err();
        assert!(missing.to_string().contains("/no/such/file.jsonl"));
    }

    #[test]
    fn a_path_overrides_the_built_in_set() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.jsonl");
        std::fs::write(&path, DEFAULT_CASES.lines().next().unwrap()).unwrap();
        let (source, cases) = load_cases(Some(&path)).unwrap();
        assert_eq!(cases.len(), 1);
        assert_eq!(source, path.display().to_string());
    }
}
