//! `schema_break`: structured output that breaks the requested schema the
//! ways providers do: a required key missing, a value of the wrong type,
//! prose or a code fence around the JSON, or JSON cut off mid-way.
//!
//! Applies to replies that are JSON; any other reply is returned unchanged
//! (the upstream applies it only to structured-output requests). The
//! missing key and the wrong type trip the `schema` contract for the
//! instances [`super::instance_for_schema`] writes, which hold exactly the
//! required keys, each with its declared type.

use super::Completion;
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the JSON breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaBreakStyle {
    /// The first key of the object removed.
    MissingKey,
    /// The first value of the object (or the whole value) of another type.
    WrongType,
    /// A sentence before and after the JSON.
    ProseAround,
    /// The JSON inside a Markdown code fence.
    CodeFence,
    /// The JSON cut between a third and two thirds of its length.
    TruncatedJson,
}

impl SchemaBreakStyle {
    /// Every style, in a fixed order.
    pub const ALL: [SchemaBreakStyle; 5] = [
        SchemaBreakStyle::MissingKey,
        SchemaBreakStyle::WrongType,
        SchemaBreakStyle::ProseAround,
        SchemaBreakStyle::CodeFence,
        SchemaBreakStyle::TruncatedJson,
    ];
}

const PREAMBLES: &[&str] = &[
    "Here is the JSON you asked for:",
    "Sure! Here's the result:",
    "Of course. The data is below.",
];
const CLOSINGS: &[&str] = &[
    "Let me know if you need anything else.",
    "I hope this helps!",
    "Feel free to ask for changes.",
];

/// A value of another JSON type than `value`.
fn other_type(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::from(s.chars().count()),
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        Value::Null => Value::from(0),
        Value::Array(_) | Value::Object(_) => Value::String("see above".into()),
    }
}

/// Breaks the JSON reply as `style` says (drawn when `None`).
pub fn apply(style: Option<SchemaBreakStyle>, reply: Completion, rng: &mut impl Rng) -> Completion {
    let Ok(mut value) = serde_json::from_str::<Value>(reply.text.trim()) else {
        return reply;
    };
    let style = style
        .unwrap_or_else(|| SchemaBreakStyle::ALL[rng.random_range(0..SchemaBreakStyle::ALL.len())]);
    let compact = value.to_string();
    let text = match style {
        SchemaBreakStyle::MissingKey | SchemaBreakStyle::WrongType => {
            let missing = style == SchemaBreakStyle::MissingKey;
            match value.as_object_mut() {
                Some(map) if !map.is_empty() => {
                    let key = map.keys().next().cloned().unwrap_or_default();
                    if missing {
                        map.remove(&key);
                    } else if let Some(v) = map.get_mut(&key) {
                        *v = other_type(v);
                    }
                    value.to_string()
                }
                Some(_) => "[]".to_string(),
                None => other_type(&value).to_string(),
            }
        }
        SchemaBreakStyle::ProseAround => format!(
            "{}\n{compact}\n{}",
            PREAMBLES[rng.random_range(0..PREAMBLES.len())],
            CLOSINGS[rng.random_range(0..CLOSINGS.len())]
        ),
        SchemaBreakStyle::CodeFence => format!("```json\n{compact}\n```"),
        SchemaBreakStyle::TruncatedJson => truncated(&compact, rng),
    };
    Completion { text, ..reply }
}

/// A prefix of `json` that no longer parses, or the JSON in prose when no
/// prefix can be cut (a one-character value).
fn truncated(json: &str, rng: &mut impl Rng) -> String {
    let chars: Vec<usize> = json.char_indices().map(|(i, _)| i).collect();
    let n = chars.len();
    if n >= 2 {
        let start = rng.random_range((n / 3).max(1)..=(2 * n / 3).max(1));
        for &at in chars[1..=start.min(n - 1)].iter().rev() {
            let cut = &json[..at];
            if serde_json::from_str::<Value>(cut).is_err() {
                return cut.to_string();
            }
        }
    }
    format!("{}\n{json}", PREAMBLES[0])
}
