//! The conversations every run replays: their types, the seeded generator,
//! and JSONL reading and writing.
//!
//! A conversation states an anchor fact in turn 1, talks about other things
//! (some of them distractors of the same category that belong to someone
//! else), and ends with a probe that can only be answered from the anchor.
//!
//! Datasets of up to 300 conversations draw their values from curated lists
//! (so the committed default never changes); larger ones, up to 250,000,
//! compose them (see [`generate::Mode`]).

mod build;
pub mod compose;
pub mod filler;
pub mod generate;
pub mod jsonl;
pub mod later;
pub mod lexicon;
pub mod messages;
pub mod model;
pub mod pools;
pub mod probes;
pub mod rich;
pub mod stats;
pub mod subjects;
pub mod subjects_composed;
pub mod syllables;
pub mod taken;
pub mod words;

use serde::{Deserialize, Serialize};

pub use generate::{
    generate, generate_each, generate_in, try_generate, GenerateError, GenerateOptions, Mode,
};
pub use jsonl::DatasetError;
pub use stats::DatasetStats;

/// Path of the committed default dataset, relative to the repository root.
pub const DEFAULT_DATASET: &str = "datasets/continuity-150.jsonl";

/// Path of the committed rich dataset (`generate --rich`), relative to
/// the repository root.
pub const RICH_DATASET: &str = "datasets/continuity-rich-150.jsonl";

/// Path of the committed dataset with later probes (`generate --rich
/// --later-probes`), relative to the repository root.
pub const OUTAGE_DATASET: &str = "datasets/continuity-outage-150.jsonl";

/// The datasets compiled into the binary; the first is the default.
pub static BUILTIN_DATASETS: [cb_base::source::BuiltIn; 3] = [
    cb_base::source::BuiltIn {
        path: DEFAULT_DATASET,
        text: include_str!("../../../datasets/continuity-150.jsonl"),
    },
    cb_base::source::BuiltIn {
        path: RICH_DATASET,
        text: include_str!("../../../datasets/continuity-rich-150.jsonl"),
    },
    cb_base::source::BuiltIn {
        path: OUTAGE_DATASET,
        text: include_str!("../../../datasets/continuity-outage-150.jsonl"),
    },
];

/// What kind of fact an anchor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A person's name ("my sister's name is Oriane").
    PersonName,
    /// A code or quantity ("the locker code is 4817").
    Number,
    /// A calendar date ("the recital is on 14 March 2031").
    Date,
    /// A preference ("my favourite cuisine is Georgian").
    Preference,
    /// A place ("I grew up in Tromsø").
    Place,
    /// A made-up name for a pet, project or boat ("my boat is called Vellinor").
    InventedWord,
}

impl Category {
    /// Every category, in the order the generator balances them.
    pub const ALL: [Category; 6] = [
        Category::PersonName,
        Category::Number,
        Category::Date,
        Category::Preference,
        Category::Place,
        Category::InventedWord,
    ];

    /// The snake_case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::PersonName => "person_name",
            Category::Number => "number",
            Category::Date => "date",
            Category::Preference => "preference",
            Category::Place => "place",
            Category::InventedWord => "invented_word",
        }
    }
}

/// The fact stated in turn 1 and asked about in the final turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    /// The kind of fact.
    pub category: Category,
    /// What the fact is about, as a short noun phrase ("sister's name").
    pub subject: String,
    /// The expected value, in its canonical form ("Oriane", "2031-03-14").
    pub value: String,
    /// Other spellings that also count as the value ("14 March 2031",
    /// "March 14, 2031"; "forty-eight" for 48). Includes `value` itself.
    pub variants: Vec<String>,
}

/// The role a turn plays in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    /// Turn 1: the user states the anchor.
    Anchor,
    /// A middle turn about something else.
    Filler,
    /// A question only a fact stated earlier answers: the final turn (the
    /// anchor), and in datasets with later probes ([`later`]) some turns
    /// before it.
    Probe,
}

/// A text of a dataset, shared: a loaded dataset keeps each distinct text
/// once ([`Dataset::read`] interns them), since most turns of a large
/// dataset repeat a pool's sentence.
pub type Text = std::sync::Arc<str>;

/// One user message and, except for the probe, its scripted reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The role of this turn.
    pub kind: TurnKind,
    /// The user's message.
    pub user: Text,
    /// The scripted assistant reply, used by fast-forward replay. `None` only
    /// for the probe.
    pub assistant: Option<Text>,
    /// A value of the anchor's category that belongs to someone else and is
    /// mentioned in this turn, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distractor: Option<String>,
    /// A tool call the assistant made for this turn and its result, sent
    /// between the user's message and the reply (rich datasets only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<Box<ToolExchange>>,
    /// The fact a probe asks for when it is not the conversation's anchor
    /// (a fact stated later in the conversation, [`later`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<Box<Anchor>>,
}

/// One tool call and its result, as a client replays it: an assistant
/// message with `tool_calls`, then a `tool` message answering it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolExchange {
    /// The call id (`call_...`), unique in the conversation.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments, a JSON object as text (as OpenAI sends them).
    pub arguments: String,
    /// The tool's result, as text.
    pub result: String,
}

/// Where a conversation states its anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorPlace {
    /// In the user's first message.
    #[default]
    User,
    /// In one of the conversation's system messages.
    System,
    /// In the result of the first turn's tool call.
    ToolResult,
}

impl AnchorPlace {
    /// Whether this is the default place (not written to files).
    pub fn is_user(&self) -> bool {
        *self == AnchorPlace::User
    }
}

/// One synthetic conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    /// Stable identifier, unique in the dataset ("c001").
    pub id: String,
    /// The fact the probe asks about.
    pub anchor: Anchor,
    /// Turns in order; the first is the anchor, the last the probe.
    pub turns: Vec<Turn>,
    /// System messages the client sends after its own system prompt, in
    /// order (rich datasets only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<String>,
    /// Where the anchor is stated (rich datasets: a system message or a
    /// tool result in some conversations).
    #[serde(default, skip_serializing_if = "AnchorPlace::is_user")]
    pub anchor_place: AnchorPlace,
}

impl Conversation {
    /// Number of turns (user messages) in the conversation.
    pub fn n_turns(&self) -> usize {
        self.turns.len()
    }

    /// The first user message, which identifies the conversation on the wire.
    pub fn first_user_message(&self) -> &str {
        &self.turns[0].user
    }

    /// The final user message, the probe.
    pub fn probe(&self) -> &str {
        &self.turns[self.turns.len() - 1].user
    }

    /// Every probe, in order: its turn (from 1) and the fact it asks for
    /// (the anchor unless the turn names another). The final turn is the
    /// last.
    pub fn probes(&self) -> impl Iterator<Item = (usize, &Anchor)> {
        self.turns
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == TurnKind::Probe)
            .map(|(k, t)| (k + 1, t.asks.as_deref().unwrap_or(&self.anchor)))
    }

    /// Whether the conversation asks before its final turn ([`later`]).
    pub fn has_later_probes(&self) -> bool {
        self.turns
            .iter()
            .rev()
            .skip(1)
            .any(|t| t.kind == TurnKind::Probe)
    }

    /// Values of the anchor's category that belong to someone else.
    pub fn distractors(&self) -> impl Iterator<Item = &str> {
        self.turns.iter().filter_map(|t| t.distractor.as_deref())
    }
}

/// A whole dataset, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    /// The conversations, in file order.
    pub conversations: Vec<Conversation>,
}
