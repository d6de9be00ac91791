//! The answer contracts' names and outcomes, and one checked contract as a
//! turn records it ([`ContractCheck`]): the checks live in `cb-contracts`,
//! but the driver's rows carry their results typed, so they are named here,
//! below every suite.

use serde::{Deserialize, Serialize};
use std::fmt;

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

/// One contract that applied to an answer, with its outcome (a turn's
/// `contracts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractCheck {
    /// Which contract.
    pub name: ContractName,
    /// What it said.
    pub outcome: Outcome,
}

impl ContractCheck {
    /// Whether the answer broke the contract.
    pub fn failed(&self) -> bool {
        self.outcome.is_fail()
    }
}
