//! `grade`: run the continuity suite under the paper and the degraded
//! profiles and the semantics catalogue over the same systems, each into
//! its own subdirectory, then fold them into one page (report.html, with
//! report.md and summary.json) beside them; exit 1 when `--fail-under` is
//! not met, 130 after Ctrl-C (what finished is still written).

use super::run::{stop_on_ctrl_c, EXIT_INTERRUPTED};
use crate::cli::GradeArgs;
use crate::config::SystemKind;
use crate::grade::assemble::{assemble, GradeInputs, ProfileResult, SystemUnderTest};
use anyhow::Context as _;
use std::process::ExitCode;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// `grade`.
pub async fn grade(args: &GradeArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let now = time::OffsetDateTime::now_utc();
    let mut config = crate::config::grade_config(args, now)?;
    let cancel = CancellationToken::new();
    let stopped = stop_on_ctrl_c(
        cancel.clone(),
        "stopping and writing the grade of what finished",
    );
    crate::secret::eprintln!(
        "grade: {} system(s) into {}",
        config.systems.len(),
        config.out.display()
    );
    for (_, run) in &mut config.runs {
        run.stopped = stopped.clone();
    }
    let mut outcomes = Vec::new();
    for (profile, run) in &config.runs {
        if cancel.is_cancelled() {
            break;
        }
        crate::secret::eprintln!("grade: continuity under the {profile} profile");
        let outcome = crate::continuity::execute(run, cancel.clone(), Instant::now())
            .await
            .with_context(|| format!("the continuity run under the {profile} profile failed"))?;
        if let Some(data) = &outcome.data {
            crate::secret::println!(
                "{profile}:\n{}",
                crate::continuity::report::render_table(
                    &data.summary,
                    crate::continuity::report::Columns::Fit,
                )
            );
        }
        outcomes.push((*profile, outcome));
    }
    let semantics = if cancel.is_cancelled() {
        None
    } else {
        crate::secret::eprintln!("grade: the semantics catalogue");
        tokio::select! {
            report = crate::semantics::execute(&config.semantics) => Some(report.context("the semantics catalogue failed")?),
            () = cancel.cancelled() => None,
        }
    };
    if let (Some(report), Some(dir)) = (&semantics, &config.semantics.out) {
        crate::report::write_files(dir, report, &crate::semantics::scorecard::exporters())
            .with_context(|| format!("cannot write the scorecard into {}", dir.display()))?;
        crate::secret::print!("{}", report.render());
    } else if let Some(dir) = &config.semantics.out {
        // Nothing ran: leave no empty directory behind.
        let _ = std::fs::remove_dir(dir);
    }
    // A failed measurement costs the overhead, never the page: what
    // finished before it is written, with the reason.
    let mut overhead_failed = None;
    let overhead = match &config.overhead {
        Some(measure) if !cancel.is_cancelled() => {
            crate::secret::eprintln!("grade: the overhead when nothing fails");
            match measure_overhead(measure, &config.out, &cancel, args).await {
                Ok(report) => Some(report),
                Err(e) => {
                    crate::secret::eprintln!("grade: the overhead measurement failed: {e:#}");
                    overhead_failed = Some(format!("{e:#}"));
                    None
                }
            }
        }
        _ => None,
    };
    let written_at = now
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let systems: Vec<SystemUnderTest> = config
        .systems
        .iter()
        .map(|s| SystemUnderTest {
            name: s.name.clone(),
            url: match &s.kind {
                SystemKind::Builtin(_) => None,
                SystemKind::Gateway(url) => Some(crate::url::display_url(url)),
            },
            notes: s.notes.clone(),
            control: s.control,
        })
        .collect();
    let inputs = GradeInputs {
        seed: config.seed,
        written_at,
        systems_file: config
            .systems_file
            .as_ref()
            .map(|p| p.display().to_string()),
        systems: &systems,
        profiles: outcomes
            .iter()
            .map(|(profile, o)| ProfileResult {
                profile,
                dir: (*profile).to_string(),
                data: o.data.as_ref(),
                interrupted: o.interrupted,
            })
            .collect(),
        semantics: semantics.as_ref().map(|r| (r, "semantics".to_string())),
        overhead: overhead.as_ref().map(|r| (r, "overhead".to_string())),
        interrupted: cancel.is_cancelled(),
        interrupted_by: stopped.signal().filter(|_| cancel.is_cancelled()),
    };
    let mut summary = assemble(&inputs);
    if let Some(why) = &overhead_failed {
        for system in &mut summary.systems {
            system
                .unmeasured
                .push(format!("overhead: the measurement failed ({why})"));
        }
    }
    summary.gate = config.gate.as_ref().map(|g| g.check(&summary.systems));
    crate::grade::write_grade(&config.out, &summary)
        .with_context(|| format!("cannot write the grade into {}", config.out.display()))?;
    for system in &summary.systems {
        for note in &system.unmeasured {
            crate::secret::eprintln!("note: {}: {note}", system.name);
        }
    }
    crate::secret::println!(
        "wall time {:.1} s · page in {}",
        started.elapsed().as_secs_f64(),
        config.out.join(crate::grade::HTML_FILE).display()
    );
    if summary.interrupted {
        return Ok(ExitCode::from(stopped.exit_code_or(EXIT_INTERRUPTED)));
    }
    if let Some(gate) = &summary.gate {
        for c in gate.checks.iter().filter(|c| !c.passed) {
            crate::secret::eprintln!(
                "{}: {} not met (measured {})",
                c.system,
                c.threshold,
                c.measured
            );
        }
        if !gate.passed() {
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--overhead`: measures, writes `overhead/` and prints the tables.
async fn measure_overhead(
    measure: &crate::overhead::OverheadConfig,
    out: &std::path::Path,
    cancel: &CancellationToken,
    args: &GradeArgs,
) -> anyhow::Result<crate::overhead::OverheadReport> {
    let report = super::overhead::measure(measure, cancel.clone(), args.quiet).await?;
    let dir = crate::report::dir::claim_given(&out.join("overhead"), args.force)?;
    super::overhead::write(&dir, &report)?;
    crate::secret::println!(
        "overhead:\n{}",
        crate::overhead::render::render(&report, crate::overhead::render::Target::Terminal)
    );
    Ok(report)
}
