//! Calibration: how far a checker (the answer contracts, the fast-path
//! scorer, the judge) can be trusted, measured on a hand-labelled set.
//!
//! One piece for every calibration command: the loader of labelled sets
//! (JSONL, one case a line, checked as it is read, with one error type
//! whose messages name the file, the line and the fix: [`set`]), the
//! confusion matrix of labels against what a checker said, with agreement
//! and Cohen's kappa ([`confusion`], [`kappa`]), and its figures rendered
//! through the one [`Table`](crate::Table).
//!
//! A command defines its cases and its two labels; this module never knows
//! which checker it is measuring.

pub mod confusion;
pub mod kappa;
pub mod set;

pub use confusion::{percent, Binary, Confusion, UNDETERMINED};
pub use set::{load, parse, CalibrationError, LabelledCase};
