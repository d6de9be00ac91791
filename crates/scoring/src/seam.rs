//! The seam for an LLM judge: the fast path hands over what it leaves
//! undetermined. [`crate::judge::LlmJudge`] implements it; this file fixes
//! the interface scoring calls.

use crate::Scored;
use cb_dataset::Conversation;
use std::future::Future;
use std::pin::Pin;

/// Decides events the fast path left undetermined.
pub trait Judge: Send + Sync {
    /// Judges `answer` to the probe of `conversation`. Returns a verdict with
    /// method [`super::VerdictMethod::Judge`], or `undetermined` when the judge
    /// could not decide; never fails.
    fn judge<'a>(
        &'a self,
        conversation: &'a Conversation,
        answer: &'a str,
    ) -> Pin<Box<dyn Future<Output = Scored> + Send + 'a>>;
}
