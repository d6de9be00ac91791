//! The validated configuration of `semantics`.

use super::ConfigError;
use crate::cli::SemanticsArgs;
use crate::report::dir::{claim_given, DirError};
use crate::semantics::config::SemanticsConfig;
use crate::semantics::timing::{GiveUpBounds, Timing};
use std::path::Path;

/// Why `semantics` arguments are refused.
#[derive(Debug, thiserror::Error)]
pub enum SemanticsConfigError {
    /// A shared option is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--cases` names a case that does not exist.
    #[error("--cases names {0:?}, which is no case; the cases are: {1}")]
    UnknownCase(String, String),
    /// `--max-attempts-per-upstream 0`.
    #[error("--max-attempts-per-upstream must be at least 1")]
    NoAttempts,
    /// The `--out` directory cannot be used.
    #[error(transparent)]
    Out(#[from] DirError),
}

/// Checks, before any work, that a file can be written at `path`: its
/// directory exists and takes a new file (a probe written and removed).
///
/// # Errors
/// [`ConfigError::Unwritable`] naming `flag`, the path and the cause.
pub fn check_writable_file(path: &Path, flag: &'static str) -> Result<(), ConfigError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let unwritable = |reason: String| ConfigError::Unwritable {
        flag,
        path: path.display().to_string(),
        reason,
    };
    if path.is_dir() {
        return Err(unwritable("it is a directory".into()));
    }
    let probe = dir.join(format!(".continuity-bench-probe-{}", std::process::id()));
    std::fs::write(&probe, b"probe").map_err(|e| unwritable(e.to_string()))?;
    std::fs::remove_file(&probe).map_err(|e| unwritable(e.to_string()))
}

/// Validates `semantics` arguments into the semantics suite's
/// configuration; claims the `--out` directory.
///
/// # Errors
/// A [`SemanticsConfigError`] naming the flag to fix.
pub fn semantics_config(args: &SemanticsArgs) -> Result<SemanticsConfig, SemanticsConfigError> {
    for (flag, d) in [
        ("--attempt-timeout", args.attempt_timeout),
        ("--request-timeout", args.request_timeout),
        ("--max-give-up", args.max_give_up),
    ] {
        if d.is_zero() {
            return Err(ConfigError::ZeroDuration { flag }.into());
        }
    }
    if args.max_attempts_per_upstream == 0 {
        return Err(SemanticsConfigError::NoAttempts);
    }
    super::ranges::semantics_args(args).map_err(ConfigError::from)?;
    if let Some(path) = &args.json {
        check_writable_file(path, "--json")?;
    }
    let timing = if args.fast {
        Timing::fast()
    } else {
        Timing::full(args.request_timeout)
    };
    let give_up = GiveUpBounds {
        max_attempts_per_upstream: args.max_attempts_per_upstream,
        max_give_up: args.max_give_up,
    };
    let cases = match &args.cases {
        None => None,
        Some(list) => {
            let known: Vec<&str> =
                crate::semantics::catalogue::catalogue(&timing, &give_up, args.stream)
                    .iter()
                    .map(|c| c.id)
                    .collect();
            let wanted: Vec<String> = list
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            if let Some(unknown) = wanted.iter().find(|w| !known.contains(&w.as_str())) {
                return Err(SemanticsConfigError::UnknownCase(
                    unknown.clone(),
                    known.join(", "),
                ));
            }
            Some(wanted)
        }
    };
    // Claimed last: nothing is created for arguments refused above.
    let out = match &args.out {
        Some(dir) => Some(claim_given(dir, args.force)?),
        None => None,
    };
    Ok(SemanticsConfig {
        seed: args.seed,
        attempt_timeout: args.attempt_timeout,
        request_timeout: args.request_timeout,
        systems: {
            let systems = super::systems_config(&args.systems)?;
            if systems.api == crate::client::Api::Responses {
                return Err(ConfigError::ResponsesNotIn("semantics").into());
            }
            systems
        },
        stream: args.stream,
        client: args.client,
        cooldown_wait: args.cooldown_wait,
        json: args.json.clone(),
        contracts: std::sync::Arc::new(super::contracts_config(&args.contracts)?),
        timing,
        give_up,
        cases,
        load: args.load,
        load_fault: args.load_fault,
        out,
    })
}
