//! Each contract's checker as measured: its recall on the labelled-degraded
//! replies and its false-positive rate on the labelled-clean ones of both
//! parts of the built-in calibration set (the figures `contracts
//! calibrate` prints), with the counts behind them, so that a power figure
//! rests on what the checkers do, not on a checker assumed perfect.

use super::model::Detector;
use cb_contracts::calibrate::{calibrate, load_part, CalibrationError, Label, Part};
use cb_contracts::{ContractName, Contracts};
use serde::Serialize;
use std::collections::BTreeMap;

/// One contract's measured checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Measured {
    /// Labelled-degraded replies it failed.
    pub caught: u64,
    /// Labelled-degraded replies it left undetermined.
    pub degraded_undetermined: u64,
    /// Labelled-degraded replies it judged (pass, fail or undetermined).
    pub degraded: u64,
    /// Labelled-clean replies it failed.
    pub false_positives: u64,
    /// Labelled-clean replies it left undetermined.
    pub clean_undetermined: u64,
    /// Labelled-clean replies it judged.
    pub clean: u64,
}

impl Measured {
    /// The rates, point estimates: recall 1 when no degraded reply was
    /// labelled (nothing says it misses), false-positive rate 0 when no
    /// clean one was.
    pub fn detector(&self) -> Detector {
        let rate = |k: u64, n: u64, empty: f64| if n == 0 { empty } else { k as f64 / n as f64 };
        Detector {
            recall: rate(self.caught, self.degraded, 1.0),
            undetermined_degraded: rate(self.degraded_undetermined, self.degraded, 0.0),
            fpr: rate(self.false_positives, self.clean, 0.0),
            undetermined_clean: rate(self.clean_undetermined, self.clean, 0.0),
        }
    }

    /// [`Measured::detector`], with the false-positive rate at the upper
    /// end of its 95 % interval when `upper`.
    pub fn detector_at(&self, upper: bool) -> Detector {
        let d = self.detector();
        if upper {
            Detector {
                fpr: self.fpr_upper(),
                ..d
            }
        } else {
            d
        }
    }

    /// The upper end of the 95 % Wilson interval of the false-positive
    /// rate: what the measurement cannot rule out.
    pub fn fpr_upper(&self) -> f64 {
        cb_stats::wilson(self.false_positives, self.clean, 0.95).hi
    }
}

/// [`measured`], worked out once per process (the calibration set is
/// built in, so the figures cannot change while it runs).
///
/// # Errors
/// As [`measured`], the error's text.
pub fn measured_once() -> Result<&'static BTreeMap<ContractName, Measured>, String> {
    static ONCE: std::sync::OnceLock<Result<BTreeMap<ContractName, Measured>, String>> =
        std::sync::OnceLock::new();
    ONCE.get_or_init(|| measured().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Every contract's checker, measured on both built-in parts.
///
/// # Errors
/// When a built-in part cannot be read (a build defect).
pub fn measured() -> Result<BTreeMap<ContractName, Measured>, CalibrationError> {
    let contracts = Contracts::default();
    let mut out: BTreeMap<ContractName, Measured> = BTreeMap::new();
    for part in [Part::Development, Part::HeldOut] {
        let (source, cases) = load_part(part, None)?;
        let report = calibrate(part, &source, &cases, &contracts);
        for c in &report.contracts {
            let m = out.entry(c.name).or_insert(Measured {
                caught: 0,
                degraded_undetermined: 0,
                degraded: 0,
                false_positives: 0,
                clean_undetermined: 0,
                clean: 0,
            });
            m.caught += c.confusion.count(Label::Fail, Some(Label::Fail));
            m.degraded_undetermined += c.confusion.count(Label::Fail, None);
            m.degraded += c.labelled_fail();
            m.false_positives += c.false_positives();
            m.clean_undetermined += c.confusion.count(Label::Pass, None);
            m.clean += c.labelled_pass();
        }
    }
    Ok(out)
}
