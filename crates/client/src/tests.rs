//! The client's reasons, excerpts and the fields it reads from an answer.

use super::*;

#[test]
fn a_redirect_names_status_and_location() {
    let reason = redirect_reason(302, Some("http://127.0.0.1:9/v1/chat/completions"));
    assert!(
        reason.starts_with("HTTP 302 redirect to http://127.0.0.1:9/v1/chat/completions: redirects are not followed"),
        "{reason}"
    );
    let long = format!("http://h/{}", "p".repeat(500));
    let reason = redirect_reason(307, Some(&long));
    assert!(reason.len() < 400 && reason.contains("p…:"), "{reason}");
    assert!(redirect_reason(301, None).starts_with("HTTP 301 redirect without a Location"));
    let _s = Secret::new("sk-location-planted-5");
    let reason = redirect_reason(302, Some("http://evil/?key=sk-location-planted-5"));
    assert!(reason.contains("?key=[redacted]"), "{reason}");
}

#[test]
fn the_provider_is_read_from_a_body_or_the_first_chunk_naming_it() {
    let body = serde_json::json!({"provider": "DeepInfra", "choices": []});
    assert_eq!(provider_field(&body).as_deref(), Some("DeepInfra"));
    assert_eq!(provider_field(&serde_json::json!({"provider": 3})), None);
    let trace = crate::sse::read_all(
        b"data: {\"choices\": []}\n\ndata: {\"provider\": \"Atlas\", \"choices\": []}\n\ndata: [DONE]\n\ndata: {\"provider\": \"late\"}\n\n",
    );
    assert_eq!(stream_provider(&trace).as_deref(), Some("Atlas"));
    let none = crate::sse::read_all(b"data: [DONE]\n\ndata: {\"provider\": \"late\"}\n\n");
    assert_eq!(stream_provider(&none), None);
}

#[test]
fn the_size_cap_is_named() {
    assert_eq!(
        too_large_reason(4096),
        "response larger than 4096 bytes (--max-response-bytes); stopped reading it"
    );
    assert_eq!(
        SendOptions::new(Duration::from_secs(1)).max_response_bytes,
        4 << 20
    );
}

#[test]
fn an_excerpt_never_holds_half_a_secret() {
    let _s = Secret::new("sk-excerpt-planted-value-31");
    // The secret starts 10 characters before the excerpt ends.
    let body = format!(
        "{}sk-excerpt-planted-value-31 and more",
        "x".repeat(BODY_EXCERPT - 10)
    );
    let cut = excerpt(body.as_bytes());
    assert!(!cut.contains("sk-excerpt"), "{cut}");
    assert!(
        cut.ends_with("[redacted…") || cut.contains("[redacted]"),
        "{cut}"
    );
    let err = plain_answer(500, body.as_bytes()).unwrap_err();
    assert!(!err.contains("sk-excerpt"), "{err}");
}

#[test]
fn content_that_is_not_text_is_named_and_parts_are_text() {
    let body = |content: Value| {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string()
    };
    let err = plain_answer(200, body(serde_json::json!(42)).as_bytes()).unwrap_err();
    assert!(
        err.starts_with("choices[0].message.content is a number (42)"),
        "{err}"
    );
    let err = plain_answer(200, body(serde_json::json!({"a": 1})).as_bytes()).unwrap_err();
    assert!(err.contains("is an object"), "{err}");
    let err = plain_answer(200, body(Value::Null).as_bytes()).unwrap_err();
    assert!(
        err.starts_with("choices[0].message.content is null"),
        "{err}"
    );
    let parts = serde_json::json!([{"type": "text", "text": "Oriane"}]);
    let plain = plain_answer(200, body(parts).as_bytes()).unwrap();
    assert_eq!(plain.text, "Oriane");
    assert_eq!((plain.model, plain.usage), (None, false));
    let err = plain_answer(200, b"{\"choices\": []}").unwrap_err();
    assert!(
        err.starts_with("no choices[0].message.content in body"),
        "{err}"
    );
}

/// The headers in which gateways say how they routed a request are kept;
/// the rest are not.
#[test]
fn routing_headers_are_told_apart_from_the_rest() {
    for name in [
        "x-litellm-attempted-fallbacks",
        "x-litellm-attempted-retries",
        "x-portkey-last-used-option-index",
        "cf-aig-step",
        "helicone-fallback-index",
        "x-served-model",
        "x-portkey-provider",
        "x-litellm-model-api-base",
        "x-litellm-model-name",
    ] {
        assert!(routing_header(name), "{name}");
    }
    for name in [
        "content-type",
        "content-length",
        "x-request-id",
        "x-ratelimit-remaining-requests",
        "openai-processing-ms",
        "date",
        "llm_provider-content-type",
    ] {
        assert!(!routing_header(name), "{name}");
    }
}

/// A flood of routing-like headers cannot push out of the bound the ones
/// a reader can judge: those are kept first.
#[test]
fn headers_a_reader_can_judge_are_kept_before_a_flood() {
    let mut headers = http::HeaderMap::new();
    for i in 0..MAX_ROUTING_HEADERS + 4 {
        let name = http::HeaderName::from_bytes(format!("x-provider-note-{i}").as_bytes()).unwrap();
        headers.insert(name, http::HeaderValue::from_static("harmless"));
    }
    headers.insert(
        "x-litellm-attempted-fallbacks",
        http::HeaderValue::from_static("0"),
    );
    headers.insert("cf-aig-step", http::HeaderValue::from_static("0"));
    let kept = routing_headers(&headers);
    assert_eq!(kept.len(), MAX_ROUTING_HEADERS);
    let names: Vec<&str> = kept.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..2], ["x-litellm-attempted-fallbacks", "cf-aig-step"]);
    assert!(routing_names::judged("openai-model"));
    assert!(!routing_names::judged("x-fallback-model"));
}
