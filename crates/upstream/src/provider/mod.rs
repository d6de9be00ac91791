//! Pass-through upstreams: a simulated upstream in front of a real
//! OpenAI-compatible provider (a hosted API, or a local vLLM, llama.cpp or
//! Ollama server). The fault plan, the rate limiter and the degradations
//! work as with the simulated model: the upstream decides and executes a
//! fault on the wire before anything is forwarded, so a faulted attempt
//! never reaches the provider. What is not faulted is forwarded
//! ([`forward::PassThrough`]). A streamed answer without a text
//! degradation is handed on as it arrives (`live.rs`, relayed by
//! [`crate::relay`]); otherwise the provider's answer is read
//! into the same answer type the simulated model produces ([`reply`]),
//! then framed, degraded or cut by the same code.
//!
//! [`route`] holds where each role forwards: the URL, the model id, the key
//! (a [`cb_base::secret::Secret`]) and what a report may say about it.

pub mod forward;
mod live;
pub mod reply;
pub mod route;

pub use forward::{PassThrough, PassThroughError};
pub use route::{
    is_loopback_host, ProviderRoute, Providers, ResolvedProvider, ResolvedProviders, RouteError,
};
