//! The wire both ends share: the OpenAI chat-completion types, frames and
//! error bodies ([`openai`]), the one reader of server-sent events ([`sse`]),
//! what a message's `content` holds ([`content`]), `Retry-After`
//! ([`retry_after()`]), and the one way every server the tool starts binds and
//! stops ([`server`]).

pub mod body_cap;
pub mod content;
pub mod openai;
pub mod responses;
pub mod retry_after;
pub mod server;
pub mod sse;

pub use body_cap::BodyCap;
pub use retry_after::{parse_retry_after, retry_after, stated_wait, RetryAfter, RETRY_AFTER_MAX};

/// The largest response body read from a peer by default (`--max-response-bytes`): 4 MiB, a thousand times a long chat
/// answer, small enough that 100 conversations in flight stay far below a
/// gigabyte.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 4 * 1024 * 1024;
