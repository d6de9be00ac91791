//! Folds what the suites produced (a continuity report per profile, the
//! semantics report) into one [`GradeSummary`]: per system the figures the
//! page shows, the evidence of every scorecard cell, and a note for each
//! thing that could not be measured. Pure: the suites' results in, the
//! summary out.

use super::summary::{
    AttemptEvidence, CaseEvidence, CaseInfo, CheckEvidence, ContinuityFigures, GradeSummary,
    GradeSystem, GradedKind, LengthLatency, ModeLatency, ProfileRun, RequestEvidence, SummaryKind,
};
use cb_continuity::report::{plot_data, ReportData};
use cb_semantics::{CaseResult, SemanticsReport};

/// A system under test as the grade describes it (the command line maps
/// its systems file or flags into these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemUnderTest {
    /// Its name.
    pub name: String,
    /// A gateway's base URL; `None` for a reference proxy.
    pub url: Option<String>,
    /// Notes shown beside its results.
    pub notes: String,
    /// A negative control, left out of `--fail-under`.
    pub control: bool,
}

/// One continuity run of the grade, as the suite returned it.
pub struct ProfileResult<'a> {
    /// The profile's name.
    pub profile: &'a str,
    /// Its directory, relative to the grade directory.
    pub dir: String,
    /// What it produced (`None`: it did not run, Ctrl-C came first).
    pub data: Option<&'a ReportData>,
    /// Whether Ctrl-C cut it short.
    pub interrupted: bool,
}

/// What `grade` ran, and what came of it.
pub struct GradeInputs<'a> {
    /// The master seed.
    pub seed: u64,
    /// When (RFC 3339, UTC).
    pub written_at: String,
    /// The systems file, if one.
    pub systems_file: Option<String>,
    /// The systems, in order (from the file, or described from the flags).
    pub systems: &'a [SystemUnderTest],
    /// The continuity runs, paper then degraded.
    pub profiles: Vec<ProfileResult<'a>>,
    /// The semantics report and its directory (`None`: it did not run).
    pub semantics: Option<(&'a SemanticsReport, String)>,
    /// The overhead measurement and its directory (`None`: it did not run).
    pub overhead: Option<(&'a cb_overhead::OverheadReport, String)>,
    /// Whether Ctrl-C or SIGTERM cut the grade short.
    pub interrupted: bool,
    /// Which signal did, when known.
    pub interrupted_by: Option<crate::stop::Stop>,
}

/// The JSON name of a serde enum value (`snake_case` as written).
fn name_of(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// Builds the grade summary (without its gate, checked afterwards).
pub fn assemble(inputs: &GradeInputs<'_>) -> GradeSummary {
    let profiles = inputs
        .profiles
        .iter()
        .map(|p| ProfileRun {
            profile: p.profile.to_string(),
            dir: p.dir.clone(),
            runs: p.data.map_or(0, |d| d.summary.runs),
            conversations: p.data.map_or(0, |d| d.summary.conversations),
            interrupted: p.interrupted,
        })
        .collect();
    let cases: Vec<CaseInfo> = inputs
        .semantics
        .as_ref()
        .and_then(|(r, _)| r.systems.first())
        .map(|s| {
            s.cases
                .iter()
                .map(|c| CaseInfo {
                    case: c.case.clone(),
                    upstream: c.upstream.clone(),
                    passes: c.passes.clone(),
                    scored: c.scored,
                })
                .collect()
        })
        .unwrap_or_default();
    let systems = inputs
        .systems
        .iter()
        .map(|entry| system(entry, inputs))
        .collect();
    GradeSummary {
        kind: SummaryKind::Grade,
        tool: env!("CARGO_PKG_NAME").to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        seed: inputs.seed,
        written_at: inputs.written_at.clone(),
        systems_file: inputs.systems_file.clone(),
        interrupted: inputs.interrupted,
        interrupted_by: inputs.interrupted_by,
        profiles,
        semantics_profile: inputs.semantics.as_ref().map(|(r, _)| name_of(&r.profile)),
        semantics_client: inputs.semantics.as_ref().map(|(r, _)| r.client),
        semantics_dir: inputs.semantics.as_ref().map(|(_, d)| d.clone()),
        cases,
        systems,
        gate: None,
        overhead: inputs.overhead.as_ref().map(|(r, _)| (*r).clone()),
        overhead_dir: inputs.overhead.as_ref().map(|(_, d)| d.clone()),
    }
}

fn system(entry: &SystemUnderTest, inputs: &GradeInputs<'_>) -> GradeSystem {
    let mut unmeasured = Vec::new();
    let mut continuity = Vec::new();
    for p in &inputs.profiles {
        let Some(data) = p.data else {
            unmeasured.push(format!(
                "continuity under `{}`: not run (interrupted before it)",
                p.profile
            ));
            continue;
        };
        let Some(s) = data.summary.systems.iter().find(|s| s.name == entry.name) else {
            unmeasured.push(format!(
                "continuity under `{}`: the system was not in the run",
                p.profile
            ));
            continue;
        };
        if s.events == 0 {
            let why = if s.stages.total() == 0 {
                "the profile faults no turn, so there is no failover event (CPR n/a); its contract rates are over every delivered answer".to_string()
            } else {
                format!(
                    "none of its {} planned events reached the fault (CPR n/a){}",
                    s.stages.total(),
                    s.stage_reasons
                        .first()
                        .map(|r| format!("; commonest reason: {}", r.reason))
                        .unwrap_or_default()
                )
            };
            unmeasured.push(format!("CPR under `{}`: {why}", p.profile));
        }
        if s.contracts.iter().all(|c| c.broken.trials == 0) {
            unmeasured.push(format!(
                "contracts under `{}`: no answer was decided by any contract",
                p.profile
            ));
        }
        for name in cb_contracts::ContractName::ALL {
            let applied = s
                .contracts
                .iter()
                .find(|c| c.contract == name)
                .map_or(0, |c| c.applied);
            if applied > 0 {
                continue;
            }
            let why = match name.as_str() {
                "ttft" => "answers were not streamed, and the contract applies to streams",
                "schema" => "the continuity runs ask for no structured output (the semantics case `schema` does)",
                _ => "no delivered answer it applies to",
            };
            unmeasured.push(format!(
                "contract `{}` under `{}`: not applied ({why})",
                name.as_str(),
                p.profile
            ));
        }
        continuity.push(ContinuityFigures {
            profile: p.profile.to_string(),
            planned: s.stages.total(),
            events: s.events,
            cpr: s.cpr,
            cpr_clustered: s.cpr_clustered,
            clean_cpr: s.clean_cpr,
            availability: s.availability,
            contracts: s.contracts.clone(),
            latency_by_length: plot_data::latency_by_length(&data.events, &s.name)
                .into_iter()
                .map(length_latency)
                .collect(),
            latency_by_mode: plot_data::latency_by_length_per_mode(&data.events, &s.name)
                .into_iter()
                .map(|(fault_mode, rows)| ModeLatency {
                    fault_mode,
                    by_length: rows.into_iter().map(length_latency).collect(),
                })
                .collect(),
            storm: s.attempts.storm,
            warning: s.warning.clone(),
            past_fault: s.past_fault.clone(),
        });
    }
    let semantics = inputs
        .semantics
        .as_ref()
        .and_then(|(r, _)| r.systems.iter().find(|s| s.system == entry.name));
    if inputs.semantics.is_none() {
        unmeasured.push("semantics: the catalogue did not run (interrupted before it)".into());
    }
    let cases: Vec<CaseEvidence> = semantics
        .map(|s| s.cases.iter().map(evidence).collect())
        .unwrap_or_default();
    unmeasured.extend(super::unreached::inconclusive_notes(&cases));
    GradeSystem {
        name: entry.name.clone(),
        kind: if entry.url.is_some() {
            GradedKind::Gateway
        } else {
            GradedKind::Builtin
        },
        url: entry.url.clone(),
        notes: entry.notes.clone(),
        control: entry.control,
        continuity,
        scorecard: semantics.map(|s| s.scorecard),
        honesty: semantics.map(|s| s.honesty),
        load: semantics.and_then(|s| s.load.clone()),
        cases,
        unmeasured,
    }
}

/// A case's verdict with its checks and the attempts the upstreams logged.
fn evidence(c: &CaseResult) -> CaseEvidence {
    let requests = c
        .requests
        .iter()
        .chain(c.after.iter())
        .map(|sent| RequestEvidence {
            client: cb_semantics::checks::got(sent),
            attempts: sent
                .attempts
                .iter()
                .map(|a| AttemptEvidence {
                    role: a.role,
                    attempt: a.attempt,
                    at_ms: a.at_ms,
                    status: a.status,
                    action: a.action,
                    detail: a.act.clone(),
                    model: a.model.clone(),
                })
                .collect(),
        })
        .collect();
    CaseEvidence {
        case: c.case.clone(),
        verdict: c.verdict,
        scored: c.scored,
        reason: c.reason.clone(),
        checks: c
            .checks
            .iter()
            .map(|k| CheckEvidence {
                check: k.check.name(),
                severity: k.severity,
                passed: k.passed,
                applicable: k.applicable,
                value: k.value.clone(),
                bound: k.bound.clone(),
            })
            .collect(),
        notes: c
            .notes
            .iter()
            .cloned()
            .chain(c.honesty.checks.iter().filter(|k| !k.honest).map(|k| {
                format!(
                    "{} claim contradicted by the attempt log: {}",
                    k.claim.as_str(),
                    k.value
                )
            }))
            .collect(),
        requests,
    }
}

/// A length's latency as the grade writes it.
fn length_latency(l: plot_data::LengthLatency) -> LengthLatency {
    LengthLatency {
        turns: l.turns,
        n: l.n as u64,
        median_ms: l.median,
        p95_ms: l.p95,
    }
}
