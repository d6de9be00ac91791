//! The seam that produces an upstream's answer when no fault stops it: a
//! [`Responder`] turns a recognised request into an [`Answer`] (text, finish
//! reason, usage, and how long it takes). The simulated model is one
//! responder; the pass-through to a real provider
//! ([`super::provider::PassThrough`]) is the other.
//!
//! Faults never reach a responder: the server executes them on the wire
//! before asking for an answer, and frames whatever the responder returns.
//!
//! A responder whose answer arrives over time (a real provider's stream)
//! can also offer it live ([`Responder::respond_live`]): the upstream then
//! frames each piece as it arrives instead of waiting for the whole text,
//! so the gateway sees the provider's real time to first token.

use super::latency::{JitterKey, LatencyProfile};
use super::model;
use cb_contracts::RequestedFormat;
use cb_faults::ErrorSpec;
use cb_wire::openai::{approx_tokens, ChatRequest, Usage};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
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
    /// The model a real provider said answered (pass-through); `None` for
    /// the simulated model, which echoes the model id asked for.
    pub model: Option<String>,
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

/// One piece of an answer that is still arriving.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Assistant text as it arrived (empty for an event without text, such
    /// as a role chunk).
    Text(String),
    /// The answer is complete.
    End(Ending),
}

/// How a live answer ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    /// Why the answer ended (`stop`, `length`, ...).
    pub finish_reason: String,
    /// The token counts the provider reported, if it did.
    pub usage: Option<Usage>,
}

/// An answer relayed as it arrives: who answers, and its pieces.
pub struct LiveAnswer {
    /// The model the provider says answers (the one asked of it when it
    /// does not say).
    pub model: String,
    /// The pieces in order, ending with [`Piece::End`], or with an error
    /// when the provider's answer breaks off or cannot be read (the reason
    /// is the error's message).
    pub pieces: BoxStream<'static, Result<Piece, ErrorSpec>>,
}

impl std::fmt::Debug for LiveAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveAnswer")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// Produces the answer to a request no fault stopped.
pub trait Responder: Send + Sync + std::fmt::Debug {
    /// The answer to `call`, or the error the provider behind it sent.
    fn respond<'a>(&'a self, call: Call<'a>) -> BoxFuture<'a, Result<Answer, ErrorSpec>>;

    /// The answer to `call` as it arrives, when this responder can give it
    /// live; `None` (the default) when it cannot, and the upstream waits
    /// for [`Responder::respond`]. The future resolves once the answer has
    /// begun (or with the error the provider sent instead).
    fn respond_live<'a>(
        &'a self,
        call: Call<'a>,
    ) -> Option<BoxFuture<'a, Result<LiveAnswer, ErrorSpec>>> {
        let _ = call;
        None
    }
}

/// Output tokens every simulated answer is charged for, whatever its length,
/// so that recalling the anchor and refusing cost the same to generate: CLO
/// then measures the price of the history (its prefill), not the length of
/// an answer.
pub const NOMINAL_OUTPUT_TOKENS: u32 = 24;

/// The simulated model behind a latency profile: it answers only from the
/// messages it received (see [`model::reply`]), in JSON when the request
/// asks for structured output. Input tokens cost prefill
/// time in the time to first token; output costs the time of
/// [`NOMINAL_OUTPUT_TOKENS`] tokens, spread over the answer's own tokens.
#[derive(Debug, Clone, Copy)]
pub struct SimulatedModel {
    /// How long answers take.
    pub latency: LatencyProfile,
    /// Master seed of the latency jitter.
    pub seed: u64,
}

impl SimulatedModel {
    /// The text the simulated model answers `request` with: the reply to
    /// its messages (the rest of it after a prefill that begins it), or,
    /// when the request asks for structured output, a minimal instance of
    /// the requested schema or the reply wrapped in an object. Also what a
    /// harness expects a faithful gateway to hand its client.
    pub fn text_for(request: &ChatRequest) -> String {
        let reply = model::reply(&request.messages);
        match cb_contracts::requested_format(request) {
            Some(RequestedFormat::JsonSchema(schema)) => {
                super::degrade::instance_for_schema(&schema).to_string()
            }
            Some(RequestedFormat::JsonObject) => serde_json::json!({ "answer": reply }).to_string(),
            None => reply,
        }
    }

    /// The answer, computed at once.
    pub fn answer(&self, call: Call<'_>) -> Answer {
        let text = Self::text_for(call.request);
        let output_tokens = approx_tokens(&text);
        // The pace that sends this answer's tokens in the time of the
        // nominal answer.
        let tokens_per_second = self.latency.tokens_per_second * f64::from(output_tokens)
            / f64::from(NOMINAL_OUTPUT_TOKENS);
        Answer {
            usage: Usage::new(call.input_tokens, output_tokens),
            ttft: self
                .latency
                .time_to_first_token(self.seed, &call.key, call.input_tokens),
            tokens_per_second,
            finish_reason: "stop".to_string(),
            text,
            model: None,
        }
    }
}

impl Responder for SimulatedModel {
    fn respond<'a>(&'a self, call: Call<'a>) -> BoxFuture<'a, Result<Answer, ErrorSpec>> {
        Box::pin(async move { Ok(self.answer(call)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_faults::Role;
    use cb_wire::openai::ChatMessage;

    fn answer_to(messages: Vec<ChatMessage>, latency: LatencyProfile) -> Answer {
        let request = ChatRequest {
            model: "m".into(),
            messages,
            stream: false,
            stream_options: None,
            extra: serde_json::Map::new(),
        };
        let input_tokens = request
            .messages
            .iter()
            .map(|m| approx_tokens(&m.text_cow()))
            .sum();
        let key = JitterKey {
            system: "s",
            role: Role::Fallback,
            conversation: "c",
            turn: 2,
            attempt: 1,
        };
        SimulatedModel { latency, seed: 1 }.answer(Call {
            request: &request,
            key,
            input_tokens,
        })
    }

    #[test]
    fn recalling_and_refusing_cost_the_same_to_generate() {
        let latency = LatencyProfile::REALISTIC;
        let recalled = answer_to(
            vec![
                ChatMessage::new("user", "My sister's name is Oriane."),
                ChatMessage::new("assistant", "Noted."),
                ChatMessage::new("user", "What's my sister's name?"),
            ],
            latency,
        );
        let refused = answer_to(
            vec![ChatMessage::new("user", "What's my sister's name?")],
            latency,
        );
        assert_ne!(
            recalled.usage.completion_tokens,
            refused.usage.completion_tokens
        );
        let generation = |a: &Answer| a.output_time(a.usage.completion_tokens);
        let nominal = latency.output_time(NOMINAL_OUTPUT_TOKENS);
        for a in [&recalled, &refused] {
            assert!((generation(a).as_secs_f64() - nominal.as_secs_f64()).abs() < 1e-9);
        }
        // The longer input costs its prefill.
        assert!(recalled.ttft > refused.ttft.saturating_sub(latency.max_jitter));
    }
}
