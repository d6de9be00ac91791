//! Cohen's kappa and plain agreement on a confusion matrix: how far two
//! raters (the hand labels and a scorer) agree beyond what chance gives.
//! Pure functions, checked against textbook values.

/// Cohen's kappa of a K×K confusion matrix `m[rater_a][rater_b]`.
///
/// κ = (p_o − p_e) / (1 − p_e), with p_o the observed agreement (the
/// diagonal over the total) and p_e the agreement expected by chance from the
/// two raters' marginals. Returns `None` when the matrix is empty or when
/// chance agreement is 1 (both raters used one single category), where κ is
/// undefined.
pub fn cohens_kappa<const K: usize>(m: &[[u64; K]; K]) -> Option<f64> {
    let total: u64 = m.iter().flatten().sum();
    if total == 0 {
        return None;
    }
    let n = total as f64;
    let observed = (0..K).map(|i| m[i][i]).sum::<u64>() as f64 / n;
    let expected: f64 = (0..K)
        .map(|i| {
            let row: u64 = m[i].iter().sum();
            let col: u64 = m.iter().map(|r| r[i]).sum();
            (row as f64 / n) * (col as f64 / n)
        })
        .sum();
    if (1.0 - expected).abs() < f64::EPSILON {
        return None;
    }
    Some((observed - expected) / (1.0 - expected))
}

/// Observed agreement (diagonal over total) of a K×K confusion matrix;
/// `None` when it is empty.
pub fn agreement<const K: usize>(m: &[[u64; K]; K]) -> Option<f64> {
    let total: u64 = m.iter().flatten().sum();
    if total == 0 {
        return None;
    }
    Some((0..K).map(|i| m[i][i]).sum::<u64>() as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: f64 = 1e-4;

    #[test]
    fn wikipedia_example_is_0_4() {
        // Wikipedia "Cohen's kappa", simple example: 20 yes-yes, 5 yes-no,
        // 10 no-yes, 15 no-no: p_o = 0.7, p_e = 0.5, kappa = 0.4.
        let m = [[20, 5], [10, 15]];
        assert!((agreement(&m).unwrap() - 0.7).abs() < TOL);
        assert!((cohens_kappa(&m).unwrap() - 0.4).abs() < TOL);
    }

    #[test]
    fn wikipedia_same_agreement_different_kappa() {
        // Wikipedia: two tables with p_o = 0.60 and kappa 0.1304 and 0.2593.
        let a = [[45, 15], [25, 15]];
        let b = [[25, 35], [5, 35]];
        assert!((agreement(&a).unwrap() - 0.6).abs() < TOL);
        assert!((agreement(&b).unwrap() - 0.6).abs() < TOL);
        assert!((cohens_kappa(&a).unwrap() - 0.1304).abs() < TOL);
        assert!((cohens_kappa(&b).unwrap() - 0.2593).abs() < TOL);
    }

    #[test]
    fn perfect_agreement_is_1() {
        assert!((cohens_kappa(&[[37, 0], [0, 83]]).unwrap() - 1.0).abs() < TOL);
        assert!((cohens_kappa(&[[5, 0, 0], [0, 6, 0], [0, 0, 7]]).unwrap() - 1.0).abs() < TOL);
    }

    #[test]
    fn chance_level_is_0_and_anti_agreement_is_negative() {
        assert!(cohens_kappa(&[[25, 25], [25, 25]]).unwrap().abs() < TOL);
        assert!((cohens_kappa(&[[0, 10], [10, 0]]).unwrap() + 1.0).abs() < TOL);
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(cohens_kappa(&[[0, 0], [0, 0]]), None);
        assert_eq!(agreement(&[[0, 0], [0, 0]]), None);
        // Both raters always said "yes": chance agreement is 1.
        assert_eq!(cohens_kappa(&[[12, 0], [0, 0]]), None);
    }
}
