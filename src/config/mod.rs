//! The validated, typed configuration of every command. clap types stop at
//! the command-line boundary ([`crate::cli`]); everything past this module
//! works on these types. The resolved `run` configuration is written as
//! `config.json` in every report and read back by `report DIR`.

mod error;
mod run;
mod semantics;
mod systems;
#[cfg(test)]
mod tests;

pub use error::ConfigError;
pub use run::{
    default_report_dir, latency_name, Replay, ResolvedConfig, ResolvedGateway, RunConfig,
};
pub use semantics::SemanticsConfig;
pub use systems::{parse_gateways, EnvLookup, GatewaySpec, SystemsConfig};

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
