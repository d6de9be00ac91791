//! Checking Anthropic content blocks (`text`, `image`, `tool_use`,
//! `tool_result`) field by field, and the small type checks the request
//! validation shares. Messages are written as the API writes them: a dotted
//! path (`messages.1.content.0.tool_use.id`) and a pydantic-style sentence.

use super::invalid;
use crate::Rejection;
use serde_json::{Map, Value};

/// The block types this simulation accepts in messages.
const BLOCK_TYPES: &str = "'text', 'image', 'tool_use', 'tool_result'";

/// Image media types the API accepts.
const MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// A checked content block.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    Text(String),
    /// An image as a URL (`data:` for base64 sources).
    Image(String),
    ToolUse {
        id: String,
    },
    ToolResult {
        id: String,
        /// The result's text blocks joined by newlines.
        text: String,
    },
}

/// Who may carry a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Speaker {
    User,
    Assistant,
    System,
}

/// `path: message`, as a 400.
pub(super) fn at(path: &str, message: &str) -> Rejection {
    invalid(format!("{path}: {message}"))
}

/// Rejects keys of `object` outside `allowed`.
pub(super) fn only(
    path: &str,
    object: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), Rejection> {
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(at(
            &format!("{path}.{key}"),
            "Extra inputs are not permitted",
        )),
        None => Ok(()),
    }
}

/// The value as an object.
pub(super) fn object<'a>(
    path: &str,
    value: &'a Value,
) -> Result<&'a Map<String, Value>, Rejection> {
    value.as_object().ok_or_else(|| {
        at(
            path,
            "Input should be a valid dictionary or object to extract fields from",
        )
    })
}

/// A required string field.
pub(super) fn string<'a>(
    path: &str,
    object: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a str, Rejection> {
    match object.get(key) {
        None => Err(at(&format!("{path}.{key}"), "Field required")),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(at(
            &format!("{path}.{key}"),
            "Input should be a valid string",
        )),
    }
}

/// An optional field that must be a string when present.
pub(super) fn opt_string(
    path: &str,
    object: &Map<String, Value>,
    key: &str,
) -> Result<(), Rejection> {
    match object.get(key) {
        None | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(at(
            &format!("{path}.{key}"),
            "Input should be a valid string",
        )),
    }
}

/// An optional boolean field.
pub(super) fn opt_bool(
    path: &str,
    object: &Map<String, Value>,
    key: &str,
) -> Result<(), Rejection> {
    match object.get(key) {
        None | Some(Value::Bool(_)) => Ok(()),
        Some(_) => Err(at(
            &format!("{path}.{key}"),
            "Input should be a valid boolean",
        )),
    }
}

/// Whether `id` matches `^[a-zA-Z0-9_-]+$`, the API's pattern for tool ids.
pub(super) fn is_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn tool_id<'a>(
    path: &str,
    object: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a str, Rejection> {
    let id = string(path, object, key)?;
    if is_tool_id(id) {
        Ok(id)
    } else {
        Err(at(
            &format!("{path}.{key}"),
            "String should match pattern '^[a-zA-Z0-9_-]+$'",
        )
        .on_tools())
    }
}

fn text_block(path: &str, block: &Map<String, Value>) -> Result<String, Rejection> {
    let path = format!("{path}.text");
    only(
        &path,
        block,
        &["type", "text", "cache_control", "citations"],
    )?;
    let text = string(&path, block, "text")?;
    if text.is_empty() {
        return Err(at(&path, "text content blocks must be non-empty"));
    }
    if text.trim().is_empty() {
        return Err(at(
            &path,
            "text content blocks must contain non-whitespace text",
        ));
    }
    Ok(text.to_string())
}

fn image_block(path: &str, block: &Map<String, Value>) -> Result<String, Rejection> {
    let path = format!("{path}.image");
    only(&path, block, &["type", "source", "cache_control"])?;
    let source_path = format!("{path}.source");
    let source = object(
        &source_path,
        block
            .get("source")
            .ok_or_else(|| at(&source_path, "Field required"))?,
    )?;
    match string(&source_path, source, "type")? {
        "base64" => {
            let p = format!("{source_path}.base64");
            only(&p, source, &["type", "media_type", "data"])?;
            let media = string(&p, source, "media_type")?;
            if !MEDIA_TYPES.contains(&media) {
                return Err(at(
                    &format!("{p}.media_type"),
                    "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
                ));
            }
            let data = string(&p, source, "data")?;
            Ok(format!("data:{media};base64,{data}"))
        }
        "url" => {
            let p = format!("{source_path}.url");
            only(&p, source, &["type", "url"])?;
            Ok(string(&p, source, "url")?.to_string())
        }
        other => Err(at(
            &source_path,
            &format!("Input tag '{other}' found using 'type' does not match any of the expected tags: 'base64', 'url'"),
        )),
    }
}

/// The text of a `tool_result`'s `content`: a string, or text and image
/// blocks (images do not count as text).
fn result_content(path: &str, content: Option<&Value>) -> Result<String, Rejection> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for (j, b) in blocks.iter().enumerate() {
                let p = format!("{path}.content.{j}");
                let b = object(&p, b)?;
                match string(&p, b, "type")? {
                    "text" => texts.push(text_block(&p, b)?),
                    "image" => {
                        image_block(&p, b)?;
                    }
                    other => {
                        return Err(at(
                            &p,
                            &format!("Input tag '{other}' found using 'type' does not match any of the expected tags: 'text', 'image'"),
                        ))
                    }
                }
            }
            Ok(texts.join("\n"))
        }
        Some(_) => Err(at(
            &format!("{path}.content"),
            "Input should be a valid string or a valid list",
        )),
    }
}

/// Checks one block of a message (or of `system`) at `path`.
pub(super) fn block(path: &str, value: &Value, speaker: Speaker) -> Result<Block, Rejection> {
    let b = object(path, value)?;
    let kind = string(path, b, "type")?;
    if speaker == Speaker::System && kind != "text" {
        return Err(at(
            path,
            &format!("Input tag '{kind}' found using 'type' does not match any of the expected tags: 'text'"),
        ));
    }
    match kind {
        "text" => text_block(path, b).map(Block::Text),
        "image" => image_block(path, b).map(Block::Image),
        "tool_use" => {
            let p = format!("{path}.tool_use");
            if speaker != Speaker::Assistant {
                return Err(at(path, "`tool_use` blocks can only appear in assistant messages").on_tools());
            }
            only(&p, b, &["type", "id", "name", "input", "cache_control"])?;
            let id = tool_id(&p, b, "id")?.to_string();
            if string(&p, b, "name")?.is_empty() {
                return Err(at(&format!("{p}.name"), "String should have at least 1 character"));
            }
            match b.get("input") {
                None => return Err(at(&format!("{p}.input"), "Field required")),
                Some(Value::Object(_)) => {}
                Some(_) => return Err(at(&format!("{p}.input"), "Input should be a valid dictionary")),
            }
            Ok(Block::ToolUse { id })
        }
        "tool_result" => {
            let p = format!("{path}.tool_result");
            if speaker != Speaker::User {
                return Err(at(path, "`tool_result` blocks can only appear in user messages").on_tools());
            }
            only(&p, b, &["type", "tool_use_id", "content", "is_error", "cache_control"])?;
            let id = tool_id(&p, b, "tool_use_id")?.to_string();
            opt_bool(&p, b, "is_error")?;
            let text = result_content(&p, b.get("content"))?;
            Ok(Block::ToolResult { id, text })
        }
        other => Err(at(
            path,
            &format!("Input tag '{other}' found using 'type' does not match any of the expected tags: {BLOCK_TYPES}"),
        )),
    }
}

/// Checks a message's `content` (a string or a list of blocks).
pub(super) fn content(
    path: &str,
    value: Option<&Value>,
    speaker: Speaker,
) -> Result<Vec<Block>, Rejection> {
    match value {
        None => Err(at(&format!("{path}.content"), "Field required")),
        Some(Value::String(s)) if s.is_empty() => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Block::Text(s.clone())]),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(j, b)| block(&format!("{path}.content.{j}"), b, speaker))
            .collect(),
        Some(_) => Err(at(
            &format!("{path}.content"),
            "Input should be a valid string or a valid list",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(r: Result<Block, Rejection>) -> String {
        r.unwrap_err().message
    }

    #[test]
    fn accepts_the_four_block_types() {
        let cases = [
            (
                json!({"type": "text", "text": "hi"}),
                Speaker::User,
                Block::Text("hi".into()),
            ),
            (
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}),
                Speaker::User,
                Block::Image("data:image/png;base64,AAAA".into()),
            ),
            (
                json!({"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}),
                Speaker::User,
                Block::Image("https://x/y.png".into()),
            ),
            (
                json!({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}),
                Speaker::Assistant,
                Block::ToolUse {
                    id: "toolu_1".into(),
                },
            ),
            (
                json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "is_error": false}),
                Speaker::User,
                Block::ToolResult {
                    id: "toolu_1".into(),
                    text: "a\nb".into(),
                },
            ),
        ];
        for (value, speaker, expected) in cases {
            assert_eq!(
                block("messages.0.content.0", &value, speaker).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn names_the_field_that_is_wrong() {
        let p = "messages.1.content.0";
        assert_eq!(
            message(block(
                p,
                &json!({"type": "tool_use", "id": "call 1", "name": "f", "input": {}}),
                Speaker::Assistant
            )),
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        );
        assert_eq!(
            message(block(
                p,
                &json!({"type": "tool_use", "id": "a", "name": "f"}),
                Speaker::Assistant
            )),
            "messages.1.content.0.tool_use.input: Field required"
        );
        assert_eq!(
            message(block(
                p,
                &json!({"type": "text", "text": "x", "foo": 1}),
                Speaker::User
            )),
            "messages.1.content.0.text.foo: Extra inputs are not permitted"
        );
        assert_eq!(
            message(block(
                p,
                &json!({"type": "text", "text": " "}),
                Speaker::User
            )),
            "messages.1.content.0.text: text content blocks must contain non-whitespace text"
        );
        assert!(
            message(block(p, &json!({"type": "document"}), Speaker::User))
                .contains("Input tag 'document'")
        );
        assert!(message(block(
            p,
            &json!({"type": "tool_result", "tool_use_id": "a"}),
            Speaker::Assistant
        ))
        .contains("only appear in user messages"));
        assert!(message(block(
            p,
            &json!({"type": "tool_use", "id": "a", "name": "f", "input": {}}),
            Speaker::User
        ))
        .contains("only appear in assistant messages"));
        assert!(message(block(p, &json!({"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": ""}}), Speaker::User)).contains("media_type"));
        assert!(message(block(
            "system.0",
            &json!({"type": "image", "source": {}}),
            Speaker::System
        ))
        .contains("expected tags: 'text'"));
    }

    #[test]
    fn content_is_a_string_or_a_list() {
        assert_eq!(
            content("m", Some(&json!("hi")), Speaker::User).unwrap(),
            vec![Block::Text("hi".into())]
        );
        assert!(content("m", Some(&json!("")), Speaker::User)
            .unwrap()
            .is_empty());
        assert_eq!(
            content("m", None, Speaker::User).unwrap_err().message,
            "m.content: Field required"
        );
        assert!(content("m", Some(&json!(3)), Speaker::User).is_err());
    }
}
