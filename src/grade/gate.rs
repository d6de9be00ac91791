//! `grade --fail-under SPEC`: thresholds that make the command exit 1, for
//! CI. SPEC is comma-separated `KEY=VALUE`:
//!
//! - `cpr=P`: CPR under the paper profile at least P % (0-100);
//! - `clean-cpr=P`: clean CPR under the paper profile at least P %;
//! - `semantics-fail=N`: at most N scored semantics cases fail;
//! - `violations=P`: under the degraded profile, no contract broken by
//!   more than P % of the delivered answers it decided.
//!
//! Each applies to every system but the negative controls (`control =
//! true` in the systems file: the `stateless` reference, whose CPR is 0 %
//! by construction). A figure that is `n/a` (nothing measured) does not
//! meet a threshold: a gate never passes on nothing.

use super::summary::{GateCheck, GateOutcome, GradeSystem};

/// One threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// Paper CPR at least this percentage.
    Cpr(f64),
    /// Paper clean CPR at least this percentage.
    CleanCpr(f64),
    /// At most this many scored semantics cases fail.
    SemanticsFail(u32),
    /// No contract broken by more than this percentage of decided answers
    /// under the degraded profile.
    Violations(f64),
}

/// Why `--fail-under` is refused.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("--fail-under {given:?}: {why}; write KEY=VALUE pairs separated by commas, e.g. cpr=95,clean-cpr=90,semantics-fail=0,violations=5")]
pub struct GateError {
    /// The flag's value.
    pub given: String,
    /// What is wrong.
    pub why: String,
}

/// The parsed flag.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// As given.
    pub spec: String,
    /// Its thresholds, in order.
    pub thresholds: Vec<Threshold>,
}

impl Gate {
    /// Parses `spec`.
    ///
    /// # Errors
    /// A [`GateError`] naming the pair and the fix.
    pub fn parse(spec: &str) -> Result<Self, GateError> {
        let err = |why: String| GateError {
            given: spec.to_string(),
            why,
        };
        let mut thresholds = Vec::new();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| err(format!("{pair:?} is not KEY=VALUE")))?;
            let percent = || -> Result<f64, GateError> {
                let v: f64 = value
                    .trim()
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| err(format!("{key}={value}: not a number")))?;
                if (0.0..=100.0).contains(&v) {
                    Ok(v)
                } else {
                    Err(err(format!(
                        "{key}={value}: a percentage is between 0 and 100"
                    )))
                }
            };
            thresholds.push(match key.trim() {
                "cpr" => Threshold::Cpr(percent()?),
                "clean-cpr" => Threshold::CleanCpr(percent()?),
                "violations" => Threshold::Violations(percent()?),
                "semantics-fail" => Threshold::SemanticsFail(
                    value
                        .trim()
                        .parse()
                        .map_err(|_| err(format!("{key}={value}: a count of cases, 0 or more")))?,
                ),
                other => {
                    return Err(err(format!(
                        "{other:?} is no threshold (cpr, clean-cpr, semantics-fail, violations)"
                    )))
                }
            });
        }
        if thresholds.is_empty() {
            return Err(err("no threshold given".into()));
        }
        Ok(Gate {
            spec: spec.to_string(),
            thresholds,
        })
    }

    /// Checks every threshold against every system that is not a control.
    pub fn check(&self, systems: &[GradeSystem]) -> GateOutcome {
        let mut checks = Vec::new();
        for sys in systems.iter().filter(|s| !s.control) {
            for t in &self.thresholds {
                checks.push(check_one(sys, *t));
            }
        }
        GateOutcome {
            spec: self.spec.clone(),
            checks,
        }
    }
}

fn check_one(sys: &GradeSystem, t: Threshold) -> GateCheck {
    let profile = |name: &str| sys.continuity.iter().find(|c| c.profile == name);
    let at_least = |rate: Option<f64>, min: f64, label: &str| {
        let measured = rate.map(|r| 100.0 * r);
        (
            format!("{label}>={min}"),
            measured.map_or("n/a".into(), |m| format!("{m:.2} %")),
            measured.is_some_and(|m| m >= min),
        )
    };
    let (threshold, measured, passed) = match t {
        Threshold::Cpr(min) => at_least(profile("paper").and_then(|f| f.cpr.rate), min, "cpr"),
        Threshold::CleanCpr(min) => at_least(
            profile("paper").and_then(|f| f.clean_cpr.rate),
            min,
            "clean-cpr",
        ),
        Threshold::SemanticsFail(max) => match sys.scorecard {
            Some(card) => (
                format!("semantics-fail<={max}"),
                format!("{} fail", card.fail),
                card.fail <= max,
            ),
            None => (format!("semantics-fail<={max}"), "n/a".into(), false),
        },
        Threshold::Violations(max) => {
            let worst = profile("degraded").and_then(|f| {
                f.contracts
                    .iter()
                    .filter_map(|c| c.broken.rate.map(|r| (c.contract.as_str(), 100.0 * r)))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
            });
            match worst {
                Some((contract, rate)) => (
                    format!("violations<={max}"),
                    format!("{rate:.2} % ({contract})"),
                    rate <= max,
                ),
                None => (format!("violations<={max}"), "n/a".into(), false),
            }
        }
    };
    GateCheck {
        system: sys.name.clone(),
        threshold,
        measured,
        passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::summary::{ContinuityFigures, Scorecard};

    fn system(name: &str, cpr: (u64, u64), fails: Option<u32>, control: bool) -> GradeSystem {
        GradeSystem {
            name: name.into(),
            kind: crate::grade::summary::GradedKind::Builtin,
            url: None,
            notes: String::new(),
            control,
            continuity: vec![ContinuityFigures {
                profile: "paper".into(),
                planned: cpr.1,
                events: cpr.1,
                cpr: cb_stats::rate(cpr.0, cpr.1),
                cpr_clustered: None,
                clean_cpr: cb_stats::rate(cpr.0, cpr.1),
                availability: cb_stats::rate(cpr.1, cpr.1),
                contracts: Vec::new(),
                latency_by_length: Vec::new(),
                latency_by_mode: Vec::new(),
                storm: false,
                warning: None,
                past_fault: None,
            }],
            scorecard: fails.map(|fail| Scorecard {
                fail,
                ..Scorecard::default()
            }),
            honesty: None,
            load: None,
            cases: Vec::new(),
            unmeasured: Vec::new(),
        }
    }

    #[test]
    fn parses_every_key_and_refuses_with_the_fix() {
        let gate = Gate::parse("cpr=95, clean-cpr=90%,semantics-fail=0,violations=5").unwrap();
        assert_eq!(
            gate.thresholds,
            [
                Threshold::Cpr(95.0),
                Threshold::CleanCpr(90.0),
                Threshold::SemanticsFail(0),
                Threshold::Violations(5.0)
            ]
        );
        for bad in [
            "",
            "cpr",
            "cpr=101",
            "speed=3",
            "semantics-fail=-1",
            "cpr=x",
        ] {
            let e = Gate::parse(bad).unwrap_err().to_string();
            assert!(e.contains("e.g. cpr=95"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_system_below_fails_one_above_passes_and_controls_are_left_out() {
        let gate = Gate::parse("cpr=95,semantics-fail=0").unwrap();
        let systems = [
            system("stateless", (0, 100), Some(0), true),
            system("history", (100, 100), Some(0), false),
        ];
        let outcome = gate.check(&systems);
        assert!(outcome.passed(), "{outcome:?}");
        assert!(outcome.checks.iter().all(|c| c.system == "history"));
        let systems = [system("gw", (90, 100), Some(2), false)];
        let outcome = gate.check(&systems);
        assert!(!outcome.passed());
        assert_eq!(outcome.checks[0].measured, "90.00 %");
        assert_eq!(outcome.checks[1].measured, "2 fail");
    }

    #[test]
    fn nothing_measured_never_meets_a_threshold() {
        let gate = Gate::parse("cpr=0,semantics-fail=100,violations=100").unwrap();
        let outcome = gate.check(&[system("gw", (0, 0), None, false)]);
        assert!(
            outcome
                .checks
                .iter()
                .all(|c| !c.passed && c.measured == "n/a"),
            "{outcome:?}"
        );
    }
}
