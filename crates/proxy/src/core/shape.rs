//! Whether a 2xx body is a chat completion, read without building it.
//!
//! The proxy checks every non-streamed 2xx reply: a JSON object whose
//! `choices` is an array. Parsing it into a `serde_json::Value` allocated a
//! node for every string, number and object of the reply only to drop it.
//! [`shape`] walks the same bytes with the same parser and the same
//! requests of it (`deserialize_any` for every value, a string for every
//! key), so it accepts exactly what `Value` accepts (numbers out of range,
//! bad escapes, invalid UTF-8, depth past the recursion limit and trailing
//! bytes are errors alike), and, like `Value::get`, it reads the last
//! `choices` of an object that repeats the key. The test beside it compares
//! the two on hand-written and generated bodies.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What a JSON body is, as far as the completion check cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Not JSON at all.
    NotJson,
    /// JSON, but not an object whose `choices` is an array.
    NoChoices,
    /// An object whose (last) `choices` is an array.
    Completion,
}

/// The [`Shape`] of `bytes`.
pub(super) fn shape(bytes: &[u8]) -> Shape {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let top = match de.deserialize_any(Walk::Top) {
        Ok(top) => top,
        Err(_) => return Shape::NotJson,
    };
    if de.end().is_err() {
        return Shape::NotJson;
    }
    if top {
        Shape::Completion
    } else {
        Shape::NoChoices
    }
}

/// Consumes one value of any kind, as `Value` would parse it, keeping
/// nothing.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Walk::Any).map(|_| ())
    }
}

/// Visits one value, consuming its elements and entries with [`Skip`] and
/// its keys as strings, and says of it:
#[derive(Clone, Copy)]
enum Walk {
    /// whether it is an array;
    Any,
    /// (the top-level value) whether it is an object whose last `choices`
    /// is an array.
    Top,
}

impl<'de> Visitor<'de> for Walk {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(matches!(self, Walk::Any))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut choices = false;
        while let Some(is_choices) = map.next_key_seed(Key)? {
            if is_choices && matches!(self, Walk::Top) {
                choices = map.next_value_seed(IsArray)?;
            } else {
                map.next_value_seed(Skip)?;
            }
        }
        Ok(choices)
    }
}

/// A key, read as a string (as `Value` reads its keys); whether it is
/// `choices`.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(key == "choices")
    }
}

/// One value, consumed; whether it is an array.
struct IsArray;

impl<'de> DeserializeSeed<'de> for IsArray {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(Walk::Any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old check, through `Value`.
    fn by_value(bytes: &[u8]) -> Shape {
        match serde_json::from_slice::<serde_json::Value>(bytes) {
            Err(_) => Shape::NotJson,
            Ok(v) if v.get("choices").is_some_and(serde_json::Value::is_array) => Shape::Completion,
            Ok(_) => Shape::NoChoices,
        }
    }

    #[test]
    fn agrees_with_value_on_hand_written_bodies() {
        let deep_ok = format!("{{\"choices\":[{}{}]}}", "[".repeat(100), "]".repeat(100));
        let deep_bad = format!("{{\"choices\":[{}{}]}}", "[".repeat(200), "]".repeat(200));
        let cases: Vec<Vec<u8>> = [
            r#"{"choices":[]}"#,
            r#"{"choices":[{"message":{"content":"hi"}}],"usage":{"n":1.5e3}}"#,
            r#"{"choices":{}}"#,
            r#"{"choices":null}"#,
            r#"{"choices":[],"choices":1}"#,
            r#"{"choices":1,"choices":[]}"#,
            r#"{"cho\u0069ces":[]}"#,
            r#"{"x":{"choices":[]}}"#,
            r#"[{"choices":[]}]"#,
            r#""choices""#,
            "42",
            "true",
            "null",
            "",
            "   ",
            r#"{"choices":[]} trailing"#,
            r#"{"choices":[]}   "#,
            r#"{"choices":[1e400]}"#,
            r#"{"choices":[],"n":-1e400}"#,
            r#"{"choices":[],"n":18446744073709551616}"#,
            r#"{"choices":["\ud800"]}"#,
            r#"{"choices":["\ud83d\ude00"]}"#,
            r#"{"choices":["\q"]}"#,
            r#"{"choices":[01]}"#,
            r#"{"choices":[1,]}"#,
            r#"{"choices":[]"#,
            r#"{choices:[]}"#,
            r#"{"choices":[NaN]}"#,
            r#"{"a":1,}"#,
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .chain([
            deep_ok.into_bytes(),
            deep_bad.into_bytes(),
            b"{\"choices\":[\"\xff\"]}".to_vec(),
            b"{\"\xff\":1,\"choices\":[]}".to_vec(),
            b"{\"choices\":[]}\x00".to_vec(),
        ])
        .collect();
        for case in &cases {
            assert_eq!(
                shape(case),
                by_value(case),
                "{:?}",
                String::from_utf8_lossy(case)
            );
        }
        // Each outcome is exercised.
        assert_eq!(shape(br#"{"choices":[]}"#), Shape::Completion);
        assert_eq!(shape(br#"{"choices":{}}"#), Shape::NoChoices);
        assert_eq!(shape(b"{"), Shape::NotJson);
    }

    /// Seeded random bodies built from JSON-ish pieces, most of them broken
    /// somewhere: the two checks agree on every one.
    #[test]
    fn agrees_with_value_on_generated_bodies() {
        use rand::Rng;
        const PIECES: &[&str] = &[
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"choices\"",
            "\"x\"",
            "\"\\u00e9\"",
            "\"\\ud800\"",
            "1",
            "-0.5",
            "1e999",
            "true",
            "null",
            " ",
            "\"s\"",
            "\\",
            "\"",
        ];
        let mut rng = cb_base::seed::rng(11, "completion-shape-test", 0);
        let mut seen = [0usize; 3];
        for _ in 0..20_000 {
            let mut body = String::from(if rng.random_bool(0.5) {
                "{\"choices\":"
            } else {
                ""
            });
            for _ in 0..rng.random_range(0..12) {
                body.push_str(PIECES[rng.random_range(0..PIECES.len())]);
            }
            if rng.random_bool(0.5) {
                body.push('}');
            }
            let got = shape(body.as_bytes());
            assert_eq!(got, by_value(body.as_bytes()), "{body:?}");
            seen[got as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }
}
