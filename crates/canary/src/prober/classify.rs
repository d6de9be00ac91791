//! What kind of reply a probe got: something to judge, or a transport error
//! (a timeout, a 429, a 5xx, another refusal, a 2xx body cut short or
//! malformed) that freezes the route for the round and is never a contract
//! failure; and whether the reply came from the route it was pinned to.

use crate::discover::{shown, shown_at_most, Route};
use crate::evidence::{TransportError, TransportKind};
use cb_client::Exchange;

/// Longest transport error detail kept, in characters.
const DETAIL_CHARS: usize = 240;

/// `Ok` when the exchange brought a usable 2xx reply, else the transport
/// error it was.
///
/// # Errors
/// The [`TransportError`] with the exchange's own reason (already
/// redacted), escaped ([`shown_at_most`]): it may quote the endpoint's
/// body, which reaches the terminal and `report.md`.
pub fn classify(exchange: &Exchange) -> Result<(), TransportError> {
    let raw = || exchange.error.as_deref().unwrap_or("no reason given");
    let reason = || shown_at_most(raw(), DETAIL_CHARS);
    let kind = match exchange.status {
        None => {
            let text = raw();
            if text.starts_with("no complete response within") || text.starts_with("timed out") {
                TransportKind::Timeout
            } else {
                TransportKind::Connection
            }
        }
        Some(429) => TransportKind::RateLimited,
        Some(500..=599) => TransportKind::ServerError,
        Some(s) if !(200..300).contains(&s) => TransportKind::Refused,
        Some(_) if exchange.answer.is_none() => {
            return Err(TransportError {
                kind: TransportKind::Connection,
                detail: format!("the 2xx reply was not usable: {}", reason()),
            })
        }
        Some(_) => return Ok(()),
    };
    Err(TransportError {
        kind,
        detail: reason(),
    })
}

/// The provider a reply named, when it is not `route`'s (`None` when the
/// reply named none: nothing shows that pinning failed), [`shown`] safely:
/// the endpoint wrote it.
pub fn served_by_other(route: &Route, provider: Option<&str>) -> Option<String> {
    let provider = provider?.trim();
    (!provider.is_empty() && !route.reported_by(provider)).then(|| shown(provider))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(status: Option<u16>, answer: Option<&str>, error: Option<&str>) -> Exchange {
        Exchange {
            status,
            answer: answer.map(str::to_string),
            error: error.map(str::to_string),
            latency_ms: 1.0,
            ..Exchange::default()
        }
    }

    #[test]
    fn statuses_map_to_transport_kinds_and_a_reply_to_ok() {
        let kind = |e: &Exchange| classify(e).unwrap_err().kind;
        assert!(classify(&exchange(Some(200), Some("hi"), None)).is_ok());
        assert!(
            classify(&exchange(Some(200), Some(""), None)).is_ok(),
            "an empty reply is judged"
        );
        assert_eq!(
            kind(&exchange(
                None,
                None,
                Some("no complete response within 100 ms")
            )),
            TransportKind::Timeout
        );
        assert_eq!(
            kind(&exchange(None, None, Some("connection failed: refused"))),
            TransportKind::Connection
        );
        assert_eq!(
            kind(&exchange(Some(429), None, Some("HTTP 429"))),
            TransportKind::RateLimited
        );
        assert_eq!(
            kind(&exchange(Some(503), None, Some("HTTP 503"))),
            TransportKind::ServerError
        );
        assert_eq!(
            kind(&exchange(Some(401), None, Some("HTTP 401"))),
            TransportKind::Refused
        );
        let cut = classify(&exchange(
            Some(200),
            None,
            Some("the stream ended without data: [DONE]"),
        ))
        .unwrap_err();
        assert_eq!(cut.kind, TransportKind::Connection);
        assert!(cut.detail.contains("[DONE]"));
    }

    #[test]
    fn another_provider_is_pinning_not_honoured_and_none_is_no_evidence() {
        let route = Route::named("atlas/bf16");
        assert_eq!(served_by_other(&route, Some("Atlas")), None);
        assert_eq!(served_by_other(&route, None), None);
        assert_eq!(served_by_other(&route, Some(" ")), None);
        assert_eq!(
            served_by_other(&route, Some("Borealis")).as_deref(),
            Some("Borealis")
        );
    }

    #[test]
    fn what_the_endpoint_wrote_is_escaped_before_it_is_evidence() {
        let hostile = "HTTP 500: \u{1b}[2J<img src=x>|\u{202e}\nnext";
        let detail = classify(&exchange(Some(500), None, Some(hostile)))
            .unwrap_err()
            .detail;
        assert!(
            !detail
                .chars()
                .any(|c| c.is_control() || "<>|\u{202e}".contains(c)),
            "{detail:?}"
        );
        assert!(detail.starts_with("HTTP 500: \\u{1b}"), "{detail}");
        let route = Route::named("alpha/fp8");
        let other = served_by_other(&route, Some("Evil\u{1b}[31m<b>")).unwrap();
        assert!(
            !other.chars().any(|c| c.is_control() || c == '<'),
            "{other:?}"
        );
        assert_eq!(served_by_other(&route, Some("Alpha")), None);
    }
}
