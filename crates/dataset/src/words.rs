//! The words numbers and dates are written in: English number words, month
//! names, weekdays and the ordinal suffixes of days. One table for both ends: the generator spells
//! quantities and dates with it, the scorer reads answers with it, and a
//! composed value may never be one of its words (the scorer would read it
//! as a number or a date).

/// English words for 0..=19.
pub const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

/// English words for the tens, by tens digit (empty below twenty).
pub const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// The words that scale what comes before them, below one billion.
pub const SCALES: [&str; 3] = ["hundred", "thousand", "million"];

/// Month names, January first, as the dataset writes them.
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Three-letter month names, January first, lower case.
pub const MONTHS_SHORT: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The one other short month name an answer may use (September).
const SEPT: &str = "sept";

/// Weekday names, Monday first.
pub const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The month (1 for January) that `word` names: a full name, a
/// three-letter one or "sept", in any ASCII case.
pub fn month_number(word: &str) -> Option<u32> {
    let index = MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(word))
        .or_else(|| {
            MONTHS_SHORT
                .iter()
                .position(|m| m.eq_ignore_ascii_case(word))
        })
        .or_else(|| SEPT.eq_ignore_ascii_case(word).then_some(8))?;
    u32::try_from(index + 1).ok()
}

/// The English ordinal suffix of a day: "st", "nd", "rd" or "th" ("1st",
/// "12th", "22nd", "31st").
pub fn ordinal_suffix(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (1, n) if n != 11 => "st",
        (2, n) if n != 12 => "nd",
        (3, n) if n != 13 => "rd",
        _ => "th",
    }
}

/// Every word of the table: number words, scale words, month names (full
/// and short) and weekdays.
pub fn all() -> impl Iterator<Item = &'static str> {
    ONES.into_iter()
        .chain(TENS.into_iter().filter(|t| !t.is_empty()))
        .chain(SCALES)
        .chain(MONTHS)
        .chain(MONTHS_SHORT)
        .chain([SEPT])
        .chain(WEEKDAYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_are_read_in_every_spelling() {
        assert_eq!(month_number("january"), Some(1));
        assert_eq!(month_number("March"), Some(3));
        assert_eq!(month_number("SEP"), Some(9));
        assert_eq!(month_number("sept"), Some(9));
        assert_eq!(month_number("may"), Some(5));
        assert_eq!(month_number("dec"), Some(12));
        assert_eq!(month_number("marchy"), None);
        assert_eq!(month_number("monday"), None);
    }

    #[test]
    fn ordinal_suffixes() {
        let suffixes: Vec<&str> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31]
            .into_iter()
            .map(ordinal_suffix)
            .collect();
        assert_eq!(
            suffixes,
            ["st", "nd", "rd", "th", "th", "th", "th", "st", "nd", "rd", "st"]
        );
    }

    #[test]
    fn the_table_holds_every_word_once_but_may() {
        let words: Vec<String> = all().map(str::to_lowercase).collect();
        // 20 ones, 8 tens, 3 scales, 12 + 12 + 1 months, 7 weekdays.
        assert_eq!(words.len(), 63);
        let mut unique = words.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            unique.len(),
            62,
            "only \"may\" is both a month and its short form"
        );
        assert!(words.iter().all(|w| !w.is_empty()));
    }
}
