//! Calibration: how far the scorers can be trusted, measured on hand-labelled
//! answers (`datasets/judge-calibration.jsonl`). The fast path must never
//! decide a case wrongly; the judge is measured by agreement and Cohen's
//! kappa with the labels. The loader, the confusion matrix, kappa and the
//! tables are the one calibration piece of [`cb_report::calibration`]; this
//! file holds the cases and what the scorers' figures are.

use super::{score_with, FastPath};
use crate::{AnchorIndex, Judge, Scored, Verdict, VerdictMethod};
use cb_base::source::{BuiltIn, Source};
use cb_dataset::{Anchor, Category, Conversation, Dataset, Turn, TurnKind};
pub use cb_report::calibration::CalibrationError;
use cb_report::calibration::{self, percent, Binary, Confusion, LabelledCase};
use futures::StreamExt;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;

/// Path of the committed calibration set, relative to the repository root.
pub const DEFAULT_CASES: &str = "datasets/judge-calibration.jsonl";

/// The committed calibration set, compiled in, so that `judge calibrate`
/// works from any directory and after `cargo install`.
pub static BUILT_IN_CASES: BuiltIn = BuiltIn {
    path: DEFAULT_CASES,
    text: include_str!("../../../../datasets/judge-calibration.jsonl"),
};

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
            )
            .into(),
            assistant: Some("Noted, I'll keep that in mind.".into()),
            distractor: None,
            tool: None,
            asks: None,
        }];
        for d in &self.distractors {
            turns.push(Turn {
                kind: TurnKind::Filler,
                user: format!("Unrelated, but my colleague's {} is {d}.", self.subject).into(),
                assistant: Some("Good to know.".into()),
                distractor: Some(d.clone()),
                tool: None,
                asks: None,
            });
        }
        turns.push(Turn {
            kind: TurnKind::Probe,
            user: self.probe.as_str().into(),
            assistant: None,
            distractor: None,
            tool: None,
            asks: None,
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

impl LabelledCase for CalibrationCase {
    const SET: &'static str = "judge calibration";
    const FIELDS: &'static str =
        "id, category, subject, value, variants, distractors, probe, answer, label, note";

    fn id(&self) -> &str {
        &self.id
    }

    fn problem(&self) -> Option<&'static str> {
        if !self.variants.contains(&self.value) {
            Some("`variants` must include `value` itself")
        } else if self.answer.trim().is_empty() || self.probe.trim().is_empty() {
            Some("`probe` and `answer` must not be empty")
        } else if self.note.trim().is_empty() {
            Some("`note` must say why the label is right")
        } else if self.distractors.iter().any(|d| self.variants.contains(d)) {
            Some("a distractor equals an accepted variant")
        } else {
            None
        }
    }
}

/// Loads and checks a calibration set.
///
/// # Errors
/// [`CalibrationError`] with the file and line to fix.
pub fn load_cases(path: &Path) -> Result<Vec<CalibrationCase>, CalibrationError> {
    calibration::load(&Source::File(path.to_path_buf()))
}

impl Binary for Label {
    const BOTH: [Self; 2] = [Label::Preserved, Label::Lost];

    fn name(self) -> &'static str {
        match self {
            Label::Preserved => "preserved",
            Label::Lost => "lost",
        }
    }
}

/// A confusion matrix of the hand labels against a scorer's verdicts
/// ([`said`]).
pub type Tally = Confusion<Label>;

/// The label a verdict gives a case, `None` for undetermined. An `error`
/// verdict counts as lost, as it does in CPR.
pub fn said(verdict: Verdict) -> Option<Label> {
    match verdict {
        Verdict::Preserved => Some(Label::Preserved),
        Verdict::Lost | Verdict::Error => Some(Label::Lost),
        Verdict::Undetermined => None,
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
        fast_tally.add(o.label, said(o.fast.verdict));
        combined_tally.add(o.label, said(o.combined.verdict));
    }
    Calibration {
        outcomes,
        fast: fast_tally,
        combined: judge.is_some().then_some(combined_tally),
        judge: judge.map(|(_, d)| d),
    }
}

fn matches(label: Label, verdict: Verdict) -> bool {
    said(verdict) == Some(label)
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
        percent(t.agreement()),
        t.correct(),
        t.decided(),
        kappa_str(t.kappa())
    );
    out.push_str(&t.table(&format!("label \\ {who}")).indented("  ").render());
}

/// One case a scorer (`who`) decided against its label: id, label, verdict
/// and the scorer's reason.
fn render_case(out: &mut String, o: &CaseOutcome, who: &str, scored: &Scored) {
    let _ = writeln!(
        out,
        "    {}: label {}, {who} {} ({})",
        o.id,
        o.label.name(),
        scored.verdict.as_str(),
        scored.reason
    );
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
                render_case(&mut out, o, "fast path", &o.fast);
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
            percent((t.total() > 0).then(|| t.correct() as f64 / t.total() as f64))
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
                render_case(&mut out, o, "judge", &o.combined);
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
    /// The calibration set: the built-in copy, or a file given with
    /// `--cases`.
    pub cases: Source,
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
    let cases: Vec<CalibrationCase> = calibration::load(&config.cases)?;
    let active = match &config.judge {
        Some(j) => Some(super::start(j, config.seed).await?),
        None => None,
    };
    let judge = active
        .as_ref()
        .map(|a| (a.judge.as_ref() as &dyn Judge, a.description.clone()));
    let calibration = calibrate(&cases, fast, judge, config.concurrency).await;
    let mut report = calibration.render(&config.cases.label());
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
