//! One probe reply judged by the answer contracts that belong to its probe
//! (see [`crate::probe::contracts_of`]), with the language the
//! probe asked in passed to the contracts rather than guessed.

use crate::evidence::ProbeKind;
use crate::probe;
use cb_client::Exchange;
use cb_contracts::{ContractInput, ContractName, Contracts, Language, Outcome};
use cb_wire::openai::ChatRequest;
use std::time::Duration;

fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

/// The outcome of each of `probe`'s contracts that applied to the reply in
/// `exchange` (a usable 2xx reply: see [`super::classify`]).
pub fn judge(
    contracts: &Contracts,
    probe: ProbeKind,
    request: &ChatRequest,
    exchange: &Exchange,
    expected: Language,
) -> Vec<(ContractName, Outcome)> {
    let input = ContractInput {
        request,
        expected_language: Some(expected),
        status: exchange.status.unwrap_or(0),
        stream: request.stream,
        text: exchange.answer.as_deref().unwrap_or(""),
        finish_reason: exchange.finish_reason.as_deref(),
        ttft: exchange.ttft_ms.map(millis),
        ttfb: exchange.ttfb_ms.map(millis),
    };
    let wanted = probe::contracts_of(probe);
    contracts
        .check(&input)
        .into_iter()
        .filter(|r| wanted.contains(&r.name))
        .filter_map(|r| r.outcome.map(|o| (r.name, o)))
        .collect()
}
