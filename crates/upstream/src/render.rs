//! What an upstream sends, in the dialect it was called in, through the
//! one entry point that writes each dialect ([`cb_dialect::frames`], whose
//! OpenAI frames are the one OpenAI writer's, [`cb_wire::openai::frame`]):
//! a neutral [`ErrorSpec`] as the dialect's error response, and an
//! [`Answer`] laid out as timed frames. Faults and answers stay neutral up
//! to here, so a fault means the same thing whichever dialect the gateway
//! speaks.

use super::responder::Answer;
use axum::response::Response;
use cb_dialect::frames::{self, Framer};
use cb_dialect::{Dialect, Rejection};
use cb_faults::{ErrorSpec, WaitIn};
use cb_wire::openai::approx_tokens;
use std::time::Duration;

pub use cb_wire::openai::frame::{json_response, retry_after_secs};

/// What a thinking model says before its answer when thinking is not
/// switched off.
pub const REASONING_TEXT: &str =
    "The user wants a plain answer; let me think it through before I write it.";

/// The OpenAI error object of `spec`, as JSON text.
pub fn error_json(spec: &ErrorSpec) -> String {
    let (kind, code) = spec.kind.openai();
    cb_wire::openai::error_body(&spec.message, kind, code).to_string()
}

/// The error response of `spec` in `dialect`: its status, the dialect's
/// error body, and its wait where the spec states it: `Retry-After`, only
/// `x-ratelimit-reset-requests` or `x-ratelimit-reset-tokens` (`2s`), only
/// `error.retry_after` in the dialect's `error` object, or only the
/// message's "Please retry after 2s.".
pub fn error_response(spec: &ErrorSpec, dialect: Dialect) -> Response {
    let (kind, code) = spec.kind.openai();
    let secs = spec.retry_after.map(retry_after_secs);
    let message = match (spec.wait_in, secs) {
        (WaitIn::BodyText, Some(s)) => format!("{} Please retry after {s}s.", spec.message),
        _ => spec.message.clone(),
    };
    let mut body = frames::error_body(dialect, spec.status, &message, kind, code);
    if let (WaitIn::BodyField, Some(s), Some(error)) = (
        spec.wait_in,
        secs,
        body.get_mut("error").and_then(|e| e.as_object_mut()),
    ) {
        error.insert("retry_after".into(), s.into());
    }
    let header_wait = spec
        .retry_after
        .filter(|_| spec.wait_in == WaitIn::RetryAfter);
    let mut response = cb_wire::openai::frame::error_response(spec.status, &body, header_wait);
    let reset = match spec.wait_in {
        WaitIn::ResetRequests => Some("x-ratelimit-reset-requests"),
        WaitIn::ResetTokens => Some("x-ratelimit-reset-tokens"),
        WaitIn::RetryAfter | WaitIn::BodyField | WaitIn::BodyText => None,
    };
    if let (Some(name), Some(s)) = (reset, secs) {
        if let Ok(value) = axum::http::HeaderValue::from_str(&format!("{s}s")) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// A dialect's own 400 (a [`Rejection`]) as a response.
pub fn rejection_response(rejection: &Rejection) -> Response {
    json_response(rejection.status, rejection.body.to_string())
}

/// `answer` as the frames `framer` writes, each with its due time as an
/// offset from the first: the opening frame, one frame per word (paced at
/// the answer's output rate, cumulatively, so timer granularity does not
/// add up over many small frames), and the closing frames, the last of
/// which ends the stream. A relayed answer gets the same frames one at a
/// time ([`super::relay`]), so cuts and stalls count content frames alike.
pub fn stream_frames(framer: &mut Framer, answer: &Answer) -> Vec<(Duration, String)> {
    let mut due = Duration::ZERO;
    let mut frames = vec![(due, framer.open())];
    for piece in answer.text.split_inclusive(' ') {
        due += answer.output_time(approx_tokens(piece));
        frames.push((due, framer.text(piece)));
    }
    let close = framer.close(&answer.finish_reason, answer.usage);
    frames.extend(close.into_iter().map(|frame| (due, frame)));
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use cb_faults::ErrorKind;
    use cb_wire::openai::{Envelope, Usage};

    fn answer() -> Answer {
        Answer {
            text: "Your sister is called Oriane.".into(),
            finish_reason: "stop".into(),
            usage: Usage::new(10, 6),
            ttft: Duration::ZERO,
            tokens_per_second: 24.0,
            model: None,
        }
    }

    const ENVELOPE: Envelope<'static> = Envelope {
        id: "chatcmpl-1",
        model: "sim",
        created: 0,
    };

    #[test]
    fn frames_are_paced_by_the_words_and_end_together() {
        let a = answer();
        let mut framer = Framer::new(Dialect::Openai, ENVELOPE, 10, false);
        let frames = stream_frames(&mut framer, &a);
        // The role chunk, five words, the finish chunk and [DONE].
        assert_eq!(frames.len(), 8);
        assert_eq!(frames[0].0, Duration::ZERO);
        let dues: Vec<Duration> = frames.iter().map(|(d, _)| *d).collect();
        assert!(dues.windows(2).all(|w| w[0] <= w[1]), "{dues:?}");
        let last = dues[5];
        assert!(last > Duration::ZERO);
        assert!(
            dues[6..].iter().all(|d| *d == last),
            "the end goes with the last word"
        );
        assert_eq!(frames[7].1, cb_wire::openai::frame::DONE);
    }

    #[test]
    fn errors_carry_their_status_body_and_retry_after() {
        let mut spec = ErrorSpec::new(429, ErrorKind::RateLimit, "slow down");
        spec.retry_after = Some(Duration::from_millis(2500));
        for dialect in Dialect::ALL {
            let response = error_response(&spec, dialect);
            assert_eq!(response.status(), 429, "{dialect}");
            assert_eq!(response.headers()["retry-after"], "3", "{dialect}");
        }
        let body: serde_json::Value = serde_json::from_str(&error_json(&spec)).unwrap();
        assert_eq!(body["error"]["message"], "slow down");
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    }

    /// Each place a wait can be stated holds it alone, and the wait reads
    /// back from there (what the reference proxies read).
    #[tokio::test]
    async fn a_wait_stated_elsewhere_is_only_there_and_reads_back() {
        let spec = |place| {
            ErrorSpec::new(429, ErrorKind::RateLimit, "slow down")
                .with_retry_after(Duration::from_secs(2))
                .wait_stated_in(place)
        };
        let now = std::time::SystemTime::now();
        for place in [
            WaitIn::RetryAfter,
            WaitIn::ResetRequests,
            WaitIn::ResetTokens,
            WaitIn::BodyField,
            WaitIn::BodyText,
        ] {
            let response = error_response(&spec(place), Dialect::Openai);
            let headers = response.headers().clone();
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
                .await
                .unwrap();
            let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_string());
            let only = |want: WaitIn| place == want;
            assert_eq!(
                header("retry-after").is_some(),
                only(WaitIn::RetryAfter),
                "{place:?}"
            );
            assert_eq!(
                header("x-ratelimit-reset-requests").as_deref(),
                only(WaitIn::ResetRequests).then_some("2s"),
                "{place:?}"
            );
            assert_eq!(
                header("x-ratelimit-reset-tokens").as_deref(),
                only(WaitIn::ResetTokens).then_some("2s"),
                "{place:?}"
            );
            assert_eq!(
                body["error"].get("retry_after").cloned(),
                only(WaitIn::BodyField).then_some(serde_json::json!(2)),
                "{place:?}"
            );
            let message = body["error"]["message"].as_str().unwrap();
            assert_eq!(
                message.contains("retry after 2s"),
                only(WaitIn::BodyText),
                "{place:?}: {message}"
            );
            assert_eq!(
                cb_wire::stated_wait(&headers, Some(&bytes), now).map(|w| w.wait),
                Some(Duration::from_secs(2)),
                "{place:?}"
            );
        }
    }
}
