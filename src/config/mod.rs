//! The validated, typed configuration of every command. clap types stop at
//! the command-line boundary ([`crate::cli`]); everything past this module
//! works on these types. The resolved `run` configuration is written as
//! `config.json` in every report and read back by `report DIR`.

mod canary;
mod error;
mod grade;
mod judge;
mod overhead;
mod provider;
pub mod ranges;
mod run;
mod semantics;
mod serve;
mod systems;
mod systems_file;
#[cfg(test)]
mod tests;

pub use crate::canary::config::{CanaryConfig, CanaryEndpoint, CanaryReleaseConfig};
pub use crate::continuity::config::{
    RequestsInFlight, ResolvedConfig, ResolvedGateway, RunConfig, BOOTSTRAP_RESAMPLES,
    DEFAULT_JUDGE_CACHE_NAME,
};
pub use crate::driver::{
    EnvLookup, GatewaySpec, Replay, SystemsConfig, DRIVER_MODEL, FALLBACK_MODEL,
};
pub use crate::report::dir::{default_report_dir, OutDir};
pub use crate::semantics::config::SemanticsConfig;
pub use canary::{canary_config, canary_power_settings, canary_release_config};
pub use error::ConfigError;
pub use grade::{grade_config, GradeConfig, GradeConfigError, GRADE_PROFILES};
pub use judge::{calibrate_config, judge_config};
pub use overhead::{overhead_config, OverheadConfigError};
pub use provider::{provider_config, ProviderConfigError};
pub use run::run_config;
pub use semantics::{semantics_config, SemanticsConfigError};
pub use serve::{
    contracts_config, dataset_source, generate_options, latency_profile, profile_source,
    proxy_config, upstreams_config,
};
pub use systems::{parse_gateways, systems_config};
pub use systems_file::{SystemEntry, SystemKind, SystemsFile, SystemsFileError};
