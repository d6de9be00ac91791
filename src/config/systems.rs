//! The systems under test, validated: the built-in reference proxies and
//! any external gateways with their upstream ports and secret headers.
//! Shared by every command that drives systems.

use super::ConfigError;
use crate::cli::SystemOptions;
use crate::driver::{EnvLookup, GatewaySpec, SystemsConfig};
use crate::proxy::ProxyMode;
use crate::secret::Secret;

/// Validates the system options into the systems under test, reading
/// `env:` header values from the environment.
///
/// # Errors
/// A [`ConfigError`] naming the flag to fix; [`ConfigError::NoSystems`]
/// when `--no-builtin` leaves nothing.
pub fn systems_config(options: &SystemOptions) -> Result<SystemsConfig, ConfigError> {
    if let Some(path) = &options.systems {
        let file = super::SystemsFile::read(path, options)?;
        return systems_config(&file.options).map_err(|e| ConfigError::InSystemsFile {
            path: path.display().to_string(),
            source: Box::new(e),
        });
    }
    super::ranges::system_options(options)?;
    let gateways = parse_gateways(options, &|var| std::env::var(var).ok())?;
    if options.no_builtin && gateways.is_empty() {
        return Err(ConfigError::NoSystems);
    }
    if options.api == crate::cli::ApiArg::Responses {
        if let Some(g) = gateways.iter().find(|g| cb_base::url::is_chat_url(&g.url)) {
            return Err(ConfigError::ResponsesChatUrl(g.name.clone()));
        }
    }
    Ok(SystemsConfig {
        builtin: !options.no_builtin,
        gateways,
        model: options.model.clone(),
        gateway_wait: options.gateway_wait,
        max_response_bytes: options.max_response_bytes,
        fallback_dialect: options.fallback_dialect,
        api: options.api.into(),
    })
}

/// Parses `--gateway`, `--upstream-ports` and `--header` into gateway specs.
///
/// # Errors
/// A [`ConfigError`] naming the flag and the expected form.
pub fn parse_gateways(
    args: &SystemOptions,
    env: EnvLookup<'_>,
) -> Result<Vec<GatewaySpec>, ConfigError> {
    let mut gateways: Vec<GatewaySpec> = Vec::new();
    for (k, raw) in args.gateways.iter().enumerate() {
        let (name, url) = raw
            .split_once('=')
            .ok_or_else(|| ConfigError::Gateway(redact_gateway(raw)))?;
        let (name, url) = (name.trim(), url.trim().trim_end_matches('/'));
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid_name || !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError::Gateway(redact_gateway(raw)));
        }
        let taken = gateways.iter().any(|g| g.name == name)
            || (!args.no_builtin && ProxyMode::ALL.iter().any(|m| m.as_str() == name));
        if taken {
            return Err(ConfigError::DuplicateSystem(name.to_string()));
        }
        let base = 9001 + 10 * k as u16;
        gateways.push(GatewaySpec {
            name: name.to_string(),
            url: url.trim_end_matches("/v1").to_string(),
            primary_port: base,
            fallback_port: base + 1,
            headers: Vec::new(),
            model: None,
        });
    }
    for raw in &args.gateway_models {
        let bad = || ConfigError::GatewayModel(raw.clone());
        let (name, model) = raw.split_once('=').ok_or_else(bad)?;
        let model = model.trim();
        if model.is_empty() || model.chars().any(char::is_control) {
            return Err(bad());
        }
        let gateway = gateways
            .iter_mut()
            .find(|g| g.name == name.trim())
            .ok_or_else(bad)?;
        gateway.model = Some(model.to_string());
    }
    for raw in &args.upstream_ports {
        let bad = || ConfigError::UpstreamPorts(raw.clone());
        let (name, ports) = raw.split_once('=').ok_or_else(bad)?;
        let (p, f) = ports.split_once(',').ok_or_else(bad)?;
        let (p, f): (u16, u16) = (
            p.trim().parse().map_err(|_| bad())?,
            f.trim().parse().map_err(|_| bad())?,
        );
        let gateway = gateways
            .iter_mut()
            .find(|g| g.name == name.trim())
            .ok_or_else(bad)?;
        gateway.primary_port = p;
        gateway.fallback_port = f;
    }
    for raw in &args.headers {
        let bad = || ConfigError::Header(raw.clone());
        let (name, rest) = raw.split_once(':').ok_or_else(bad)?;
        let (header, value) = rest.split_once('=').ok_or_else(bad)?;
        let gateway = gateways
            .iter_mut()
            .find(|g| g.name == name.trim())
            .ok_or_else(bad)?;
        let value = match value.strip_prefix("env:") {
            Some(var) => env(var).ok_or_else(|| ConfigError::MissingEnv {
                gateway: gateway.name.clone(),
                header: header.to_string(),
                var: var.to_string(),
            })?,
            None => value.to_string(),
        };
        let header = header.trim();
        if axum::http::HeaderName::from_bytes(header.as_bytes()).is_err() {
            return Err(ConfigError::HeaderName {
                gateway: gateway.name.clone(),
                header: header.to_string(),
            });
        }
        let value = Secret::new(value);
        if value.header_value().is_none() {
            return Err(ConfigError::HeaderValue {
                gateway: gateway.name.clone(),
                header: header.to_string(),
            });
        }
        gateway.headers.push((header.to_string(), value));
    }
    check_ports(&gateways)?;
    Ok(gateways)
}

/// Every upstream port is used once, and no gateway URL points at one (a
/// gateway on 127.0.0.1 whose own port is an upstream's would be the harness
/// talking to itself).
/// A `--gateway NAME=URL` value as an error may show it: the URL's
/// credentials redacted.
fn redact_gateway(raw: &str) -> String {
    match raw.split_once('=') {
        Some((name, url)) => format!("{name}={}", cb_base::url::display_url(url.trim())),
        None => cb_base::url::display_url(raw),
    }
}

fn check_ports(gateways: &[GatewaySpec]) -> Result<(), ConfigError> {
    let mut seen: Vec<(u16, String)> = Vec::new();
    for g in gateways {
        for (port, role) in [(g.primary_port, "primary"), (g.fallback_port, "fallback")] {
            let use_ = format!("the {role} upstream of {}", g.name);
            if let Some((_, first)) = seen.iter().find(|(p, _)| *p == port) {
                return Err(ConfigError::PortTaken {
                    port,
                    first: first.clone(),
                    second: use_,
                });
            }
            seen.push((port, use_));
        }
    }
    for g in gateways {
        let Ok(url) = reqwest::Url::parse(&g.url) else {
            continue;
        };
        let local = matches!(
            url.host_str(),
            Some("127.0.0.1" | "localhost" | "[::1]" | "::1" | "0.0.0.0")
        );
        if let (true, Some(port)) = (local, url.port_or_known_default()) {
            if let Some((_, upstream)) = seen.iter().find(|(p, _)| *p == port) {
                return Err(ConfigError::GatewayOnUpstreamPort {
                    gateway: g.name.clone(),
                    url: cb_base::url::display_url(&g.url),
                    upstream: upstream.clone(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use std::time::Duration;

    fn systems(argv: &[&str]) -> Result<SystemsConfig, clap::Error> {
        let options = match Cli::try_parse_from(argv)?.command {
            Command::Run(a) => a.systems,
            Command::Semantics(a) => a.systems,
            _ => unreachable!("a command that drives systems"),
        };
        Ok(systems_config(&options).unwrap())
    }

    #[test]
    fn the_response_cap_is_shared_by_run_and_semantics() {
        let default = systems(&["continuity-bench", "run"]).unwrap();
        assert_eq!(default.max_response_bytes, 4 * 1024 * 1024);
        for command in ["run", "semantics"] {
            let set =
                systems(&["continuity-bench", command, "--max-response-bytes", "65536"]).unwrap();
            let options = set.send_options(Duration::from_secs(3));
            assert_eq!(options.max_response_bytes, 65536, "{command}");
            assert_eq!(options.deadline, Duration::from_secs(3));
        }
        let err = systems(&["continuity-bench", "run", "--max-response-bytes", "0"]).unwrap_err();
        assert!(err.to_string().contains("--max-response-bytes"), "{err}");
    }
}
