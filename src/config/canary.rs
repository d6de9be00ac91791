//! `canary` and `canary release`'s flags validated into the canary's
//! configuration: the
//! endpoint (the built-in simulated one, or a real one with its key from
//! the environment), the model and routes, the clock, the quarantine
//! policy, the input lists and output files, every one checked before the
//! first probe (files readable or writable, the state file parses, the
//! durations fit together, the control is a route).

use super::semantics::check_writable_file;
use super::{ConfigError, EnvLookup, OutDir};
use crate::canary::config::{
    display_url, url_credentials, CanaryConfig, CanaryEndpoint, CanaryReleaseConfig,
    REMOTE_PROBE_TIMEOUT, SIM_PROBE_TIMEOUT,
};
use crate::canary::endpoint::{SimConfig, DEFAULT_CONTROL, SIM_TTFT_LIMIT};
use crate::canary::ignore::{self, ListKind};
use crate::canary::policy::Policy;
use crate::canary::state;
use crate::cli::{CanaryPowerArgs, CanaryReleaseArgs, CanaryRunArgs};
use crate::secret::Secret;

/// Validates `canary release` arguments: the state file loads, the log
/// can be written.
///
/// # Errors
/// A [`ConfigError`] naming the file and the fix.
pub fn canary_release_config(args: &CanaryReleaseArgs) -> Result<CanaryReleaseConfig, ConfigError> {
    state::load(&args.state)?;
    check_writable_file(&args.state, "--state")?;
    if let Some(log) = &args.log {
        check_writable_file(log, "--log")?;
    }
    Ok(CanaryReleaseConfig {
        route: args.route.clone(),
        state: args.state.clone(),
        log: args.log.clone(),
    })
}

/// Validates `canary power` arguments into its settings: every share a
/// probability of the right kind, every contract one the probes check.
///
/// # Errors
/// A [`ConfigError`] naming the flag and what to pass.
pub fn canary_power_settings(
    args: &CanaryPowerArgs,
) -> Result<crate::canary::power::Settings, ConfigError> {
    use crate::canary::power::{canary_contracts, Settings};
    let share = |flag, value: f64, open_low: bool, open_high: bool, allowed, fix| {
        let low = if open_low { value > 0.0 } else { value >= 0.0 };
        let high = if open_high { value < 1.0 } else { value <= 1.0 };
        if value.is_finite() && low && high {
            Ok(())
        } else {
            Err(ConfigError::PowerShare {
                flag,
                value,
                allowed,
                fix,
            })
        }
    };
    for &p in &args.incidence {
        share(
            "--incidence",
            p,
            true,
            false,
            "(0, 1]",
            "pass shares such as 0.01,0.05",
        )?;
    }
    if args.incidence.is_empty() {
        return Err(ConfigError::PowerShare {
            flag: "--incidence",
            value: f64::NAN,
            allowed: "(0, 1]",
            fix: "pass at least one share, e.g. 0.05",
        });
    }
    share(
        "--transient-rate",
        args.transient_rate,
        false,
        true,
        "[0, 1)",
        "pass e.g. 0.02",
    )?;
    share(
        "--confidence",
        args.confidence,
        true,
        true,
        "(0, 1)",
        "pass e.g. 0.9",
    )?;
    share(
        "--max-false",
        args.max_false,
        false,
        false,
        "[0, 1]",
        "pass e.g. 0.01",
    )?;
    if args.interval.as_secs() == 0 {
        return Err(ConfigError::ZeroDuration { flag: "--interval" });
    }
    if args.within < args.interval {
        return Err(ConfigError::PowerWithin {
            within: humantime::format_duration(args.within).to_string(),
            interval: humantime::format_duration(args.interval).to_string(),
        });
    }
    super::ranges::duration("--interval", args.interval, super::ranges::MAX_INTERVAL)?;
    let known = canary_contracts();
    let contracts = if args.contracts.is_empty() {
        known.clone()
    } else {
        let mut out = Vec::new();
        for name in &args.contracts {
            let c = crate::contracts::ContractName::from_name(name.trim())
                .filter(|c| known.contains(c))
                .ok_or_else(|| ConfigError::PowerContract {
                    given: name.clone(),
                    known: known
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    };
    Ok(Settings {
        incidences: args.incidence.clone(),
        contracts,
        sticky: args.sticky,
        transient: args.transient_rate,
        repeats: args.repeats,
        interval: args.interval,
        trials: args.trials,
        seed: args.seed,
        within: args.within,
        confidence: args.confidence,
        max_false: args.max_false,
    })
}

fn is_http_url(url: &str) -> bool {
    let host = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or("");
    !host.is_empty() && !host.chars().any(char::is_whitespace)
}

fn is_route_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn valid_model(model: &str) -> bool {
    match model.split_once('/') {
        Some((author, slug)) => {
            !author.is_empty()
                && !slug.is_empty()
                && !slug.contains('/')
                && !model.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}

/// Validates `canary` arguments; `env` reads the key's variable and
/// `now_utc` names the default report directory.
///
/// # Errors
/// A [`ConfigError`] naming the flag (or file) and the fix.
pub fn canary_config(
    args: &CanaryRunArgs,
    env: EnvLookup<'_>,
    now_utc: time::OffsetDateTime,
) -> Result<CanaryConfig, ConfigError> {
    let from_file;
    let args = match &args.systems {
        Some(path) => {
            from_file = super::systems_file::canary_args(path, args)?;
            &from_file
        }
        None => args,
    };
    let model = args.model.trim().to_string();
    if !valid_model(&model) {
        return Err(ConfigError::CanaryModel(args.model.clone()));
    }
    if args.interval.is_zero() {
        return Err(ConfigError::ZeroDuration { flag: "--interval" });
    }
    super::ranges::canary_args(args)?;
    let routes = if args.routes.is_empty() {
        None
    } else {
        let names: Vec<String> = args.routes.iter().map(|r| r.trim().to_string()).collect();
        if let Some(bad) = names.iter().find(|n| !is_route_name(n)) {
            return Err(ConfigError::CanaryRoute(bad.clone()));
        }
        let mut unique: Vec<String> = Vec::new();
        for n in names {
            if !unique.contains(&n) {
                unique.push(n);
            }
        }
        Some(unique)
    };
    if let Some(rate) = args.transient_rate {
        if !(0.0..=1.0).contains(&rate) {
            return Err(ConfigError::TransientRate(rate));
        }
    }
    let simulated = args.endpoint.is_none();
    let ttft_limit = args.ttft_limit.unwrap_or(if simulated {
        SIM_TTFT_LIMIT
    } else {
        crate::contracts::DEFAULT_TTFT_LIMIT
    });
    if ttft_limit.is_zero() {
        return Err(ConfigError::ZeroDuration {
            flag: "--ttft-limit",
        });
    }
    let probe_timeout = args.probe_timeout.unwrap_or(if simulated {
        SIM_PROBE_TIMEOUT.max(ttft_limit.saturating_mul(4))
    } else {
        REMOTE_PROBE_TIMEOUT.max(ttft_limit.saturating_mul(2))
    });
    let (floor, why) = if simulated {
        (
            ttft_limit.saturating_mul(2),
            "twice --ttft-limit: the simulated slow route's first token",
        )
    } else {
        (ttft_limit, "--ttft-limit")
    };
    if probe_timeout <= floor {
        return Err(ConfigError::ProbeTimeout {
            timeout: humantime::format_duration(probe_timeout).to_string(),
            floor: humantime::format_duration(floor).to_string(),
            why,
        });
    }
    let endpoint = match &args.endpoint {
        None => {
            let mut sim = SimConfig::new(args.seed, ttft_limit, probe_timeout);
            sim.transient_rate = args.transient_rate.unwrap_or(0.0);
            if let Some(names) = &routes {
                if let Some(unknown) = names.iter().find(|n| sim.route(n).is_none()) {
                    return Err(ConfigError::UnknownSimRoute {
                        route: unknown.clone(),
                        routes: sim
                            .routes
                            .iter()
                            .map(|r| r.tag.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
            }
            CanaryEndpoint::Simulated(sim)
        }
        Some(url) => {
            if args.transient_rate.is_some() {
                return Err(ConfigError::TransientWithEndpoint);
            }
            let url = url.trim().trim_end_matches('/').to_string();
            // A password in the URL is a secret from here on: every
            // redacting print and file writer hides it.
            if let Some(credentials) = url_credentials(&url) {
                let _registered = Secret::new(credentials);
            }
            if !is_http_url(&url) {
                return Err(ConfigError::CanaryEndpoint(display_url(&url)));
            }
            let key = env(&args.key_env)
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ConfigError::MissingKey {
                    var: args.key_env.clone(),
                })?;
            let _registered = Secret::new(key.clone());
            CanaryEndpoint::Remote {
                url,
                key_env: args.key_env.clone(),
                authorization: Secret::new(format!("Bearer {key}")),
            }
        }
    };
    let control = match (&args.control, &endpoint) {
        (Some(c), _) => Some(c.trim().to_string()),
        (None, CanaryEndpoint::Simulated(sim)) => {
            let served = routes
                .as_ref()
                .map_or(sim.route(DEFAULT_CONTROL).is_some(), |r| {
                    r.iter().any(|n| n == DEFAULT_CONTROL)
                });
            served.then(|| DEFAULT_CONTROL.to_string())
        }
        (None, CanaryEndpoint::Remote { .. }) => None,
    };
    if let Some(control) = &control {
        let known: Option<Vec<String>> = match (&routes, &endpoint) {
            (Some(r), _) => Some(r.clone()),
            (None, CanaryEndpoint::Simulated(sim)) => {
                Some(sim.routes.iter().map(|r| r.tag.clone()).collect())
            }
            (None, CanaryEndpoint::Remote { .. }) => None,
        };
        if let Some(known) = known.filter(|k| !k.contains(control)) {
            return Err(ConfigError::ControlNotARoute {
                control: control.clone(),
                routes: known.join(", "),
            });
        }
    }
    for (flag, path) in [
        ("--state", &args.state),
        ("--log", &args.log),
        ("--ignore-out", &args.ignore_out),
    ] {
        if let Some(path) = path {
            check_writable_file(path, flag)?;
        }
    }
    if let Some(path) = &args.state {
        if path.exists() {
            state::load(path)?;
        }
    }
    let (reviewed, reviewed_source) = match &args.reviewed {
        Some(path) => (
            ignore::read_list(path, ListKind::Reviewed)?,
            path.display().to_string(),
        ),
        None => (ignore::builtin_reviewed()?, "built-in".to_string()),
    };
    if let Some(path) = &args.runtime {
        ignore::read_list(path, ListKind::Runtime)?;
    }
    let probes = match &args.probes {
        Some(path) => crate::canary::probe::ProbeSet::load(path)?,
        None => crate::canary::probe::ProbeSet::builtin(),
    };
    let known = crate::canary::language::Language::ALL;
    let mut languages = Vec::new();
    for code in args.languages.iter().map(|c| c.trim().to_ascii_lowercase()) {
        let language = known
            .iter()
            .find(|l| l.code() == code)
            .copied()
            .ok_or_else(|| {
                ConfigError::CanaryLanguage(
                    code.clone(),
                    known
                        .iter()
                        .map(|l| l.code())
                        .collect::<Vec<_>>()
                        .join(", "),
                )
            })?;
        languages.push(language);
    }
    let webhook = match &args.webhook {
        Some(url) => {
            let url = url.trim().to_string();
            if let Some(credentials) = url_credentials(&url) {
                let _registered = Secret::new(credentials);
            }
            if !is_http_url(&url) {
                return Err(ConfigError::CanaryWebhook(display_url(&url)));
            }
            Some(url)
        }
        None => None,
    };
    let out = match &args.out {
        Some(path) => OutDir::Given {
            path: path.clone(),
            force: false,
        },
        None => {
            let stamped = super::default_report_dir(now_utc);
            let name = stamped
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            OutDir::Default(stamped.with_file_name(format!("canary-{name}")))
        }
    };
    Ok(CanaryConfig {
        endpoint,
        model,
        routes,
        rounds: args.rounds,
        interval: args.interval,
        no_wait: args.no_wait,
        policy: Policy {
            enforce: args.enforce,
            control,
            ..Policy::default()
        },
        reviewed,
        reviewed_source,
        runtime: args.runtime.clone(),
        out,
        ignore_out: args.ignore_out.clone(),
        log: args.log.clone(),
        state: args.state.clone(),
        seed: args.seed,
        ttft_limit,
        probe_timeout,
        concurrency: usize::try_from(args.concurrency).unwrap_or(4),
        repeats: args.repeats,
        max_response_bytes: args.max_response_bytes,
        notify: args.notify.clone().filter(|c| !c.trim().is_empty()),
        probes,
        languages,
        webhook,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{CanaryAction, Cli, Command};
    use clap::Parser;
    use std::path::PathBuf;
    use std::time::Duration;

    fn args(line: &[&str]) -> CanaryRunArgs {
        let mut argv = vec!["continuity-bench", "canary"];
        argv.extend_from_slice(line);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Canary(c) => c.run,
            _ => unreachable!(),
        }
    }

    fn now() -> time::OffsetDateTime {
        time::macros::datetime!(2026-01-02 03:04:05 UTC)
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn config(line: &[&str]) -> Result<CanaryConfig, ConfigError> {
        canary_config(&args(line), &no_env, now())
    }

    #[test]
    fn offline_defaults_are_the_documented_ones() {
        let c = config(&[]).unwrap();
        assert!(c.endpoint.is_simulated());
        assert_eq!(c.model, "meta-llama/llama-3.3-70b-instruct");
        assert_eq!(c.ttft_limit, SIM_TTFT_LIMIT);
        assert_eq!(c.probe_timeout, SIM_PROBE_TIMEOUT.max(SIM_TTFT_LIMIT * 4));
        assert_eq!(c.interval, Duration::from_secs(1800));
        assert_eq!(c.policy.control.as_deref(), Some(DEFAULT_CONTROL));
        assert!(!c.policy.enforce && c.rounds.is_none() && !c.no_wait);
        assert_eq!(c.concurrency, 4);
        assert_eq!(
            c.out,
            OutDir::Default(PathBuf::from("reports/canary-2026-01-02T03-04-05Z"))
        );
        let CanaryEndpoint::Simulated(sim) = &c.endpoint else {
            unreachable!()
        };
        assert_eq!(sim.slow_first_token, SIM_TTFT_LIMIT * 2);
        assert_eq!(sim.transient_rate, 0.0);
    }

    #[test]
    fn a_real_endpoint_needs_its_key_and_gets_the_contract_defaults() {
        let err = config(&["--endpoint", "https://openrouter.ai/api/v1"]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("OPENROUTER_API_KEY") && text.contains("--key-env"),
            "{text}"
        );
        let env = |var: &str| (var == "MY_KEY").then(|| "sk-config-test-key-1".to_string());
        let c = canary_config(
            &args(&[
                "--endpoint",
                "https://openrouter.ai/api/v1/",
                "--key-env",
                "MY_KEY",
            ]),
            &env,
            now(),
        )
        .unwrap();
        let CanaryEndpoint::Remote {
            url, authorization, ..
        } = &c.endpoint
        else {
            unreachable!()
        };
        assert_eq!(url, "https://openrouter.ai/api/v1");
        assert_eq!(authorization.expose(), "Bearer sk-config-test-key-1");
        assert_eq!(format!("{c:?}").matches("sk-config-test-key-1").count(), 0);
        assert_eq!(c.ttft_limit, Duration::from_secs(10));
        assert_eq!(c.probe_timeout, REMOTE_PROBE_TIMEOUT);
        assert_eq!(c.policy.control, None);
    }

    #[test]
    fn bad_flags_are_refused_before_any_work_naming_the_flag() {
        let cases: &[(&[&str], &str)] = &[
            (&["--model", "llama"], "--model"),
            (&["--interval", "0s"], "--interval"),
            (&["--transient-rate", "1.5"], "--transient-rate"),
            (&["--routes", "atlas/bf16,nowhere"], "nowhere"),
            (&["--control", "nowhere"], "--control"),
            (
                &["--routes", "atlas/bf16,cirrus", "--control", "harbor"],
                "--control",
            ),
            (
                &["--ttft-limit", "1s", "--probe-timeout", "2s"],
                "--probe-timeout",
            ),
            (&["--state", "/no/such/dir/state.json"], "--state"),
            (&["--reviewed", "/no/such/list.txt"], "--reviewed"),
            (&["--endpoint", "ftp://x"], "--endpoint"),
            (
                &["--probes", "/no/such/probes.toml"],
                "/no/such/probes.toml",
            ),
            (&["--languages", "en,xx"], "--languages"),
            (&["--webhook", "ftp://hooks"], "--webhook"),
        ];
        for (line, named) in cases {
            let err = config(line).unwrap_err().to_string();
            assert!(err.contains(named), "{line:?}: {err}");
        }
        let env = |_: &str| Some("k-123456".to_string());
        let err = canary_config(
            &args(&[
                "--endpoint",
                "http://127.0.0.1:9",
                "--transient-rate",
                "0.1",
            ]),
            &env,
            now(),
        )
        .unwrap_err();
        assert!(matches!(err, ConfigError::TransientWithEndpoint));
    }

    #[test]
    fn a_corrupt_state_file_is_refused_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "{broken").unwrap();
        let err = config(&["--state", path.to_str().unwrap()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("state.json") && err.contains("move it away"),
            "{err}"
        );
    }

    #[test]
    fn release_parses_and_checks_its_state_file() {
        let cli = Cli::try_parse_from([
            "continuity-bench",
            "canary",
            "release",
            "dune/fp8",
            "--state",
            "/no/such/state.json",
        ])
        .unwrap();
        let Command::Canary(c) = cli.command else {
            unreachable!()
        };
        let Some(CanaryAction::Release(r)) = c.action else {
            unreachable!()
        };
        assert_eq!(r.route, "dune/fp8");
        let err = canary_release_config(&r).unwrap_err().to_string();
        assert!(err.contains("/no/such/state.json"), "{err}");
    }
}
