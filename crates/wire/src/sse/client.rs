//! Whose reading of a stream decides whether it is an answer. The same
//! bytes are an answer to one client and an error to another: a stream
//! that ends cleanly without `data: [DONE]` and without a finish reason is
//! a complete answer to the official OpenAI SDKs (they stop reading when
//! the body ends) and an error to a strict reader. A verdict on an answer
//! is the verdict of the client the user runs, so the catalogue reads
//! every stream by a named [`ClientProfile`] and says which.
//!
//! What each profile does with each shape (checked against the SDKs
//! themselves on the same bytes by `tests/it/client_profiles.rs`):
//!
//! | the stream | `openai-sdk` | `strict` |
//! |---|---|---|
//! | ends with `data: [DONE]` | answer | answer |
//! | ends cleanly without `[DONE]`, with or without a finish reason | answer (what came) | error |
//! | breaks off (the connection aborted) | error (`APIConnectionError`, `TypeError: terminated`) | error |
//! | a `data:` line that is not JSON | error (a JSON decode error, `SyntaxError`) | error |
//! | a chunk whose `error` is truthy | error (`APIError`) | error |
//! | a chunk whose `error` is `null`, `false`, `0` or `""` | no error: the chunk is read | error |
//! | `: ping` comments | ignored | ignored |
//! | a last event the body ends inside (no closing blank line) | not read | read |
//!
//! Where the two SDKs differ on shapes the catalogue does not send, the
//! profile follows the Python SDK: an `error` of `{}` or `[]` (the Node SDK
//! raises, JavaScript finds them true); an `event: error` whose data has no
//! `error` (the Node SDK raises on the event name); `data: [DONE]` followed
//! by more text on the line (the Python SDK ends, the Node SDK fails to
//! parse it); a last event without its blank line (the Python SDK drops
//! it, the Node SDK reads it); a chunked body that ends without its last
//! chunk on a `Connection: close` connection, by a reset or a bare close
//! (the Python SDK raises; the Node SDK, through undici, ends the stream
//! there and returns what came as the whole answer, so its users get a
//! cut answer without an error); a plain 200 whose content type is not
//! JSON (the Node SDK returns the body as a string, so the application's
//! `.choices` fails). A `delta.content` that is not text is broken in every
//! profile: the SDKs hand it to the application, whose text handling is
//! not theirs to decide.

use super::assemble::{fold_trace, Assembled, ChunkFold};
use super::trace::StreamTrace;
use serde::{Deserialize, Serialize};

/// The client whose reading of a stream the verdict takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientProfile {
    /// The official OpenAI SDKs (Python `openai` 3.x `Stream`, Node
    /// `openai` 7.x `Stream`): every clean end of the body is the end of
    /// the answer; an aborted body, a chunk that is not JSON or a chunk
    /// with a truthy `error` raises.
    #[default]
    #[serde(rename = "openai-sdk")]
    OpenAiSdk,
    /// A strict server-sent-events reader: only `data: [DONE]` completes a
    /// stream; any `error` key breaks it.
    Strict,
}

impl ClientProfile {
    /// Every profile, default first.
    pub const ALL: [ClientProfile; 2] = [ClientProfile::OpenAiSdk, ClientProfile::Strict];

    /// The name the command line and the reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientProfile::OpenAiSdk => "openai-sdk",
            ClientProfile::Strict => "strict",
        }
    }

    /// The profile's rule in one sentence, for a report.
    pub fn rule(self) -> &'static str {
        match self {
            ClientProfile::OpenAiSdk => {
                "as the official OpenAI SDKs read a stream (the Python SDK's reading where the Node SDK's differs): a body that ends cleanly is a complete answer, with or without data: [DONE] or a finish reason; an aborted body, a chunk that is not JSON or a chunk with an error raises"
            }
            ClientProfile::Strict => {
                "as a strict reader: only data: [DONE] completes a stream; a clean end without it is an error"
            }
        }
    }

    /// The answer a stream whose body ended cleanly carried, read as this
    /// client does, or why this client raises. (A body that broke off is
    /// a transport error in every profile and never reaches a trace.)
    ///
    /// # Errors
    /// Why the client raises: a line that is not UTF-8 or not JSON, an
    /// error chunk, a `delta.content` that is not text, or (strict) no
    /// `data: [DONE]`.
    pub fn assemble(self, trace: &StreamTrace) -> Result<Assembled, String> {
        match self {
            ClientProfile::OpenAiSdk => {
                // The Python SDK dispatches an event at its blank line only:
                // a last event the body ended inside is never read.
                let dispatched = StreamTrace {
                    events: trace.events[..trace.events.len() - trace.unterminated].to_vec(),
                    unterminated: 0,
                    ..trace.clone()
                };
                fold_trace(&dispatched, ChunkFold::truthy_errors(), |_| Ok(()))
            }
            ClientProfile::Strict => {
                fold_trace(trace, ChunkFold::default(), |fold| fold.end(false))
            }
        }
    }
}

impl std::fmt::Display for ClientProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ClientProfile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClientProfile::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown client profile `{s}`: use {}",
                    ClientProfile::ALL.map(ClientProfile::as_str).join(" or ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::read_all;
    use serde_json::json;

    fn chunk(v: serde_json::Value) -> String {
        format!("data: {v}\n\n")
    }

    fn text(content: &str) -> String {
        chunk(json!({"choices": [{"index": 0, "delta": {"content": content}}]}))
    }

    fn read(profile: ClientProfile, body: &str) -> Result<Assembled, String> {
        profile.assemble(&read_all(body.as_bytes()))
    }

    #[test]
    fn a_clean_end_without_done_or_finish_is_an_answer_to_the_sdk_only() {
        let body = format!("{}{}", text("forty "), text("words"));
        let sdk = read(ClientProfile::OpenAiSdk, &body).unwrap();
        assert_eq!(
            (sdk.text.as_str(), sdk.finish_reason),
            ("forty words", None)
        );
        let strict = read(ClientProfile::Strict, &body).unwrap_err();
        assert_eq!(
            strict,
            "the stream ended without data: [DONE] after 2 chunks"
        );
        // With [DONE], both read the same answer.
        let done = format!("{body}data: [DONE]\n\n");
        for profile in ClientProfile::ALL {
            assert_eq!(read(profile, &done).unwrap().text, "forty words");
        }
    }

    #[test]
    fn malformed_chunks_and_truthy_errors_break_the_stream_for_every_profile() {
        let malformed = format!("{}data: {{\"choices\": [\n\ndata: [DONE]\n\n", text("a"));
        let error = format!(
            "{}{}",
            text("a"),
            chunk(json!({"error": {"message": "overloaded", "type": "overloaded_error"}}))
        );
        for profile in ClientProfile::ALL {
            let m = read(profile, &malformed).unwrap_err();
            assert!(m.starts_with("malformed stream chunk 2"), "{profile}: {m}");
            let e = read(profile, &error).unwrap_err();
            assert_eq!(
                e, "error in the stream after 2 chunks: overloaded",
                "{profile}"
            );
        }
    }

    #[test]
    fn a_falsy_error_is_no_error_to_the_sdk() {
        for falsy in [json!(null), json!(false), json!(0), json!(""), json!({})] {
            let body = format!(
                "{}{}data: [DONE]\n\n",
                chunk(json!({"error": falsy, "choices": [{"delta": {"content": "ok"}}]})),
                text("!")
            );
            assert_eq!(
                read(ClientProfile::OpenAiSdk, &body).unwrap().text,
                "ok!",
                "{falsy}"
            );
            assert!(read(ClientProfile::Strict, &body).is_err(), "{falsy}");
        }
    }

    #[test]
    fn a_last_event_the_body_ends_inside_is_not_read_by_the_sdk() {
        let body = format!("{}{}", text("Hello "), text("there.").trim_end());
        let sdk = read(ClientProfile::OpenAiSdk, &body).unwrap();
        assert_eq!(sdk.text, "Hello ");
        // Terminated, it is read.
        let body = format!("{}{}", text("Hello "), text("there."));
        assert_eq!(
            read(ClientProfile::OpenAiSdk, &body).unwrap().text,
            "Hello there."
        );
    }

    #[test]
    fn names_round_trip() {
        for p in ClientProfile::ALL {
            assert_eq!(p.as_str().parse::<ClientProfile>(), Ok(p));
            assert_eq!(serde_json::to_value(p).unwrap(), json!(p.as_str()));
        }
        assert!("sdk"
            .parse::<ClientProfile>()
            .unwrap_err()
            .contains("openai-sdk or strict"));
        assert_eq!(ClientProfile::default(), ClientProfile::OpenAiSdk);
    }
}
