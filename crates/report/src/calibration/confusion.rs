//! The confusion matrix of a calibration: for each of the two labels, how
//! many cases the checker decided one way, the other way, or left
//! undetermined; the figures read off it (agreement and Cohen's kappa on
//! the decided cases, the share decided wrongly per label), and the matrix
//! as a [`Table`].

use super::kappa::{agreement, cohens_kappa};
use crate::Table;
use serde::Serialize;
use std::marker::PhantomData;

/// A label with two values, as a labelled set writes it.
pub trait Binary: Copy + Eq + std::fmt::Debug {
    /// Both values, in the order of the matrix's rows and columns.
    const BOTH: [Self; 2];

    /// How reports name the value ("pass", "preserved").
    fn name(self) -> &'static str;
}

/// What the column of cases left undetermined is called.
pub const UNDETERMINED: &str = "undetermined";

/// How many cases of each label the checker said were of each label, or
/// left undetermined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct Confusion<L> {
    /// `matrix[label][said]`: rows and the first two columns in
    /// [`Binary::BOTH`] order, the third column undetermined.
    pub matrix: [[u64; 3]; 2],
    #[serde(skip)]
    label: PhantomData<L>,
}

impl<L: Binary> Default for Confusion<L> {
    fn default() -> Self {
        Confusion {
            matrix: [[0; 3]; 2],
            label: PhantomData,
        }
    }
}

/// Row or column of `value`.
fn index<L: Binary>(value: L) -> usize {
    usize::from(value != L::BOTH[0])
}

impl<L: Binary> Confusion<L> {
    /// Counts one case labelled `label` that the checker said was `said`
    /// (`None`: left undetermined).
    pub fn add(&mut self, label: L, said: Option<L>) {
        self.matrix[index(label)][said.map_or(2, index)] += 1;
    }

    /// Cases labelled `label` that the checker said were `said`.
    pub fn count(&self, label: L, said: Option<L>) -> u64 {
        self.matrix[index(label)][said.map_or(2, index)]
    }

    /// Cases labelled `label`.
    pub fn labelled(&self, label: L) -> u64 {
        self.matrix[index(label)].iter().sum()
    }

    /// The 2×2 matrix of decided cases.
    pub fn decided_matrix(&self) -> [[u64; 2]; 2] {
        let m = &self.matrix;
        [[m[0][0], m[0][1]], [m[1][0], m[1][1]]]
    }

    /// All cases.
    pub fn total(&self) -> u64 {
        self.matrix.iter().flatten().sum()
    }

    /// Cases left undetermined.
    pub fn undetermined(&self) -> u64 {
        self.matrix[0][2] + self.matrix[1][2]
    }

    /// Cases decided.
    pub fn decided(&self) -> u64 {
        self.total() - self.undetermined()
    }

    /// Decided cases whose verdict matches the label.
    pub fn correct(&self) -> u64 {
        self.matrix[0][0] + self.matrix[1][1]
    }

    /// Decided cases whose verdict contradicts the label.
    pub fn wrong(&self) -> u64 {
        self.matrix[0][1] + self.matrix[1][0]
    }

    /// Agreement with the labels over decided cases; `None` when none was
    /// decided.
    pub fn agreement(&self) -> Option<f64> {
        agreement(&self.decided_matrix())
    }

    /// Cohen's kappa over decided cases; `None` where it is undefined.
    pub fn kappa(&self) -> Option<f64> {
        cohens_kappa(&self.decided_matrix())
    }

    /// Decided cases labelled `label`.
    pub fn decided_of(&self, label: L) -> u64 {
        let row = self.matrix[index(label)];
        row[0] + row[1]
    }

    /// Of the decided cases labelled `label`, the share decided wrongly
    /// (for a checker whose first label is "clean", its false-positive rate
    /// on clean cases); `None` when none was decided.
    pub fn wrong_rate(&self, label: L) -> Option<f64> {
        let other = L::BOTH[1 - index(label)];
        let decided = self.decided_of(label);
        (decided > 0).then(|| self.count(label, Some(other)) as f64 / decided as f64)
    }

    /// The matrix as a table: `corner` heads the column of labels, one row
    /// per label, one column per verdict and one for undetermined.
    pub fn table(&self, corner: &str) -> Table {
        let [first, second] = L::BOTH;
        let mut table =
            Table::new([corner, first.name(), second.name(), UNDETERMINED]).right_aligned_from(1);
        for label in L::BOTH {
            let row = self.matrix[index(label)];
            table.push([
                label.name().to_string(),
                row[0].to_string(),
                row[1].to_string(),
                row[2].to_string(),
            ]);
        }
        table
    }
}

/// A proportion as a percentage with one decimal ("93.1 %"), or "n/a" when
/// nothing was measured: how calibration figures read.
pub fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_string(), |r| format!("{:.1} %", r * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Label {
        Kept,
        Broken,
    }

    impl Binary for Label {
        const BOTH: [Self; 2] = [Label::Kept, Label::Broken];
        fn name(self) -> &'static str {
            match self {
                Label::Kept => "kept",
                Label::Broken => "broken",
            }
        }
    }

    /// Wikipedia's "Cohen's kappa" example (20 yes-yes, 5 yes-no, 10
    /// no-yes, 15 no-no), with 3 and 4 cases left undetermined.
    fn example() -> Confusion<Label> {
        let mut c = Confusion::default();
        for (label, said, n) in [
            (Label::Kept, Some(Label::Kept), 20),
            (Label::Kept, Some(Label::Broken), 5),
            (Label::Kept, None, 3),
            (Label::Broken, Some(Label::Kept), 10),
            (Label::Broken, Some(Label::Broken), 15),
            (Label::Broken, None, 4),
        ] {
            for _ in 0..n {
                c.add(label, said);
            }
        }
        c
    }

    #[test]
    fn counts_and_figures() {
        let c = example();
        assert_eq!(c.matrix, [[20, 5, 3], [10, 15, 4]]);
        assert_eq!(c.count(Label::Broken, Some(Label::Kept)), 10);
        assert_eq!(
            (c.labelled(Label::Kept), c.labelled(Label::Broken)),
            (28, 29)
        );
        assert_eq!((c.total(), c.decided(), c.undetermined()), (57, 50, 7));
        assert_eq!((c.correct(), c.wrong()), (35, 15));
        assert!((c.agreement().unwrap() - 0.7).abs() < 1e-9);
        assert!((c.kappa().unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(c.decided_of(Label::Kept), 25);
        assert!((c.wrong_rate(Label::Kept).unwrap() - 0.2).abs() < 1e-9);
        assert!((c.wrong_rate(Label::Broken).unwrap() - 0.4).abs() < 1e-9);
        let empty = Confusion::<Label>::default();
        assert_eq!(
            (empty.agreement(), empty.wrong_rate(Label::Kept)),
            (None, None)
        );
    }

    #[test]
    fn the_matrix_renders_as_a_table() {
        let expected = "label   kept  broken  undetermined\n\
                        ------  ----  ------  ------------\n\
                        kept      20       5             3\n\
                        broken    10      15             4\n";
        assert_eq!(example().table("label").render(), expected);
    }

    #[test]
    fn percentages_have_one_decimal() {
        assert_eq!(percent(Some(0.931)), "93.1 %");
        assert_eq!(percent(Some(1.0)), "100.0 %");
        assert_eq!(percent(None), "n/a");
    }
}
