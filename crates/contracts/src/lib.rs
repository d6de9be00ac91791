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
//! [`checks`] is what a turn records of it (typed, [`ContractCheck`]), and
//! [`violations`] the names that failed.

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

pub use cb_base::contract::{ContractCheck, ContractName, Outcome};

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

/// Every contract that applied to an answer, with its outcome, in result
/// order: what a turn records.
///
/// The list has its exact size: a turn keeps it until the report, and
/// collected from a filter it would have room for 8 checks where 5 apply
/// (at 100,000 conversations, 24 MB of room never used).
pub fn checks(results: &[ContractResult]) -> Vec<ContractCheck> {
    let mut checks = Vec::with_capacity(results.iter().filter(|r| r.outcome.is_some()).count());
    checks.extend(results.iter().filter_map(|r| {
        r.outcome.clone().map(|outcome| ContractCheck {
            name: r.name,
            outcome,
        })
    }));
    checks
}

#[cfg(test)]
mod tests;
