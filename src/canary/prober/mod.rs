//! One probe round on the wire: every route gets the probe set, pinned,
//! with a deadline and the size cap on every request; routes are probed
//! concurrently, a few at a time; each route's replies become one
//! [`RouteEvidence`] for the state machine.
//!
//! Per route, the probes go one after the other. A transport error (a
//! timeout, a 429, a 5xx, another 4xx, a broken body) freezes the route for
//! the round and ends its probing there: the round cannot count, so it
//! costs no more requests. A reply whose `provider` names another route
//! ends it the same way, recorded as "pinning not honoured" and never
//! scored. A language anomaly is confirmed at once by two more identical
//! requests, a majority of three deciding ([`crate::canary::language`]).

mod classify;
mod judge;

pub use classify::{classify, served_by_other};
pub use judge::judge;

use super::discover::Route;
use super::evidence::{ProbeEvidence, ProbeKind, RouteEvidence};
use super::language;
use super::probe::{self, PROBES};
use crate::contracts::{ContractName, Contracts, Language, Outcome};
use crate::openai::ChatRequest;
use crate::secret::Secret;
use crate::systems::client::send_to;
use crate::systems::{Exchange, SendOptions};
use futures::StreamExt as _;
use std::time::Duration;

/// Where the probes go.
#[derive(Debug, Clone)]
pub struct ProbeTarget {
    /// The full chat-completions URL (`{endpoint}/chat/completions`).
    pub chat_url: String,
    /// Headers of every request (`Authorization`), secret to the socket.
    pub headers: Vec<(String, Secret)>,
    /// The model probed (`author/slug`).
    pub model: String,
}

/// How probing is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProberSettings {
    /// Deadline of one probe request, first byte to last.
    pub deadline: Duration,
    /// Largest reply read.
    pub max_response_bytes: u64,
    /// Routes probed at once.
    pub concurrency: usize,
}

/// What probing one route in one round produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteProbe {
    /// The evidence for the state machine.
    pub evidence: RouteEvidence,
    /// Requests sent (3 for a full round, 5 with language confirmations,
    /// fewer when a transport error stopped the round early).
    pub requests: u32,
}

/// Sends the probe set and judges the replies.
#[derive(Debug)]
pub struct Prober {
    client: reqwest::Client,
    target: ProbeTarget,
    contracts: Contracts,
    settings: ProberSettings,
}

impl Prober {
    /// A prober of `target` judging with `contracts`.
    pub fn new(
        client: reqwest::Client,
        target: ProbeTarget,
        contracts: Contracts,
        settings: ProberSettings,
    ) -> Self {
        Prober {
            client,
            target,
            contracts,
            settings,
        }
    }

    /// Probes every route (with its language of the rotation), a few at a
    /// time; the results come back in the order of `routes`.
    pub async fn round(&self, routes: &[(Route, Language)]) -> Vec<RouteProbe> {
        let mut done: Vec<(usize, RouteProbe)> =
            futures::stream::iter(routes.iter().enumerate())
                .map(|(i, (route, language))| async move {
                    (i, self.probe_route(route, *language).await)
                })
                .buffer_unordered(self.settings.concurrency.max(1))
                .collect()
                .await;
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, probe)| probe).collect()
    }

    /// Sends the probe set to one route and judges it.
    pub async fn probe_route(&self, route: &Route, language: Language) -> RouteProbe {
        let mut evidence = RouteEvidence::new(&route.id);
        let mut requests = 0;
        for kind in PROBES {
            let request = probe::request(kind, &self.target.model, &route.id, language);
            requests += 1;
            let exchange = self.send(&request).await;
            if let Err(error) = classify(&exchange) {
                evidence.transport_error = Some(error);
                break;
            }
            if let Some(other) = served_by_other(route, exchange.provider.as_deref()) {
                evidence.served_by_other = Some(other);
                break;
            }
            let expected = probe::expected_language(kind, language);
            let mut results = judge(&self.contracts, kind, &request, &exchange, expected);
            if kind == ProbeKind::Language {
                evidence.language = Some(language);
                requests += self
                    .confirm_language(route, &request, expected, &mut results)
                    .await;
            }
            evidence.probes.push(ProbeEvidence::new(kind, results));
        }
        RouteProbe { evidence, requests }
    }

    /// When the language outcome in `results` is an anomaly, sends the
    /// request twice more and replaces it by the majority of three.
    /// Returns the requests sent.
    async fn confirm_language(
        &self,
        route: &Route,
        request: &ChatRequest,
        expected: Language,
        results: &mut [(ContractName, Outcome)],
    ) -> u32 {
        let Some(slot) = results
            .iter_mut()
            .find(|(c, o)| *c == ContractName::Language && language::needs_confirmation(o))
        else {
            return 0;
        };
        let mut samples = Vec::new();
        for _ in 0..2 {
            let exchange = self.send(request).await;
            samples.push(self.language_only(route, request, &exchange, expected));
        }
        slot.1 = language::confirm(&slot.1, samples[0].as_ref(), samples[1].as_ref());
        2
    }

    /// The language outcome of a confirmation; `None` when it got no
    /// usable reply from the route.
    fn language_only(
        &self,
        route: &Route,
        request: &ChatRequest,
        exchange: &Exchange,
        expected: Language,
    ) -> Option<Outcome> {
        classify(exchange).ok()?;
        if served_by_other(route, exchange.provider.as_deref()).is_some() {
            return None;
        }
        judge(
            &self.contracts,
            ProbeKind::Language,
            request,
            exchange,
            expected,
        )
        .into_iter()
        .find(|(c, _)| *c == ContractName::Language)
        .map(|(_, o)| o)
    }

    async fn send(&self, request: &ChatRequest) -> Exchange {
        let options = SendOptions {
            deadline: self.settings.deadline,
            max_response_bytes: self.settings.max_response_bytes,
        };
        send_to(
            &self.client,
            &self.target.chat_url,
            &self.target.headers,
            request,
            options,
        )
        .await
    }
}

#[cfg(test)]
mod tests;
