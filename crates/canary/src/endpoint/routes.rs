//! The simulated endpoint's routes: a tag shaped like OpenRouter's
//! (`provider/quantization`), the provider name a reply reports, and how the
//! route behaves. The default set has one route per degradation the
//! canary must catch, three healthy routes, one flaky route that must never
//! be quarantined, and one filtering route that serves as the positive
//! control. The provider names are made up: no real host is implied.

use serde::{Deserialize, Serialize};

/// How a simulated route answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Behaviour {
    /// Clean replies.
    Healthy,
    /// Junk (stray punctuation, a template token, a word fragment, ...)
    /// before the text of this share of its text replies.
    JunkPrefix {
        /// Share of text replies degraded (0 to 1).
        rate: f64,
    },
    /// Replies to the language probe that mix in sentences of a
    /// neighbouring language, at this share.
    LanguageMix {
        /// Share of language-probe replies degraded (0 to 1).
        rate: f64,
    },
    /// Streams send their headers and role chunk at once and the first
    /// content token after the endpoint's `slow_first_token`.
    SlowFirstToken,
    /// Streams send their headers and role chunk at once and no content
    /// until the endpoint's `timeout_hold`: a hung stream.
    HungStream,
    /// Structured output that breaks its schema, at this share.
    SchemaBreak {
        /// Share of structured-output replies degraded (0 to 1).
        rate: f64,
    },
    /// Filters the roleplay probe: a refusal with `finish_reason:
    /// content_filter`. Its other replies are clean.
    Filters,
    /// 429 and 5xx answers at this share of requests (besides the
    /// endpoint-wide transient rate).
    Flaky {
        /// Share of requests refused with a transport error (0 to 1).
        rate: f64,
    },
    /// Every request answered 503: the route is down.
    Down,
}

/// One simulated route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimRoute {
    /// The endpoint tag, the route's id (`atlas/bf16`).
    pub tag: String,
    /// The provider name discovery lists and replies report (`Atlas`).
    pub provider_name: String,
    /// How it answers.
    pub behaviour: Behaviour,
    /// The rounds (first, last, inclusive) in which the endpoint lists the
    /// route and lets it answer; `None`: every round. A route outside them
    /// is gone from the listing and answers 404, as a host taken out of
    /// service does.
    #[serde(default)]
    pub listed: Option<(u64, u64)>,
    /// The behaviour's rate is a share of sessions, not of replies: a
    /// session (the request's `user`, else what it asks) is degraded or
    /// not, every reply in it alike, as a fault stuck to some users is.
    #[serde(default)]
    pub sticky: bool,
}

impl SimRoute {
    /// A route.
    pub fn new(tag: &str, provider_name: &str, behaviour: Behaviour) -> Self {
        SimRoute {
            tag: tag.to_string(),
            provider_name: provider_name.to_string(),
            behaviour,
            listed: None,
            sticky: false,
        }
    }

    /// This route, its degradation stuck to sessions.
    pub fn sticky(mut self) -> Self {
        self.sticky = true;
        self
    }

    /// Whether the route is listed (and answers) in `round`.
    pub fn listed_in(&self, round: u64) -> bool {
        self.listed
            .is_none_or(|(first, last)| (first..=last).contains(&round))
    }
}

/// The default positive control: the default route that filters.
pub const DEFAULT_CONTROL: &str = "harbor";

/// The default routes, in discovery order.
pub fn default_routes() -> Vec<SimRoute> {
    vec![
        SimRoute::new("atlas/bf16", "Atlas", Behaviour::Healthy),
        SimRoute::new("borealis/fp8", "Borealis", Behaviour::Healthy),
        SimRoute::new("cirrus", "Cirrus", Behaviour::Healthy),
        SimRoute::new("dune/fp8", "Dune", Behaviour::JunkPrefix { rate: 0.95 }),
        SimRoute::new("ember/fp4", "Ember", Behaviour::LanguageMix { rate: 0.95 }),
        SimRoute::new("fjord", "Fjord", Behaviour::SlowFirstToken),
        SimRoute::new(
            "granite/fp8",
            "Granite",
            Behaviour::SchemaBreak { rate: 1.0 },
        ),
        SimRoute::new(DEFAULT_CONTROL, "Harbor", Behaviour::Filters),
        SimRoute::new("isle/fp8", "Isle", Behaviour::Flaky { rate: 0.3 }),
    ]
}
