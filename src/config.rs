//! The validated, typed configuration of a run. clap types stop at the
//! command-line boundary; everything past it works on these. The resolved
//! configuration is written as `config.json` in every report and read back by
//! `report DIR`.

use crate::cli::{LatencyArg, RunArgs, SemanticsArgs, SystemOptions};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Bootstrap resamples of the clustered CPR interval.
pub const BOOTSTRAP_RESAMPLES: u32 = 2000;

/// Confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// Where judge verdicts are cached when `--judge-cache` is not given.
pub const DEFAULT_JUDGE_CACHE: &str = "reports/judge-cache.jsonl";

/// The model id the driver asks for.
pub const DRIVER_MODEL: &str = "continuity-sim";

/// The model id the built-in proxies map the fallback to.
pub const FALLBACK_MODEL: &str = "continuity-sim-fallback";

/// A run setting that cannot be used, with the flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--runs 0`.
    #[error("--runs must be at least 1 (got {0})")]
    Runs(u32),
    /// `--concurrency 0`.
    #[error("--concurrency must be at least 1 (got {0})")]
    Concurrency(usize),
    /// `--fail-under-cpr` outside 0..=100.
    #[error("--fail-under-cpr is a percentage between 0 and 100 (got {0})")]
    FailUnder(f64),
    /// A `--gateway` that is not NAME=URL.
    #[error("--gateway expects NAME=URL, e.g. litellm=http://127.0.0.1:4000 (got {0:?})")]
    Gateway(String),
    /// Two systems with one name.
    #[error("two systems are named {0:?}; give each --gateway its own name (stateless and history are taken unless --no-builtin)")]
    DuplicateSystem(String),
    /// Nothing to run.
    #[error("--no-builtin leaves no system to run; add at least one --gateway NAME=URL")]
    NoSystems,
    /// A `--upstream-ports` that is not NAME=PRIMARY,FALLBACK or names no gateway.
    #[error("--upstream-ports expects NAME=PRIMARY,FALLBACK for a --gateway NAME, e.g. litellm=9001,9002 (got {0:?})")]
    UpstreamPorts(String),
    /// A `--header` that is not NAME:HEADER=VALUE or names no gateway.
    #[error("--header expects NAME:HEADER=VALUE for a --gateway NAME, e.g. portkey:x-portkey-config=env:PORTKEY_CONFIG (got {0:?})")]
    Header(String),
    /// A `--header` value read from an unset environment variable.
    #[error("--header {header} for {gateway} reads the environment variable {var}, which is not set; export it first")]
    MissingEnv {
        /// The gateway.
        gateway: String,
        /// The header name.
        header: String,
        /// The variable.
        var: String,
    },
    /// Unusable judge options.
    #[error(transparent)]
    Judge(#[from] crate::judge::JudgeConfigError),
    /// A zero duration.
    #[error("{flag} must be longer than zero")]
    ZeroDuration {
        /// The flag.
        flag: &'static str,
    },
}

/// How conversations are replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// Turn by turn, each request carrying the replies actually received.
    Live,
    /// Only the final turn, with the dataset's scripted history.
    FastForward,
}

impl Replay {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Replay::Live => "live",
            Replay::FastForward => "fast_forward",
        }
    }
}

/// A validated `run` configuration.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Master seed.
    pub seed: u64,
    /// Number of runs, at least 1.
    pub runs: u32,
    /// Conversations in flight at once, at least 1.
    pub concurrency: usize,
    /// Dataset file.
    pub dataset: PathBuf,
    /// Fault profile file.
    pub faults: PathBuf,
    /// Latency profile name of the simulated upstreams.
    pub latency: &'static str,
    /// Replay mode.
    pub replay: Replay,
    /// Whether the driver asks for streamed answers.
    pub stream: bool,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Deadline of every driver request.
    pub request_timeout: Duration,
    /// Report directory.
    pub out: PathBuf,
    /// No progress bar.
    pub quiet: bool,
    /// Minimum CPR (percent) of `fail_system`.
    pub fail_under_cpr: Option<f64>,
    /// The system checked by `fail_under_cpr`.
    pub fail_system: String,
    /// The systems under test.
    pub systems: SystemsConfig,
    /// The LLM judge for what the fast path leaves undetermined, if any.
    pub judge: Option<crate::judge::JudgeConfig>,
}

/// The systems under test, validated; shared by `run` and `semantics`.
#[derive(Debug, Clone)]
pub struct SystemsConfig {
    /// Whether the built-in stateless and history proxies run.
    pub builtin: bool,
    /// External gateways under test.
    pub gateways: Vec<GatewaySpec>,
    /// The model id every request asks for.
    pub model: String,
    /// How long to wait for a gateway's first answer.
    pub gateway_wait: Duration,
}

impl SystemsConfig {
    /// Validates the system options, reading `env:` header values from the
    /// environment.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the flag to fix; [`ConfigError::NoSystems`]
    /// when `--no-builtin` leaves nothing.
    pub fn from_options(options: &SystemOptions) -> Result<Self, ConfigError> {
        let gateways = parse_gateways(options, &|var| std::env::var(var).ok())?;
        if options.no_builtin && gateways.is_empty() {
            return Err(ConfigError::NoSystems);
        }
        Ok(SystemsConfig {
            builtin: !options.no_builtin,
            gateways,
            model: options.model.clone(),
            gateway_wait: options.gateway_wait,
        })
    }
}

/// A validated `semantics` configuration.
#[derive(Debug, Clone)]
pub struct SemanticsConfig {
    /// Master seed.
    pub seed: u64,
    /// Per-attempt timeout of the built-in proxies.
    pub attempt_timeout: Duration,
    /// Deadline of every check request.
    pub request_timeout: Duration,
    /// The systems under test.
    pub systems: SystemsConfig,
    /// Whether every case is sent as a streamed request.
    pub stream: bool,
    /// How long to wait before re-sending a case that skipped the primary.
    pub cooldown_wait: Duration,
    /// Where to write the results as JSON, if anywhere.
    pub json: Option<PathBuf>,
}

impl SemanticsConfig {
    /// Validates `semantics` arguments.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the flag to fix.
    pub fn from_args(args: &SemanticsArgs) -> Result<Self, ConfigError> {
        for (flag, d) in [
            ("--attempt-timeout", args.attempt_timeout),
            ("--request-timeout", args.request_timeout),
        ] {
            if d.is_zero() {
                return Err(ConfigError::ZeroDuration { flag });
            }
        }
        Ok(SemanticsConfig {
            seed: args.seed,
            attempt_timeout: args.attempt_timeout,
            request_timeout: args.request_timeout,
            systems: SystemsConfig::from_options(&args.systems)?,
            stream: args.stream,
            cooldown_wait: args.cooldown_wait,
            json: args.json.clone(),
        })
    }
}

/// A header value that never appears in a report, a log line or an error.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// An external gateway under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewaySpec {
    /// Its name in reports.
    pub name: String,
    /// Its base URL (without `/v1`).
    pub url: String,
    /// Port of its primary simulated upstream on 127.0.0.1.
    pub primary_port: u16,
    /// Port of its fallback simulated upstream on 127.0.0.1.
    pub fallback_port: u16,
    /// Extra request headers; values are secret.
    pub headers: Vec<(String, Secret)>,
}

/// Reads an environment variable; a seam so tests need not mutate the
/// process environment.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

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
            .ok_or_else(|| ConfigError::Gateway(raw.clone()))?;
        let (name, url) = (name.trim(), url.trim().trim_end_matches('/'));
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid_name || !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError::Gateway(raw.clone()));
        }
        let taken = gateways.iter().any(|g| g.name == name)
            || (!args.no_builtin && ["stateless", "history"].contains(&name));
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
        });
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
        gateway
            .headers
            .push((header.trim().to_string(), Secret(value)));
    }
    Ok(gateways)
}

impl RunConfig {
    /// Validates `run` arguments. `now_utc` names the default report
    /// directory (`reports/<UTC timestamp>`).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the flag to fix.
    pub fn from_args(args: &RunArgs, now_utc: time::OffsetDateTime) -> Result<Self, ConfigError> {
        if args.runs == 0 {
            return Err(ConfigError::Runs(args.runs));
        }
        if args.concurrency == 0 {
            return Err(ConfigError::Concurrency(args.concurrency));
        }
        if let Some(x) = args.fail_under_cpr {
            if !(0.0..=100.0).contains(&x) {
                return Err(ConfigError::FailUnder(x));
            }
        }
        let attempt_timeout = args.attempt_timeout.unwrap_or(match args.latency {
            LatencyArg::Realistic => Duration::from_secs(5),
            LatencyArg::Instant | LatencyArg::Fast => Duration::from_secs(1),
        });
        if attempt_timeout.is_zero() {
            return Err(ConfigError::ZeroDuration {
                flag: "--attempt-timeout",
            });
        }
        if args.request_timeout.is_zero() {
            return Err(ConfigError::ZeroDuration {
                flag: "--request-timeout",
            });
        }
        let systems = SystemsConfig::from_options(&args.systems)?;
        let mut judge =
            crate::judge::JudgeConfig::from_options(&args.judge, |v| std::env::var(v).ok())?;
        if let Some(judge) = judge.as_mut() {
            judge
                .cache
                .get_or_insert_with(|| PathBuf::from(DEFAULT_JUDGE_CACHE));
        }
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| default_report_dir(now_utc));
        Ok(RunConfig {
            seed: args.seed,
            runs: args.runs,
            concurrency: args.concurrency,
            dataset: args.dataset.clone(),
            faults: args.faults.clone(),
            latency: latency_name(args.latency),
            stream: args.stream,
            replay: if args.fast_forward {
                Replay::FastForward
            } else {
                Replay::Live
            },
            attempt_timeout,
            request_timeout: args.request_timeout,
            out,
            quiet: args.quiet,
            fail_under_cpr: args.fail_under_cpr,
            fail_system: args.fail_system.clone(),
            systems,
            judge,
        })
    }

    /// The configuration as written to `config.json`.
    pub fn resolved(&self, conversations: u32, systems: Vec<String>) -> ResolvedConfig {
        ResolvedConfig {
            tool: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: self.seed,
            runs: self.runs,
            concurrency: self.concurrency,
            dataset: self.dataset.display().to_string(),
            conversations,
            fault_profile: self.faults.display().to_string(),
            latency: self.latency.to_string(),
            replay: self.replay.as_str().to_string(),
            stream: self.stream,
            attempt_timeout_ms: self.attempt_timeout.as_millis() as u64,
            request_timeout_ms: self.request_timeout.as_millis() as u64,
            systems,
            judge: self.judge.as_ref().map(crate::judge::JudgeConfig::describe),
            interrupted: false,
            model: self.systems.model.clone(),
            gateways: self
                .systems
                .gateways
                .iter()
                .map(|g| ResolvedGateway {
                    name: g.name.clone(),
                    url: g.url.clone(),
                    primary_port: g.primary_port,
                    fallback_port: g.fallback_port,
                    header_names: g.headers.iter().map(|(h, _)| h.clone()).collect(),
                })
                .collect(),
            confidence: CONFIDENCE,
            percentile_method: crate::stats::PERCENTILE_METHOD.to_string(),
            bootstrap_resamples: BOOTSTRAP_RESAMPLES,
        }
    }
}

/// The latency profile name of a command-line choice.
pub fn latency_name(arg: LatencyArg) -> &'static str {
    match arg {
        LatencyArg::Instant => "instant",
        LatencyArg::Fast => "fast",
        LatencyArg::Realistic => "realistic",
    }
}

/// `reports/<UTC timestamp>`, e.g. `reports/2026-11-29T18-34-50Z`.
pub fn default_report_dir(now_utc: time::OffsetDateTime) -> PathBuf {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]-[minute]-[second]Z");
    let stamp = now_utc
        .format(&format)
        .unwrap_or_else(|_| "run".to_string());
    PathBuf::from("reports").join(stamp)
}

/// The resolved configuration of a run, as written to `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedConfig {
    /// Tool name.
    pub tool: String,
    /// Tool version.
    pub version: String,
    /// Master seed.
    pub seed: u64,
    /// Number of runs.
    pub runs: u32,
    /// Conversations in flight at once.
    pub concurrency: usize,
    /// Dataset file.
    pub dataset: String,
    /// Conversations in the dataset.
    pub conversations: u32,
    /// Fault profile file.
    pub fault_profile: String,
    /// Latency model of the simulated upstreams.
    pub latency: String,
    /// `live` or `fast_forward`.
    pub replay: String,
    /// Whether the driver asked for streamed answers.
    #[serde(default)]
    pub stream: bool,
    /// Per-attempt timeout of the built-in proxies, milliseconds.
    pub attempt_timeout_ms: u64,
    /// Deadline of every driver request, milliseconds.
    pub request_timeout_ms: u64,
    /// Systems under test, in order.
    pub systems: Vec<String>,
    /// The LLM judge (endpoint, model, prompt version; never a key), if any.
    #[serde(default)]
    pub judge: Option<String>,
    /// Whether Ctrl-C cut the run short (the figures cover what finished).
    #[serde(default)]
    pub interrupted: bool,
    /// The model id the driver asked for.
    pub model: String,
    /// External gateways (header values are never written, only names).
    pub gateways: Vec<ResolvedGateway>,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// Percentile method.
    pub percentile_method: String,
    /// Bootstrap resamples of the clustered interval.
    pub bootstrap_resamples: u32,
}

/// An external gateway as recorded in `config.json`: no header values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedGateway {
    /// Its name.
    pub name: String,
    /// Its base URL.
    pub url: String,
    /// Port of its primary upstream.
    pub primary_port: u16,
    /// Port of its fallback upstream.
    pub fallback_port: u16,
    /// Names of the extra headers sent (values withheld).
    pub header_names: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(extra: &[&str]) -> RunArgs {
        let mut argv = vec!["continuity-bench", "run"];
        argv.extend_from_slice(extra);
        match Cli::parse_from(argv).command {
            Command::Run(a) => a,
            _ => unreachable!("parsed a run command"),
        }
    }

    #[test]
    fn defaults_resolve() {
        let now = time::macros::datetime!(2026-11-29 18:34:50 UTC);
        let cfg = RunConfig::from_args(&args(&[]), now).unwrap();
        assert_eq!(cfg.runs, 1);
        assert_eq!(cfg.concurrency, 100);
        assert_eq!(cfg.seed, 42);
        assert_eq!(cfg.replay, Replay::Live);
        assert_eq!(cfg.out, PathBuf::from("reports/2026-11-29T18-34-50Z"));
    }

    #[test]
    fn bad_values_name_the_flag() {
        let now = time::OffsetDateTime::UNIX_EPOCH;
        let err = RunConfig::from_args(&args(&["--runs", "0"]), now).unwrap_err();
        assert!(err.to_string().contains("--runs"));
        let err = RunConfig::from_args(&args(&["--fail-under-cpr", "150"]), now).unwrap_err();
        assert!(err.to_string().contains("--fail-under-cpr"));
        let err = RunConfig::from_args(&args(&["--attempt-timeout", "0s"]), now).unwrap_err();
        assert!(err.to_string().contains("--attempt-timeout"));
    }

    #[test]
    fn gateways_ports_and_secret_headers() {
        let a = args(&[
            "--gateway",
            "litellm=http://127.0.0.1:4000/",
            "--gateway",
            "portkey=http://127.0.0.1:8787/v1",
            "--upstream-ports",
            "portkey=9101,9102",
            "--header",
            "litellm:Authorization=env:TEST_KEY_VAR",
        ]);
        let env = |var: &str| (var == "TEST_KEY_VAR").then(|| "Bearer s3cr3t-value".to_string());
        let g = parse_gateways(&a.systems, &env).unwrap();
        assert_eq!((g[0].primary_port, g[0].fallback_port), (9001, 9002));
        assert_eq!((g[1].primary_port, g[1].fallback_port), (9101, 9102));
        assert_eq!(g[0].url, "http://127.0.0.1:4000");
        assert_eq!(g[1].url, "http://127.0.0.1:8787");
        assert_eq!(g[0].headers[0].1, Secret("Bearer s3cr3t-value".into()));
        assert!(
            !format!("{g:?}").contains("s3cr3t"),
            "Debug never shows a header value"
        );
        let cfg = RunConfig::from_args(&a, time::OffsetDateTime::UNIX_EPOCH);
        // TEST_KEY_VAR is not set in the real environment: the error names
        // the variable, never a value.
        let err = cfg.unwrap_err().to_string();
        assert!(
            err.contains("TEST_KEY_VAR") && err.contains("not set"),
            "{err}"
        );
    }

    #[test]
    fn gateway_mistakes_are_named() {
        let none = |_: &str| None;
        let err = parse_gateways(&args(&["--gateway", "litellm"]).systems, &none).unwrap_err();
        assert!(err.to_string().contains("NAME=URL"));
        let err =
            parse_gateways(&args(&["--gateway", "history=http://x"]).systems, &none).unwrap_err();
        assert!(matches!(err, ConfigError::DuplicateSystem(ref n) if n == "history"));
        let err = parse_gateways(
            &args(&["--gateway", "a=http://x", "--upstream-ports", "b=1,2"]).systems,
            &none,
        )
        .unwrap_err();
        assert!(matches!(err, ConfigError::UpstreamPorts(_)));
        let err = RunConfig::from_args(&args(&["--no-builtin"]), time::OffsetDateTime::UNIX_EPOCH)
            .unwrap_err();
        assert!(matches!(err, ConfigError::NoSystems));
    }
}
