//! Calibration: how far the scorers can be trusted, measured on hand-labelled
//! answers (`datasets/judge-calibration.jsonl`). The fast path must never
//! decide a case wrongly; the judge is measured by agreement and Cohen's
//! kappa with the labels.

use super::kappa::{agreement, cohens_kappa};
use super::{score_with, FastPath};
use crate::{AnchorIndex, Judge, Scored, Verdict, VerdictMethod};
use cb_dataset::{Anchor, Category, Conversation, Dataset, Turn, TurnKind};
use futures::StreamExt;
use serde::Deserialize;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Path of the committed calibration set, relative to the repository root.
pub const DEFAULT_CASES: &str = "datasets/judge-calibration.jsonl";

/// The hand label of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// The answer correctly uses the anchor.
    Preserved,
    /// It does not.
    Lost,
}

/// One labelled answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationCase {
    /// Unique id ("k001").
    pub id: String,
    /// The anchor's category.
    pub category: Category,
    /// What the anchor is about ("sister's name").
    pub subject: String,
    /// The anchor's canonical value.
    pub value: String,
    /// Accepted spellings, as the dataset generator would list them
    /// (including `value`).
    pub variants: Vec<String>,
    /// Values of the same category that belong to someone else and were
    /// mentioned in the conversation.
    #[serde(default)]
    pub distractors: Vec<String>,
    /// The final question.
    pub probe: String,
    /// The answer to label.
    pub answer: String,
    /// The hand label.
    pub label: Label,
    /// Why the label is what it is.
    pub note: String,
}

impl CalibrationCase {
    /// A minimal conversation carrying this case: the anchor turn, one filler
    /// turn per distractor, and the probe.
    pub fn conversation(&self) -> Conversation {
        let mut turns = vec![Turn {
            kind: TurnKind::Anchor,
            user: format!(
                "Please remember this: my {} is {}.",
                self.subject, self.value
            ),
            assistant: Some("Noted, I'll keep that in mind.".into()),
            distractor: None,
            tool: None,
        }];
        for d in &self.distractors {
            turns.push(Turn {
                kind: TurnKind::Filler,
                user: format!("Unrelated, but my colleague's {} is {d}.", self.subject),
                assistant: Some("Good to know.".into()),
                distractor: Some(d.clone()),
                tool: None,
            });
        }
        turns.push(Turn {
            kind: TurnKind::Probe,
            user: self.probe.clone(),
            assistant: None,
            distractor: None,
            tool: None,
        });
        Conversation {
            id: self.id.clone(),
            anchor: Anchor {
                category: self.category,
                subject: self.subject.clone(),
                value: self.value.clone(),
                variants: self.variants.clone(),
            },
            turns,
            anchor_place: cb_dataset::AnchorPlace::User,
            system: Vec::new(),
        }
    }
}

/// Why the calibration set could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The file could not be read.
    #[error("cannot read calibration set {path}: {source}; pass an existing file with --cases")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a valid case.
    #[error("{path}:{line}: not a calibration case: {source}; fix the line (fields: id, category, subject, value, variants, distractors, probe, answer, label, note)")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The cause.
        source: serde_json::Error,
    },
    /// A case is well-formed JSON but inconsistent.
    #[error("{path}:{line}: case {id}: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The case id.
        id: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// The file holds no case.
    #[error("calibration set {0} holds no case; add one JSON case per line")]
    Empty(PathBuf),
}

/// Loads and checks a calibration set.
///
/// # Errors
/// [`CalibrationError`] with the file and line to fix.
pub fn load_cases(path: &Path) -> Result<Vec<CalibrationCase>, CalibrationError> {
    let text = std::fs::read_to_string(path).map_err(|source| CalibrationError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_cases(&text, path)
}

/// Parses and checks calibration cases from JSONL `text` (`path` names it in
/// errors). Blank lines are skipped.
///
/// # Errors
/// [`CalibrationError`] with the line to fix.
pub fn parse_cases(text: &str, path: &Path) -> Result<Vec<CalibrationCase>, CalibrationError> {
    let mut cases = Vec::new();
    let mut ids = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let case: CalibrationCase =
            serde_json::from_str(raw).map_err(|source| CalibrationError::Parse {
                path: path.to_path_buf(),
                line,
                source,
            })?;
        let invalid = |problem: &str| CalibrationError::Invalid {
            path: path.to_path_buf(),
            line,
            id: case.id.clone(),
            problem: problem.to_string(),
        };
        if !ids.insert(case.id.clone()) {
            return Err(invalid("duplicate id; give every case its own id"));
        }
        if !case.variants.contains(&case.value) {
            return Err(invalid("`variants` must include `value` itself"));
        }
        if case.answer.trim().is_empty() || case.probe.trim().is_empty() {
            return Err(invalid("`probe` and `answer` must not be empty"));
        }
        if case.note.trim().is_empty() {
            return Err(invalid("`note` must say why the label is right"));
        }
        if case.distractors.iter().any(|d| case.variants.contains(d)) {
            return Err(invalid("a distractor equals an accepted variant"));
        }
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(CalibrationError::Empty(path.to_path_buf()));
    }
    Ok(cases)
}

/// Columns of a confusion matrix: what the scorer said.
pub const PREDICTED: [&str; 3] = ["preserved", "lost", "undetermined"];

/// A confusion matrix: rows are the labels (preserved, lost), columns what
/// the scorer said (preserved, lost, undetermined). An `error` verdict counts
/// as lost, as it does in CPR.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// `matrix[label][predicted]`.
    pub matrix: [[u64; 3]; 2],
}

impl Tally {
    /// Counts one case.
    pub fn add(&mut self, label: Label, verdict: Verdict) {
        let row = match label {
            Label::Preserved => 0,
            Label::Lost => 1,
        };
        let col = match verdict {
            Verdict::Preserved => 0,
            Verdict::Lost | Verdict::Error => 1,
            Verdict::Undetermined => 2,
        };
        self.matrix[row][col] += 1;
    }

    /// The 2×2 matrix of decided cases.
    pub fn decided_matrix(&self) -> [[u64; 2]; 2] {
        [
            [self.matrix[0][0], self.matrix[0][1]],
            [self.matrix[1][0], self.matrix[1][1]],
        ]
    }

    /// All cases.
    pub fn total(&self) -> u64 {
        self.matrix.iter().flatten().sum()
    }

    /// Cases left undetermined.
    pub fn undetermined(&self) -> u64 {
        self.matrix[0][2] + self.matrix[1][2]
    }

    /// Cases decided.
    pub fn decided(&self) -> u64 {
        self.total() - self.undetermined()
    }

    /// Decided cases whose verdict matches the label.
    pub fn correct(&self) -> u64 {
        self.matrix[0][0] + self.matrix[1][1]
    }

    /// Decided cases whose verdict contradicts the label.
    pub fn wrong(&self) -> u64 {
        self.matrix[0][1] + self.matrix[1][0]
    }

    /// Agreement over decided cases.
    pub fn agreement(&self) -> Option<f64> {
        agreement(&self.decided_matrix())
    }

    /// Cohen's kappa over decided cases.
    pub fn kappa(&self) -> Option<f64> {
        cohens_kappa(&self.decided_matrix())
    }
}

/// What happened to one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseOutcome {
    /// The case id.
    pub id: String,
    /// The hand label.
    pub label: Label,
    /// The fast path's verdict.
    pub fast: Scored,
    /// The final verdict (the judge's when the fast path left it and a judge
    /// was given; otherwise the fast path's).
    pub combined: Scored,
}

/// The result of a calibration.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// Per case, in file order.
    pub outcomes: Vec<CaseOutcome>,
    /// The fast path alone.
    pub fast: Tally,
    /// Fast path plus judge, when a judge was given.
    pub combined: Option<Tally>,
    /// Description of the judge, when given.
    pub judge: Option<String>,
}

/// Runs the fast path on every case and, when given, the judge on what it
/// leaves, with at most `concurrency` judge calls in flight.
pub async fn calibrate(
    cases: &[CalibrationCase],
    fast: FastPath,
    judge: Option<(&dyn Judge, String)>,
    concurrency: usize,
) -> Calibration {
    let judge_ref = judge.as_ref().map(|(j, _)| *j);
    let outcomes: Vec<CaseOutcome> = futures::stream::iter(cases)
        .map(|case| async move {
            let conversation = case.conversation();
            let index = AnchorIndex::new(&Dataset {
                conversations: vec![conversation.clone()],
            });
            let answer = Some(case.answer.as_str());
            let fast_scored = fast(&conversation, answer, &index);
            let combined = if fast_scored.verdict == Verdict::Undetermined && judge_ref.is_some() {
                score_with(fast, &conversation, answer, &index, judge_ref).await
            } else {
                fast_scored.clone()
            };
            CaseOutcome {
                id: case.id.clone(),
                label: case.label,
                fast: fast_scored,
                combined,
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut fast_tally = Tally::default();
    let mut combined_tally = Tally::default();
    for o in &outcomes {
        fast_tally.add(o.label, o.fast.verdict);
        combined_tally.add(o.label, o.combined.verdict);
    }
    Calibration {
        outcomes,
        fast: fast_tally,
        combined: judge.is_some().then_some(combined_tally),
        judge: judge.map(|(_, d)| d),
    }
}

fn label_str(label: Label) -> &'static str {
    match label {
        Label::Preserved => "preserved",
        Label::Lost => "lost",
    }
}

fn matches(label: Label, verdict: Verdict) -> bool {
    matches!(
        (label, verdict),
        (Label::Preserved, Verdict::Preserved) | (Label::Lost, Verdict::Lost | Verdict::Error)
    )
}

fn pct(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |v| format!("{:.1} %", v * 100.0))
}

fn kappa_str(x: Option<f64>) -> String {
    x.map_or("n/a (one category only)".into(), |v| format!("{v:.3}"))
}

fn render_tally(out: &mut String, t: &Tally, who: &str) {
    let _ = writeln!(
        out,
        "  decided {} of {}, left {} undetermined",
        t.decided(),
        t.total(),
        t.undetermined()
    );
    let _ = writeln!(
        out,
        "  agreement on decided cases: {} ({}/{}), Cohen's kappa: {}",
        pct(t.agreement()),
        t.correct(),
        t.decided(),
        kappa_str(t.kappa())
    );
    let _ = writeln!(
        out,
        "  {:<18}{:>11}{:>8}{:>14}",
        format!("label \\ {who}"),
        PREDICTED[0],
        PREDICTED[1],
        PREDICTED[2]
    );
    for (row, name) in ["preserved", "lost"].iter().enumerate() {
        let m = t.matrix[row];
        let _ = writeln!(out, "  {name:<18}{:>11}{:>8}{:>14}", m[0], m[1], m[2]);
    }
}

impl Calibration {
    /// Cases the fast path decided against the label.
    pub fn fast_wrong(&self) -> Vec<&CaseOutcome> {
        self.outcomes
            .iter()
            .filter(|o| {
                o.fast.verdict != Verdict::Undetermined && !matches(o.label, o.fast.verdict)
            })
            .collect()
    }

    /// The readable report `judge calibrate` prints.
    pub fn render(&self, source: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Judge calibration: {} labelled cases from {source}\n",
            self.outcomes.len()
        );
        let _ = writeln!(out, "Fast path alone");
        render_tally(&mut out, &self.fast, "fast path");
        let wrong = self.fast_wrong();
        if wrong.is_empty() {
            let _ = writeln!(out, "  wrong decisions: none");
        } else {
            let _ = writeln!(
                out,
                "  WRONG decisions: {} (the fast path must never decide wrongly)",
                wrong.len()
            );
            for o in wrong {
                let _ = writeln!(
                    out,
                    "    {}: label {}, fast path {} ({})",
                    o.id,
                    label_str(o.label),
                    o.fast.verdict.as_str(),
                    o.fast.reason
                );
            }
        }
        let (Some(t), Some(judge)) = (&self.combined, &self.judge) else {
            let _ = writeln!(
                out,
                "\nNo judge given: pass --judge URL --judge-model M (or --judge sim) to measure fast path plus judge."
            );
            return out;
        };
        let _ = writeln!(out, "\nFast path plus judge ({judge})");
        render_tally(&mut out, t, "combined");
        let by_judge = self
            .outcomes
            .iter()
            .filter(|o| o.combined.method == VerdictMethod::Judge)
            .count();
        let judge_failed = self
            .outcomes
            .iter()
            .filter(|o| {
                o.combined.method == VerdictMethod::Judge
                    && o.combined.verdict == Verdict::Undetermined
            })
            .count();
        let _ = writeln!(
            out,
            "  verdicts by fast path: {}, by judge: {} (of which {} undetermined: judge failed)",
            self.outcomes.len() - by_judge,
            by_judge - judge_failed,
            judge_failed
        );
        let _ = writeln!(
            out,
            "  agreement over all cases (undetermined counts as disagreement): {}",
            pct((t.total() > 0).then(|| t.correct() as f64 / t.total() as f64))
        );
        let disagreements: Vec<&CaseOutcome> = self
            .outcomes
            .iter()
            .filter(|o| {
                o.combined.method == VerdictMethod::Judge
                    && o.combined.verdict != Verdict::Undetermined
                    && !matches(o.label, o.combined.verdict)
            })
            .collect();
        if !disagreements.is_empty() {
            let _ = writeln!(out, "  judge disagrees with the label on:");
            for o in disagreements {
                let _ = writeln!(
                    out,
                    "    {}: label {}, judge {} ({})",
                    o.id,
                    label_str(o.label),
                    o.combined.verdict.as_str(),
                    o.combined.reason
                );
            }
        }
        if let Some(o) = self.outcomes.iter().find(|o| {
            o.combined.method == VerdictMethod::Judge && o.combined.verdict == Verdict::Undetermined
        }) {
            let _ = writeln!(
                out,
                "  first judge failure: {}: {}",
                o.id, o.combined.reason
            );
        }
        out
    }
}

/// A validated `judge calibrate` invocation.
#[derive(Debug, Clone)]
pub struct CalibrateConfig {
    /// The calibration set.
    pub cases: PathBuf,
    /// The judge, if any.
    pub judge: Option<super::JudgeConfig>,
    /// Master seed of the judge's backoff jitter.
    pub seed: u64,
    /// Judge calls in flight at once.
    pub concurrency: usize,
}

/// What `judge calibrate` found.
#[derive(Debug, Clone)]
pub struct CalibrateOutcome {
    /// The printable report.
    pub report: String,
    /// The calibration figures.
    pub calibration: Calibration,
}

/// Runs `judge calibrate`: loads the set, starts the judge (if any), scores
/// every case with `fast` and then the judge, and renders the report.
///
/// # Errors
/// When the set cannot be read or the judge cannot be started.
pub async fn run(config: &CalibrateConfig, fast: FastPath) -> anyhow::Result<CalibrateOutcome> {
    let cases = load_cases(&config.cases)?;
    let active = match &config.judge {
        Some(j) => Some(super::start(j, config.seed).await?),
        None => None,
    };
    let judge = active
        .as_ref()
        .map(|a| (a.judge.as_ref() as &dyn Judge, a.description.clone()));
    let calibration = calibrate(&cases, fast, judge, config.concurrency).await;
    let mut report = calibration.render(&config.cases.display().to_string());
    if let Some(a) = &active {
        let s = a.judge.stats();
        let _ = writeln!(
            report,
            "  judge requests sent: {}, answered from cache: {}",
            s.requests, s.cache_hits
        );
    }
    Ok(CalibrateOutcome {
        report,
        calibration,
    })
}
