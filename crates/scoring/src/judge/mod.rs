//! The LLM judge: decides the answers the fast-path scorer leaves
//! `undetermined`, and says how far it can be trusted.
//!
//! - [`prompt`]: the fixed, versioned prompt;
//! - [`parse`]: reading `{preserved, reason}` out of whatever the model wrote;
//! - [`client`]: [`LlmJudge`], the OpenAI-compatible client with bounded,
//!   jittered retries that never fails a run;
//! - [`cache`]: the on-disk verdict cache;
//! - [`sim`]: a simulated judge server for tests and `--judge sim`;
//! - [`calibrate`]: agreement with hand labels (Cohen's kappa and the
//!   confusion matrix are [`cb_report::calibration`]'s).
//!
//! Scoring with a judge is [`score_with`]: the fast path first, the judge
//! only on what it leaves. `run` applies it to every undetermined event
//! after the replay.

pub mod cache;
pub mod calibrate;
pub mod client;
pub mod parse;
pub mod prompt;
pub mod sim;

pub use cache::VerdictCache;
pub use client::{JudgeSettings, JudgeStats, LlmJudge};
pub use prompt::PROMPT_VERSION;

use crate::{AnchorIndex, Judge, Scored, Verdict};
use cb_dataset::Conversation;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The value of `--judge` that starts the simulated judge in process.
pub const SIM_ENDPOINT: &str = "sim";

/// The model id reported for the simulated judge when `--judge-model` is not
/// given.
pub const SIM_MODEL: &str = "sim-judge";

/// A fast-path scorer: [`crate::score_fast`] or a stand-in.
pub type FastPath = fn(&Conversation, Option<&str>, &AnchorIndex) -> Scored;

/// Where the judge lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeEndpoint {
    /// The simulated judge ([`sim::Behaviour::Sensible`]), started in process.
    Sim,
    /// An OpenAI-compatible API at this base URL.
    Url(String),
}

/// A validated judge configuration (from `--judge` and friends).
#[derive(Debug, Clone)]
pub struct JudgeConfig {
    /// Where the judge lives.
    pub endpoint: JudgeEndpoint,
    /// The model id to ask.
    pub model: String,
    /// The key, read from the environment variable `--judge-key-env` names.
    pub key: Option<cb_base::secret::Secret>,
    /// Verdict cache file.
    pub cache: Option<PathBuf>,
    /// Deadline of one judge request.
    pub timeout: Duration,
}

/// Why the judge options are unusable.
#[derive(Debug, thiserror::Error)]
pub enum JudgeConfigError {
    /// `--judge URL` without `--judge-model`.
    #[error(
        "--judge {0} needs --judge-model, the model id to ask (e.g. --judge-model gpt-4o-mini)"
    )]
    MissingModel(String),
    /// `--judge-model` or `--judge-cache` without `--judge`.
    #[error("{0} has no effect without --judge; add --judge URL (or --judge sim), or drop {0}")]
    WithoutJudge(&'static str),
    /// The key variable is not set.
    #[error("environment variable {0} (named by --judge-key-env) is not set; export the judge's API key in it, or name another variable with --judge-key-env")]
    MissingKey(String),
    /// The client could not be built.
    #[error(transparent)]
    Client(#[from] client::ClientError),
    /// The cache could not be opened.
    #[error(transparent)]
    Cache(#[from] cache::CacheError),
    /// The simulated judge could not start.
    #[error("cannot start the simulated judge: {0}")]
    Sim(std::io::Error),
}

impl JudgeConfig {
    /// A one-line description for reports: endpoint, model and prompt
    /// version (never the key).
    pub fn describe(&self) -> String {
        let endpoint = match &self.endpoint {
            JudgeEndpoint::Sim => "simulated judge (in process)".to_string(),
            JudgeEndpoint::Url(u) => cb_base::url::display_url(u),
        };
        format!("{endpoint}, model {}, prompt {PROMPT_VERSION}", self.model)
    }
}

/// A judge ready to use, with the simulated server it talks to (if any)
/// kept alive as long as it is.
#[derive(Debug)]
pub struct ActiveJudge {
    /// The judge.
    pub judge: Arc<LlmJudge>,
    /// What it is, for reports.
    pub description: String,
    _sim: Option<sim::SimJudge>,
}

/// Builds the judge `config` describes (starting the simulated one when
/// asked), with backoff jitter seeded from `seed`.
///
/// # Errors
/// When the cache cannot be opened, the URL is unusable, or the simulated
/// judge cannot bind a port.
pub async fn start(config: &JudgeConfig, seed: u64) -> Result<ActiveJudge, JudgeConfigError> {
    let (sim, url) = match &config.endpoint {
        JudgeEndpoint::Sim => {
            let sim = sim::start(sim::Behaviour::Sensible)
                .await
                .map_err(JudgeConfigError::Sim)?;
            let url = sim.url();
            (Some(sim), url)
        }
        JudgeEndpoint::Url(u) => (None, u.clone()),
    };
    let mut settings = JudgeSettings::new(&url, &config.model, config.key.clone(), seed);
    settings.timeout = config.timeout;
    let cache = config
        .cache
        .as_deref()
        .map(VerdictCache::open)
        .transpose()?;
    let judge = LlmJudge::new(settings, cache)?;
    Ok(ActiveJudge {
        judge: Arc::new(judge),
        description: config.describe(),
        _sim: sim,
    })
}

/// Scores an answer: the fast path `fast` first; when it is `undetermined`
/// and a judge is given, the judge decides (its verdict carries method
/// `Judge`). A failed request (`answer` None) never goes to the judge.
pub async fn score_with(
    fast: FastPath,
    conversation: &Conversation,
    answer: Option<&str>,
    index: &AnchorIndex,
    judge: Option<&dyn Judge>,
) -> Scored {
    let scored = fast(conversation, answer, index);
    match (scored.verdict, judge, answer) {
        (Verdict::Undetermined, Some(judge), Some(answer)) => {
            let mut judged = judge.judge(conversation, answer).await;
            // Bleed is a fact of the text; keep what the fast path found.
            if judged.bleed_from.is_empty() {
                judged.bleed_from = scored.bleed_from;
            }
            judged
        }
        _ => scored,
    }
}

#[cfg(test)]
mod tests;
