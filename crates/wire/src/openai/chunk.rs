//! The one reading of a chat-completion stream's `data:` line: `[DONE]`,
//! or a chunk and what it carries (the text of `choices[0].delta.content`
//! or why it is not text, reasoning, the finish reason, usage, the model,
//! an error object sent mid-stream). The driver's assembly, the live
//! pass-through relay and the reference proxies' relay all read chunks
//! here, so they agree on every edge case.
//!
//! Where those readers disagreed, this takes the stricter reading:
//!
//! - a `delta.content` that is neither a string, null nor an array of text
//!   parts (`42`, an object) is not text ([`Chunk::content`]), never empty
//!   text: a relay used to pass it on as a chunk without a token, and the
//!   live relay as no text, while a client could not read it;
//! - an array of text parts is text (a relay used to see no token in it);
//! - only a string `finish_reason` ends an answer ([`Chunk::finish_reason`]):
//!   a relay used to take any non-null value for one.

use super::Usage;
use crate::content::{self, NotText};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// The value of the `data:` line that ends a stream.
pub const DONE_DATA: &str = "[DONE]";

/// Longest excerpt of a bad chunk kept in a reason.
const CHUNK_EXCERPT: usize = 120;

/// What a `data:` line of a chat-completion stream carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `data: [DONE]`: the stream is complete.
    Done,
    /// A chunk.
    Chunk(Chunk),
}

/// A `data:` line that is neither `[DONE]` nor JSON.
#[derive(Debug)]
pub struct Malformed {
    /// The parse error.
    error: serde_json::Error,
    /// The line's data, cut to [`CHUNK_EXCERPT`] characters.
    excerpt: String,
}

impl Malformed {
    /// The reason, naming the chunk by its 1-based number.
    pub fn reason(&self, n: usize) -> String {
        format!(
            "malformed stream chunk {n} ({}): {}",
            self.error, self.excerpt
        )
    }
}

impl Data {
    /// Reads a `data:` line's value (surrounding whitespace ignored).
    ///
    /// # Errors
    /// [`Malformed`] when it is neither `[DONE]` nor JSON.
    pub fn parse(data: &str) -> Result<Data, Malformed> {
        let data = data.trim();
        if data == DONE_DATA {
            return Ok(Data::Done);
        }
        serde_json::from_str(data)
            .map(|value| Data::Chunk(Chunk { value }))
            .map_err(|error| Malformed {
                error,
                excerpt: data.chars().take(CHUNK_EXCERPT).collect(),
            })
    }
}

/// One chunk of a stream (its JSON), read on demand.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    value: Value,
}

impl Chunk {
    /// The chunk's JSON.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The chunk's JSON, taken (a relay rewrites it).
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The message of an `error` object sent mid-stream (the object itself
    /// when it has no string `message`); `None` when there is none. A chunk
    /// with an `error` key is an error whatever the key holds.
    pub fn error(&self) -> Option<String> {
        let error = self.value.get("error")?;
        Some(
            error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string),
        )
    }

    /// The text of `choices[0].delta.content`: `Ok(None)` when it is absent
    /// or null (a role or tool-call chunk), or what it is instead of text.
    ///
    /// # Errors
    /// [`NotText`] for a number, a boolean, an object, or an array with no
    /// text part.
    pub fn content(&self) -> Result<Option<Cow<'_, str>>, NotText> {
        match self.value.pointer("/choices/0/delta/content") {
            None => Ok(None),
            Some(content) => content::read(content),
        }
    }

    /// Whether the delta carries reasoning text (`reasoning_content`, or
    /// `reasoning` as some servers name it), which is a token too.
    pub fn reasoning(&self) -> bool {
        let delta = self.value.pointer("/choices/0/delta");
        ["reasoning_content", "reasoning"].iter().any(|key| {
            delta
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .is_some_and(|text| !text.is_empty())
        })
    }

    /// `choices[0].finish_reason`, when it is a string.
    pub fn finish_reason(&self) -> Option<&str> {
        self.value
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
    }

    /// The `model` the chunk names.
    pub fn model(&self) -> Option<&str> {
        self.value.get("model").and_then(Value::as_str)
    }

    /// Whether the chunk carries a `usage` object.
    pub fn has_usage(&self) -> bool {
        self.value.get("usage").is_some_and(Value::is_object)
    }

    /// The token counts of its `usage` object, when it has all three.
    pub fn usage(&self) -> Option<Usage> {
        self.value
            .get("usage")
            .filter(|u| u.is_object())
            .and_then(|u| Usage::deserialize(u).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(value: Value) -> Chunk {
        match Data::parse(&value.to_string()).unwrap() {
            Data::Chunk(c) => c,
            Data::Done => panic!("not a chunk"),
        }
    }

    #[test]
    fn done_and_malformed_lines() {
        assert_eq!(Data::parse(" [DONE] ").unwrap(), Data::Done);
        let bad = Data::parse("{\"choices\": [").unwrap_err();
        assert!(
            bad.reason(3).starts_with("malformed stream chunk 3 (EOF"),
            "{}",
            bad.reason(3)
        );
        let long = format!("{{{}", "x".repeat(500));
        assert!(Data::parse(&long).unwrap_err().reason(1).len() < 250);
    }

    #[test]
    fn what_a_chunk_carries() {
        let c = chunk(json!({
            "model": "m-7",
            "choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
        }));
        assert_eq!(c.content().unwrap().as_deref(), Some("hi"));
        assert_eq!(c.finish_reason(), Some("stop"));
        assert_eq!(c.model(), Some("m-7"));
        assert_eq!(c.usage(), Some(Usage::new(1, 2)));
        assert!(c.has_usage() && !c.reasoning() && c.error().is_none());
        let partial = chunk(json!({"choices": [], "usage": {"total_tokens": 3}}));
        assert!(partial.has_usage());
        assert_eq!(partial.usage(), None);
        let role = chunk(json!({"choices": [{"delta": {"role": "assistant", "content": null}}]}));
        assert_eq!(role.content().unwrap(), None);
        let thinking = chunk(json!({"choices": [{"delta": {"reasoning": "hmm"}}]}));
        assert!(thinking.reasoning());
        let error = chunk(json!({"error": {"message": "overloaded"}}));
        assert_eq!(error.error().as_deref(), Some("overloaded"));
        let bare = chunk(json!({"error": "down"}));
        assert_eq!(bare.error().as_deref(), Some("\"down\""));
    }

    /// The edge cases the readers disagreed on, read the strict way.
    #[test]
    fn content_that_is_not_text_is_not_empty_text() {
        let number = chunk(json!({"choices": [{"delta": {"content": 42}}]}));
        let reason = number.content().unwrap_err().reason("delta.content");
        assert!(
            reason.starts_with("delta.content is a number (42)"),
            "{reason}"
        );
        let object = chunk(json!({"choices": [{"delta": {"content": {"text": "hi"}}}]}));
        assert!(object.content().is_err());
        let parts =
            chunk(json!({"choices": [{"delta": {"content": [{"type": "text", "text": "hi"}]}}]}));
        assert_eq!(parts.content().unwrap().as_deref(), Some("hi"));
        let odd_finish = chunk(json!({"choices": [{"delta": {}, "finish_reason": 1}]}));
        assert_eq!(odd_finish.finish_reason(), None);
    }
}
