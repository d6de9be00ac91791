//! Which routes serve a model: `GET {endpoint}/models/{author}/{slug}/endpoints`
//! (OpenRouter's listing; a route is an entry of `data.endpoints`,
//! identified by its `tag` when present, else its `provider_name`), or the
//! names given with `--routes`.
//!
//! The request is bounded like every exchange with a remote system: a
//! deadline, a size cap, no redirects (the client follows none), and
//! everything quoted in an error redacted first.
//!
//! The listing is treated as hostile: it names at most [`MAX_ROUTES`]
//! routes (a longer one is refused whole, before any entry is read), each
//! id and provider name at most [`MAX_NAME_CHARS`] characters of ASCII
//! letters, digits, spaces and `-_./()`; an entry with anything else (a
//! control, bidi, combining or invisible character, a line break, markup,
//! a table pipe, a link's `:` or `@`) is refused, and said with [`shown`],
//! so no byte of it reaches a terminal or a Markdown file raw. Duplicates
//! are dropped with a set, in linear time. What else the endpoint sends
//! and the canary prints (a reply's `provider`, an error body) goes
//! through [`shown_at_most`].

use cb_base::secret::{redact_owned, Secret};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

/// Most routes a listing may name. OpenRouter lists a handful per model
/// (the busiest had about 30 in 2026); a listing past this is refused with
/// an alert, never probed.
pub const MAX_ROUTES: usize = 256;

/// Longest route id or provider name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 128;

/// Longest excerpt of a refused name shown, in characters.
const SHOWN_CHARS: usize = 60;

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
    /// A listing with more routes than [`MAX_ROUTES`].
    #[error("the route listing at {url} names {count} routes, more than the {max} the canary accepts: refused; pass the routes with --routes", max = MAX_ROUTES)]
    TooMany {
        /// The listing URL.
        url: String,
        /// How many entries it had.
        count: usize,
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
            DiscoverError::TooMany { url, count } => DiscoverError::TooMany {
                url: redact(&url),
                count,
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

/// The routes a listing named, and the entries refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The routes kept, in the listing's order, each id once.
    pub routes: Vec<Route>,
    /// Each refused entry, said safely (its position, why, the name
    /// [`shown`]).
    pub refused: Vec<String>,
}

/// Why a listing body was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListingProblem {
    /// Not of OpenRouter's shape.
    Shape(String),
    /// More entries than [`MAX_ROUTES`].
    TooMany(usize),
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
) -> Result<Listing, DiscoverError> {
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
            body: shown_at_most(&text, EXCERPT),
        });
    }
    let json: Value = serde_json::from_str(&text).map_err(|e| DiscoverError::Shape {
        url: url.clone(),
        reason: format!("not JSON: {e}"),
    })?;
    let listing = parse_listing(&json).map_err(|problem| match problem {
        ListingProblem::Shape(reason) => DiscoverError::Shape {
            url: url.clone(),
            reason,
        },
        ListingProblem::TooMany(count) => DiscoverError::TooMany {
            url: url.clone(),
            count,
        },
    })?;
    if listing.routes.is_empty() {
        return Err(DiscoverError::NoRoutes {
            model: model.to_string(),
            url,
        });
    }
    Ok(listing)
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

/// The routes of a listing body, in its order, each id once; entries whose
/// id or provider name is not a plain name are refused (see the module).
///
/// # Errors
/// [`ListingProblem::TooMany`] past [`MAX_ROUTES`] entries (checked before
/// any is read); [`ListingProblem::Shape`] when `data.endpoints` is missing
/// or an entry has neither a tag nor a provider name.
pub fn parse_listing(json: &Value) -> Result<Listing, ListingProblem> {
    let entries = json
        .pointer("/data/endpoints")
        .and_then(Value::as_array)
        .ok_or_else(|| ListingProblem::Shape("no data.endpoints array".into()))?;
    if entries.len() > MAX_ROUTES {
        return Err(ListingProblem::TooMany(entries.len()));
    }
    let mut listing = Listing::default();
    let mut seen: HashSet<&str> = HashSet::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let text = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let provider_name = text("provider_name");
        let id = text("tag").or(provider_name).ok_or_else(|| {
            ListingProblem::Shape(format!(
                "data.endpoints[{i}] has neither a tag nor a provider_name"
            ))
        })?;
        let problem = [("id", Some(id)), ("provider name", provider_name)]
            .into_iter()
            .find_map(|(what, name)| {
                let name = name?;
                name_problem(name).map(|why| format!("its {what} {} {why}", shown(name)))
            });
        if let Some(problem) = problem {
            listing
                .refused
                .push(format!("data.endpoints[{i}] refused: {problem}"));
            continue;
        }
        if seen.insert(id) {
            listing.routes.push(Route {
                id: id.to_string(),
                provider_name: provider_name.map(str::to_string),
            });
        }
    }
    Ok(listing)
}

/// Whether `c` may appear in a route id or provider name.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || " -_./()".contains(c)
}

/// Why `name` is not accepted as a route id or provider name, if it is not.
fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "is {chars} characters long, more than {MAX_NAME_CHARS}"
        ));
    }
    name.chars().find(|&c| !plain(c)).map(|c| {
        format!(
            "holds {}, outside ASCII letters, digits, spaces and -_./()",
            shown(&c.to_string())
        )
    })
}

/// `text` safe for a terminal and a Markdown table: its first
/// characters, each one outside printable ASCII or acting in Markdown or
/// HTML written as a `\u{..}` escape (a control character, a line break,
/// `<`, `|`, a bidi override, any letter outside ASCII, the `(` of a
/// link's `](`), cut with `…`.
pub fn shown(text: &str) -> String {
    shown_at_most(text, SHOWN_CHARS)
}

/// [`shown`], cut at `max` characters.
pub fn shown_at_most(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut after_bracket = false;
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        let link = after_bracket && c == '(';
        if !link && (plain(c) || (c.is_ascii_punctuation() && !"<>|`*\\&".contains(c))) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
        after_bracket = c == ']';
    }
    out
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
        let routes = parse_listing(&listing).unwrap().routes;
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

    #[test]
    fn a_hostile_listing_keeps_only_plain_names_and_says_the_rest_safely() {
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let listing = json!({"data": {"endpoints": [
            {"provider_name": "Deep Infra", "tag": "deepinfra/fp8"},
            {"tag": "evil\u{1b}[2J\u{1b}[31mred"},
            {"tag": "two\nlines"},
            {"tag": "<script>alert(1)</script>"},
            {"tag": "pipe|cell"},
            {"tag": "\u{202e}lanigiro"},
            {"tag": "bell\u{7}"},
            {"tag": long},
            {"tag": "fine", "provider_name": "Nice\rName"},
            {"provider_name": "Together (US)"},
            {"tag": "deepinfra/fp8"}
        ]}});
        let parsed = parse_listing(&listing).unwrap();
        let ids: Vec<&str> = parsed.routes.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["deepinfra/fp8", "Together (US)"]);
        assert_eq!(parsed.refused.len(), 8, "{:?}", parsed.refused);
        for said in &parsed.refused {
            assert!(
                !said
                    .chars()
                    .any(|c| c.is_control() || "<>|\u{202e}".contains(c)),
                "{said:?}"
            );
            assert!(said.chars().count() < 300, "{said}");
        }
        assert!(
            parsed.refused[0].contains("evil\\u{1b}"),
            "{}",
            parsed.refused[0]
        );
        assert!(
            parsed.refused[6].contains("characters long"),
            "{}",
            parsed.refused[6]
        );
        assert!(
            parsed.refused[7].contains("provider name"),
            "{}",
            parsed.refused[7]
        );
    }

    #[test]
    fn a_listing_past_the_cap_is_refused_before_its_entries_are_read() {
        let many = |n: usize| {
            let endpoints: Vec<Value> = (0..n).map(|i| json!({"tag": format!("r{i}")})).collect();
            json!({"data": {"endpoints": endpoints}})
        };
        assert_eq!(
            parse_listing(&many(100_000)),
            Err(ListingProblem::TooMany(100_000))
        );
        assert_eq!(
            parse_listing(&many(MAX_ROUTES)).unwrap().routes.len(),
            MAX_ROUTES
        );
        // Bad entries past the cap are never looked at.
        let mut over = many(MAX_ROUTES + 1);
        over["data"]["endpoints"][0] = json!({"name": "no id"});
        assert_eq!(
            parse_listing(&over),
            Err(ListingProblem::TooMany(MAX_ROUTES + 1))
        );
        // Duplicates are dropped, the first kept.
        let endpoints: Vec<Value> = (0..MAX_ROUTES)
            .map(|i| json!({"tag": "same", "provider_name": format!("P{i}")}))
            .collect();
        let one = parse_listing(&json!({"data": {"endpoints": endpoints}})).unwrap();
        assert_eq!(one.routes.len(), 1);
        assert_eq!(one.routes[0].provider_name.as_deref(), Some("P0"));
    }

    #[test]
    fn shown_escapes_what_a_terminal_or_markdown_would_act_on() {
        assert_eq!(shown("deepinfra/fp8"), "deepinfra/fp8");
        assert_eq!(shown("a\u{1b}[0m|<b>"), "a\\u{1b}[0m\\u{7c}\\u{3c}b\\u{3e}");
        assert_eq!(shown("[x](http://y)"), "[x]\\u{28}http://y)");
        assert_eq!(shown("data: [DONE] (end)"), "data: [DONE] (end)");
        assert_eq!(shown(&"y".repeat(100)).chars().count(), SHOWN_CHARS + 1);
    }
}
