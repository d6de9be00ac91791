//! Answer contracts: code-checkable properties of one reply that answered
//! HTTP 200 (degradation at HTTP 200, see DESIGN.md).
//!
//! Each contract lives in its own file behind the [`Contract`] trait and is
//! a pure function of what the client sent and what came back
//! ([`ContractInput`]). It answers `None` when it does not apply (no schema
//! was asked, the reply was not streamed, ...), or an [`Outcome`]: `pass`,
//! `fail` with a reason, or `undetermined` when the reply is too short or too
//! ambiguous to judge, which is never a failure. A transport failure never
//! reaches the contracts: only 2xx answers are checked.
//!
//! [`Contracts`] is the configured set the suites run on every answer;
//! [`violations_column`] renders the names that failed for the
//! `contract_violations` column of `turns.csv` and `events.csv`.

pub mod calibrate;
mod detect;
mod empty;
mod junk_prefix;
mod language;
mod mojibake;
mod pasted;
pub mod phrasebook;
mod prompt;
mod refusal;
mod schema;
mod script;
mod text;
mod truncated;
mod ttft;

pub use cb_base::language::Language;
pub use detect::{audit_english_path, detect_language, EnglishPathAudit, PathAudit};
pub use empty::Empty;
pub use junk_prefix::JunkPrefix;
pub use language::LanguageContract;
pub use refusal::Refusal;
pub use schema::{requested_format, RequestedFormat, Schema};
pub use truncated::Truncated;
pub use ttft::Ttft;

use cb_wire::openai::ChatRequest;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// What a contract judges: the request as sent and the answer as received.
/// The integrator fills it from what the driver saw.
#[derive(Debug, Clone, Copy)]
pub struct ContractInput<'a> {
    /// The request: its messages, and `extra["response_format"]` when
    /// structured output was asked.
    pub request: &'a ChatRequest,
    /// The language the reply must be in, when the caller knows it (a canary
    /// probe); otherwise it is detected from the conversation's user messages.
    pub expected_language: Option<Language>,
    /// HTTP status of the answer; only 2xx answers are checked.
    pub status: u16,
    /// Whether the answer was streamed (server-sent events).
    pub stream: bool,
    /// The assembled assistant text.
    pub text: &'a str,
    /// The `finish_reason` of the (last) choice, when one was received.
    pub finish_reason: Option<&'a str>,
    /// Streams: request sent to the first non-empty content delta.
    pub ttft: Option<Duration>,
    /// Request sent to the first response byte.
    pub ttfb: Option<Duration>,
}

/// The verdict of one contract on one reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The reply keeps the contract.
    Pass,
    /// The reply breaks the contract.
    Fail {
        /// What is wrong, in one sentence a user can act on.
        reason: String,
    },
    /// Too short or too ambiguous to judge; never counted as a failure.
    Undetermined {
        /// Why the contract could not decide.
        reason: String,
    },
}

impl Outcome {
    /// A failure with `reason`.
    pub fn fail(reason: impl Into<String>) -> Self {
        Outcome::Fail {
            reason: reason.into(),
        }
    }

    /// An undetermined outcome with `reason`.
    pub fn undetermined(reason: impl Into<String>) -> Self {
        Outcome::Undetermined {
            reason: reason.into(),
        }
    }

    /// Whether this is a failure.
    pub fn is_fail(&self) -> bool {
        matches!(self, Outcome::Fail { .. })
    }

    /// The reason of a failure or an undetermined outcome.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail { reason } | Outcome::Undetermined { reason } => Some(reason),
        }
    }

    /// `pass`, `fail` or `undetermined`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail { .. } => "fail",
            Outcome::Undetermined { .. } => "undetermined",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason() {
            Some(reason) => write!(f, "{}: {reason}", self.as_str()),
            None => f.write_str(self.as_str()),
        }
    }
}

/// The name of a contract, written by serde as snake case (`junk_prefix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContractName {
    /// Time to the first content token of a stream.
    Ttft,
    /// Punctuation or a token fragment before the text.
    JunkPrefix,
    /// The reply is in the conversation's language, unmixed, without mojibake.
    Language,
    /// Structured output parses and validates.
    Schema,
    /// A high-confidence policy refusal.
    Refusal,
    /// An empty or whitespace-only message.
    Empty,
    /// `finish_reason` says the reply was cut (`length`, `content_filter`).
    Truncated,
}

impl ContractName {
    /// Every contract, in the order results and columns list them.
    pub const ALL: [ContractName; 7] = [
        ContractName::Ttft,
        ContractName::JunkPrefix,
        ContractName::Language,
        ContractName::Schema,
        ContractName::Refusal,
        ContractName::Empty,
        ContractName::Truncated,
    ];

    /// The snake-case name (`"junk_prefix"`), as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ContractName::Ttft => "ttft",
            ContractName::JunkPrefix => "junk_prefix",
            ContractName::Language => "language",
            ContractName::Schema => "schema",
            ContractName::Refusal => "refusal",
            ContractName::Empty => "empty",
            ContractName::Truncated => "truncated",
        }
    }

    /// The contract from its snake-case name.
    pub fn from_name(name: &str) -> Option<ContractName> {
        ContractName::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for ContractName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One answer contract. Implementations are pure: the same input gives the
/// same outcome.
pub trait Contract: fmt::Debug + Send + Sync {
    /// Which contract this is.
    fn name(&self) -> ContractName;

    /// The outcome on `input`, or `None` when the contract does not apply.
    /// Called only for 2xx answers.
    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome>;
}

/// The result of one contract on one reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractResult {
    /// The contract.
    pub name: ContractName,
    /// Its outcome; `None` when it does not apply.
    pub outcome: Option<Outcome>,
}

/// Default time-to-first-token limit: generous on purpose, so that only a
/// route that is clearly stalling fails.
pub const DEFAULT_TTFT_LIMIT: Duration = Duration::from_secs(10);

/// Settings of a [`Contracts`] set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractSettings {
    /// First content token later than this fails `ttft`.
    pub ttft_limit: Duration,
    /// The languages a conversation can plausibly be in; the detector
    /// chooses only among these.
    pub languages: Vec<Language>,
    /// The contracts to run.
    pub enabled: Vec<ContractName>,
}

impl Default for ContractSettings {
    fn default() -> Self {
        ContractSettings {
            ttft_limit: DEFAULT_TTFT_LIMIT,
            languages: Language::ALL.to_vec(),
            enabled: ContractName::ALL.to_vec(),
        }
    }
}

/// Why a [`ContractSettings`] cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// No plausible language was given.
    #[error("the contracts need at least one plausible language; list the languages the conversations can be in")]
    NoLanguage,
    /// The time-to-first-token limit is zero.
    #[error("the time-to-first-token limit must be above zero; pass a limit such as 10s")]
    ZeroTtftLimit,
}

/// The configured set of contracts the suites run on every answer.
#[derive(Debug)]
pub struct Contracts {
    settings: ContractSettings,
    contracts: Vec<Box<dyn Contract>>,
    /// The language detector of the set, shared with the `language`
    /// contract so that one memo serves the conversation's language and
    /// every reply.
    detector: Arc<detect::Detector>,
}

impl Default for Contracts {
    fn default() -> Self {
        Contracts::build(ContractSettings::default())
    }
}

impl Contracts {
    /// The set described by `settings`.
    ///
    /// # Errors
    /// [`SettingsError`] when no language is given or the limit is zero.
    pub fn new(settings: ContractSettings) -> Result<Self, SettingsError> {
        if settings.languages.is_empty() {
            return Err(SettingsError::NoLanguage);
        }
        if settings.ttft_limit.is_zero() {
            return Err(SettingsError::ZeroTtftLimit);
        }
        Ok(Contracts::build(settings))
    }

    fn build(mut settings: ContractSettings) -> Self {
        settings.languages.sort();
        settings.languages.dedup();
        let detector = Arc::new(detect::Detector::new(&settings.languages));
        let contracts: Vec<Box<dyn Contract>> = ContractName::ALL
            .into_iter()
            .filter(|n| settings.enabled.contains(n))
            .map(|name| -> Box<dyn Contract> {
                match name {
                    ContractName::Ttft => Box::new(Ttft::new(settings.ttft_limit)),
                    ContractName::JunkPrefix => Box::new(JunkPrefix),
                    ContractName::Language => {
                        Box::new(LanguageContract::with_detector(Arc::clone(&detector)))
                    }
                    ContractName::Schema => Box::new(Schema),
                    ContractName::Refusal => Box::new(Refusal),
                    ContractName::Empty => Box::new(Empty),
                    ContractName::Truncated => Box::new(Truncated),
                }
            })
            .collect();
        Contracts {
            settings,
            contracts,
            detector,
        }
    }

    /// The language of a conversation from its user messages (joined), when
    /// the guess is reliable: decided once per conversation by the caller,
    /// and passed to every answer's check as
    /// [`ContractInput::expected_language`]. Short ideographs without kana
    /// give `None` (Japanese or Chinese alike).
    pub fn conversation_language<S: AsRef<str>>(&self, user_messages: &[S]) -> Option<Language> {
        let joined: Vec<&str> = user_messages.iter().map(AsRef::as_ref).collect();
        self.detector
            .detect(&joined.join(" "))
            .filter(|d| d.reliable)
            .map(|d| d.language)
    }

    /// How many texts the language detector left to lingua so far (the
    /// rest its shortcuts, script rules or memo answered).
    pub fn lingua_calls(&self) -> usize {
        self.detector.lingua_calls()
    }

    /// The settings this set was built from (languages sorted, deduplicated).
    pub fn settings(&self) -> &ContractSettings {
        &self.settings
    }

    /// Runs every enabled contract on `input`, in [`ContractName::ALL`]
    /// order. A non-2xx answer gets `None` from every contract: a transport
    /// or HTTP failure is never a contract failure.
    pub fn check(&self, input: &ContractInput<'_>) -> Vec<ContractResult> {
        let answered = (200..300).contains(&input.status);
        self.contracts
            .iter()
            .map(|c| ContractResult {
                name: c.name(),
                outcome: if answered { c.check(input) } else { None },
            })
            .collect()
    }
}

/// The contracts that failed, in result order.
pub fn violations(results: &[ContractResult]) -> Vec<ContractName> {
    results
        .iter()
        .filter(|r| r.outcome.as_ref().is_some_and(Outcome::is_fail))
        .map(|r| r.name)
        .collect()
}

/// The columns of one checked answer, as `turns.csv` writes them: every
/// contract that applied with its outcome (`empty=pass;language=fail`), the
/// names that failed (`language`), and their reasons (`language: ...`).
pub fn columns(results: &[ContractResult]) -> (String, String, String) {
    let applied: Vec<String> = results
        .iter()
        .filter_map(|r| {
            r.outcome
                .as_ref()
                .map(|o| format!("{}={}", r.name.as_str(), o.as_str()))
        })
        .collect();
    let reasons: Vec<String> = results
        .iter()
        .filter_map(|r| match &r.outcome {
            Some(o @ Outcome::Fail { .. }) => Some(format!(
                "{}: {}",
                r.name.as_str(),
                o.reason().unwrap_or_default()
            )),
            _ => None,
        })
        .collect();
    (
        applied.join(";"),
        violations_column(results),
        reasons.join("; "),
    )
}

/// Reads a `contracts` column back: each contract that applied, with its
/// outcome name (`pass`, `fail`, `undetermined`). Unknown names are skipped.
pub fn parse_applied(column: &str) -> Vec<(ContractName, &str)> {
    column
        .split(';')
        .filter_map(|item| {
            let (name, outcome) = item.split_once('=')?;
            Some((ContractName::from_name(name.trim())?, outcome.trim()))
        })
        .collect()
}

/// The `contract_violations` column: failed contract names joined by `;`,
/// empty when none failed.
pub fn violations_column(results: &[ContractResult]) -> String {
    violations(results)
        .iter()
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests;
