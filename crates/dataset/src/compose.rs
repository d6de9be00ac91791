//! Where the values of a composed dataset come from: words built from
//! syllables, digit codes and counts over wide ranges, and dates spread over
//! many years, each with the spellings a scorer should accept.
//!
//! Curated lists run out at a few hundred conversations; composed values
//! reach hundreds of thousands while staying hard to guess. The spellings are
//! chosen so that distinct values never hide in one another: every count has
//! six digits (written "148,173"), and dates are written "the 4th of March
//! 1653" or "March 4, 1653", never "4 March 1653", which would sit inside
//! "14 March 1653".

use super::pools::{draw_code, looks_guessable, Drawn};
use super::syllables::Shape;
use super::words::{ordinal_suffix, MONTHS};
use cb_base::number::thousands;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// How the values of one subject are composed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compose {
    /// A word (or estate and kind) built from syllables.
    Word(&'static Shape),
    /// A numeric code of exactly this many digits (first digit not zero).
    Code(u32),
    /// A count between these bounds (inclusive), written with a thousands
    /// separator.
    Count(u32, u32),
    /// A calendar date between these years (inclusive).
    Date(i32, i32),
}

impl Compose {
    /// Draws a candidate value; the caller checks it is free.
    pub fn draw(self, rng: &mut ChaCha8Rng) -> Drawn {
        match self {
            Compose::Word(shape) => Drawn::plain(shape.draw(rng)),
            Compose::Code(digits) => draw_code(rng, digits),
            Compose::Count(low, high) => {
                let n = loop {
                    let n = rng.random_range(low..=high);
                    if n % 100 != 0 && !looks_guessable(&n.to_string()) {
                        break n;
                    }
                };
                let value = n.to_string();
                let grouped = thousands(n);
                Drawn {
                    written: grouped.clone(),
                    variants: vec![value.clone(), grouped],
                    value,
                }
            }
            Compose::Date(from, to) => {
                let year = rng.random_range(from..=to);
                let month = rng.random_range(1..=12u32);
                let day = rng.random_range(1..=days_in_month(year, month));
                let name = MONTHS[month as usize - 1];
                let iso = format!("{year:04}-{month:02}-{day:02}");
                let british = format!("the {day}{} of {name} {year}", ordinal_suffix(day));
                let american = format!("{name} {day}, {year}");
                Drawn::date(rng, iso, british, american)
            }
        }
    }

    /// Number of distinct values this composer can make (for words, by
    /// middle count: see [`Shape::classes`]).
    pub fn space(self) -> u64 {
        match self {
            Compose::Word(shape) => shape.classes().iter().map(|(_, n)| n).sum(),
            Compose::Code(digits) => 9 * 10u64.pow(digits - 1),
            Compose::Count(low, high) => u64::from(high - low + 1),
            Compose::Date(from, to) => (from..=to)
                .map(|y| if is_leap(y) { 366 } else { 365 })
                .sum(),
        }
    }
}

/// Whether `year` is a leap year of the (proleptic) Gregorian calendar.
fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1-12) of `year`.
fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_arithmetic() {
        assert!(is_leap(2000) && is_leap(1704) && !is_leap(1900) && !is_leap(1701));
        assert_eq!(days_in_month(1700, 2), 28);
        assert_eq!(days_in_month(1704, 2), 29);
        assert_eq!(days_in_month(1987, 9), 30);
        assert_eq!(Compose::Date(1999, 2000).space(), 365 + 366);
    }

    #[test]
    fn date_spellings_never_nest() {
        // "4 March" sits inside "14 March"; the composed spellings do not.
        let days = |d: u32| {
            let s = format!("the {d}{} of March 1653", ordinal_suffix(d));
            let a = format!("March {d}, 1653");
            [s, a]
        };
        for d in 1..=31 {
            for e in 1..=31 {
                if d == e {
                    continue;
                }
                for x in days(d) {
                    for y in days(e) {
                        assert!(!y.contains(&x), "{x} inside {y}");
                    }
                }
            }
        }
    }
}
