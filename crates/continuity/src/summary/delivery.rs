//! What reached each system's fallback: of the system messages, tool
//! results and user turns the client sent, the share found in the fallback
//! requests that happened (from the upstream's survival notes,
//! [`cb_upstream::log::SurvivalRow`]), the requests the fallback
//! refused as invalid in its dialect, and, when the profile squeezes the
//! fallback's context window, what each failover event turned into. A
//! share below 100 % gets a diagnosis line saying what a gateway did.

use super::SystemSummary;
use cb_base::record::{AttemptAction, AttemptRecord};
use cb_dialect::{Dialect, Share};
use cb_faults::Role;
use cb_upstream::log::{RejectionRow, SurvivalRow};
use serde::{Deserialize, Serialize};

/// One kind of item: how many were sent in fallback requests, how many
/// reached the fallback, and the share (`None`, written `n/a`, when no
/// fallback request carried one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeliveryShare {
    /// Items the client sent, over the fallback requests.
    pub sent: u64,
    /// Of those, items found in what the fallback received.
    pub reached: u64,
    /// `reached / sent`, or `None` when nothing was sent.
    pub rate: Option<f64>,
}

impl From<Share> for DeliveryShare {
    fn from(s: Share) -> Self {
        DeliveryShare {
            sent: s.sent as u64,
            reached: s.reached as u64,
            rate: s.rate(),
        }
    }
}

/// What the context squeeze (`[fallback] context_tokens`) turned the
/// failover events into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqueezeCounts {
    /// The fallback got a request that fit, smaller than the conversation
    /// (the gateway trimmed it), with the anchor's message in it.
    pub trimmed_anchor_kept: u64,
    /// As above, without the anchor's message.
    pub trimmed_anchor_lost: u64,
    /// The fallback got the whole conversation and it fit.
    pub sent_whole: u64,
    /// The gateway sent a request the fallback rejected as too long.
    pub rejected_by_fallback: u64,
    /// The client got an error and the fallback was never asked.
    pub failed_clearly: u64,
}

/// What reached one system's fallback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// The dialect the fallback spoke (the built-in systems'; external
    /// gateways are called in whatever dialect they choose).
    pub dialect: Dialect,
    /// Fallback requests recognised as a conversation's turn.
    pub requests: u64,
    /// System (and developer) messages.
    pub system_messages: DeliveryShare,
    /// Tool results.
    pub tool_results: DeliveryShare,
    /// User turns.
    pub user_turns: DeliveryShare,
    /// Fallback requests without the message that states the anchor.
    pub anchor_missing: u64,
    /// Requests the fallback refused as invalid in its dialect.
    pub rejected: u64,
    /// The fallback API's message for the first of them.
    pub rejection: Option<String>,
    /// With `[fallback] context_tokens`: what each failover event turned
    /// into; `None` without a squeeze.
    pub squeeze: Option<SqueezeCounts>,
    /// One line per share below 100 % (and per rejection), saying what the
    /// gateway did.
    pub diagnosis: Vec<String>,
}

fn pct(s: &DeliveryShare) -> String {
    s.rate
        .map_or_else(|| "n/a".to_string(), |r| format!("{:.1} %", r * 100.0))
}

/// The delivery of `system`'s fallback, from the notes of every upstream.
pub fn delivery(
    system: &str,
    dialect: Dialect,
    survivals: &[SurvivalRow],
    rejections: &[RejectionRow],
) -> Delivery {
    let mine: Vec<&SurvivalRow> = survivals
        .iter()
        .filter(|r| r.system == system && r.role == Role::Fallback)
        .collect();
    let mut total = cb_dialect::Survival::default();
    for r in &mine {
        total += r.survival;
    }
    let refused: Vec<&RejectionRow> = rejections
        .iter()
        .filter(|r| r.system == system && r.role == Role::Fallback)
        .collect();
    let mut d = Delivery {
        dialect,
        requests: mine.len() as u64,
        system_messages: total.system.into(),
        tool_results: total.tool_results.into(),
        user_turns: total.user_turns.into(),
        anchor_missing: mine.iter().filter(|r| !r.anchor).count() as u64,
        rejected: refused.len() as u64,
        rejection: refused.first().map(|r| r.message.clone()),
        squeeze: None,
        diagnosis: Vec::new(),
    };
    diagnose(&mut d);
    d
}

/// One delivery from the deliveries of the shards of a run (`report
/// merge`): every count summed, every share and diagnosis worked out again
/// from the sums; the rejection quoted is the first shard's that has one.
/// `None` when no shard had one.
pub fn combine<'a>(parts: impl IntoIterator<Item = &'a Delivery>) -> Option<Delivery> {
    let mut parts = parts.into_iter();
    let first = parts.next()?;
    let mut d = Delivery {
        diagnosis: Vec::new(),
        ..first.clone()
    };
    let add = |a: &mut DeliveryShare, b: &DeliveryShare| {
        a.sent += b.sent;
        a.reached += b.reached;
    };
    for p in parts {
        d.requests += p.requests;
        add(&mut d.system_messages, &p.system_messages);
        add(&mut d.tool_results, &p.tool_results);
        add(&mut d.user_turns, &p.user_turns);
        d.anchor_missing += p.anchor_missing;
        d.rejected += p.rejected;
        if d.rejection.is_none() {
            d.rejection.clone_from(&p.rejection);
        }
        d.squeeze = match (d.squeeze, p.squeeze) {
            (Some(a), Some(b)) => Some(SqueezeCounts {
                trimmed_anchor_kept: a.trimmed_anchor_kept + b.trimmed_anchor_kept,
                trimmed_anchor_lost: a.trimmed_anchor_lost + b.trimmed_anchor_lost,
                sent_whole: a.sent_whole + b.sent_whole,
                rejected_by_fallback: a.rejected_by_fallback + b.rejected_by_fallback,
                failed_clearly: a.failed_clearly + b.failed_clearly,
            }),
            (a, b) => a.or(b),
        };
    }
    for share in [
        &mut d.system_messages,
        &mut d.tool_results,
        &mut d.user_turns,
    ] {
        share.rate = (share.sent > 0).then(|| share.reached as f64 / share.sent as f64);
    }
    diagnose(&mut d);
    Some(d)
}

/// The diagnosis lines of a delivery: one per share below 100 %, and one
/// for the fallback's rejections.
fn diagnose(d: &mut Delivery) {
    let dialect = d.dialect;
    let low = |s: &DeliveryShare| s.rate.is_some_and(|r| r < 1.0);
    if low(&d.system_messages) {
        d.diagnosis.push(format!(
            "only {} of the system messages reached the fallback: the gateway drops system messages (keeping only the last one, as some do on the Anthropic path, loses the others)",
            pct(&d.system_messages)
        ));
    }
    if low(&d.tool_results) {
        d.diagnosis.push(format!(
            "only {} of the tool results reached the fallback: the gateway drops tool results (as \"orphaned\") or the history that holds them",
            pct(&d.tool_results)
        ));
    }
    if low(&d.user_turns) {
        d.diagnosis.push(format!(
            "only {} of the user turns reached the fallback: the gateway does not forward the conversation's history",
            pct(&d.user_turns)
        ));
    }
    if let Some(message) = &d.rejection {
        d.diagnosis.push(format!(
            "the {dialect} fallback refused {} request(s) as invalid, e.g. \"{message}\": the gateway's translation breaks the dialect's rules",
            d.rejected
        ));
    }
}

/// The squeeze counts of `system`'s failover events: `events` are the
/// (run, conversation id, event turn, client answered 2xx) of its failover
/// events.
///
/// Each event is classified by the last fallback request the gateway sent
/// for it: a gateway that sends the whole history, gets the fallback's 400
/// and sends it again trimmed has trimmed (what the fallback finally got
/// decides), not been rejected.
pub fn squeeze(
    system: &str,
    events: &[(u32, String, u32, bool)],
    survivals: &[SurvivalRow],
    attempts: &[AttemptRecord],
) -> SqueezeCounts {
    let mut counts = SqueezeCounts::default();
    for (run, conversation, turn, _answered) in events {
        let last = attempts
            .iter()
            .filter(|a| {
                a.system == system
                    && a.role == Role::Fallback
                    && a.run == *run
                    && a.conversation == *conversation
                    && a.turn == *turn
            })
            .max_by_key(|a| a.attempt);
        let rejected =
            last.is_some_and(|a| a.action == AttemptAction::ApiError && a.status == Some(400));
        let sent = survivals.iter().find(|r| {
            r.system == system
                && r.role == Role::Fallback
                && r.run == *run
                && r.conversation == *conversation
                && r.turn == *turn
                && last.is_none_or(|a| a.attempt == r.attempt)
        });
        match (rejected, sent) {
            (true, _) => counts.rejected_by_fallback += 1,
            (false, Some(r)) if r.survival.complete() => counts.sent_whole += 1,
            (false, Some(r)) if r.anchor => counts.trimmed_anchor_kept += 1,
            (false, Some(_)) => counts.trimmed_anchor_lost += 1,
            (false, None) => counts.failed_clearly += 1,
        }
    }
    counts
}

/// Fills in every system's [`SystemSummary::fallback_delivery`].
pub fn fill(
    systems: &mut [SystemSummary],
    dialect: Dialect,
    survivals: &[SurvivalRow],
    rejections: &[RejectionRow],
) {
    for s in systems {
        s.fallback_delivery = Some(delivery(&s.name, dialect, survivals, rejections));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_dialect::Survival;

    fn row(system: &str, survival: Survival, anchor: bool) -> SurvivalRow {
        SurvivalRow {
            run: 1,
            system: system.into(),
            role: Role::Fallback,
            conversation: "c001".into(),
            turn: 9,
            attempt: 1,
            dialect: Dialect::Anthropic,
            survival,
            anchor,
        }
    }

    fn share(sent: usize, reached: usize) -> Share {
        Share { sent, reached }
    }

    #[test]
    fn a_gateway_that_keeps_only_the_last_system_message_is_diagnosed() {
        let lossy = Survival {
            system: share(3, 1),
            tool_results: share(2, 0),
            user_turns: share(9, 9),
        };
        let whole = Survival {
            system: share(3, 3),
            tool_results: share(2, 2),
            user_turns: share(9, 9),
        };
        let rows = [row("lossy", lossy, false), row("history", whole, true)];
        let d = delivery("lossy", Dialect::Anthropic, &rows, &[]);
        assert_eq!(d.requests, 1);
        assert_eq!(d.anchor_missing, 1);
        assert_eq!(d.diagnosis.len(), 2, "{:?}", d.diagnosis);
        assert!(d.diagnosis[0].contains("33.3 % of the system messages"));
        assert!(d.diagnosis[1].contains("tool results"));
        let h = delivery("history", Dialect::Anthropic, &rows, &[]);
        assert!(h.diagnosis.is_empty());
        assert_eq!(h.system_messages.rate, Some(1.0));
        // No fallback request: n/a, and no diagnosis.
        let none = delivery("stateless", Dialect::Anthropic, &rows, &[]);
        assert_eq!(none.requests, 0);
        assert_eq!(pct(&none.user_turns), "n/a");
        assert!(none.diagnosis.is_empty());
    }

    /// The last fallback request decides: a whole history the fallback
    /// refused and then sent again trimmed is trimmed; refused and not
    /// sent again is rejected; trimmed up front is trimmed; never sent is a
    /// clear failure.
    #[test]
    fn a_squeeze_is_classified_by_the_last_fallback_request() {
        use cb_testkit::record::attempt;
        let whole = Survival {
            system: share(3, 3),
            tool_results: share(2, 2),
            user_turns: share(9, 9),
        };
        let trimmed = Survival {
            tool_results: share(2, 1),
            user_turns: share(9, 1),
            ..whole
        };
        let rejected = |n: u32| AttemptRecord {
            attempt: n,
            action: AttemptAction::ApiError,
            status: Some(400),
            ..attempt(1, "g", Role::Fallback, "c001", 9, 0.0)
        };
        let answered = |n: u32| AttemptRecord {
            attempt: n,
            ..attempt(1, "g", Role::Fallback, "c001", 9, 5.0)
        };
        let survival = |n: u32, s: Survival, anchor: bool| SurvivalRow {
            system: "g".into(),
            attempt: n,
            ..row("g", s, anchor)
        };
        let events = [(1, "c001".to_string(), 9, true)];
        let retried = squeeze(
            "g",
            &events,
            &[survival(1, whole, true), survival(2, trimmed, false)],
            &[rejected(1), answered(2)],
        );
        assert_eq!(retried.trimmed_anchor_lost, 1, "{retried:?}");
        assert_eq!(retried.rejected_by_fallback, 0);
        let refused = squeeze("g", &events, &[survival(1, whole, true)], &[rejected(1)]);
        assert_eq!(refused.rejected_by_fallback, 1, "{refused:?}");
        let upfront = squeeze("g", &events, &[survival(1, trimmed, true)], &[answered(1)]);
        assert_eq!(upfront.trimmed_anchor_kept, 1, "{upfront:?}");
        let fit = squeeze("g", &events, &[survival(1, whole, true)], &[answered(1)]);
        assert_eq!(fit.sent_whole, 1, "{fit:?}");
        assert_eq!(squeeze("g", &events, &[], &[]).failed_clearly, 1);
    }

    #[test]
    fn the_deliveries_of_shards_combine_into_the_delivery_of_all_their_rows() {
        let lossy = Survival {
            system: share(3, 1),
            tool_results: share(2, 2),
            user_turns: share(9, 4),
        };
        let whole = Survival {
            system: share(3, 3),
            tool_results: share(2, 2),
            user_turns: share(9, 9),
        };
        let rows = [
            row("g", lossy, false),
            row("g", whole, true),
            row("g", whole, true),
            row("g", lossy, true),
        ];
        let rejections = [RejectionRow {
            run: 1,
            system: "g".into(),
            role: Role::Fallback,
            dialect: Dialect::Anthropic,
            message: "max_tokens: Field required".into(),
        }];
        let all = delivery("g", Dialect::Anthropic, &rows, &rejections);
        let a = delivery("g", Dialect::Anthropic, &rows[..1], &[]);
        let b = delivery("g", Dialect::Anthropic, &rows[1..], &rejections);
        assert_ne!(a, all);
        assert_eq!(combine([&a, &b]), Some(all.clone()));
        assert_eq!(combine([&b, &a]), Some(all));
        assert_eq!(combine(std::iter::empty()), None);
    }

    #[test]
    fn a_rejected_request_is_diagnosed_with_the_api_s_message() {
        let rejections = [RejectionRow {
            run: 1,
            system: "nomax".into(),
            role: Role::Fallback,
            dialect: Dialect::Anthropic,
            message: "max_tokens: Field required".into(),
        }];
        let d = delivery("nomax", Dialect::Anthropic, &[], &rejections);
        assert_eq!(d.rejected, 1);
        assert!(d.diagnosis[0].contains("max_tokens: Field required"));
    }
}
