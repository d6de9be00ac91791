//! Scoring: turns the answer to a probe into a verdict.
//!
//! The fast path decides what it safely can from the text alone (the expected
//! value or an accepted variant, another conversation's anchor, a refusal);
//! what it cannot decide is `undetermined`, and a [`Judge`] may decide it:
//! [`judge`] is the LLM judge, its cache, its simulated server and its
//! calibration.

pub mod fast;
pub mod judge;
pub mod normalize;
mod seam;

pub use fast::{bleed_in, score_fast, AnchorIndex};
pub use seam::Judge;

use serde::{Deserialize, Serialize};

/// The verdict on one failover event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The answer used the anchor correctly.
    Preserved,
    /// The answer did not use the anchor (forgot it, refused, named another
    /// value or another conversation's anchor).
    Lost,
    /// The client got no usable answer: non-2xx, timeout, malformed or empty body.
    Error,
    /// A judge was needed and could not decide. Reported, never dropped.
    Undetermined,
}

impl Verdict {
    /// The snake_case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Preserved => "preserved",
            Verdict::Lost => "lost",
            Verdict::Error => "error",
            Verdict::Undetermined => "undetermined",
        }
    }
}

/// Which scorer produced a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictMethod {
    /// The deterministic text matcher.
    FastPath,
    /// An LLM judge.
    Judge,
}

/// A verdict with its provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scored {
    /// The verdict.
    pub verdict: Verdict,
    /// Which scorer decided it.
    pub method: VerdictMethod,
    /// A short human-readable reason.
    pub reason: String,
    /// Ids of other conversations whose anchor value appears in the answer.
    pub bleed_from: Vec<String>,
}
