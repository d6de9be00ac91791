//! What a run against a real provider costs, before it starts: the number
//! of requests that reach the provider and their approximate tokens, and
//! the gate that keeps an expensive run from starting by accident.
//!
//! The estimate replays the run on paper, from the dataset, the runs, the
//! systems and the fault plan: every turn a conversation sends (live: all
//! of them; fast-forward: the final one) is one request at the provider,
//! except that a faulted primary attempt never reaches it (the upstream
//! fails it on the wire) and the gateway's failover request does, carrying
//! what the system forwards (`stateless`: the system prompt and the last
//! user message; `history` and external gateways: everything). Plus one
//! preflight request per system. Tokens are characters / 4 per message, as
//! the upstreams count them; the history carries the dataset's scripted
//! replies, and output is counted as long as those replies (a probe's
//! answer as [`PROBE_ANSWER_TOKENS`]). A model that writes longer answers
//! costs more, both in output and in the history later turns carry; the
//! judge, when asked for, is not counted.

use cb_dataset::{Conversation, Dataset};
use cb_driver::Replay;
use cb_faults::{FaultAction, FaultPlan, Role};
use cb_wire::openai::approx_tokens;

/// Default of `--cost-limit-tokens`: above two million estimated tokens a
/// run against a paid provider needs `--yes`.
pub const DEFAULT_COST_LIMIT_TOKENS: u64 = 2_000_000;

/// Output tokens counted for the answer to a probe (the dataset scripts
/// none): a one-sentence answer.
pub const PROBE_ANSWER_TOKENS: u64 = 24;

/// The text of the preflight request every system gets before the run.
const PREFLIGHT_TOKENS: u64 = 11;

/// What a system forwards to its fallback when the primary fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarding {
    /// The system prompt and the last user message (`stateless`).
    LastMessage,
    /// Every message (`history`, and what an external gateway is assumed
    /// to do: the larger bill).
    History,
}

/// What is estimated: the inputs of a run.
#[derive(Debug, Clone, Copy)]
pub struct CostInputs<'a> {
    /// The conversations.
    pub dataset: &'a Dataset,
    /// The fault plan (which attempts never reach the provider).
    pub plan: &'a FaultPlan,
    /// Number of runs.
    pub runs: u32,
    /// Live or fast-forward.
    pub replay: Replay,
    /// One entry per system under test.
    pub systems: &'a [Forwarding],
    /// The system prompt every request starts with.
    pub system_prompt: &'a str,
}

/// Requests and approximate tokens of a run at the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CostEstimate {
    /// Requests that reach the provider (preflight included).
    pub requests: u64,
    /// Approximate input tokens of those requests.
    pub input_tokens: u64,
    /// Approximate output tokens of their answers.
    pub output_tokens: u64,
}

impl CostEstimate {
    /// Input and output tokens together.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The line printed before the run.
    pub fn describe(&self, runs: u32) -> String {
        format!(
            "cost estimate for {runs} run{}: {} requests to the provider, about {} tokens ({} input + {} output, characters / 4; \
             output as long as the dataset's scripted replies, so a model that writes more costs more)",
            if runs == 1 { "" } else { "s" },
            thousands(self.requests),
            thousands(self.tokens()),
            thousands(self.input_tokens),
            thousands(self.output_tokens),
        )
    }
}

/// Why a run does not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    /// The estimate is above the limit and `--yes` was not given.
    #[error("this run would send about {tokens} tokens to a paid provider, above --cost-limit-tokens {limit}; pass --yes to start it anyway, or raise --cost-limit-tokens, or make it smaller (--runs, --dataset)")]
    AboveLimit {
        /// The estimate, formatted.
        tokens: String,
        /// The limit, formatted.
        limit: String,
    },
}

/// Whether a run with `estimate` may start: always when every provider is
/// on this machine (`free`) or with `yes`; otherwise only at or below
/// `limit` tokens.
///
/// # Errors
/// [`CostError::AboveLimit`] naming `--cost-limit-tokens` and `--yes`.
pub fn gate(estimate: &CostEstimate, limit: u64, yes: bool, free: bool) -> Result<(), CostError> {
    if free || yes || estimate.tokens() <= limit {
        return Ok(());
    }
    Err(CostError::AboveLimit {
        tokens: thousands(estimate.tokens()),
        limit: thousands(limit),
    })
}

/// The estimate of a run (see the module documentation).
pub fn estimate(inputs: CostInputs<'_>) -> CostEstimate {
    let mut total = CostEstimate {
        requests: inputs.systems.len() as u64,
        input_tokens: PREFLIGHT_TOKENS * inputs.systems.len() as u64,
        output_tokens: PROBE_ANSWER_TOKENS * inputs.systems.len() as u64,
    };
    let system_tokens = u64::from(approx_tokens(inputs.system_prompt));
    for run in 1..=inputs.runs {
        for (index, conversation) in inputs.dataset.conversations.iter().enumerate() {
            let turns = TurnCosts::of(conversation, system_tokens);
            let first = match inputs.replay {
                Replay::Live => 1,
                Replay::FastForward => conversation.n_turns(),
            };
            for turn in first..=conversation.n_turns() {
                let fails = |role| failure(inputs.plan.action(run, index, turn, role).as_ref());
                for forwarding in inputs.systems {
                    let input = if !fails(Role::Primary) {
                        turns.full(turn)
                    } else if fails(Role::Fallback) {
                        continue;
                    } else {
                        match forwarding {
                            Forwarding::History => turns.full(turn),
                            Forwarding::LastMessage => turns.last_message(turn),
                        }
                    };
                    total.requests += 1;
                    total.input_tokens += input;
                    total.output_tokens += turns.output(turn);
                }
            }
        }
    }
    total
}

/// Whether an action fails the attempt on the wire (it never reaches the
/// provider); a degradation and a body cut still forward it.
fn failure(action: Option<&FaultAction>) -> bool {
    matches!(
        action,
        Some(FaultAction::Timeout { .. } | FaultAction::Error(_))
    )
}

/// Token counts of one conversation's messages.
struct TurnCosts {
    system: u64,
    /// Per turn: (user message, scripted reply) tokens.
    turns: Vec<(u64, u64)>,
}

impl TurnCosts {
    fn of(conversation: &Conversation, system: u64) -> Self {
        TurnCosts {
            system,
            turns: conversation
                .turns
                .iter()
                .map(|t| {
                    // The probe has no scripted reply.
                    let reply = t
                        .assistant
                        .as_deref()
                        .map_or(PROBE_ANSWER_TOKENS, |text| u64::from(approx_tokens(text)));
                    (u64::from(approx_tokens(&t.user)), reply)
                })
                .collect(),
        }
    }

    /// Input of turn `turn` (from 1) with the whole history.
    fn full(&self, turn: usize) -> u64 {
        let earlier: u64 = self.turns[..turn - 1].iter().map(|(u, a)| u + a).sum();
        self.system + earlier + self.turns[turn - 1].0
    }

    /// Input of turn `turn` as `stateless` forwards it.
    fn last_message(&self, turn: usize) -> u64 {
        self.system + self.turns[turn - 1].0
    }

    /// Output of turn `turn`.
    fn output(&self, turn: usize) -> u64 {
        self.turns[turn - 1].1
    }
}

/// `1234567` as `1,234,567`: the one grouping of the tool.
pub use cb_base::number::thousands;

#[cfg(test)]
mod tests {
    use super::*;
    use cb_faults::FaultProfile;

    fn committed() -> Dataset {
        Dataset::builtin_default()
    }

    fn plan(dataset: &Dataset, profile: &str) -> FaultPlan {
        let profile = FaultProfile::parse(profile, "t.toml").unwrap();
        FaultPlan::new(
            profile,
            42,
            dataset.conversations.iter().map(|c| c.n_turns()).collect(),
        )
    }

    const PAPER: &str = "upstream = \"primary\"\nturns = \"final\"\n[modes.api_error]\n";

    fn inputs<'a>(
        dataset: &'a Dataset,
        plan: &'a FaultPlan,
        runs: u32,
        replay: Replay,
        systems: &'a [Forwarding],
    ) -> CostInputs<'a> {
        CostInputs {
            dataset,
            plan,
            runs,
            replay,
            systems,
            system_prompt: "You are a helpful assistant. Answer briefly.",
        }
    }

    #[test]
    fn every_turn_is_one_request_and_runs_multiply() {
        let dataset = committed();
        let plan = plan(&dataset, PAPER);
        let systems = [Forwarding::LastMessage, Forwarding::History];
        let turns: u64 = dataset
            .conversations
            .iter()
            .map(|c| c.n_turns() as u64)
            .sum();
        let one = estimate(inputs(&dataset, &plan, 1, Replay::Live, &systems));
        // Each turn of each conversation once per system (the faulted
        // primary attempt is replaced by the fallback's), plus 2 preflights.
        assert_eq!(one.requests, 2 * turns + 2);
        let five = estimate(inputs(&dataset, &plan, 5, Replay::Live, &systems));
        assert_eq!(five.requests, 5 * 2 * turns + 2);
        assert_eq!(five.input_tokens, 5 * (one.input_tokens - 22) + 22);
        // Fast-forward sends only the final turns.
        let ff = estimate(inputs(&dataset, &plan, 1, Replay::FastForward, &systems));
        assert_eq!(ff.requests, 2 * 150 + 2);
    }

    #[test]
    fn history_carries_more_than_the_last_message() {
        let dataset = committed();
        let plan = plan(&dataset, PAPER);
        let stateless = estimate(inputs(
            &dataset,
            &plan,
            1,
            Replay::FastForward,
            &[Forwarding::LastMessage],
        ));
        let history = estimate(inputs(
            &dataset,
            &plan,
            1,
            Replay::FastForward,
            &[Forwarding::History],
        ));
        assert_eq!(stateless.requests, history.requests);
        assert!(
            history.input_tokens > 5 * stateless.input_tokens,
            "{history:?} {stateless:?}"
        );
    }

    #[test]
    fn the_gate_blocks_a_paid_run_above_the_limit_only() {
        let big = CostEstimate {
            requests: 10,
            input_tokens: 2_500_000,
            output_tokens: 1,
        };
        let e = gate(&big, DEFAULT_COST_LIMIT_TOKENS, false, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--cost-limit-tokens 2,000,000") && e.contains("--yes"),
            "{e}"
        );
        assert!(e.contains("2,500,001"), "{e}");
        assert!(gate(&big, DEFAULT_COST_LIMIT_TOKENS, true, false).is_ok());
        assert!(
            gate(&big, DEFAULT_COST_LIMIT_TOKENS, false, true).is_ok(),
            "a local provider is free"
        );
        assert!(gate(&big, 3_000_000, false, false).is_ok());
        let exact = CostEstimate {
            requests: 1,
            input_tokens: 2_000_000,
            output_tokens: 0,
        };
        assert!(gate(&exact, DEFAULT_COST_LIMIT_TOKENS, false, false).is_ok());
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let line = CostEstimate {
            requests: 2,
            input_tokens: 1000,
            output_tokens: 24,
        }
        .describe(5);
        assert!(
            line.starts_with(
                "cost estimate for 5 runs: 2 requests to the provider, about 1,024 tokens"
            ),
            "{line}"
        );
    }
}
