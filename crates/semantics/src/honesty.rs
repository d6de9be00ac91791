//! Honesty: what a system *says* about an answer, held against what its
//! upstreams saw. The harness owns the upstreams, so it knows which one
//! answered, which model it served and what it billed; a gateway's
//! response claims the same things in its `model`, its `usage` and its
//! self-reported routing headers (`x-litellm-attempted-fallbacks`,
//! `x-portkey-last-used-option-index`, `cf-aig-step`, ...). Spend and
//! incident analysis are built on those claims.
//!
//! Three families, each judged on every answered request of a case where
//! it can apply, and counted beside the verdict (never changing it):
//!
//! - **model**, on a request the fallback answered: every `model` the
//!   answer names (a plain body's, or those a stream's chunks name, a run
//!   of the same one kept once, the last chunk's last) is one an upstream
//!   answered as whose text may have reached the client (the answering
//!   upstream's; an earlier one's only when the answering request ended
//!   with an assistant prefill, a continuation, or the response's headers
//!   came before the fallback was asked), and the last is the answering
//!   upstream's;
//! - **usage**, on a request the fallback answered with a `usage` block:
//!   its counts are what the answering upstream billed, the sum of what
//!   every attempt billed, or the bill of the answer as received (the
//!   client's prompt, the text it got), within one token per answering
//!   part (each part is rounded on its own); what the attempts billed
//!   beyond what it reports is shown beside it, all of it when the answer
//!   has no `usage`;
//! - **routing**, on any answered request whose response carries a routing
//!   header this module can read: the target index, the fallbacks
//!   attempted (more than none when the fallback was tried, no more than
//!   the fallback's attempts: a gateway whose earlier fallback groups
//!   never reached an upstream is a blind spot), a "fallback used" flag or
//!   the serving model it states
//!   agree with the attempt log as it stood when the headers were written
//!   (a failover inside a stream already begun comes after them, and a
//!   header that names the upstream serving then is honest); not judged
//!   when no upstream had answered by then.

use crate::observe::{AttemptView, Sent};
use cb_faults::Role;
use cb_wire::openai::Usage;
use serde::{Deserialize, Serialize};

/// A family of claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// The `model` the answer names.
    Model,
    /// The answer's `usage`.
    Usage,
    /// The gateway's self-reported routing headers.
    Routing,
}

impl Claim {
    /// Every family, in report order.
    pub const ALL: [Claim; 3] = [Claim::Model, Claim::Usage, Claim::Routing];

    /// The snake_case name the JSON output writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Claim::Model => "model",
            Claim::Usage => "usage",
            Claim::Routing => "routing",
        }
    }
}

/// One claim of one request, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HonestyCheck {
    /// The family.
    pub claim: Claim,
    /// Whether the claim agrees with the attempt log.
    pub honest: bool,
    /// What was claimed and what the upstreams saw, in words.
    pub value: String,
}

/// The claims of one case, judged: only those that applied (a family that
/// could not apply is not listed, never counted as dishonest).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CaseHonesty {
    /// Every claim judged, request by request.
    pub checks: Vec<HonestyCheck>,
    /// Tokens the attempts billed beyond what an honest `usage` reports
    /// (the failed attempts' bills, a continuation's prompt).
    pub unreported_tokens: u32,
}

impl CaseHonesty {
    /// Whether the case's claims of `claim` were judged, and if so whether
    /// all were honest.
    pub fn verdict(&self, claim: Claim) -> Option<bool> {
        let mut judged = self.checks.iter().filter(|c| c.claim == claim).peekable();
        judged.peek()?;
        Some(judged.all(|c| c.honest))
    }
}

/// Cases whose claims of one family were judged, and how many were honest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Cases in which every claim of the family was honest.
    pub honest: u32,
    /// Cases in which the family was judged at all.
    pub judged: u32,
}

impl Tally {
    /// `12/12`, or `n/a` when nothing was judged.
    pub fn cell(self) -> String {
        if self.judged == 0 {
            "n/a".into()
        } else {
            format!("{}/{}", self.honest, self.judged)
        }
    }
}

/// One system's honesty, case by case, counted per family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HonestyCard {
    /// The `model` claims.
    pub model: Tally,
    /// The `usage` claims.
    pub usage: Tally,
    /// The routing headers.
    pub routing: Tally,
    /// Tokens the attempts billed beyond what the answers' `usage` reports.
    pub unreported_tokens: u64,
}

impl HonestyCard {
    /// Counts the cases' honesty.
    pub fn of<'a>(cases: impl IntoIterator<Item = &'a CaseHonesty>) -> Self {
        let mut card = HonestyCard::default();
        for case in cases {
            for claim in Claim::ALL {
                if let Some(honest) = case.verdict(claim) {
                    let tally = card.tally_mut(claim);
                    tally.judged += 1;
                    tally.honest += u32::from(honest);
                }
            }
            card.unreported_tokens += u64::from(case.unreported_tokens);
        }
        card
    }

    /// The tally of `claim`.
    pub fn tally(&self, claim: Claim) -> Tally {
        match claim {
            Claim::Model => self.model,
            Claim::Usage => self.usage,
            Claim::Routing => self.routing,
        }
    }

    fn tally_mut(&mut self, claim: Claim) -> &mut Tally {
        match claim {
            Claim::Model => &mut self.model,
            Claim::Usage => &mut self.usage,
            Claim::Routing => &mut self.routing,
        }
    }

    /// Cases judged in any family with a dishonest claim.
    pub fn dishonest(&self) -> u32 {
        Claim::ALL
            .iter()
            .map(|c| {
                let t = self.tally(*c);
                t.judged - t.honest
            })
            .sum()
    }

    /// `model 12/12, usage 10/12, routing n/a`.
    pub fn line(&self) -> String {
        Claim::ALL
            .iter()
            .map(|c| format!("{} {}", c.as_str(), self.tally(*c).cell()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Judges the claims of every request of a case; `ports` are the
/// system's upstream ports (primary, fallback), for a claim that names a
/// base URL.
pub fn judge<'a>(
    requests: impl IntoIterator<Item = &'a Sent>,
    ports: Option<(u16, u16)>,
) -> CaseHonesty {
    let mut out = CaseHonesty::default();
    for sent in requests {
        judge_one(sent, ports, &mut out);
    }
    out
}

/// Whether an upstream answered this attempt (a 2xx).
fn answered(a: &AttemptView) -> bool {
    a.status.is_some_and(|s| (200..300).contains(&s))
}

/// Whether `claimed` names `served`: the same id, or the same id behind a
/// provider's prefix (`openai/continuity-sim-fallback`).
pub(crate) fn names(claimed: &str, served: &str) -> bool {
    claimed == served
        || claimed
            .strip_suffix(served)
            .is_some_and(|prefix| prefix.ends_with('/'))
}

fn judge_one(sent: &Sent, ports: Option<(u16, u16)>, out: &mut CaseHonesty) {
    let client = &sent.client;
    if !client.answered {
        return;
    }
    // The attempt whose answer the client got: the last one an upstream
    // answered that the system did not walk away from (a hedged request's
    // loser is abandoned). None: the system answered by itself, and
    // nothing here can say who it claims answered.
    let Some(answering) = sent
        .attempts
        .iter()
        .rev()
        .find(|a| answered(a) && !a.gave_up)
    else {
        return;
    };
    let parts = sent.attempts.iter().filter(|a| answered(a)).count() as u32;
    if answering.role == Role::Fallback {
        if let Some(check) = model_claim(sent, answering) {
            out.checks.push(check);
        }
        match usage_claim(sent, answering, parts) {
            Some((check, unreported)) => {
                out.checks.push(check);
                out.unreported_tokens = out.unreported_tokens.saturating_add(unreported);
            }
            // No usage at all: every token the attempts billed went
            // unreported (the family cannot apply; the count can).
            None if !client.usage => {
                let billed = sent
                    .attempts
                    .iter()
                    .filter_map(|a| a.billed)
                    .map(|b| b.prompt_tokens.saturating_add(b.completion_tokens))
                    .fold(0u32, u32::saturating_add);
                out.unreported_tokens = out.unreported_tokens.saturating_add(billed);
            }
            None => {}
        }
    }
    if client.routing.is_empty() {
        return;
    }
    // Headers are written once, when the response starts: a system that
    // failed over inside a stream it had already begun could not name the
    // fallback in them. They are held against what it knew then, the
    // attempts that had arrived by the time the client got them.
    let known: Vec<&AttemptView> = match client.headers_ms {
        Some(headers_ms) => sent
            .attempts
            .iter()
            .filter(|a| a.at_ms <= headers_ms)
            .collect(),
        None => sent.attempts.iter().collect(),
    };
    let later = sent.attempts.len() - known.len();
    // Serving then: the last answered attempt not walked away from; else
    // one walked away from later (a stalled stream the system was still
    // reading when it wrote the headers).
    let serving = if later == 0 {
        Some(answering)
    } else {
        known
            .iter()
            .rev()
            .find(|a| answered(a) && !a.gave_up)
            .or_else(|| known.iter().rev().find(|a| answered(a)))
            .copied()
    };
    let Some(serving) = serving else {
        return;
    };
    let when = Written {
        known: &known,
        serving,
        later,
    };
    for (name, value) in &client.routing {
        if let Some(check) = routing_claim(name, value, &when, ports) {
            out.checks.push(check);
        }
    }
}

/// Milliseconds of scheduling jitter allowed between the client's clock
/// and the upstreams' log when ordering the response's headers against an
/// attempt's arrival.
const CLOCK_SLACK_MS: f64 = 5.0;

/// The models an answer the fallback gave may name: the fallback's, and
/// an earlier upstream's that answered only when its text may have reached
/// the client: the fallback continued it (a prefill), or the response had
/// begun (headers sent) before the fallback was asked. A gateway that
/// buffered the primary's broken answer and restarted on the fallback
/// relays none of the primary's text, so naming the primary is false.
pub(crate) fn relayable_models<'a>(sent: &'a Sent, answering: &'a AttemptView) -> Vec<&'a str> {
    // The client's clock and the upstream's log differ by scheduling
    // jitter: headers within a few milliseconds of the fallback's arrival
    // may have been sent before it.
    let begun = sent
        .client
        .headers_ms
        .is_some_and(|h| h < answering.at_ms + CLOCK_SLACK_MS);
    sent.attempts
        .iter()
        .filter(|a| answered(a))
        .filter(|a| std::ptr::eq(*a, answering) || answering.prefill || begun)
        .map(|a| a.model.as_str())
        .collect()
}

/// Every model the response names, in order: a plain body's, or those a
/// stream's chunks name (empty names skipped).
pub(crate) fn named_models(sent: &Sent) -> Vec<&str> {
    sent.client
        .models
        .iter()
        .map(String::as_str)
        .filter(|m| !m.trim().is_empty())
        .collect()
}

/// The `model` claim of an answer the fallback gave.
fn model_claim(sent: &Sent, answering: &AttemptView) -> Option<HonestyCheck> {
    let named = named_models(sent);
    let last = named.last()?;
    let served = relayable_models(sent, answering);
    let honest =
        names(last, &answering.model) && named.iter().all(|m| served.iter().any(|s| names(m, s)));
    let names = named.join(", then ");
    Some(HonestyCheck {
        claim: Claim::Model,
        honest,
        value: format!(
            "the answer names {names}; the {} answered as {}",
            answering.role.as_str(),
            answering.model
        ),
    })
}

/// The `usage` claim of an answer the fallback gave, and the tokens the
/// attempts billed beyond what it reports.
///
/// Three readings are honest: the answering upstream's own bill; the sum
/// of every attempt's bill; and the bill of the answer as the client got
/// it (the client's prompt as the first upstream billed it, the tokens of
/// the text received), which is what a gateway that splices a broken
/// stream onto a continuation can know. Within one token per answering
/// part: each part is counted, and rounded, on its own.
fn usage_claim(sent: &Sent, answering: &AttemptView, parts: u32) -> Option<(HonestyCheck, u32)> {
    let client = &sent.client;
    if client.prompt_tokens.is_none() && client.completion_tokens.is_none() {
        return None;
    }
    let own = answering.billed?;
    let bills: Vec<Usage> = sent.attempts.iter().filter_map(|a| a.billed).collect();
    let all = bills.iter().fold(Usage::default(), |sum, b| {
        Usage::new(
            sum.prompt_tokens.saturating_add(b.prompt_tokens),
            sum.completion_tokens.saturating_add(b.completion_tokens),
        )
    });
    let first_prompt = bills.first().map_or(own.prompt_tokens, |b| b.prompt_tokens);
    let as_received = Usage::new(first_prompt, client.answer_tokens);
    let slack = parts.max(1);
    let near = |got: Option<u32>, want: u32| got.is_none_or(|g| g.abs_diff(want) <= slack);
    let matches = |u: Usage| {
        near(client.prompt_tokens, u.prompt_tokens)
            && near(client.completion_tokens, u.completion_tokens)
    };
    let honest = matches(own) || matches(all) || matches(as_received);
    let reported = client
        .prompt_tokens
        .unwrap_or(0)
        .saturating_add(client.completion_tokens.unwrap_or(0));
    let unreported = if honest {
        all.prompt_tokens
            .saturating_add(all.completion_tokens)
            .saturating_sub(reported)
    } else {
        0
    };
    let count = |v: Option<u32>| v.map_or_else(|| "none".to_string(), |v| v.to_string());
    let check = HonestyCheck {
        claim: Claim::Usage,
        honest,
        value: format!(
            "usage says {} prompt + {} completion tokens; the {} billed {} + {}, every attempt {} + {}, the answer received {} + {}",
            count(client.prompt_tokens),
            count(client.completion_tokens),
            answering.role.as_str(),
            own.prompt_tokens,
            own.completion_tokens,
            all.prompt_tokens,
            all.completion_tokens,
            as_received.prompt_tokens,
            as_received.completion_tokens,
        ),
    };
    Some((check, unreported))
}

/// What a routing header says, once read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// The index of the target that answered (0: the first, the primary).
    Index(u64),
    /// How many fallbacks were attempted.
    FallbacksAttempted(u64),
    /// Whether a fallback answered.
    FallbackUsed(bool),
    /// The model that served (a `provider/` prefix allowed:
    /// `openai/continuity-sim-fallback`).
    ServedModel(String),
    /// The upstream that served, by the port of the base URL named
    /// (`x-litellm-model-api-base: http://127.0.0.1:9002/v1`).
    ServedAt(u16),
}

/// The port of a base URL (`http://host:9002/v1` reads as 9002,
/// `http://[::1]:9002` too; a URL without a port, as its scheme's).
fn port_of(url: &str) -> Option<u16> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    // An IPv6 host is bracketed: its colons are not the port's.
    let after_host = match host_port.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']')?.1,
        None => host_port.rsplit_once(':').map_or("", |(_, port)| port),
    };
    match after_host.strip_prefix(':').unwrap_or(after_host) {
        "" => match scheme.to_ascii_lowercase().as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        },
        port => port.parse().ok(),
    }
}

/// The index a routing header's value states: a bare number (`1`), or the
/// first bracketed one (`config.targets[1]`, `targets[1].targets[0]`
/// reads as 1, the outer target). None for anything else (`v2-model`).
fn index_in(value: &str) -> Option<u64> {
    if let Ok(n) = value.parse() {
        return Some(n);
    }
    let (_, after) = value.split_once('[')?;
    let (digits, _) = after.split_once(']')?;
    digits.trim().parse().ok()
}

/// What the routing header `name: value` says, when it is one this module
/// reads:
///
/// - the index of the target that answered (`…option-index`,
///   `…fallback-index`, `…target-index`, `…provider-index`,
///   `…deployment-index`, `…route-index`, `cf-aig-step`; a bare number or
///   the first bracketed one, `config.targets[1]` reading as 1);
/// - a count of fallbacks attempted (`…attempted-fallbacks`,
///   `…fallback-count`, `…fallbacks-attempted`);
/// - a flag that a fallback answered (`…fallback-used`, `…-fallback`,
///   valued true/false/yes/no);
/// - the serving model (`…served-model`, `…model-used`, `…model-name`,
///   and the whole names `openai-model`, a provider's own, and `x-model`);
/// - the serving upstream's base URL (`…api-base`, `…base-url`,
///   `…upstream-url`).
///
/// Names that say something else are not read: a `…fallback-model` may be
/// the configured fallback rather than the one that served, a
/// `x-choice-index` or `x-workflow-step` counts something other than
/// targets, and retries, model groups, deployment ids and providers count
/// differently from gateway to gateway.
pub fn read_routing(name: &str, value: &str) -> Option<Said> {
    use cb_client::routing_names as names;
    let name = name.to_ascii_lowercase();
    let value = value.trim();
    let ends = |words: &[&str]| words.iter().any(|w| name.ends_with(w));
    let served = ends(names::SERVED_MODEL) || names::SERVED_MODEL_EXACT.contains(&name.as_str());
    if served && !value.is_empty() {
        return Some(Said::ServedModel(value.to_string()));
    }
    if ends(names::API_BASE) {
        return port_of(value).map(Said::ServedAt);
    }
    if ends(names::FALLBACK_USED) {
        return match value.to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(Said::FallbackUsed(true)),
            "false" | "no" => Some(Said::FallbackUsed(false)),
            _ => None,
        };
    }
    if ends(names::FALLBACKS_ATTEMPTED) {
        return value.parse().ok().map(Said::FallbacksAttempted);
    }
    if ends(names::INDEX) {
        return index_in(value).map(Said::Index);
    }
    None
}

/// What a system knew when it wrote its response headers.
struct Written<'a> {
    /// The attempts that had arrived by then.
    known: &'a [&'a AttemptView],
    /// The attempt it was serving from then.
    serving: &'a AttemptView,
    /// Attempts that arrived after the headers (a failover inside a stream
    /// already begun).
    later: usize,
}

/// The routing header `name: value`, judged against the attempts the
/// system knew of when it wrote it (and, for a base URL, the system's
/// upstream ports: one that names neither port cannot be judged).
fn routing_claim(
    name: &str,
    value: &str,
    when: &Written<'_>,
    ports: Option<(u16, u16)>,
) -> Option<HonestyCheck> {
    let said = read_routing(name, value)?;
    let serving = when.serving;
    let fallback_serving = serving.role == Role::Fallback;
    let fallback_tried = when.known.iter().any(|a| a.role == Role::Fallback);
    let index = u64::from(fallback_serving);
    let role = serving.role.as_str();
    let (honest, truth) = match &said {
        Said::Index(i) => (*i == index, format!("target {index} was serving")),
        Said::FallbacksAttempted(n) => {
            // At most one fallback attempt counted per attempt the
            // fallback saw (a gateway may count its retries on it).
            let tried = when
                .known
                .iter()
                .filter(|a| a.role == Role::Fallback)
                .count() as u64;
            (
                (*n > 0) == fallback_tried && *n <= tried,
                match tried {
                    0 => "the fallback was not tried".to_string(),
                    1 => "the fallback was tried once".to_string(),
                    n => format!("the fallback was tried {n} times"),
                },
            )
        }
        Said::FallbackUsed(used) => (*used == fallback_serving, format!("the {role} was serving")),
        Said::ServedModel(model) => (
            names(model, &serving.model),
            format!("the {role} was serving as {}", serving.model),
        ),
        Said::ServedAt(port) => {
            let (primary, fallback) = ports?;
            let named = match *port {
                p if p == primary => Role::Primary,
                p if p == fallback => Role::Fallback,
                _ => return None,
            };
            (named == serving.role, format!("the {role} was serving"))
        }
    };
    let written = if when.later == 0 {
        String::new()
    } else {
        format!(
            " when the headers were written ({} later attempt{} came after them)",
            when.later,
            if when.later == 1 { "" } else { "s" }
        )
    };
    Some(HonestyCheck {
        claim: Claim::Routing,
        honest,
        value: format!("{name}: {value}; {truth}{written}"),
    })
}

#[cfg(test)]
mod tests;
