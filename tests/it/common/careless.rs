//! Two control gateways of the catalogue's body and accounting cases,
//! each written the way a gateway gets one of them wrong:
//! `TrustsPlainBodies` fails over on a status or a silent primary but
//! hands a 2xx body to the client as it comes, however long it takes and
//! whatever it holds; `SplicesWithoutAccounting` continues a broken
//! stream from the fallback with the text so far as a prefill, without a
//! seam, but leaves the fallback's `usage` as it counted it (only the
//! rest, and the prefill as prompt).

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::time::Duration;

/// Deadline of a primary's response headers.
const HEADERS_TIMEOUT: Duration = Duration::from_secs(3);

/// Deadline of a fallback attempt, its body included.
const FALLBACK_TIMEOUT: Duration = Duration::from_secs(10);

fn chat(base: &str) -> String {
    format!("{base}/v1/chat/completions")
}

/// `TrustsPlainBodies`: the primary's 2xx relayed as its bytes come; a
/// 5xx, 429, 404, a connection error or no headers within 3 s fail over;
/// any other status passes through.
pub async fn trusting(
    client: &reqwest::Client,
    primary: &str,
    fallback: &str,
    body: &Value,
) -> Response {
    let sent = client.post(chat(primary)).json(body).send();
    if let Ok(Ok(response)) = tokio::time::timeout(HEADERS_TIMEOUT, sent).await {
        let status = response.status().as_u16();
        if status < 500 && status != 429 && status != 404 {
            let mut out = Response::builder().status(status);
            if let Some(kind) = response.headers().get("content-type") {
                out = out.header("content-type", kind.clone());
            }
            // The misbehaviour itself: no body timeout and no check of
            // what the body holds.
            return out
                .body(Body::from_stream(response.bytes_stream()))
                .unwrap();
        }
    }
    let answer = client
        .post(chat(fallback))
        .json(body)
        .timeout(FALLBACK_TIMEOUT)
        .send()
        .await;
    match answer {
        Ok(r) => {
            let status =
                StatusCode::from_u16(r.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            match r.bytes().await {
                Ok(bytes) => {
                    (status, [("content-type", "application/json")], bytes).into_response()
                }
                Err(_) => StatusCode::BAD_GATEWAY.into_response(),
            }
        }
        Err(_) => StatusCode::GATEWAY_TIMEOUT.into_response(),
    }
}

/// `SplicesWithoutAccounting` on a streamed request: the primary's stream
/// read whole; when it broke, its complete events then the fallback's
/// continuation of a prefill, usage untouched. `None` when the primary
/// did not answer 2xx (the caller fails over as usual).
pub async fn splicing(
    client: &reqwest::Client,
    primary: &str,
    fallback: &str,
    body: &Value,
) -> Option<Response> {
    let mut response = client
        .post(chat(primary))
        .json(body)
        .timeout(HEADERS_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let mut read = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        read.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&read).into_owned();
    let sse = |bytes: Vec<u8>| {
        Response::builder()
            .status(200)
            .header("content-type", "text/event-stream")
            .body(Body::from(bytes))
            .unwrap()
    };
    if text.contains("data: [DONE]") {
        return Some(sse(read));
    }
    // The complete events before the break, and the text they carry.
    let kept = &text[..text.rfind("\n\n").map_or(0, |i| i + 2)];
    let sent: String = kept
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    let mut continued = body.clone();
    if let Some(messages) = continued["messages"].as_array_mut() {
        messages.push(serde_json::json!({"role": "assistant", "content": sent}));
    }
    let rest = client
        .post(chat(fallback))
        .json(&continued)
        .timeout(FALLBACK_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !rest.status().is_success() {
        return Some(StatusCode::BAD_GATEWAY.into_response());
    }
    let rest = rest.bytes().await.ok()?;
    let mut out = kept.as_bytes().to_vec();
    out.extend_from_slice(&rest);
    Some(sse(out))
}
