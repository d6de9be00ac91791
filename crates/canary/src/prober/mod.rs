//! One probe round on the wire: every route gets the probe set, pinned,
//! with a deadline and the size cap on every request; routes are probed
//! concurrently, a few at a time; each route's replies become one
//! [`RouteEvidence`] for the state machine.
//!
//! Per route, the three probes go at once. A transport error on one of
//! them (a timeout before the headers, a 429, a 5xx, another 4xx, a broken
//! body) freezes that probe's contracts for the round; the other probes are
//! scored on their own replies. A 401 or 403 is the key's doing, not the
//! route's: it is reported in [`RouteProbe::key_refused`] and the command
//! stops. A reply whose `provider` names another route freezes it
//! the same way, recorded as "pinning not honoured" and never scored. A
//! language anomaly is confirmed at once by two more identical requests
//! (sent together), a majority of three deciding
//! ([`crate::language`]). A round costs 3 requests per route, 5
//! when the language probe needs its confirmations; with `--repeats`, each
//! probe goes as many times (a few at a time, [`COPIES_AT_ONCE`]), every
//! copy with its own session identity in the request's `user`
//! ([`crate::probe::session_id`]), and a copy's transport error freezes
//! its probe's contracts unless another copy failed them.

mod classify;
mod judge;
mod stream;

pub use classify::{classify, served_by_other};
pub use judge::judge;

use super::discover::Route;
use super::evidence::{ProbeEvidence, ProbeKind, RouteEvidence, TransportError};
use super::language;
use super::probe::{self, Repeats, PROBES};
use cb_base::secret::Secret;
use cb_client::send_to;
use cb_client::{Exchange, SendOptions};
use cb_contracts::{ContractName, ContractSettings, Contracts, Language, Outcome, SettingsError};
use cb_wire::openai::ChatRequest;
use futures::StreamExt as _;
use std::sync::Arc;
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
    /// What the roleplay and schema probes send.
    pub probes: super::probe::ProbeSet,
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
    /// Copies of each probe per route and round.
    pub repeats: Repeats,
    /// The master seed the session identities derive from.
    pub seed: u64,
}

/// Probe requests of one route in flight at once: with many copies, a
/// route is not sent them all in one burst (which a real host would rate
/// limit), and each stream is read as it comes.
pub const COPIES_AT_ONCE: usize = 8;

/// What probing one route in one round produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteProbe {
    /// The evidence for the state machine.
    pub evidence: RouteEvidence,
    /// Requests sent: one per probe copy, plus two per language
    /// confirmation.
    pub requests: u32,
    /// The status and reason of a 401 or 403, when the endpoint refused the
    /// key on some probe.
    pub key_refused: Option<(u16, String)>,
}

/// Sends the probe set and judges the replies.
#[derive(Debug)]
pub struct Prober {
    client: reqwest::Client,
    target: ProbeTarget,
    contracts: Arc<ProbeContracts>,
    settings: ProberSettings,
}

/// Per probe, the contract set of that probe only, so that a reply is never
/// run through a contract whose outcome would be thrown away.
#[derive(Debug)]
struct ProbeContracts {
    roleplay: Contracts,
    schema: Contracts,
    language: Contracts,
}

impl ProbeContracts {
    fn new(settings: &ContractSettings) -> Result<Self, SettingsError> {
        let of = |kind| {
            Contracts::new(ContractSettings {
                enabled: probe::contracts_of(kind).to_vec(),
                ..settings.clone()
            })
        };
        Ok(ProbeContracts {
            roleplay: of(ProbeKind::Roleplay)?,
            schema: of(ProbeKind::Schema)?,
            language: of(ProbeKind::Language)?,
        })
    }

    fn of(&self, kind: ProbeKind) -> &Contracts {
        match kind {
            ProbeKind::Roleplay => &self.roleplay,
            ProbeKind::Schema => &self.schema,
            ProbeKind::Language => &self.language,
        }
    }
}

/// What one probe got.
enum Reply {
    /// A reply from the route, judged, with its finish reason.
    Judged(Vec<(ContractName, Outcome)>, Option<String>),
    /// A transport error: the probe is frozen this round (with the status
    /// when one came).
    Transport(TransportError, Option<u16>),
    /// A reply from another route: pinning not honoured.
    OtherRoute(String),
}

impl Prober {
    /// A prober of `target` judging with the contracts of `contracts`
    /// (its time-to-first-token limit and plausible languages; each probe
    /// runs its own contracts only).
    ///
    /// # Errors
    /// [`SettingsError`] when the settings cannot build a contract set.
    pub fn new(
        client: reqwest::Client,
        target: ProbeTarget,
        contracts: &ContractSettings,
        settings: ProberSettings,
    ) -> Result<Self, SettingsError> {
        Ok(Prober {
            client,
            target,
            contracts: Arc::new(ProbeContracts::new(contracts)?),
            settings,
        })
    }

    /// Probes every route (with its language of the rotation) in round
    /// `round`, a few at a time; the results come back in the order of
    /// `routes`.
    pub async fn round(&self, routes: &[(Route, Language)], round: u64) -> Vec<RouteProbe> {
        let mut done: Vec<(usize, RouteProbe)> = futures::stream::iter(routes.iter().enumerate())
            .map(|(i, (route, language))| async move {
                (i, self.probe_route(route, *language, round).await)
            })
            .buffer_unordered(self.settings.concurrency.max(1))
            .collect()
            .await;
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, probe)| probe).collect()
    }

    /// Sends the probe set to one route in round `round` (the probes and
    /// their copies a few at a time) and judges it.
    pub async fn probe_route(&self, route: &Route, language: Language, round: u64) -> RouteProbe {
        let copies: Vec<(ProbeKind, u32)> = PROBES
            .into_iter()
            .flat_map(|kind| (0..self.settings.repeats.of(kind)).map(move |copy| (kind, copy)))
            .collect();
        let mut done: Vec<(usize, (ProbeKind, u32, Reply))> =
            futures::stream::iter(copies.into_iter().enumerate())
                .map(|(i, (kind, copy))| async move {
                    let session =
                        probe::session_id(self.settings.seed, round, &route.id, kind, copy);
                    (i, self.probe_one(route, kind, language, &session).await)
                })
                .buffer_unordered(COPIES_AT_ONCE)
                .collect()
                .await;
        done.sort_by_key(|(i, _)| *i);
        let done = done.into_iter().map(|(_, d)| d);
        let mut evidence = RouteEvidence::new(&route.id);
        let mut requests = 0;
        let mut key_refused = None;
        for (kind, sent, reply) in done {
            requests += sent;
            match reply {
                Reply::Transport(error, status) => {
                    if let Some(status @ (401 | 403)) = status {
                        key_refused.get_or_insert((status, error.detail.clone()));
                    }
                    evidence.freeze_probe(kind, error);
                }
                Reply::OtherRoute(provider) => {
                    evidence.served_by_other.get_or_insert(provider);
                }
                Reply::Judged(results, finish_reason) => {
                    if kind == ProbeKind::Language {
                        evidence.language = Some(language);
                    }
                    let mut probe = ProbeEvidence::new(kind, results);
                    probe.finish_reason = finish_reason;
                    evidence.probes.push(probe);
                }
            }
        }
        RouteProbe {
            evidence,
            requests,
            key_refused,
        }
    }

    /// One probe of `route`: the requests it cost and what came of it.
    async fn probe_one(
        &self,
        route: &Route,
        kind: ProbeKind,
        language: Language,
        session: &str,
    ) -> (ProbeKind, u32, Reply) {
        let mut request = probe::request_with(
            &self.target.probes,
            kind,
            &self.target.model,
            &route.id,
            language,
        );
        request
            .extra
            .insert("user".into(), serde_json::Value::from(session));
        let exchange = if request.stream {
            match stream::send_stream(
                &self.client,
                &self.target.chat_url,
                &self.target.headers,
                &request,
                self.settings.deadline,
                self.settings.max_response_bytes,
            )
            .await
            {
                stream::Streamed::Exchange(exchange) => *exchange,
                // An open stream with no text: a ttft failure, not a
                // transport error; nothing else of the probe can be judged.
                stream::Streamed::Hung { ttfb_ms } => {
                    let reason = format!(
                        "the stream opened after {ttfb_ms:.0} ms and sent no text within the \
                         probe deadline of {} ms (hung)",
                        self.settings.deadline.as_millis()
                    );
                    let results = vec![(ContractName::Ttft, Outcome::fail(reason))];
                    return (kind, 1, Reply::Judged(results, None));
                }
            }
        } else {
            self.send(&request).await
        };
        if let Err(error) = classify(&exchange) {
            return (kind, 1, Reply::Transport(error, exchange.status));
        }
        if let Some(other) = served_by_other(route, exchange.provider.as_deref()) {
            return (kind, 1, Reply::OtherRoute(other));
        }
        let expected = probe::expected_language(kind, language);
        let finish_reason = exchange.finish_reason.clone();
        let mut results = self.judged(kind, &request, exchange, expected).await;
        let mut sent = 1;
        if kind == ProbeKind::Language {
            sent += self
                .confirm_language(route, &request, expected, &mut results)
                .await;
        }
        (kind, sent, Reply::Judged(results, finish_reason))
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
        // Both confirmations at once: they are immediate, and independent.
        let (a, b) = futures::join!(self.send(request), self.send(request));
        let (second, third) = futures::join!(
            self.language_only(route, request, a, expected),
            self.language_only(route, request, b, expected)
        );
        slot.1 = language::confirm(&slot.1, second.as_ref(), third.as_ref());
        2
    }

    /// The language outcome of a confirmation; `None` when it got no
    /// usable reply from the route.
    async fn language_only(
        &self,
        route: &Route,
        request: &ChatRequest,
        exchange: Exchange,
        expected: Language,
    ) -> Option<Outcome> {
        classify(&exchange).ok()?;
        if served_by_other(route, exchange.provider.as_deref()).is_some() {
            return None;
        }
        self.judged(ProbeKind::Language, request, exchange, expected)
            .await
            .into_iter()
            .find(|(c, _)| *c == ContractName::Language)
            .map(|(_, o)| o)
    }

    /// [`judge`] on the blocking pool: language detection costs CPU, and on
    /// the runtime's threads it would delay reading the other probes'
    /// streams, adding to their measured time to first token.
    async fn judged(
        &self,
        kind: ProbeKind,
        request: &ChatRequest,
        exchange: Exchange,
        expected: Language,
    ) -> Vec<(ContractName, Outcome)> {
        let contracts = Arc::clone(&self.contracts);
        let request = request.clone();
        let judging = tokio::task::spawn_blocking(move || {
            judge(contracts.of(kind), kind, &request, &exchange, expected)
        });
        match judging.await {
            Ok(results) => results,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled only when the runtime shuts down: nothing judged.
            Err(_) => Vec::new(),
        }
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
