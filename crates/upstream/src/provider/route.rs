//! Where a pass-through upstream forwards to: a provider's base URL, the
//! model id it substitutes, and the key it sends, checked once. What a
//! report may say about a route (scheme, host, path and model, never the
//! key or a query string) is [`ResolvedProvider`].

use cb_base::secret::Secret;
use cb_faults::Role;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Why a provider URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// Not an http(s) URL with a host.
    #[error("{flag} {url:?} is not an http:// or https:// URL; pass the provider's OpenAI-compatible base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1")]
    NotHttp {
        /// The flag.
        flag: &'static str,
        /// What was given.
        url: String,
    },
    /// A URL with a user name or password in it.
    #[error("{flag} holds a user name or password; pass the URL without it and the key with {key_flag} VAR (an environment variable)")]
    Credentials {
        /// The flag.
        flag: &'static str,
        /// The flag that names the key's environment variable.
        key_flag: &'static str,
    },
}

/// One provider a pass-through upstream forwards to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRoute {
    /// Scheme, host and path of the base URL, without a trailing `/` or a
    /// query string, e.g. `https://api.openai.com/v1`.
    base: String,
    /// `{base}/chat/completions` (the base itself when it already ends so).
    chat_url: String,
    /// Host and port, e.g. `api.openai.com` or `127.0.0.1:11434`.
    host: String,
    /// Whether the host is this machine (127.0.0.0/8, `localhost`, `::1`).
    loopback: bool,
    /// The model id substituted in every forwarded request.
    pub model: String,
    /// The key sent as a Bearer token; `None` sends no `Authorization`.
    pub key: Option<Secret>,
    /// The environment variable the key was read from, if any.
    pub key_env: Option<String>,
}

impl ProviderRoute {
    /// A route to `url` (given with `flag`, its key named with `key_flag`)
    /// with `model` and `key`.
    ///
    /// # Errors
    /// [`RouteError`] when the URL is not http(s) or carries credentials.
    pub fn new(
        url: &str,
        model: &str,
        key: Option<(String, Secret)>,
        flags: (&'static str, &'static str),
    ) -> Result<Self, RouteError> {
        let (flag, key_flag) = flags;
        let not_http = || RouteError::NotHttp {
            flag,
            url: cb_base::url::display_url(url),
        };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|_| not_http())?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(not_http());
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(RouteError::Credentials { flag, key_flag });
        }
        let host_name = parsed.host_str().ok_or_else(not_http)?.to_string();
        let host = match parsed.port() {
            Some(port) => format!("{host_name}:{port}"),
            None => host_name.clone(),
        };
        let path = parsed.path().trim_end_matches('/').to_string();
        let base = format!("{}://{host}{path}", parsed.scheme());
        let mut chat = parsed.clone();
        if !path.ends_with("/chat/completions") {
            chat.set_path(&format!("{path}/chat/completions"));
        }
        let chat_url = chat.to_string();
        let (key_env, key) = match key {
            Some((var, secret)) => (Some(var), Some(secret)),
            None => (None, None),
        };
        Ok(ProviderRoute {
            loopback: is_loopback_host(&host_name),
            base,
            chat_url,
            host,
            model: model.to_string(),
            key,
            key_env,
        })
    }

    /// The URL requests are posted to.
    pub fn chat_url(&self) -> &str {
        &self.chat_url
    }

    /// Host and port, for messages and the report.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether the provider runs on this machine (and so costs nothing).
    pub fn is_loopback(&self) -> bool {
        self.loopback
    }

    /// What `config.json` records: scheme, host and path of the base URL
    /// (no query string, no key), the model id and the key's variable name.
    pub fn resolved(&self) -> ResolvedProvider {
        ResolvedProvider {
            url: cb_base::url::display_url(&self.base),
            model: self.model.clone(),
            key_env: self.key_env.clone(),
        }
    }
}

/// Whether `host` (a URL's host, IPv6 without brackets or with) is this
/// machine: `localhost`, 127.0.0.0/8, `::1`, or an IPv4-mapped loopback.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

/// The providers of a pair: one for the primary, one for the fallback
/// (the same one twice with `--provider`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Providers {
    /// Where the primary forwards.
    pub primary: ProviderRoute,
    /// Where the fallback forwards.
    pub fallback: ProviderRoute,
}

impl Providers {
    /// The route of `role`'s upstream.
    pub fn route(&self, role: Role) -> &ProviderRoute {
        match role {
            Role::Primary => &self.primary,
            Role::Fallback => &self.fallback,
        }
    }

    /// Whether every provider runs on this machine.
    pub fn all_loopback(&self) -> bool {
        self.primary.is_loopback() && self.fallback.is_loopback()
    }

    /// What `config.json` records of both.
    pub fn resolved(&self) -> ResolvedProviders {
        ResolvedProviders {
            primary: self.primary.resolved(),
            fallback: self.fallback.resolved(),
        }
    }
}

/// A provider as `config.json` records it: never a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedProvider {
    /// Scheme, host and path of the base URL, e.g. `https://api.openai.com/v1`.
    pub url: String,
    /// The model id substituted in every forwarded request.
    pub model: String,
    /// The environment variable the key was read from (its value withheld);
    /// empty when no key was sent.
    #[serde(default)]
    pub key_env: Option<String>,
}

impl ResolvedProvider {
    /// The host (and port) of the URL, for prose.
    pub fn host(&self) -> &str {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |x| x.1);
        rest.split('/').next().unwrap_or(rest)
    }
}

/// The providers of a run as `config.json` records them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedProviders {
    /// Behind the primary upstreams.
    pub primary: ResolvedProvider,
    /// Behind the fallback upstreams.
    pub fallback: ResolvedProvider,
}

impl ResolvedProviders {
    /// "answers from MODEL at HOST", once when both are the same, else per
    /// role.
    pub fn answered_by(&self) -> String {
        let one = |p: &ResolvedProvider| format!("answers from {} at {}", p.model, p.host());
        if self.primary == self.fallback {
            one(&self.primary)
        } else {
            format!(
                "primary {}; fallback {}",
                one(&self.primary),
                one(&self.fallback)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: (&str, &str) = ("--provider", "--provider-key-env");

    #[test]
    fn a_base_url_gets_chat_completions_and_a_report_form_without_secrets() {
        let key = Secret::new("sk-route-test-DO-NOT-WRITE");
        let r = ProviderRoute::new(
            "https://api.openai.com/v1/?api-version=2",
            "gpt-4o-mini",
            Some(("OPENAI_API_KEY".into(), key)),
            FLAGS,
        )
        .unwrap();
        assert_eq!(
            r.chat_url(),
            "https://api.openai.com/v1/chat/completions?api-version=2"
        );
        assert!(!r.is_loopback());
        let resolved = r.resolved();
        assert_eq!(resolved.url, "https://api.openai.com/v1");
        assert_eq!(resolved.host(), "api.openai.com");
        let json = serde_json::to_string(&resolved).unwrap();
        assert!(!json.contains("sk-route-test"), "{json}");
        assert!(!format!("{r:?}").contains("sk-route-test"));

        let local =
            ProviderRoute::new("http://127.0.0.1:11434/v1/", "llama3", None, FLAGS).unwrap();
        assert_eq!(
            local.chat_url(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(local.host(), "127.0.0.1:11434");
        assert!(local.is_loopback());
        let full =
            ProviderRoute::new("http://h:1/openai/chat/completions", "m", None, FLAGS).unwrap();
        assert_eq!(full.chat_url(), "http://h:1/openai/chat/completions");
    }

    #[test]
    fn urls_that_cannot_be_used_name_the_flag() {
        for bad in ["api.openai.com/v1", "ftp://h/v1", "", "http://"] {
            let e = ProviderRoute::new(bad, "m", None, FLAGS).unwrap_err();
            assert!(e.to_string().starts_with("--provider "), "{e}");
        }
        let e = ProviderRoute::new("https://u:p@h/v1", "m", None, FLAGS).unwrap_err();
        assert!(e.to_string().contains("--provider-key-env"), "{e}");
    }

    #[test]
    fn loopback_hosts() {
        for host in [
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.0.0.2",
            "::1",
            "[::1]",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "api.openai.com",
            "10.0.0.1",
            "0.0.0.0",
            "localhost.example",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
