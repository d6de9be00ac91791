//! The seam that produces an upstream's answer when no fault stops it: a
//! [`Responder`] turns a recognised request into an [`Answer`] (text, finish
//! reason, usage, and how long it takes). The simulated model is the one
//! responder today; a pass-through to a real provider is another.
//!
//! Faults never reach a responder: the server executes them on the wire
//! before asking for an answer, and frames whatever the responder returns.

use super::latency::{JitterKey, LatencyProfile};
use super::model;
use crate::faults::ErrorSpec;
use crate::openai::{approx_tokens, ChatRequest, Usage};
use futures::future::BoxFuture;
use std::time::Duration;

/// One recognised request to answer.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The request as received.
    pub request: &'a ChatRequest,
    /// Who is answering and for which attempt (seeds the latency jitter).
    pub key: JitterKey<'a>,
    /// Approximate input tokens of the request.
    pub input_tokens: u32,
}

/// An answer, before it is put on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The assistant text.
    pub text: String,
    /// Why the answer ended (`stop`, `length`, ...).
    pub finish_reason: String,
    /// Token counts.
    pub usage: Usage,
    /// Time to the first token.
    pub ttft: Duration,
    /// Output pace once the first token has gone; zero means no delay.
    pub tokens_per_second: f64,
}

impl Answer {
    /// Time to send `tokens` tokens at the answer's pace.
    pub fn output_time(&self, tokens: u32) -> Duration {
        if self.tokens_per_second <= 0.0 || tokens == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(f64::from(tokens) / self.tokens_per_second)
        }
    }
}

/// Produces the answer to a request no fault stopped.
pub trait Responder: Send + Sync + std::fmt::Debug {
    /// The answer to `call`, or the error the provider behind it sent.
    fn respond<'a>(&'a self, call: Call<'a>) -> BoxFuture<'a, Result<Answer, ErrorSpec>>;
}

/// The simulated model behind a latency profile: it answers only from the
/// messages it received (see [`model::reply`]).
#[derive(Debug, Clone, Copy)]
pub struct SimulatedModel {
    /// How long answers take.
    pub latency: LatencyProfile,
    /// Master seed of the latency jitter.
    pub seed: u64,
}

impl SimulatedModel {
    /// The answer, computed at once.
    pub fn answer(&self, call: Call<'_>) -> Answer {
        let text = model::reply(&call.request.messages);
        let output_tokens = approx_tokens(&text);
        Answer {
            usage: Usage::new(call.input_tokens, output_tokens),
            ttft: self
                .latency
                .time_to_first_token(self.seed, &call.key, call.input_tokens),
            tokens_per_second: self.latency.tokens_per_second,
            finish_reason: "stop".to_string(),
            text,
        }
    }
}

impl Responder for SimulatedModel {
    fn respond<'a>(&'a self, call: Call<'a>) -> BoxFuture<'a, Result<Answer, ErrorSpec>> {
        Box::pin(async move { Ok(self.answer(call)) })
    }
}
