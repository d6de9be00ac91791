//! How a whole number is written wherever a person reads it: with a comma
//! between each group of three digits ("1,234,567"). The one grouping of
//! the tool: reports, cost estimates and the composed counts of a dataset
//! (which a scorer must accept as the dataset wrote them) all use it.

use std::fmt::Display;

/// `n`, an unsigned whole number (or the string of its digits), with a
/// comma between each group of three digits: `1234567` -> `"1,234,567"`,
/// `999` -> `"999"`.
pub fn thousands(n: impl Display) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_of_three_from_the_right() {
        assert_eq!(thousands(0u64), "0");
        assert_eq!(thousands(173u32), "173");
        assert_eq!(thousands(999u64), "999");
        assert_eq!(thousands(1000u64), "1,000");
        assert_eq!(thousands(48_173u32), "48,173");
        assert_eq!(thousands(148_173u32), "148,173");
        assert_eq!(thousands(1_048_173u32), "1,048,173");
        assert_eq!(thousands(1_234_567u64), "1,234,567");
        assert_eq!(thousands("13614"), "13,614");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
