//! Calibration: how far each contract can be trusted, measured on
//! hand-labelled replies in two parts, both compiled into the binary (a
//! path overrides either):
//! - the development part (`datasets/contracts-calibration-dev.jsonl`),
//!   the cases the thresholds were tuned on;
//! - the held-out part (`datasets/contracts-calibration-heldout.jsonl`),
//!   written after the thresholds were frozen, from fresh sentences, and
//!   never used to tune them: its figures are the ones to quote.
//!
//! Every case is a request, a reply and the expected label (`pass` or
//! `fail`) of each contract that applies to it. The report gives, per
//! contract: cases applicable, coverage (the share of the labelled cases it
//! decided), agreement with the labels on the cases it decided, its
//! false-positive rate on replies labelled clean (goal 0), false negatives,
//! how many it left undetermined, and every disagreement; and per
//! conversation language, the `language` contract's figures and every
//! contract's false positives.
//!
//! A contract meets the goals when it has no false positive, no
//! applicability mismatch, an agreement of at least [`AGREEMENT_GOAL`] on
//! what it decides, and a coverage of at least [`COVERAGE_FLOOR`]: a
//! contract that leaves most cases undetermined cannot pass by agreeing on
//! the few it decides.
//! The loader, the confusion matrix and the table are the one calibration
//! piece of [`cb_report::calibration`]; this file holds the cases and what
//! a contract's figures are.

use super::{ContractInput, ContractName, Contracts, Language, Outcome};
use cb_base::source::{BuiltIn, Source};
pub use cb_report::calibration::CalibrationError;
use cb_report::calibration::{self, percent, Binary, Confusion, LabelledCase, UNDETERMINED};
use cb_report::Table;
use cb_wire::openai::{ChatMessage, ChatRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// Path of the development part, relative to the repository root.
pub const DEFAULT_CASES_PATH: &str = "datasets/contracts-calibration-dev.jsonl";

/// The development part, compiled in.
pub const DEFAULT_CASES: &str = include_str!("../../../datasets/contracts-calibration-dev.jsonl");

/// Path of the held-out part, relative to the repository root.
pub const HELD_OUT_CASES_PATH: &str = "datasets/contracts-calibration-heldout.jsonl";

/// The held-out part, compiled in.
pub const HELD_OUT_CASES: &str =
    include_str!("../../../datasets/contracts-calibration-heldout.jsonl");

/// Goal: agreement with the labels on decided cases, per contract.
pub const AGREEMENT_GOAL: f64 = 0.95;

/// Floor: the share of its labelled cases a contract must decide (pass or
/// fail, not undetermined), per contract and per part.
pub const COVERAGE_FLOOR: f64 = 0.85;

/// Which part of the labelled set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The cases the thresholds were tuned on.
    Development,
    /// The cases written after the freeze.
    HeldOut,
    /// A set the caller supplies (`contracts calibrate --set FILE`), such
    /// as the one `scripts/catalog-calibration.py` builds from installed
    /// message catalogs; no built-in copy.
    Supplied,
}

impl Part {
    /// `development` or `held-out`.
    pub fn name(self) -> &'static str {
        match self {
            Part::Development => "development",
            Part::HeldOut => "held-out",
            Part::Supplied => "supplied",
        }
    }
}

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

impl LabelledCase for CalibrationCase {
    const SET: &'static str = "contract calibration";
    const FIELDS: &'static str =
        "id, language, origin, request, expected_language, reply, labels, note";

    fn id(&self) -> &str {
        &self.id
    }

    fn problem(&self) -> Option<&'static str> {
        if self.labels.is_empty() {
            Some("`labels` is empty; label every contract that applies")
        } else if self.note.trim().is_empty() {
            Some("`note` must say why the labels are right")
        } else if self.reply.ttft_ms.is_some() && !self.request.stream {
            Some("`ttft_ms` is set but the request is not streamed; set `stream` or drop `ttft_ms`")
        } else if !self.request.messages.iter().any(|m| m.role == "user") {
            Some("the request has no user message")
        } else {
            None
        }
    }
}

/// The development part, as a built-in input.
static BUILT_IN: BuiltIn = BuiltIn {
    path: DEFAULT_CASES_PATH,
    text: DEFAULT_CASES,
};

/// The held-out part, as a built-in input.
static BUILT_IN_HELD_OUT: BuiltIn = BuiltIn {
    path: HELD_OUT_CASES_PATH,
    text: HELD_OUT_CASES,
};

/// The supplied part has no built-in copy: this empty one stands for it
/// when no path is given.
static BUILT_IN_NONE: BuiltIn = BuiltIn {
    path: "--set FILE (no built-in supplied set; build one with scripts/catalog-calibration.py)",
    text: "",
};

/// Loads the development part at `path`, or the built-in one when `None`.
/// Returns the name of the source (the path, or the default path marked
/// built in) and the cases.
///
/// # Errors
/// [`CalibrationError`] naming the file and line to fix.
pub fn load_cases(path: Option<&Path>) -> Result<(String, Vec<CalibrationCase>), CalibrationError> {
    load_part(Part::Development, path)
}

/// Loads `part` from `path`, or the built-in one when `None`.
///
/// # Errors
/// [`CalibrationError`] naming the file and line to fix.
pub fn load_part(
    part: Part,
    path: Option<&Path>,
) -> Result<(String, Vec<CalibrationCase>), CalibrationError> {
    let built_in = match part {
        Part::Development => &BUILT_IN,
        Part::HeldOut => &BUILT_IN_HELD_OUT,
        // No built-in copy: an empty set, which `calibration::load` names
        // as the file to give.
        Part::Supplied => &BUILT_IN_NONE,
    };
    let source = path.map_or(Source::BuiltIn(built_in), |p| Source::File(p.to_path_buf()));
    let cases = calibration::load(&source)?;
    Ok((source.label(), cases))
}

impl Binary for Label {
    const BOTH: [Self; 2] = [Label::Pass, Label::Fail];

    fn name(self) -> &'static str {
        match self {
            Label::Pass => "pass",
            Label::Fail => "fail",
        }
    }
}

/// One contract's agreement with the labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContractCalibration {
    /// The contract.
    pub name: ContractName,
    /// Cases the contract applied to (gave an outcome).
    pub applicable: usize,
    /// Labels against outcomes, on the cases that have both (a contract
    /// that says `fail` on a reply labelled `pass` is a false positive).
    pub confusion: Confusion<Label>,
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
            confusion: Confusion::default(),
            applicability_mismatch: 0,
        }
    }

    /// Labelled pass, judged fail.
    pub fn false_positives(&self) -> u64 {
        self.confusion.count(Label::Pass, Some(Label::Fail))
    }

    /// Labelled fail, judged pass.
    pub fn false_negatives(&self) -> u64 {
        self.confusion.count(Label::Fail, Some(Label::Pass))
    }

    /// Cases labelled pass with an outcome.
    pub fn labelled_pass(&self) -> u64 {
        self.confusion.labelled(Label::Pass)
    }

    /// Cases labelled fail with an outcome.
    pub fn labelled_fail(&self) -> u64 {
        self.confusion.labelled(Label::Fail)
    }

    /// Agreement with the labels over decided cases; `None` when none was
    /// decided.
    pub fn agreement(&self) -> Option<f64> {
        self.confusion.agreement()
    }

    /// False positives over decided clean (labelled pass) cases; `None`
    /// when none was decided.
    pub fn false_positive_rate(&self) -> Option<f64> {
        self.confusion.wrong_rate(Label::Pass)
    }

    /// Decided cases over labelled cases with an outcome (undetermined
    /// ones count against it); `None` when there is none.
    pub fn coverage(&self) -> Option<f64> {
        let total = self.confusion.total();
        (total > 0).then(|| self.confusion.decided() as f64 / total as f64)
    }

    /// Whether this contract meets the goals: no false positive, agreement
    /// at least [`AGREEMENT_GOAL`], coverage at least [`COVERAGE_FLOOR`],
    /// and no applicability mismatch.
    pub fn meets_goals(&self) -> bool {
        self.false_positives() == 0
            && self.applicability_mismatch == 0
            && self.agreement().is_none_or(|a| a >= AGREEMENT_GOAL)
            && self.coverage().is_none_or(|c| c >= COVERAGE_FLOOR)
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

/// The figures of one conversation language.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LanguageFigures {
    /// Cases in this language.
    pub cases: usize,
    /// The `language` contract's labels against its outcomes.
    pub language: Confusion<Label>,
    /// Cases labelled clean (every label `pass`).
    pub clean: usize,
    /// False positives of any contract on this language's cases.
    pub false_positives: u64,
}

/// The calibration of every contract on one set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// Which part of the labelled set.
    pub part: Part,
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
    /// Per conversation language, every language the contracts know.
    pub per_language: BTreeMap<Language, LanguageFigures>,
}

/// Runs `contracts` on every case of `part` and compares with the labels.
pub fn calibrate(
    part: Part,
    source: &str,
    cases: &[CalibrationCase],
    contracts: &Contracts,
) -> CalibrationReport {
    let mut per: BTreeMap<ContractName, ContractCalibration> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut undetermined = Vec::new();
    let mut languages = BTreeMap::new();
    let mut per_language: BTreeMap<Language, LanguageFigures> = Language::ALL
        .into_iter()
        .map(|l| (l, LanguageFigures::default()))
        .collect();
    for case in cases {
        *languages.entry(case.language).or_insert(0) += 1;
        let figures = per_language.entry(case.language).or_default();
        figures.cases += 1;
        if case.labels.values().all(|&l| l == Label::Pass) {
            figures.clean += 1;
        }
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
                (Some(label), Some(outcome)) => {
                    let said = match outcome {
                        Outcome::Pass => Some(Label::Pass),
                        Outcome::Fail { .. } => Some(Label::Fail),
                        Outcome::Undetermined { reason } => {
                            undetermined.push((case.id.clone(), result.name, reason.clone()));
                            None
                        }
                    };
                    tally.confusion.add(label, said);
                    if result.name == ContractName::Language {
                        figures.language.add(label, said);
                    }
                    if label == Label::Pass && said == Some(Label::Fail) {
                        figures.false_positives += 1;
                    }
                    said.is_some_and(|said| said != label)
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
        part,
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
        per_language,
    }
}

impl CalibrationReport {
    /// Whether every contract meets the goals (no false positive, agreement
    /// at least [`AGREEMENT_GOAL`] on decided cases).
    pub fn meets_goals(&self) -> bool {
        self.contracts.iter().all(ContractCalibration::meets_goals)
    }

    /// The per-contract figures as a table.
    pub fn table(&self) -> Table {
        let mut table = Table::new([
            "contract",
            "applicable",
            "labels p/f",
            "coverage",
            "agreement (decided)",
            "FPR (clean)",
            "FN",
            UNDETERMINED,
        ])
        .right_aligned_from(1);
        for c in &self.contracts {
            let m = &c.confusion;
            table.push([
                c.name.as_str().to_string(),
                c.applicable.to_string(),
                format!("{}/{}", c.labelled_pass(), c.labelled_fail()),
                format!("{}/{} {}", m.decided(), m.total(), percent(c.coverage())),
                format!("{}/{} {}", m.correct(), m.decided(), percent(c.agreement())),
                format!(
                    "{}/{} {}",
                    c.false_positives(),
                    m.decided_of(Label::Pass),
                    percent(c.false_positive_rate())
                ),
                c.false_negatives().to_string(),
                m.undetermined().to_string(),
            ]);
        }
        table
    }

    /// The per-language figures as a table: every language the contracts
    /// know, with the `language` contract's coverage and agreement and the
    /// false positives of all contracts.
    pub fn language_table(&self) -> Table {
        let mut table = Table::new([
            "language",
            "cases",
            "clean",
            "language p/f",
            "coverage",
            "agreement",
            "FP (all contracts)",
        ])
        .right_aligned_from(1);
        for (l, f) in &self.per_language {
            let m = &f.language;
            let coverage = (m.total() > 0).then(|| m.decided() as f64 / m.total() as f64);
            table.push([
                format!("{} {}", l.code(), l.name()),
                f.cases.to_string(),
                f.clean.to_string(),
                format!("{}/{}", m.labelled(Label::Pass), m.labelled(Label::Fail)),
                format!("{}/{} {}", m.decided(), m.total(), percent(coverage)),
                format!("{}/{} {}", m.correct(), m.decided(), percent(m.agreement())),
                f.false_positives.to_string(),
            ]);
        }
        table
    }

    /// The report as plain text: the tables, then the disagreements and
    /// the undetermined outcomes.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Contract calibration, {} part, on {}: {} cases, {} from transforms, in {} languages",
            self.part.name(),
            self.source,
            self.cases,
            self.transform_cases,
            self.languages.len(),
        );
        let _ = writeln!(out);
        out.push_str(&self.table().render());
        let _ = writeln!(out);
        out.push_str(&self.language_table().render());
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Goals: false-positive rate 0 on clean replies, agreement >= {:.0} % on decided cases, \
             coverage >= {:.0} % of labelled cases: {}",
            AGREEMENT_GOAL * 100.0,
            COVERAGE_FLOOR * 100.0,
            if self.meets_goals() { "met" } else { "NOT met" }
        );
        let _ = writeln!(out);
        let _ = writeln!(out, "Disagreements ({}):", self.disagreements.len());
        for d in &self.disagreements {
            let label = d.label.map_or("unlabelled", Label::name);
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
mod tests;
