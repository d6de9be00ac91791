//! The single collector of a run: folds finished conversations, scores
//! their final turn (fast path, then the judge for what it leaves) and ticks
//! the progress bar.

use crate::config::RunConfig;
use cb_base::record::TurnRecord;
use cb_dataset::Dataset;
use cb_driver::replay::INTERRUPTED;
use cb_driver::ConversationOutcome;
use cb_scoring::{bleed_in, score_fast, AnchorIndex, Judge, Scored, Verdict, VerdictMethod};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(super) fn progress_bar(config: &RunConfig, total: usize) -> ProgressBar {
    if config.quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} conversations · {msg}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(match config.runs {
        1 => "1 run".to_string(),
        runs => format!("{runs} runs"),
    });
    bar
}

/// A finished conversation with the verdict on its final turn, and on
/// every earlier probe (datasets with later probes only).
pub(super) struct Collected {
    pub(super) outcome: ConversationOutcome,
    pub(super) scored: Scored,
    pub(super) earlier_probes: Vec<crate::past::ProbeVerdict>,
}

/// The single collector: folds finished conversations (`expected` of
/// them in whole runs), scores their final turn and ticks the progress
/// bar with the running CPR per system.
///
/// The running CPR counts only conversations with a planned failover event
/// (`planned`, by run from 1 and conversation index) and reads "n/a" until
/// one finished;
/// whether the fault fired is known only from the attempt log after the run,
/// so the report's figure, not this one, is the measured CPR.
pub(super) async fn collect(
    mut rx: mpsc::Receiver<ConversationOutcome>,
    dataset: Arc<Dataset>,
    anchors: Arc<AnchorIndex>,
    names: Vec<String>,
    planned: Vec<Vec<bool>>,
    progress: ProgressBar,
    expected: usize,
) -> Vec<Collected> {
    // Room for every conversation of the run at once: grown by doubling, the
    // list would hold up to twice its size, and both copies while it moves.
    let mut collected = Vec::with_capacity(expected);
    let mut tally = vec![(0u64, 0u64); names.len()];
    while let Some(outcome) = rx.recv().await {
        let conversation = &dataset.conversations[outcome.conversation];
        if outcome.interrupted {
            let scored = Scored {
                verdict: Verdict::Error,
                method: VerdictMethod::FastPath,
                reason: INTERRUPTED.to_string(),
                bleed_from: Vec::new(),
            };
            collected.push(Collected {
                outcome,
                scored,
                earlier_probes: Vec::new(),
            });
            continue;
        }
        let scored = score_outcome(conversation, &outcome.turns, &anchors);
        let earlier_probes =
            crate::past::earlier_probe_verdicts(conversation, &outcome.turns, &anchors);
        let run = (outcome.run as usize).checked_sub(1);
        let planned = run.and_then(|r| planned.get(r)?.get(outcome.conversation));
        if planned.copied().unwrap_or(false) {
            let entry = &mut tally[outcome.system];
            entry.1 += 1;
            if scored.verdict == Verdict::Preserved {
                entry.0 += 1;
            }
        }
        progress.inc(1);
        let status: Vec<String> = names
            .iter()
            .zip(&tally)
            .map(|(name, &(kept, all))| running_cpr(name, kept, all))
            .collect();
        progress.set_message(status.join(" · "));
        collected.push(Collected {
            outcome,
            scored,
            earlier_probes,
        });
    }
    progress.finish();
    collected
}

/// One system's running CPR for the progress line: "n/a" before any planned
/// event finished, never a rate over nothing.
fn running_cpr(name: &str, kept: u64, all: u64) -> String {
    if all == 0 {
        format!("{name} CPR n/a")
    } else {
        format!("{name} CPR {:.1} %", 100.0 * kept as f64 / all as f64)
    }
}

/// Marks, on every answered turn, the other conversations whose anchor the
/// answer carries (context bleed on any turn). Done after the replay, so
/// that this text work never competes with the systems under test for the
/// runtime's threads while they are being timed.
///
/// Runs on every core (each conversation alone, so the outcome does not
/// depend on how they are shared out). Stops early (leaving later turns
/// unmarked) when `cancel` fires.
pub(super) fn mark_bleed(
    collected: &mut [Collected],
    dataset: &Dataset,
    anchors: &AnchorIndex,
    cancel: &CancellationToken,
) {
    on_every_core(collected, |part| mark_part(part, dataset, anchors, cancel));
}

/// Runs `work` on shares of `items`, one share per core, and waits for
/// all of them.
pub(super) fn on_every_core<T: Send>(items: &mut [T], work: impl Fn(&mut [T]) + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(items.len())
        .max(1);
    let share = items.len().div_ceil(threads).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        for part in items.chunks_mut(share) {
            scope.spawn(move || work(part));
        }
    });
}

/// [`mark_bleed`] on one share of the conversations.
fn mark_part(
    collected: &mut [Collected],
    dataset: &Dataset,
    anchors: &AnchorIndex,
    cancel: &CancellationToken,
) {
    for c in collected {
        if cancel.is_cancelled() {
            return;
        }
        let conversation = &dataset.conversations[c.outcome.conversation];
        for turn in c.outcome.turns.iter_mut().filter(|t| t.error.is_none()) {
            turn.bleed_from = bleed_in(conversation, &turn.answer, anchors);
        }
    }
}

/// Judge requests in flight at once.
pub(super) const JUDGE_CONCURRENCY: usize = 8;

/// Hands the answers the fast path left undetermined to the judge, a few at
/// a time. A judge that fails leaves the verdict undetermined (with the
/// judge's reason); it never stops the run. When `cancel` fires, the
/// verdicts judged so far are kept and the rest stay undetermined.
pub(super) async fn judge_undetermined(
    collected: &mut [Collected],
    dataset: &Dataset,
    judge: &dyn Judge,
    cancel: &CancellationToken,
) {
    use futures::StreamExt;
    let pending: Vec<usize> = (0..collected.len())
        .filter(|&i| {
            let c = &collected[i];
            c.scored.verdict == Verdict::Undetermined
                && !c.outcome.interrupted
                && c.scored.method == VerdictMethod::FastPath
                && c.outcome
                    .turns
                    .last()
                    .is_some_and(|t| t.is_final && t.error.is_none())
        })
        .collect();
    let judged: Vec<(usize, Scored)> = futures::stream::iter(pending)
        .map(|i| {
            let c = &collected[i];
            let conversation = &dataset.conversations[c.outcome.conversation];
            let answer = c
                .outcome
                .turns
                .last()
                .map(|t| t.answer.as_str())
                .unwrap_or_default();
            async move { (i, judge.judge(conversation, answer).await) }
        })
        .buffer_unordered(JUDGE_CONCURRENCY)
        .take_until(cancel.cancelled())
        .collect()
        .await;
    for (i, scored) in judged {
        collected[i].scored = scored;
    }
}

/// Scores a replayed conversation: the final turn's answer, or an error when
/// the conversation broke before (or at) it.
pub(super) fn score_outcome(
    conversation: &cb_dataset::Conversation,
    turns: &[TurnRecord],
    anchors: &AnchorIndex,
) -> Scored {
    match turns.last() {
        Some(last) if last.is_final && last.error.is_none() => {
            score_fast(conversation, Some(&last.answer), anchors)
        }
        Some(last) => Scored {
            verdict: Verdict::Error,
            method: VerdictMethod::FastPath,
            reason: if last.is_final {
                last.error.clone().unwrap_or_default()
            } else {
                format!(
                    "conversation broke at turn {}: {}",
                    last.turn,
                    last.error.clone().unwrap_or_default()
                )
            },
            bleed_from: Vec::new(),
        },
        None => Scored {
            verdict: Verdict::Error,
            method: VerdictMethod::FastPath,
            reason: "no request was sent".to_string(),
            bleed_from: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::running_cpr;

    #[test]
    fn the_running_cpr_is_na_until_a_planned_event_finished() {
        assert_eq!(running_cpr("history", 0, 0), "history CPR n/a");
        assert_eq!(running_cpr("history", 0, 3), "history CPR 0.0 %");
        assert_eq!(running_cpr("history", 2, 3), "history CPR 66.7 %");
    }
}
