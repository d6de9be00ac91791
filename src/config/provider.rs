//! The provider options (`--provider` or `--primary-provider` and
//! `--fallback-provider`, each with a model id and a key's environment
//! variable) validated into [`Providers`] before any work starts, with
//! errors that name the flag and the fix. A key is read once, here, into a
//! [`Secret`]; its value is never in a message.

use crate::cli::ProviderOptions;
use crate::secret::Secret;
use crate::upstream::provider::{ProviderRoute, Providers, RouteError};

/// Provider options that cannot be used, with the flag to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderConfigError {
    /// `--provider` together with a per-role provider flag.
    #[error("--provider serves both upstreams and cannot be combined with {0}; use either --provider URL, or --primary-provider URL and --fallback-provider URL")]
    Mixed(&'static str),
    /// One per-role provider without the other.
    #[error("{given} needs {missing} too (each upstream needs a provider); or use --provider URL for both")]
    Half {
        /// The flag given.
        given: &'static str,
        /// The flag missing.
        missing: &'static str,
    },
    /// A model or key flag without its provider.
    #[error("{flag} only applies with {needs} URL; add {needs} or drop {flag}")]
    WithoutProvider {
        /// The flag given.
        flag: &'static str,
        /// The provider flag it belongs to.
        needs: &'static str,
    },
    /// A provider without a model id.
    #[error(
        "{provider} needs a model id: add {flag} MODEL (e.g. gpt-4o-mini, or llama3.2 for Ollama)"
    )]
    MissingModel {
        /// The provider flag.
        provider: &'static str,
        /// The model flag.
        flag: &'static str,
    },
    /// A key variable that is not set or is empty.
    #[error("{flag} {var}: the environment variable {var} is not set or is empty; export it (export {var}=...) or drop {flag} for a provider that needs no key")]
    MissingKey {
        /// The key flag.
        flag: &'static str,
        /// The variable.
        var: String,
    },
    /// A provider URL that cannot be used.
    #[error(transparent)]
    Route(#[from] RouteError),
}

/// The flags of one role: URL, model and key flags with their values.
struct RoleFlags<'a> {
    url: (&'static str, Option<&'a String>),
    model: (&'static str, Option<&'a String>),
    key_env: (&'static str, Option<&'a String>),
}

impl RoleFlags<'_> {
    /// The route these flags describe, `None` when no URL was given (and
    /// then neither may a model or key flag be).
    fn route(
        &self,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ProviderRoute>, ProviderConfigError> {
        let Some(url) = self.url.1 else {
            for (flag, value) in [self.model, self.key_env] {
                if value.is_some() {
                    return Err(ProviderConfigError::WithoutProvider {
                        flag,
                        needs: self.url.0,
                    });
                }
            }
            return Ok(None);
        };
        let model = self
            .model
            .1
            .map(|m| m.trim())
            .filter(|m| !m.is_empty())
            .ok_or(ProviderConfigError::MissingModel {
                provider: self.url.0,
                flag: self.model.0,
            })?;
        let key = match self.key_env.1 {
            None => None,
            Some(var) => {
                let value = env(var)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| ProviderConfigError::MissingKey {
                        flag: self.key_env.0,
                        var: var.clone(),
                    })?;
                Some((var.clone(), Secret::new(value)))
            }
        };
        Ok(Some(ProviderRoute::new(
            url,
            model,
            key,
            (self.url.0, self.key_env.0),
        )?))
    }
}

/// Validates the provider options; `None` when no provider was given (the
/// simulated model answers). `env` looks up an environment variable
/// (`std::env::var` in the binary).
///
/// # Errors
/// [`ProviderConfigError`] naming the flag to fix.
pub fn provider_config(
    options: &ProviderOptions,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Providers>, ProviderConfigError> {
    let both = RoleFlags {
        url: ("--provider", options.provider.as_ref()),
        model: ("--provider-model", options.provider_model.as_ref()),
        key_env: ("--provider-key-env", options.provider_key_env.as_ref()),
    };
    let primary = RoleFlags {
        url: ("--primary-provider", options.primary_provider.as_ref()),
        model: (
            "--primary-provider-model",
            options.primary_provider_model.as_ref(),
        ),
        key_env: (
            "--primary-provider-key-env",
            options.primary_provider_key_env.as_ref(),
        ),
    };
    let fallback = RoleFlags {
        url: ("--fallback-provider", options.fallback_provider.as_ref()),
        model: (
            "--fallback-provider-model",
            options.fallback_provider_model.as_ref(),
        ),
        key_env: (
            "--fallback-provider-key-env",
            options.fallback_provider_key_env.as_ref(),
        ),
    };
    if both.url.1.is_some() {
        for role in [&primary, &fallback] {
            for (flag, value) in [role.url, role.model, role.key_env] {
                if value.is_some() {
                    return Err(ProviderConfigError::Mixed(flag));
                }
            }
        }
        let route = both.route(&env)?;
        return Ok(route.map(|r| Providers {
            primary: r.clone(),
            fallback: r,
        }));
    }
    // No --provider: its model and key flags are refused by `route`.
    both.route(&env)?;
    match (primary.route(&env)?, fallback.route(&env)?) {
        (None, None) => Ok(None),
        (Some(primary), Some(fallback)) => Ok(Some(Providers { primary, fallback })),
        (Some(_), None) => Err(ProviderConfigError::Half {
            given: "--primary-provider",
            missing: "--fallback-provider",
        }),
        (None, Some(_)) => Err(ProviderConfigError::Half {
            given: "--fallback-provider",
            missing: "--primary-provider",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::Role;

    fn opts(pairs: &[(&str, &str)]) -> ProviderOptions {
        let mut o = ProviderOptions::default();
        for (flag, value) in pairs {
            let v = Some((*value).to_string());
            match *flag {
                "provider" => o.provider = v,
                "provider-model" => o.provider_model = v,
                "provider-key-env" => o.provider_key_env = v,
                "primary-provider" => o.primary_provider = v,
                "primary-provider-model" => o.primary_provider_model = v,
                "primary-provider-key-env" => o.primary_provider_key_env = v,
                "fallback-provider" => o.fallback_provider = v,
                "fallback-provider-model" => o.fallback_provider_model = v,
                "fallback-provider-key-env" => o.fallback_provider_key_env = v,
                other => panic!("unknown flag {other}"),
            }
        }
        o
    }

    fn env(var: &str) -> Option<String> {
        match var {
            "GOOD_KEY" => Some(" sk-config-test-DO-NOT-SHOW \n".into()),
            "BLANK_KEY" => Some("  ".into()),
            _ => None,
        }
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        provider_config(&opts(pairs), env).unwrap_err().to_string()
    }

    #[test]
    fn no_flag_means_the_simulated_model() {
        assert_eq!(provider_config(&opts(&[]), env).unwrap(), None);
    }

    #[test]
    fn one_provider_serves_both_with_its_key() {
        let p = provider_config(
            &opts(&[
                ("provider", "https://api.openai.com/v1"),
                ("provider-model", "gpt-4o-mini"),
                ("provider-key-env", "GOOD_KEY"),
            ]),
            env,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.primary, p.fallback);
        let key = p.route(Role::Fallback).key.as_ref().unwrap();
        assert_eq!(key.expose(), "sk-config-test-DO-NOT-SHOW");
        assert!(!format!("{p:?}").contains("sk-config-test"));
        assert!(!p.all_loopback());
    }

    #[test]
    fn two_providers_each_with_its_model() {
        let p = provider_config(
            &opts(&[
                ("primary-provider", "http://127.0.0.1:8000/v1"),
                ("primary-provider-model", "qwen"),
                ("fallback-provider", "http://localhost:11434/v1"),
                ("fallback-provider-model", "llama3.2"),
            ]),
            env,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.primary.model, "qwen");
        assert_eq!(p.fallback.model, "llama3.2");
        assert!(p.primary.key.is_none());
        assert!(p.all_loopback());
    }

    #[test]
    fn every_mistake_names_its_flag_and_the_fix() {
        let e = err(&[("provider", "http://h/v1")]);
        assert!(e.contains("--provider-model MODEL"), "{e}");
        let e = err(&[("provider", "h/v1"), ("provider-model", "m")]);
        assert!(e.starts_with("--provider \"h/v1\" is not an http"), "{e}");
        let e = err(&[
            ("provider", "http://h/v1"),
            ("provider-model", "m"),
            ("provider-key-env", "UNSET_KEY"),
        ]);
        assert!(
            e.contains("--provider-key-env UNSET_KEY") && e.contains("export UNSET_KEY"),
            "{e}"
        );
        let e = err(&[
            ("provider", "http://h/v1"),
            ("provider-model", "m"),
            ("provider-key-env", "BLANK_KEY"),
        ]);
        assert!(e.contains("BLANK_KEY is not set or is empty"), "{e}");
        let e = err(&[("provider-model", "m")]);
        assert!(
            e.contains("--provider-model only applies with --provider URL"),
            "{e}"
        );
        let e = err(&[
            ("provider", "http://h/v1"),
            ("provider-model", "m"),
            ("fallback-provider", "http://g/v1"),
        ]);
        assert!(
            e.contains("cannot be combined with --fallback-provider"),
            "{e}"
        );
        let e = err(&[
            ("primary-provider", "http://h/v1"),
            ("primary-provider-model", "m"),
        ]);
        assert!(
            e.contains("--primary-provider needs --fallback-provider"),
            "{e}"
        );
        let e = err(&[
            ("fallback-provider", "http://h/v1"),
            ("fallback-provider-model", "m"),
        ]);
        assert!(
            e.contains("--fallback-provider needs --primary-provider"),
            "{e}"
        );
        let e = err(&[("primary-provider-key-env", "GOOD_KEY")]);
        assert!(
            e.contains("--primary-provider-key-env only applies with --primary-provider"),
            "{e}"
        );
        let e = err(&[
            ("primary-provider", "http://h/v1"),
            ("primary-provider-model", "m"),
            ("fallback-provider", "http://g/v1"),
        ]);
        assert!(e.contains("--fallback-provider-model MODEL"), "{e}");
        // No message ever holds a key's value.
        let e = err(&[
            ("provider", "ftp://h"),
            ("provider-model", "m"),
            ("provider-key-env", "GOOD_KEY"),
        ]);
        assert!(!e.contains("sk-config-test"), "{e}");
    }
}
