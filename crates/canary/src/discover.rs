//! Which routes serve a model: `GET {endpoint}/models/{author}/{slug}/endpoints`
//! (OpenRouter's listing; a route is an entry of `data.endpoints`,
//! identified by its `tag` when present, else its `provider_name`), or the
//! names given with `--routes`.
//!
//! The request is bounded like every exchange with a remote system: a
//! deadline, a size cap, no redirects (the client follows none), and
//! everything quoted in an error redacted first.

use cb_base::secret::{redact_owned, Secret};
use serde_json::Value;
use std::time::Duration;

/// One route of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The id the canary pins to and reports (`deepinfra/fp8`).
    pub id: String,
    /// The provider name the listing gave (`DeepInfra`), when discovered.
    pub provider_name: Option<String>,
}

impl Route {
    /// A route known by its id only (`--routes`).
    pub fn named(id: &str) -> Self {
        Route {
            id: id.to_string(),
            provider_name: None,
        }
    }

    /// Whether a reply whose `provider` field says `reported` came from this
    /// route: `reported` is the route id, the provider part of it (before
    /// `/`), or the provider name, compared on letters and digits only,
    /// ignoring case (OpenRouter reports `DeepInfra` for `deepinfra/fp8`).
    pub fn reported_by(&self, reported: &str) -> bool {
        let said = fold(reported);
        let provider = self.id.split('/').next().unwrap_or(&self.id);
        said == fold(&self.id)
            || said == fold(provider)
            || self
                .provider_name
                .as_deref()
                .is_some_and(|p| said == fold(p))
    }
}

fn fold(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Why the routes could not be discovered.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// No response.
    #[error("cannot list the routes of the model at {url}: {reason}; check --endpoint, or pass the routes with --routes")]
    Request {
        /// The listing URL.
        url: String,
        /// What failed.
        reason: String,
    },
    /// A status other than 2xx.
    #[error("listing the routes at {url} answered HTTP {status}: {body}; check --endpoint, --model and the key in the variable named by --key-env")]
    Status {
        /// The listing URL.
        url: String,
        /// The status.
        status: u16,
        /// An excerpt of the body, redacted.
        body: String,
    },
    /// A body that is not a listing.
    #[error("the route listing at {url} is not of OpenRouter's shape ({reason}); pass the routes with --routes")]
    Shape {
        /// The listing URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A listing with no route.
    #[error("the endpoint lists no route for the model {model} ({url}); check --model, or pass the routes with --routes")]
    NoRoutes {
        /// The model.
        model: String,
        /// The listing URL.
        url: String,
    },
}

impl DiscoverError {
    /// The error with its URL passed through `redact` (credentials in the
    /// endpoint URL never reach a message).
    pub fn redacted(self, redact: impl Fn(&str) -> String) -> Self {
        match self {
            DiscoverError::Request { url, reason } => DiscoverError::Request {
                url: redact(&url),
                reason,
            },
            DiscoverError::Status { url, status, body } => DiscoverError::Status {
                url: redact(&url),
                status,
                body,
            },
            DiscoverError::Shape { url, reason } => DiscoverError::Shape {
                url: redact(&url),
                reason,
            },
            DiscoverError::NoRoutes { model, url } => DiscoverError::NoRoutes {
                model,
                url: redact(&url),
            },
        }
    }
}

/// Longest excerpt of an error body quoted.
const EXCERPT: usize = 200;

/// The listing URL of `model` (`author/slug`) under `endpoint`.
pub fn listing_url(endpoint: &str, model: &str) -> String {
    cb_base::url::join(endpoint, &format!("/models/{model}/endpoints"))
}

/// Lists the routes of `model` at `endpoint`, within `deadline`, reading at
/// most `cap` bytes.
///
/// # Errors
/// [`DiscoverError`] naming the URL and what to check.
pub async fn discover(
    client: &reqwest::Client,
    endpoint: &str,
    model: &str,
    headers: &[(String, Secret)],
    deadline: Duration,
    cap: u64,
) -> Result<Vec<Route>, DiscoverError> {
    let url = listing_url(endpoint, model);
    let mut builder = client.get(&url);
    for (name, value) in headers {
        if let Some(value) = value.header_value() {
            builder = builder.header(name, value);
        }
    }
    let request_error = |reason: String| DiscoverError::Request {
        url: url.clone(),
        reason: redact_owned(reason),
    };
    let (status, bytes) = tokio::time::timeout(deadline, read(builder, cap))
        .await
        .map_err(|_| request_error(format!("no answer within {} ms", deadline.as_millis())))?
        .map_err(request_error)?;
    let text = redact_owned(String::from_utf8_lossy(&bytes).into_owned());
    if !(200..300).contains(&status) {
        return Err(DiscoverError::Status {
            url: url.clone(),
            status,
            body: text.chars().take(EXCERPT).collect(),
        });
    }
    let json: Value = serde_json::from_str(&text).map_err(|e| DiscoverError::Shape {
        url: url.clone(),
        reason: format!("not JSON: {e}"),
    })?;
    let routes = parse_listing(&json).map_err(|reason| DiscoverError::Shape {
        url: url.clone(),
        reason,
    })?;
    if routes.is_empty() {
        return Err(DiscoverError::NoRoutes {
            model: model.to_string(),
            url,
        });
    }
    Ok(routes)
}

async fn read(builder: reqwest::RequestBuilder, cap: u64) -> Result<(u16, Vec<u8>), String> {
    let mut response = builder
        .send()
        .await
        .map_err(|e| e.without_url().to_string())?;
    let status = response.status().as_u16();
    if response.status().is_redirection() {
        return Err(format!(
            "HTTP {status} redirect: redirects are not followed"
        ));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| e.without_url().to_string())?
    {
        if bytes.len() as u64 + chunk.len() as u64 > cap {
            return Err(format!("the listing is larger than {cap} bytes"));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((status, bytes))
}

/// The routes of a listing body, in its order, each id once.
///
/// # Errors
/// When `data.endpoints` is missing or an entry has neither a tag nor a
/// provider name.
pub fn parse_listing(json: &Value) -> Result<Vec<Route>, String> {
    let entries = json
        .pointer("/data/endpoints")
        .and_then(Value::as_array)
        .ok_or("no data.endpoints array")?;
    let mut routes: Vec<Route> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let text = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let provider_name = text("provider_name");
        let id = text("tag")
            .or_else(|| provider_name.clone())
            .ok_or_else(|| format!("data.endpoints[{i}] has neither a tag nor a provider_name"))?;
        if !routes.iter().any(|r| r.id == id) {
            routes.push(Route { id, provider_name });
        }
    }
    Ok(routes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_route_is_its_tag_else_its_provider_name() {
        let listing = json!({"data": {"id": "m/x", "endpoints": [
            {"name": "A", "provider_name": "DeepInfra", "tag": "deepinfra/fp8", "status": 0},
            {"name": "B", "provider_name": "Together", "status": 0},
            {"name": "C", "provider_name": "DeepInfra", "tag": "deepinfra/fp8"},
            {"name": "D", "provider_name": "Novita", "tag": ""}
        ]}});
        let routes = parse_listing(&listing).unwrap();
        let ids: Vec<&str> = routes.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["deepinfra/fp8", "Together", "Novita"]);
        assert_eq!(routes[0].provider_name.as_deref(), Some("DeepInfra"));
        assert!(parse_listing(&json!({"data": {}})).is_err());
        assert!(parse_listing(&json!({"data": {"endpoints": [{"name": "x"}]}})).is_err());
    }

    #[test]
    fn a_reply_names_its_route_by_id_provider_or_provider_name() {
        let r = Route {
            id: "deepinfra/fp8".into(),
            provider_name: Some("Deep Infra".into()),
        };
        for said in ["deepinfra/fp8", "DeepInfra", "deepinfra", "Deep Infra"] {
            assert!(r.reported_by(said), "{said}");
        }
        assert!(!r.reported_by("Together"));
        assert!(!Route::named("atlas/bf16").reported_by("Borealis"));
        assert!(Route::named("atlas/bf16").reported_by("Atlas"));
    }

    #[test]
    fn the_listing_url_follows_openrouter() {
        assert_eq!(
            listing_url(
                "https://openrouter.ai/api/v1/",
                "meta-llama/llama-3.3-70b-instruct"
            ),
            "https://openrouter.ai/api/v1/models/meta-llama/llama-3.3-70b-instruct/endpoints"
        );
    }
}
