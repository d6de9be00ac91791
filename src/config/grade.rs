//! `grade`'s flags validated into the configurations of the suites it
//! runs: two continuity runs (the paper and the degraded profiles) and the
//! semantics catalogue, each built from that command's own defaults and
//! validated by that command's own validator, so a grade runs exactly what
//! `run` and `semantics` would with the same flags. Everything is checked
//! before the grade directory is created.

use super::{ConfigError, SemanticsConfigError, SystemEntry, SystemKind, SystemsFile};
use crate::cli::{Cli, Command, GradeArgs, RunArgs, SemanticsArgs};
use crate::continuity::config::RunConfig;
use crate::grade::gate::{Gate, GateError};
use crate::proxy::ProxyMode;
use crate::report::dir::{claim_given, claim_unique, DirError};
use crate::semantics::config::SemanticsConfig;
use clap::Parser as _;
use std::path::PathBuf;

/// The continuity profiles a grade runs, in order. `outage` replays the
/// dataset with later probes unless `--dataset` names one, so that its
/// figures past the fault (survival, return to primary, tool-call
/// integrity) are measured.
pub const GRADE_PROFILES: [&str; 3] = ["paper", "degraded", "outage"];

/// Why `grade` arguments are refused.
#[derive(Debug, thiserror::Error)]
pub enum GradeConfigError {
    /// A shared option is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A semantics option is wrong.
    #[error(transparent)]
    Semantics(#[from] SemanticsConfigError),
    /// An overhead option is wrong (`--overhead`, `--pid`).
    #[error(transparent)]
    Overhead(#[from] super::OverheadConfigError),
    /// `--fail-under` is wrong.
    #[error(transparent)]
    Gate(#[from] GateError),
    /// The grade directory cannot be used.
    #[error(transparent)]
    Out(#[from] DirError),
}

/// A validated grade.
#[derive(Debug)]
pub struct GradeConfig {
    /// The systems, as the report describes them.
    pub systems: Vec<SystemEntry>,
    /// The systems file, if one.
    pub systems_file: Option<PathBuf>,
    /// The continuity runs, in [`GRADE_PROFILES`] order; each writes into
    /// its own subdirectory of `out`.
    pub runs: Vec<(&'static str, RunConfig)>,
    /// The semantics catalogue; writes into `out/semantics`.
    pub semantics: SemanticsConfig,
    /// `--overhead`: the measurement, written into `out/overhead`.
    pub overhead: Option<crate::overhead::OverheadConfig>,
    /// The grade directory, claimed (created, empty).
    pub out: PathBuf,
    /// `--fail-under`.
    pub gate: Option<Gate>,
    /// The master seed.
    pub seed: u64,
}

/// A command's arguments with every default, as `argv` parses.
fn defaults(argv: &[&str]) -> Command {
    let mut full = vec!["continuity-bench"];
    full.extend_from_slice(argv);
    // The argv is ours and every flag has a default: it parses.
    match Cli::try_parse_from(full) {
        Ok(cli) => cli.command,
        Err(e) => unreachable!("grade's own argv {argv:?} does not parse: {e}"),
    }
}

fn run_args(args: &GradeArgs, profile: &str, out: PathBuf) -> RunArgs {
    let Command::Run(mut run) = defaults(&["run"]) else {
        unreachable!("`run` parses as Run")
    };
    run.systems = args.systems.clone();
    run.runs = args.runs;
    run.concurrency = args.concurrency;
    run.dataset = match (&args.dataset, profile) {
        (None, "outage") => Some(PathBuf::from(crate::dataset::OUTAGE_DATASET)),
        (given, _) => given.clone(),
    };
    run.faults = Some(PathBuf::from(profile));
    run.seed = args.seed;
    run.latency = args.latency;
    run.quiet = args.quiet;
    run.contracts = args.contracts.clone();
    run.client = args.client;
    run.out = Some(out);
    run.force = args.force;
    run
}

fn semantics_args(args: &GradeArgs) -> SemanticsArgs {
    let Command::Semantics(mut sem) = defaults(&["semantics"]) else {
        unreachable!("`semantics` parses as Semantics")
    };
    sem.systems = args.systems.clone();
    sem.fast = !args.full;
    sem.cases = args.cases.clone();
    sem.client = args.client;
    sem.load = args.load;
    sem.load_fault = args.load_fault;
    sem.seed = args.seed;
    sem.contracts = args.contracts.clone();
    sem
}

/// The systems as the report describes them: the file's entries, or the
/// flags' systems described the same way.
fn entries(args: &GradeArgs) -> Result<Vec<SystemEntry>, ConfigError> {
    if let Some(path) = &args.systems.systems {
        return Ok(SystemsFile::read(path, &args.systems)?.systems);
    }
    let systems = super::systems_config(&args.systems)?;
    let mut out = Vec::new();
    if systems.builtin {
        for mode in ProxyMode::ALL {
            out.push(SystemEntry {
                name: mode.as_str().to_string(),
                kind: SystemKind::Builtin(mode),
                header_names: Vec::new(),
                notes: String::new(),
                control: mode == ProxyMode::Stateless,
            });
        }
    }
    for g in &systems.gateways {
        out.push(SystemEntry {
            name: g.name.clone(),
            kind: SystemKind::Gateway(g.url.clone()),
            header_names: g.headers.iter().map(|(h, _)| h.clone()).collect(),
            notes: String::new(),
            control: false,
        });
    }
    Ok(out)
}

/// Validates `grade` arguments, then claims the grade directory.
///
/// # Errors
/// A [`GradeConfigError`] naming the flag or file to fix.
pub fn grade_config(
    args: &GradeArgs,
    now_utc: time::OffsetDateTime,
) -> Result<GradeConfig, GradeConfigError> {
    let gate = args.fail_under.as_deref().map(Gate::parse).transpose()?;
    if super::systems_config(&args.systems)?.api == crate::client::Api::Responses {
        return Err(ConfigError::ResponsesNotIn("grade").into());
    }
    let systems = entries(args)?;
    // Validated with a placeholder directory first: nothing is created for
    // arguments refused here.
    let placeholder = PathBuf::from("unused");
    for profile in GRADE_PROFILES {
        super::run_config(&run_args(args, profile, placeholder.clone()), now_utc)?;
    }
    let mut semantics = super::semantics_config(&semantics_args(args))?;
    let overhead = if args.overhead {
        let Command::Bench(crate::cli::BenchArgs {
            command: crate::cli::BenchCommand::Overhead(defaults),
        }) = defaults(&["bench", "overhead"])
        else {
            unreachable!("`bench overhead` parses as Bench(Overhead)")
        };
        let mut options = defaults.measure;
        options.pids.clone_from(&args.pids);
        options.trials = args.overhead_trials;
        options.requests = args.overhead_requests;
        Some(super::overhead_config(&args.systems, &options, args.seed)?)
    } else {
        None
    };
    let out = match &args.out {
        Some(dir) => claim_given(dir, args.force)?,
        None => {
            let base = super::default_report_dir(now_utc);
            let name = format!(
                "grade-{}",
                base.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            );
            claim_unique(&base.with_file_name(name))?
        }
    };
    let mut runs = Vec::new();
    for profile in GRADE_PROFILES {
        runs.push((
            profile,
            super::run_config(&run_args(args, profile, out.join(profile)), now_utc)?,
        ));
    }
    semantics.out = Some(claim_given(&out.join("semantics"), args.force)?);
    Ok(GradeConfig {
        systems,
        systems_file: args.systems.systems.clone(),
        runs,
        semantics,
        overhead,
        out,
        gate,
        seed: args.seed,
    })
}
