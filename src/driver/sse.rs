//! Reading a streamed chat completion as a client does: the assistant text
//! from the `data:` chunks' `choices[0].delta.content`, and, when the stream
//! is not a complete answer, why (a malformed chunk, an error object sent
//! mid-stream, no `data: [DONE]` at the end).

use serde_json::Value;

/// Longest excerpt of a bad chunk kept in a reason.
const CHUNK_EXCERPT: usize = 120;

/// The assistant text of a streamed (server-sent events) chat-completions
/// body, or why it is not a usable answer. Lines other than `data:` lines
/// (comments, `event:`, `id:`, blank separators) are skipped; text after
/// `data: [DONE]` is ignored.
///
/// # Errors
/// A reason: the body is not UTF-8, a chunk is not JSON, a chunk carries an
/// `error` object, or the stream ended without `data: [DONE]`.
pub fn stream_text(body: &[u8]) -> Result<String, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the stream is not UTF-8".to_string())?;
    let mut answer = String::new();
    let mut chunks = 0usize;
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(answer);
        }
        chunks += 1;
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "malformed stream chunk {chunks} ({e}): {}",
                data.chars().take(CHUNK_EXCERPT).collect::<String>()
            )
        })?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(format!(
                "error in the stream after {chunks} chunks: {message}"
            ));
        }
        if let Some(piece) = chunk
            .pointer("/choices/0/delta/content")
            .and_then(Value::as_str)
        {
            answer.push_str(piece);
        }
    }
    Err(format!(
        "the stream ended without data: [DONE] after {chunks} chunks"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(content: &str) -> String {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": content}}]})
        )
    }

    #[test]
    fn assembles_the_deltas_of_a_complete_stream() {
        let body = format!(
            "data: {}\n\n{}{}: keep-alive comment\n\n{}data: {}\n\ndata: [DONE]\n\n",
            serde_json::json!({"choices": [{"delta": {"role": "assistant", "content": ""}}]}),
            chunk("Your sister "),
            chunk("is called "),
            chunk("Oriane."),
            serde_json::json!({"choices": [], "usage": {"prompt_tokens": 9}}),
        );
        assert_eq!(
            stream_text(body.as_bytes()).unwrap(),
            "Your sister is called Oriane."
        );
        // CRLF line ends and no space after the colon are valid SSE.
        let crlf = "data:{\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\r\n\r\ndata:[DONE]\r\n";
        assert_eq!(stream_text(crlf.as_bytes()).unwrap(), "ok");
    }

    #[test]
    fn a_stream_cut_before_done_is_not_an_answer() {
        let body = format!("{}{}", chunk("Your sister "), chunk("is"));
        let err = stream_text(body.as_bytes()).unwrap_err();
        assert_eq!(err, "the stream ended without data: [DONE] after 2 chunks");
    }

    #[test]
    fn a_malformed_chunk_or_an_error_chunk_is_named() {
        let body = format!("{}data: {{\"choices\": [\n\ndata: [DONE]\n\n", chunk("a"));
        let err = stream_text(body.as_bytes()).unwrap_err();
        assert!(err.starts_with("malformed stream chunk 2"), "{err}");
        let body = format!(
            "{}data: {}\n\ndata: [DONE]\n\n",
            chunk("a"),
            serde_json::json!({"error": {"message": "upstream went away", "type": "server_error"}})
        );
        let err = stream_text(body.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            "error in the stream after 2 chunks: upstream went away"
        );
        assert!(stream_text(&[0xff, 0xfe]).is_err());
    }
}
