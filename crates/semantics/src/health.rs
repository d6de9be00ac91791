//! `fallback-health`: does a system say that its fallback is broken before
//! the fallback is needed? Its usual health routes are probed twice, once
//! with the fallback healthy and once with the fallback's key expired (it
//! then answers 401 to everything); a route that turns from 2xx to an
//! error, or whose body changes to name a failure, exposed it. Requests
//! the system sent to the fallback by itself meanwhile (its own health
//! checks) are counted too.

use cb_base::secret::redact;
use cb_client::Target;
use cb_faults::Role;
use serde::Serialize;
use std::time::Duration;

/// The routes probed, relative to the system's base URL: the reference
/// proxies' `/health`, LiteLLM's `/health` (which calls every deployment),
/// `/health/readiness`, and common Kubernetes-style names.
pub const HEALTH_ROUTES: [&str; 5] = [
    "/health",
    "/healthz",
    "/health/readiness",
    "/ready",
    "/v1/health",
];

/// Longest body excerpt kept per probe.
const EXCERPT: usize = 160;

/// Most bytes read of a probe's body.
const MAX_BODY: usize = 64 * 1024;

/// Words that name a failure in a health body.
const FAILURE_WORDS: [&str; 9] = [
    "unhealthy",
    "degraded",
    "error",
    "fail",
    "401",
    "expired",
    "invalid",
    "down",
    "unauthorized",
];

/// One probe of one route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// The route.
    pub route: String,
    /// Its status, if it answered.
    pub status: Option<u16>,
    /// The start of its body, redacted.
    pub body: String,
    /// The whole body read (at most 64 KiB), redacted and lower-cased: a
    /// failure may be named far into it (LiteLLM's `/health` lists the
    /// healthy deployments first).
    #[serde(skip)]
    pub full: String,
}

/// What the health probes of a system showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthView {
    /// Every route with the fallback healthy.
    pub healthy: Vec<Probe>,
    /// Every route with the fallback's key expired.
    pub expired: Vec<Probe>,
    /// The first route that exposed the failure, if one did.
    pub exposed_by: Option<String>,
    /// Requests the system sent to the fallback by itself while its key
    /// was expired (model lists and unrecognised chat requests).
    pub own_fallback_calls: u32,
}

impl HealthView {
    /// What was found, in words.
    pub fn summary(&self) -> String {
        let probed = HEALTH_ROUTES.join(", ");
        let calls = match self.own_fallback_calls {
            0 => "it sent the fallback nothing of its own".to_string(),
            n => format!("it sent the fallback {n} request(s) of its own"),
        };
        match &self.exposed_by {
            Some(route) => format!("{route} reported it (probed {probed}); {calls}"),
            None => format!("no route reported it (probed {probed}); {calls}"),
        }
    }
}

/// Probes every route of `target`.
pub async fn probe_all(client: &reqwest::Client, target: &Target, timeout: Duration) -> Vec<Probe> {
    let mut probes = Vec::with_capacity(HEALTH_ROUTES.len());
    for route in HEALTH_ROUTES {
        probes.push(probe(client, target, route, timeout).await);
    }
    probes
}

async fn probe(client: &reqwest::Client, target: &Target, route: &str, timeout: Duration) -> Probe {
    // A gateway given by its chat-completions URL is probed at its base.
    let base = cb_base::url::chat_base(&target.url);
    let url = cb_base::url::join(&base, route);
    let mut builder = client.get(url).timeout(timeout);
    for (name, value) in &target.headers {
        if let Some(value) = value.header_value() {
            builder = builder.header(name, value);
        }
    }
    let read = async {
        let mut response = builder.send().await.ok()?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            body.extend_from_slice(&chunk);
            if body.len() >= MAX_BODY {
                break;
            }
        }
        Some((status, body))
    };
    match tokio::time::timeout(timeout, read).await.ok().flatten() {
        Some((status, body)) => {
            let text = String::from_utf8_lossy(&body);
            let full = redact(&text).to_lowercase();
            let excerpt: String = redact(&text).chars().take(EXCERPT).collect();
            Probe {
                route: route.to_string(),
                status: Some(status),
                body: excerpt.replace(['\n', '\r'], " "),
                full,
            }
        }
        None => Probe {
            route: route.to_string(),
            status: None,
            body: String::new(),
            full: String::new(),
        },
    }
}

/// The first route whose answer shows the failure: 2xx before and an error
/// after, or a body that names a failure it did not name before.
pub fn exposed(healthy: &[Probe], expired: &[Probe]) -> Option<String> {
    let ok = |p: &Probe| p.status.is_some_and(|s| (200..300).contains(&s));
    healthy.iter().zip(expired).find_map(|(before, after)| {
        let turned = ok(before) && after.status.is_some() && !ok(after);
        let (was, now) = (&before.full, &after.full);
        let names = after.status.is_some()
            && FAILURE_WORDS
                .iter()
                .any(|w| now.contains(w) && !was.contains(w));
        (turned || names).then(|| after.route.clone())
    })
}

/// Requests the fallback got that were not a case's (health checks of the
/// system's own), counted from the log and the model-list counter.
pub fn own_calls(
    ctx: &cb_upstream::UpstreamContext,
    system: &str,
    since_ms: f64,
    model_lists_before: u32,
) -> u32 {
    let chats = ctx
        .log
        .snapshot()
        .iter()
        .filter(|r| {
            r.system == system
                && r.role == Role::Fallback
                && r.conversation.is_empty()
                && r.arrived_ms >= since_ms
        })
        .count() as u32;
    chats
        + ctx
            .model_lists(system, Role::Fallback)
            .saturating_sub(model_lists_before)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(route: &str, status: u16, body: &str) -> Probe {
        Probe {
            route: route.into(),
            status: Some(status),
            body: body.chars().take(EXCERPT).collect(),
            full: body.to_lowercase(),
        }
    }

    #[test]
    fn a_route_that_turns_or_names_a_failure_exposes_it() {
        let healthy = vec![
            p("/health", 200, "{\"status\":\"ok\"}"),
            p("/healthz", 404, ""),
        ];
        let expired = vec![
            p("/health", 503, "{\"status\":\"degraded\"}"),
            p("/healthz", 404, ""),
        ];
        assert_eq!(exposed(&healthy, &expired).as_deref(), Some("/health"));
        // LiteLLM-style: 200 both times, the body lists unhealthy endpoints.
        let healthy = vec![p(
            "/health",
            200,
            "{\"healthy_count\":2,\"unhealthy_count\":0}",
        )];
        let expired = vec![p("/health", 200, "{\"healthy_count\":1,\"unhealthy_count\":1,\"unhealthy_endpoints\":[{\"error\":\"401\"}]}")];
        assert_eq!(exposed(&healthy, &expired).as_deref(), Some("/health"));
        // Seen with LiteLLM 1.106: the failure is named only after the
        // healthy deployment's long entry, past the excerpt shown.
        let long_healthy = format!(
            "{{\"healthy_endpoints\":[{{\"model_id\":\"{}\"}}],\"unhealthy_endpoints\":[]",
            "a".repeat(200)
        );
        let healthy = vec![p("/health", 200, &format!("{long_healthy}}}"))];
        let expired = vec![p(
            "/health",
            200,
            &format!(
                "{long_healthy}[{{\"exception_status\":401,\"error\":\"the key has expired\"}}]}}"
            ),
        )];
        assert_eq!(
            healthy[0].body, expired[0].body,
            "the excerpts are the same"
        );
        assert_eq!(exposed(&healthy, &expired).as_deref(), Some("/health"));
        // Nothing changes: not exposed; a route that is absent both times
        // shows nothing.
        let same = vec![p("/health", 200, "ok"), p("/ready", 404, "not found")];
        assert_eq!(exposed(&same, &same), None);
    }
}
