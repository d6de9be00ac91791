//! Conversations for tests, built the same way everywhere: the anchor most
//! tests state (the user's sister's name), turns with their scripted
//! replies, a tool exchange, and the conversation around them. A test that
//! needs more sets the fields it cares about with struct-update syntax.

use cb_dataset::{Anchor, AnchorPlace, Category, Conversation, ToolExchange, Turn, TurnKind};

/// The anchor of most tests: the user's sister is called `name`, accepted
/// only as written.
pub fn sister(name: &str) -> Anchor {
    Anchor {
        category: Category::PersonName,
        subject: "sister's name".into(),
        value: name.into(),
        variants: vec![name.into()],
    }
}

/// A turn of `kind`: the user's message and the scripted reply (`None`
/// for a probe); no distractor, no tool call.
pub fn turn(kind: TurnKind, user: impl Into<String>, assistant: Option<&str>) -> Turn {
    Turn {
        kind,
        user: user.into().into(),
        assistant: assistant.map(Into::into),
        distractor: None,
        tool: None,
        asks: None,
    }
}

/// The assistant's call of the `read_note` tool (id `call_1`) with
/// `arguments`, answered with `result`.
pub fn read_note(arguments: &str, result: &str) -> ToolExchange {
    ToolExchange {
        id: "call_1".into(),
        name: "read_note".into(),
        arguments: arguments.into(),
        result: result.into(),
    }
}

/// Conversation `id` about `anchor`, with these turns, no system messages
/// and the anchor stated by the user.
pub fn conversation(id: impl Into<String>, anchor: Anchor, turns: Vec<Turn>) -> Conversation {
    Conversation {
        id: id.into(),
        anchor,
        turns,
        system: Vec::new(),
        anchor_place: AnchorPlace::User,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pieces_make_a_conversation_the_dataset_accepts() {
        let c = conversation(
            "c001",
            sister("Oriane"),
            vec![
                Turn {
                    tool: Some(Box::new(read_note("{}", "My sister's name is Oriane."))),
                    ..turn(TurnKind::Anchor, "Open my note.", Some("Noted."))
                },
                turn(TurnKind::Probe, "What is my sister called?", None),
            ],
        );
        let text = serde_json::to_string(&c).unwrap();
        let d = cb_dataset::Dataset::parse(&text, std::path::Path::new("t.jsonl")).unwrap();
        assert_eq!(d.conversations, vec![c]);
        assert_eq!(d.conversations[0].anchor.variants, ["Oriane"]);
    }
}
