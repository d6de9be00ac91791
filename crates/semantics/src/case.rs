//! What one case of the catalogue is: the upstream script, how many
//! requests it sends, what the ideal outcome is, and the machine checks
//! that judge it, each with a severity. The cases themselves are listed in
//! [`super::catalogue`].

use cb_faults::CaseScript;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The model id of the larger-context route (`context-length`): the
/// upstreams answer it where they reject every other id as too long.
pub const CONTEXT_MODEL: &str = "continuity-sim-long";

/// Words every case's answer has, so a stream has that many content
/// chunks (and `stream-cut` dies after two thirds of them).
pub const ANSWER_WORDS: usize = 60;

/// What a case's requests should end with when the system does its best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ideal {
    /// The complete answer.
    Answer,
    /// Nothing need answer until this long after the case starts (the
    /// outage and the time allowed to come back from it, as the case's
    /// check counts them): the complete answer to every request sent
    /// after it (those sent before end in a clean error or a late answer,
    /// which the case's checks judge).
    AnsweredAfter(Duration),
    /// The complete answer, or the part the primary sent with its
    /// `finish_reason: "length"` kept, so that the client can tell: an
    /// honest partial answer is not a failure to fail over.
    WholeOrMarked,
    /// A clean error: nothing can or should answer (a permanent error
    /// passed through, both upstreams down).
    CleanError,
}

/// How a check counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Failing it fails the case.
    Required,
    /// Failing it makes an answered case `partial`.
    Advisory,
    /// Reported, never scored.
    Informational,
}

impl Severity {
    /// The snake_case name, as the JSON output writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Required => "required",
            Severity::Advisory => "advisory",
            Severity::Informational => "informational",
        }
    }
}

/// The name of a check, as the JSON output writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckId {
    /// The call ended inside the case's bound.
    NoHang,
    /// No answer presented as complete that is not the whole answer.
    NoTruncatedSuccess,
    /// The answer keeps every answer contract.
    ContractsKept,
    /// The primary's answer reached the client, without the fallback.
    Delivered,
    /// The fallback was not called.
    NoFailover,
    /// The client got the primary's status.
    PassedThrough,
    /// The fallback was called.
    FailedOver,
    /// No second primary attempt before `Retry-After`.
    RetryAfterHonoured,
    /// The primary was retried (same route) before failing over.
    RetriedSameRoute,
    /// Few primary attempts in the first seconds.
    NoHammer,
    /// Primary attempts bounded in all.
    BoundedAttempts,
    /// A silent route was not tried again.
    SilentRouteNotRetried,
    /// The call ended inside the configured budget.
    WithinBudget,
    /// A time-to-first-token limit failed over.
    TtftFailover,
    /// The stall was detected inside a bounded window.
    StallBounded,
    /// A healthy request answered after the case.
    AliveAfter,
    /// The completion was finalised promptly.
    PromptFinalise,
    /// The client got token usage.
    UsageReported,
    /// `usage.completion_tokens` counts the text the client received.
    UsageMatchesAnswer,
    /// The same model was not tried again.
    NoSameModelRetry,
    /// A larger-context model answered.
    ContextRouted,
    /// The provider's reason reached the client.
    ReasonPropagated,
    /// The fallback was called (recorded, not scored).
    FallbackAttempted,
    /// The fallback's prefill rejection was not the client's final error.
    NoPrefillMasking,
    /// Requests during the outage were answered.
    ServedDuringOutage,
    /// Requests were back on the primary within the bound.
    Recovered,
    /// Primary attempts per request during the outage.
    ProbeDiscipline,
    /// The response names the fallback's model.
    ReportsFallbackModel,
    /// Attempts per upstream within the user's bound.
    AttemptsBounded,
    /// A definitive error within the user's bound.
    GaveUpInTime,
    /// The fallback received its own model id.
    FallbackModelId,
    /// `max_tokens` reached the fallback.
    MaxTokensSupplied,
    /// Thinking was switched off at the fallback.
    ThinkingOff,
    /// The slow primary was left for a faster route.
    SwitchedToFaster,
    /// The fallback's failure was exposed before it was needed.
    HealthExposed,
    /// No request waited long behind a rate-limited primary.
    NotStuck,
    /// Errors while every target was rate limited stated a wait.
    WaitStated,
    /// Requests were answered again after every target's cooldown.
    BackAfterCooldown,
    /// A re-cooled primary's deadline moved to the longer wait.
    DeadlineMoved,
    /// A primary retried inside its stated window was tried again after
    /// it, not dropped while the window ran.
    NotDroppedInWindow,
}

impl CheckId {
    /// The snake_case name the JSON output writes (`failed_over`).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// What a check measures and its bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// Every request ended inside its bound.
    NoHang,
    /// Every answer the client got is the complete one.
    NoTruncatedSuccess,
    /// Every answer keeps its contracts.
    ContractsKept,
    /// Answered, and the fallback saw nothing.
    Delivered,
    /// The fallback saw nothing.
    NoFailover,
    /// The client got this status.
    PassedThrough(u16),
    /// The fallback saw at least one attempt.
    FailedOver,
    /// The second primary attempt came at least this long after the
    /// first (or never came).
    FirstGapAtLeast(Duration),
    /// The primary saw at least this many attempts.
    PrimaryAtLeast(u32),
    /// The primary saw at most this many attempts.
    PrimaryAtMost(u32),
    /// At most `max` primary attempts arrived within `window` of the
    /// first.
    PrimaryWithin {
        /// From the first attempt.
        window: Duration,
        /// Most attempts inside it.
        max: u32,
    },
    /// The client's wall time was at most this.
    WallAtMost(Duration),
    /// The follow-up request got the complete answer.
    AliveAfter,
    /// The client got a `usage` block.
    UsagePresent,
    /// The answer's `usage.completion_tokens` is the simulated model's
    /// count of the text the client received
    /// ([`cb_wire::openai::approx_tokens`]), within one token per part a
    /// continuation spliced together (each part is rounded up on its own).
    UsageMatchesAnswer,
    /// An attempt with this model id was answered 2xx.
    ModelAnswered(&'static str),
    /// The client got HTTP 400 naming this error code.
    ReasonPropagated(&'static str),
    /// Not (the client's result is an error and the fallback rejected a
    /// prefill).
    NoPrefillMasking,
    /// Every request sent in the first `outage` was answered.
    ServedDuringOutage(Duration),
    /// Requests were served by the primary again, from one sent at most
    /// `within` after the end of `outage` on.
    RecoveredWithin {
        /// How long the primary was down.
        outage: Duration,
        /// How soon after it the primary must be back.
        within: Duration,
    },
    /// Primary attempts per request sent during `outage`.
    ProbeDiscipline(Duration),
    /// The response's `model` is the id the fallback received.
    ReportsFallbackModel,
    /// At most this many attempts at each upstream.
    AttemptsPerUpstream(u32),
    /// A definitive answer or error within this.
    GaveUpWithin(Duration),
    /// Every fallback attempt carried this model id.
    FallbackModel(&'static str),
    /// A fallback attempt carried `max_tokens`.
    MaxTokensAtFallback,
    /// The fallback's answering attempt switched thinking off.
    ThinkingOffAtFallback,
    /// The fallback answered, within this wall time.
    FasterRoute(Duration),
    /// A health route of the system exposed the fallback's failure.
    HealthExposed,
    /// Every request sent during the first `outage` was answered within
    /// `bound`.
    AnsweredWithinDuring {
        /// How long the primary was rate limited.
        outage: Duration,
        /// Longest a request may take.
        bound: Duration,
    },
    /// Every request sent during the first `outage` that was not answered
    /// got an error stating a wait (`Retry-After`, `retry-after-ms`, a
    /// reset header or the body).
    WaitStatedDuring(Duration),
    /// No primary attempt arrived from shortly after `recooled_at` (when
    /// the longer wait reached the system) until `until`; applies only to
    /// a system that cooled the primary (a request sent from
    /// `cooling_from` until `recooled_at` skipped it).
    RecoolHonoured {
        /// When the first cooldown began (the short 429).
        cooling_from: Duration,
        /// When the longer wait arrived.
        recooled_at: Duration,
        /// When the longer wait ends (less the slack).
        until: Duration,
    },
    /// When the primary was retried inside `window` of its first attempt
    /// (the wait its 429 stated, less the slack), it was tried again once
    /// the window had passed: not dropped while the window ran. Applies
    /// only to a system that retried inside the window.
    KeptThroughWindow(Duration),
    /// Every request sent at least `within` after the end of `outage` was
    /// answered.
    AnsweredAfter {
        /// How long every target was down.
        outage: Duration,
        /// How soon after it requests must be answered again.
        within: Duration,
    },
}

/// One check of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Its name.
    pub id: CheckId,
    /// How it counts.
    pub severity: Severity,
    /// What it measures.
    pub rule: Rule,
}

impl Check {
    /// A required check.
    pub fn required(id: CheckId, rule: Rule) -> Self {
        Check {
            id,
            severity: Severity::Required,
            rule,
        }
    }

    /// An advisory check.
    pub fn advisory(id: CheckId, rule: Rule) -> Self {
        Check {
            id,
            severity: Severity::Advisory,
            rule,
        }
    }

    /// An informational check.
    pub fn informational(id: CheckId, rule: Rule) -> Self {
        Check {
            id,
            severity: Severity::Informational,
            rule,
        }
    }
}

/// How a case's requests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One request (sent again after `--cooldown-wait` when it skipped
    /// the primary).
    Single,
    /// `count` requests, one every `interval`, never re-sent.
    Sequence {
        /// How many.
        count: u32,
        /// Time between their starts.
        interval: Duration,
    },
    /// The system's health routes are probed with the fallback healthy,
    /// then with its key expired, then one request is sent.
    Health,
}

/// Whether a case's requests stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streaming {
    /// As `--stream` says.
    AsConfigured,
    /// Always (a streaming case).
    Always,
    /// Never (a case about plain bodies).
    Never,
}

/// One case of the catalogue.
#[derive(Debug, Clone)]
pub struct Case {
    /// The id the JSON output uses (`429-retry-after`).
    pub id: &'static str,
    /// What the upstreams do, in words, with this profile's times.
    pub upstream: String,
    /// What passes, in words.
    pub passes: &'static str,
    /// The scripts of both upstreams.
    pub script: CaseScript,
    /// How its requests go.
    pub shape: Shape,
    /// Whether they stream.
    pub streaming: Streaming,
    /// The best outcome.
    pub ideal: Ideal,
    /// The checks, universal ones included.
    pub checks: Vec<Check>,
    /// Each request is cut at this: a request not answered by then is a
    /// hang.
    pub bound: Duration,
    /// Whether a healthy request follows, for [`Rule::AliveAfter`].
    pub alive_after: bool,
    /// Whether the request asks for structured output.
    pub structured: bool,
    /// Whether the request leaves `max_tokens` out.
    pub without_max_tokens: bool,
    /// Whether the verdict counts in the scorecard.
    pub scored: bool,
    /// Answer contracts the case's own checks judge instead (a late first
    /// token is the fault of `slow-first-token`, weighed by its advisory
    /// check, not a broken contract).
    pub contracts_judged_elsewhere: &'static [&'static str],
}

impl Case {
    /// The user message of request `k` (from 0) of the case; it names
    /// the case, so the upstreams recognise it from the content alone.
    pub fn message(&self, label: &str) -> String {
        format!(
            "continuity-bench semantics check, case {}{label}. Please reply in exactly {ANSWER_WORDS} words.",
            self.id
        )
    }

    /// Whether the case's requests stream, given `--stream`.
    pub fn streams(&self, configured: bool) -> bool {
        match self.streaming {
            Streaming::AsConfigured => configured,
            Streaming::Always => true,
            Streaming::Never => false,
        }
    }
}
