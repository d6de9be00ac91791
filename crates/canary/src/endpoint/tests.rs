//! The simulated endpoint on the wire: discovery in OpenRouter's shape,
//! `provider.order` and `allow_fallbacks`, the `provider` field, streams,
//! and the slow route's first token.

use super::routes::{Behaviour, SimRoute};
use super::{SimConfig, SimEndpoint};
use crate::evidence::ProbeKind;
use crate::probe;
use cb_contracts::Language;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// The slow route's first token: far from "at once" (a few milliseconds,
/// tens on a loaded machine), so that no assertion depends on load.
const SLOW: Duration = Duration::from_secs(2);

/// Half of [`SLOW`]: what "at once" must stay below.
const AT_ONCE: Duration = Duration::from_secs(1);

fn config(routes: Vec<SimRoute>) -> SimConfig {
    SimConfig {
        seed: 7,
        routes,
        slow_first_token: SLOW,
        transient_rate: 0.0,
        timeout_hold: Duration::from_secs(1),
    }
}

fn small() -> Vec<SimRoute> {
    vec![
        SimRoute::new("down/fp8", "Down", Behaviour::Down),
        SimRoute::new("atlas/bf16", "Atlas", Behaviour::Healthy),
        SimRoute::new("fjord", "Fjord", Behaviour::SlowFirstToken),
    ]
}

async fn post(url: &str, body: Value) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn chat(provider: Value, stream: bool) -> Value {
    json!({"model": "a/b", "stream": stream, "provider": provider,
           "messages": [{"role": "user", "content": "How are you today? Tell me."}]})
}

#[tokio::test(start_paused = true)]
async fn discovery_lists_every_route_in_openrouters_shape() {
    let sim = SimEndpoint::start(SimConfig::new(
        1,
        Duration::from_millis(100),
        Duration::from_secs(1),
    ))
    .await
    .unwrap();
    let body: Value = reqwest::get(format!(
        "{}/models/meta-llama/llama-3.3-70b-instruct/endpoints",
        sim.url()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(body["data"]["id"], "meta-llama/llama-3.3-70b-instruct");
    let endpoints = body["data"]["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), sim.config().routes.len());
    for (e, r) in endpoints.iter().zip(&sim.config().routes) {
        assert_eq!(e["tag"], r.tag.as_str());
        assert_eq!(e["provider_name"], r.provider_name.as_str());
        for key in ["name", "context_length", "status"] {
            assert!(e.get(key).is_some(), "{key}");
        }
    }
    let routes = crate::discover::parse_listing(&body).unwrap().routes;
    assert_eq!(routes[0].id, "atlas/bf16");
    assert_eq!(routes[0].provider_name.as_deref(), Some("Atlas"));
}

#[tokio::test(start_paused = true)]
async fn pinned_with_fallbacks_off_a_down_route_errors_instead_of_handing_over() {
    let sim = SimEndpoint::start(config(small())).await.unwrap();
    let (status, body) = post(&sim.url(), chat(probe::pinned("down/fp8"), false)).await;
    assert_eq!(status, 503, "{body}");
    let (status, body) = post(&sim.url(), chat(probe::pinned("atlas/bf16"), false)).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["provider"], "Atlas");
    assert!(
        v["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .len()
            > 20
    );
    // Only the first route of the order may answer.
    let (status, _) = post(
        &sim.url(),
        chat(
            json!({"order": ["down/fp8", "atlas/bf16"], "allow_fallbacks": false}),
            false,
        ),
    )
    .await;
    assert_eq!(status, 503);
    let (status, body) = post(&sim.url(), chat(probe::pinned("nowhere"), false)).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test(start_paused = true)]
async fn with_fallbacks_a_down_route_hands_over_and_the_provider_says_who() {
    let sim = SimEndpoint::start(config(small())).await.unwrap();
    let (status, body) = post(&sim.url(), chat(json!({"order": ["down/fp8"]}), false)).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["provider"], "Atlas");
    let (status, body) = post(
        &sim.url(),
        chat(json!({"ignore": ["Down", "atlas"]}), false),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["provider"],
        "Fjord"
    );
}

#[tokio::test(start_paused = true)]
async fn streams_name_the_provider_in_every_chunk_and_end_with_done() {
    let sim = SimEndpoint::start(config(small())).await.unwrap();
    let (status, body) = post(&sim.url(), chat(probe::pinned("atlas/bf16"), true)).await;
    assert_eq!(status, 200);
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
    let chunks: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(chunks.len() > 3);
    assert!(chunks.iter().all(|c| c["provider"] == "Atlas"));
}

#[tokio::test(start_paused = true)]
async fn the_slow_route_sends_headers_at_once_and_its_first_token_late() {
    let sim = SimEndpoint::start(config(small())).await.unwrap();
    let client = cb_client::driver_client().unwrap();
    let request = probe::request(ProbeKind::Roleplay, "a/b", "fjord", Language::En);
    let started = Instant::now();
    let exchange = cb_client::send_to(
        &client,
        &format!("{}/chat/completions", sim.url()),
        &[],
        &request,
        cb_client::SendOptions::new(Duration::from_secs(5)),
    )
    .await;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    assert!(started.elapsed() >= SLOW);
    assert!(exchange.ttfb_ms.unwrap() < ms(AT_ONCE), "{exchange:?}");
    assert!(exchange.ttft_ms.unwrap() >= ms(SLOW), "{exchange:?}");
    assert_eq!(exchange.provider.as_deref(), Some("Fjord"));
    // Not streamed: at once (the ttft contract judges streams only).
    let plain = probe::request(ProbeKind::Schema, "a/b", "fjord", Language::En);
    let started = Instant::now();
    let _ = cb_client::send_to(
        &client,
        &format!("{}/chat/completions", sim.url()),
        &[],
        &plain,
        cb_client::SendOptions::new(Duration::from_secs(5)),
    )
    .await;
    assert!(started.elapsed() < AT_ONCE);
}

#[test]
fn the_same_round_draws_the_same_replies_whatever_else_was_asked() {
    let state = super::SimState::new(config(small()));
    state.begin_round(3);
    let a: Vec<u64> = (0..3)
        .map(|_| rand::Rng::random::<u64>(&mut state.draw("atlas/bf16", "text:x")))
        .collect();
    state.begin_round(4);
    let _ = state.draw("atlas/bf16", "text:x");
    state.begin_round(3);
    let _ = state.draw("fjord", "text:x");
    let _ = state.draw("atlas/bf16", "roleplay:y");
    let b: Vec<u64> = (0..3)
        .map(|_| rand::Rng::random::<u64>(&mut state.draw("atlas/bf16", "text:x")))
        .collect();
    assert_eq!(a, b, "other routes and other requests shift nothing");
    assert_ne!(a[0], a[1]);
}

/// A sticky route degrades a share of sessions, every reply in a session
/// alike: the same `user` always gets the same answer's health, distinct
/// users are degraded at about the route's rate, and a probe that never
/// varies its identity lands in one session for good (all or nothing).
#[test]
fn a_sticky_route_degrades_a_share_of_sessions_every_reply_alike() {
    let route = SimRoute::new("s", "S", Behaviour::SchemaBreak { rate: 0.16 }).sticky();
    let config = config(vec![route.clone()]);
    let mut request = probe::request(ProbeKind::Schema, "a/b", "s", Language::En);
    let mut degraded = 0;
    for user in 0..2000 {
        request
            .extra
            .insert("user".into(), json!(format!("u{user}")));
        let first = super::chat::session_degraded(&config, &route, &request);
        assert_eq!(
            first,
            super::chat::session_degraded(&config, &route, &request)
        );
        degraded += u32::from(first);
    }
    // 16 % of 2000 is 320; the 99.9 % binomial band is about ±54.
    assert!(
        (266..=374).contains(&degraded),
        "{degraded} of 2000 sessions"
    );
    request.extra.remove("user");
    let fixed = super::chat::session_degraded(&config, &route, &request);
    for _ in 0..10 {
        assert_eq!(
            super::chat::session_degraded(&config, &route, &request),
            fixed
        );
    }
}
