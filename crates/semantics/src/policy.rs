//! Every case's policy as one Markdown table, made from the catalogue
//! itself: what the upstream does, what passes, the bound of each request,
//! and the checks by severity. `docs/semantics.md` holds it between
//! markers and a test compares the two, so the book cannot state a policy
//! the code does not apply.

use crate::case::{Case, CheckId, Severity};

/// The checks every case has (the book states them once, above the
/// table).
pub const UNIVERSAL: [CheckId; 3] = [
    CheckId::NoHang,
    CheckId::NoTruncatedSuccess,
    CheckId::ContractsKept,
];

/// The table of `cases` (the full profile's, as the book states them),
/// without the [`UNIVERSAL`] checks.
pub fn table(cases: &[Case]) -> String {
    let mut out = String::from(
        "| case | what the upstream does | what passes | bound per request | checks (required; *advisory*; _(informational)_) |\n\
         |---|---|---|---|---|\n",
    );
    for case in cases {
        let names = |severity: Severity, wrap: fn(String) -> String| -> Option<String> {
            let names: Vec<String> = case
                .checks
                .iter()
                .filter(|c| c.severity == severity && !UNIVERSAL.contains(&c.id))
                .map(|c| wrap(format!("`{}`", c.id.name())))
                .collect();
            (!names.is_empty()).then(|| names.join(", "))
        };
        let checks: Vec<String> = [
            names(Severity::Required, |n| n),
            names(Severity::Advisory, |n| format!("*{n}*")),
            names(Severity::Informational, |n| format!("_({n})_")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let passes = if case.scored || case.passes.contains("not scored") {
            case.passes.to_string()
        } else {
            format!("{} (reported, not scored)", case.passes)
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            case.id,
            cell(&case.upstream),
            cell(&passes),
            seconds(case.bound.as_secs_f64()),
            if checks.is_empty() {
                "-".to_string()
            } else {
                checks.join("; ")
            }
        ));
    }
    out
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn seconds(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::catalogue;
    use crate::timing::{GiveUpBounds, Timing};

    #[test]
    fn every_case_is_a_row_with_its_bound_and_checks() {
        let cases = catalogue(&Timing::fast(), &GiveUpBounds::default(), false);
        let table = table(&cases);
        assert_eq!(table.lines().count(), cases.len() + 2);
        for case in &cases {
            assert!(table.contains(&format!("| `{}` |", case.id)), "{}", case.id);
        }
        assert!(
            !table.contains("`no_hang`"),
            "the universal checks are stated once"
        );
        assert!(table.contains("| `503` |") && table.contains("`failed_over`"));
    }
}
