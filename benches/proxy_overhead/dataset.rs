//! What the benchmark sends: a small hand-made dataset of ten-turn
//! conversations, each recognisable by its first user message, and the
//! request body of each turn, pre-serialised so that the measurement does
//! not include it.

use super::{SYSTEM_PROMPT, TURNS};
use bytes::Bytes;
use continuity_bench::dataset::{Anchor, Category, Conversation, Dataset, Turn, TurnKind};
use continuity_bench::openai::{ChatMessage, ChatRequest};

/// A small hand-made dataset: `n` ten-turn conversations, each recognisable
/// by its first user message.
pub fn dataset(n: usize) -> Dataset {
    let conversations = (0..n)
        .map(|i| {
            let value = format!("Oriane-{i}");
            let turns = (1..=TURNS)
                .map(|t| {
                    let (kind, user, assistant) = if t == 1 {
                        (
                            TurnKind::Anchor,
                            format!("Conversation {i}: my sister's name is {value}. Please remember it."),
                            Some("Noted, I will remember your sister's name.".to_string()),
                        )
                    } else if t == TURNS {
                        (TurnKind::Probe, "What is my sister called?".to_string(), None)
                    } else {
                        (
                            TurnKind::Filler,
                            format!(
                                "Turn {t}: can you suggest a short recipe with lentils, \
                                 tomatoes and cumin that takes under thirty minutes?"
                            ),
                            Some(
                                "Simmer red lentils with chopped tomatoes, cumin and garlic \
                                 for twenty minutes, then season and serve with bread."
                                    .to_string(),
                            ),
                        )
                    };
                    Turn {
                        kind,
                        user: user.into(),
                        assistant: assistant.map(Into::into),
                        distractor: None,
                        tool: None,
                        asks: None,
                    }
                })
                .collect();
            Conversation {
                id: format!("c{i:03}"),
                anchor: Anchor {
                    category: Category::PersonName,
                    subject: "sister's name".to_string(),
                    variants: vec![value.clone()],
                    value,
                },
                turns,
                system: Vec::new(),
                anchor_place: continuity_bench::dataset::AnchorPlace::User,
            }
        })
        .collect();
    Dataset { conversations }
}

/// The request of `turn` (from 1) of `conversation` in live replay, with the
/// scripted replies as history.
pub fn scripted_request(conversation: &Conversation, turn: usize) -> anyhow::Result<Bytes> {
    let mut messages = vec![ChatMessage::new("system", SYSTEM_PROMPT)];
    for (i, t) in conversation.turns[..turn].iter().enumerate() {
        messages.push(ChatMessage::new("user", &t.user));
        if i + 1 < turn {
            messages.push(ChatMessage::new(
                "assistant",
                t.assistant.as_deref().unwrap_or_default(),
            ));
        }
    }
    request_body(messages)
}

pub fn request_body(messages: Vec<ChatMessage>) -> anyhow::Result<Bytes> {
    let request = ChatRequest {
        model: "sim-model".to_string(),
        messages,
        stream: false,
        stream_options: None,
        extra: serde_json::Map::new(),
    };
    Ok(Bytes::from(serde_json::to_vec(&request)?))
}
