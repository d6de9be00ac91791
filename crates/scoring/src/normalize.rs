//! Text normalisation for matching: one tokenizer for answers, anchor values
//! and phrases, so that "ORIANE", "Oriane's", "forty-eight" and fullwidth
//! "４８" compare equal to what the dataset wrote, and matching happens on
//! whole words ("17" never matches inside "2017").
//!
//! Also the spellings a value may take in an answer: numbers in words,
//! dates in several formats. Spellings are split into *strong* ones, which
//! can only mean the value, and *weak* ones (a date without its year, a
//! numeric date whose day and month could be swapped), which only stop the
//! scorer from concluding the value is absent.

use cb_dataset::lexicon::{month_number, ordinal_suffix, MONTHS, MONTHS_SHORT, ONES, TENS};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Characters treated as an apostrophe.
const APOSTROPHES: [char; 5] = ['\'', '\u{2019}', '\u{2018}', '\u{02BC}', '`'];

/// Splits `text` into normalised words.
///
/// Steps: Unicode NFKC (fullwidth digits and letters become ASCII), full
/// case folding, removal of combining marks ("Zoë" → "zoe"), then words of
/// letters or digits; every other character separates words. Within a word:
/// a letter-digit boundary separates ("14th" → "14", "th"); a `.` between
/// digits is kept ("4.5" stays one word, so "5" does not match it); a `,`
/// before exactly three digits is a thousands separator and dropped
/// ("4,817" → "4817"); apostrophes are resolved: "n't" → "not" ("don't" →
/// "do", "not"; "can't" → "can", "not"), "'s" is dropped (possessive),
/// "'m"/"'re"/"'ve"/"'ll"/"'d" become "am"/"are"/"have"/"will"/"would", any
/// other apostrophe is removed ("O'Brien" → "obrien"). "cannot" becomes
/// "can", "not". Hyphens separate, so "forty-eight" → "forty", "eight".
pub fn tokens(text: &str) -> Vec<String> {
    let chars = if text.is_ascii() {
        ascii_chars(text)
    } else {
        unicode_chars(text)
    };

    let mut raw: Vec<String> = Vec::new();
    let mut cur = String::new();
    let digit = |c: Option<&char>| c.is_some_and(|c| c.is_numeric());
    let alnum = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|j| chars.get(j));
        let next = chars.get(i + 1);
        if c.is_alphanumeric() {
            let last = cur.chars().last();
            if let Some(last) = last {
                if last.is_alphanumeric() && last.is_numeric() != c.is_numeric() {
                    raw.push(std::mem::take(&mut cur));
                }
            }
            cur.push(c);
        } else if !cur.is_empty()
            && ((c == '\'' && alnum(prev) && alnum(next))
                || (c == '.' && digit(prev) && digit(next)))
        {
            // An apostrophe inside a word, or a decimal point.
            cur.push(c);
        } else if c == ','
            && digit(prev)
            && (1..=3).all(|k| digit(chars.get(i + k)))
            && !digit(chars.get(i + 4))
            && !cur.is_empty()
        {
            // Thousands separator: drop it and keep the number whole.
        } else if !cur.is_empty() {
            raw.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        raw.push(cur);
    }

    let mut out = Vec::with_capacity(raw.len());
    for word in raw {
        resolve_word(&word, &mut out);
    }
    out
}

/// The characters [`tokens`] splits: NFKC, full case folding, combining
/// marks removed, apostrophes unified.
fn unicode_chars(text: &str) -> Vec<char> {
    let nfkc: String = text.nfkc().collect();
    let folded = caseless::default_case_fold_str(&nfkc);
    folded
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .map(|c| if APOSTROPHES.contains(&c) { '\'' } else { c })
        .collect()
}

/// [`unicode_chars`] for ASCII text, where NFKC and NFD change nothing,
/// there is no combining mark and case folding is `A-Z` to `a-z`: the same
/// characters without the three Unicode passes (most answers are ASCII).
fn ascii_chars(text: &str) -> Vec<char> {
    text.bytes()
        .map(|b| match b.to_ascii_lowercase() {
            b'`' => '\'',
            b => char::from(b),
        })
        .collect()
}

/// Resolves contractions and possessives of one raw word into `out`.
fn resolve_word(word: &str, out: &mut Vec<String>) {
    let mut push = |w: &str| {
        let w: String = w.chars().filter(|c| *c != '\'').collect();
        if w == "cannot" {
            out.push("can".into());
            out.push("not".into());
        } else if !w.is_empty() {
            out.push(w);
        }
    };
    if !word.contains('\'') {
        push(word);
        return;
    }
    if let Some(base) = word.strip_suffix("n't") {
        let base = match base {
            "ca" => "can",
            "wo" => "will",
            "sha" => "shall",
            other => other,
        };
        push(base);
        push("not");
        return;
    }
    const SUFFIXES: [(&str, &str); 6] = [
        ("'s", ""),
        ("'m", "am"),
        ("'re", "are"),
        ("'ve", "have"),
        ("'ll", "will"),
        ("'d", "would"),
    ];
    for (suffix, expansion) in SUFFIXES {
        if let Some(base) = word.strip_suffix(suffix) {
            push(base);
            push(expansion);
            return;
        }
    }
    push(word);
}

/// Normalised words of `text` joined by single spaces (for messages and
/// length checks).
pub fn normalized(text: &str) -> String {
    tokens(text).join(" ")
}

/// Whether `phrase` occurs in `haystack` as a run of whole words; returns
/// the start index of every occurrence.
pub fn find_phrase(haystack: &[String], phrase: &[String]) -> Vec<usize> {
    if phrase.is_empty() || phrase.len() > haystack.len() {
        return Vec::new();
    }
    haystack
        .windows(phrase.len())
        .enumerate()
        .filter(|(_, w)| *w == phrase)
        .map(|(i, _)| i)
        .collect()
}

/// Words for 0..=99 ("forty eight").
fn below_hundred(n: u64) -> Vec<&'static str> {
    let n = n as usize;
    if n < 20 {
        vec![ONES[n]]
    } else if n % 10 == 0 {
        vec![TENS[n / 10]]
    } else {
        vec![TENS[n / 10], ONES[n % 10]]
    }
}

/// Words for 1..=999, with "and" before the tens when `and` is set
/// ("eight hundred and seventeen").
fn below_thousand(n: u64, and: bool) -> Vec<&'static str> {
    let mut w = Vec::new();
    if n >= 100 {
        w.push(ONES[(n / 100) as usize]);
        w.push("hundred");
        if n % 100 != 0 && and {
            w.push("and");
        }
    }
    if n % 100 != 0 || n < 100 {
        w.extend(below_hundred(n % 100));
    }
    w
}

/// English cardinal words for `n` below one billion, in the forms an answer
/// may use: without "and" (US) and, where it differs, with it (UK).
/// `4817` → "four thousand eight hundred seventeen", "four thousand eight
/// hundred and seventeen". Larger numbers give no forms.
pub fn number_words(n: u64) -> Vec<String> {
    if n >= 1_000_000_000 {
        return Vec::new();
    }
    if n == 0 {
        return vec!["zero".into()];
    }
    let mut forms = Vec::new();
    for and in [false, true] {
        let mut w: Vec<&str> = Vec::new();
        let (millions, thousands, rest) = (n / 1_000_000, n / 1000 % 1000, n % 1000);
        if millions > 0 {
            w.extend(below_thousand(millions, and));
            w.push("million");
        }
        if thousands > 0 {
            w.extend(below_thousand(thousands, and));
            w.push("thousand");
        }
        if rest > 0 {
            if and && n >= 1000 && rest < 100 {
                w.push("and");
            }
            w.extend(below_thousand(rest, and));
        }
        let form = w.join(" ");
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

/// Parses a `YYYY-MM-DD` date into (year, month, day).
pub fn parse_iso_date(text: &str) -> Option<(u32, u32, u32)> {
    let text = text.trim();
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(y) && all_digits(m) && all_digits(d)) {
        return None;
    }
    let (y, m, d) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

/// Parses a date written with its month name and year, day first or month
/// first ("14 March 2031", "March 14th, 2031", "the 14th of Mar 2031").
pub fn parse_written_date(text: &str) -> Option<(u32, u32, u32)> {
    let words: Vec<String> = tokens(text)
        .into_iter()
        .filter(|w| !matches!(w.as_str(), "st" | "nd" | "rd" | "th" | "of" | "the"))
        .collect();
    let [a, b, c] = words.as_slice() else {
        return None;
    };
    let (m, day) = match (month_number(a), month_number(b)) {
        (Some(m), None) => (m, b),
        (None, Some(m)) => (m, a),
        _ => return None,
    };
    let numeric = |w: &str| w.bytes().all(|b| b.is_ascii_digit());
    if !(numeric(day) && numeric(c) && c.len() == 4 && day.len() <= 2) {
        return None;
    }
    let d: u32 = day.parse().ok()?;
    let y: u32 = c.parse().ok()?;
    (1..=31).contains(&d).then_some((y, m, d))
}

/// Parses an English cardinal in words ("three hundred and twelve",
/// "forty-eight") below one billion. Anything that is not purely number
/// words gives `None`.
pub fn parse_number_words(text: &str) -> Option<u64> {
    let words = tokens(text);
    let (mut total, mut current, mut seen) = (0u64, 0u64, false);
    for w in &words {
        if w == "and" && seen {
            continue;
        }
        if let Some(n) = ONES.iter().position(|x| x == w) {
            current += n as u64;
        } else if let Some(n) = TENS.iter().position(|x| !x.is_empty() && x == w) {
            current += 10 * n as u64;
        } else if w == "hundred" {
            current = current.max(1) * 100;
        } else if w == "thousand" || w == "million" {
            let scale = if w == "thousand" { 1000 } else { 1_000_000 };
            total += current.max(1) * scale;
            current = 0;
        } else {
            return None;
        }
        seen = true;
    }
    seen.then_some(total + current)
}

/// Spellings of one value, as normalised word sequences.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spellings {
    /// Forms that can only mean this value.
    pub strong: Vec<Vec<String>>,
    /// Forms that may mean this value (a date without year, a numeric date
    /// whose day and month could be swapped, one word of a several-word
    /// value). They never confirm the value, only stop the scorer from
    /// concluding it is absent.
    pub weak: Vec<Vec<String>>,
}

impl Spellings {
    fn add_strong(&mut self, text: &str) {
        push_unique(&mut self.strong, tokens(text));
    }

    fn add_weak(&mut self, text: &str) {
        push_unique(&mut self.weak, tokens(text));
    }
}

fn push_unique(list: &mut Vec<Vec<String>>, t: Vec<String>) {
    if !t.is_empty() && !list.contains(&t) {
        list.push(t);
    }
}

/// Every spelling of a value given as `forms` (the canonical value and the
/// dataset's variants): the forms themselves, and for each form that is an
/// ISO date or a plain number, the date formats and number words it may be
/// written in.
pub fn spellings<'a>(forms: impl IntoIterator<Item = &'a str>) -> Spellings {
    let mut s = Spellings::default();
    for form in forms {
        s.add_strong(form);
        if let Some((y, m, d)) = parse_iso_date(form).or_else(|| parse_written_date(form)) {
            add_date(&mut s, y, m, d);
        }
        let trimmed = form.trim();
        if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
            add_number(&mut s, trimmed);
        } else if let Some(n) = parse_number_words(form) {
            add_number(&mut s, &n.to_string());
        }
    }
    // One word of a several-word value ("Mary" of "Mary Anne") may be a
    // partial answer: weak.
    let strong = s.strong.clone();
    for form in strong.iter().filter(|f| f.len() > 1) {
        for word in form {
            if word.chars().count() >= 4 && word.chars().all(char::is_alphabetic) {
                push_unique(&mut s.weak, vec![word.clone()]);
            }
        }
    }
    s.weak.retain(|w| !strong.contains(w));
    s
}

/// Number spellings of a digit string: the digits, words for quantities, and for codes
/// (three or more digits, or a leading zero) digit by digit.
fn add_number(s: &mut Spellings, digits: &str) {
    s.add_strong(digits);
    if !digits.starts_with('0') || digits.len() == 1 {
        if let Ok(n) = digits.parse::<u64>() {
            for w in number_words(n) {
                s.add_strong(&w);
            }
        }
    }
    if digits.len() >= 3 || (digits.starts_with('0') && digits.len() > 1) {
        let spaced: Vec<String> = digits.chars().map(String::from).collect();
        s.add_strong(&spaced.join(" "));
        let words: Vec<&str> = digits
            .bytes()
            .map(|b| ONES[usize::from(b - b'0')])
            .collect();
        s.add_strong(&words.join(" "));
    }
}

/// Date spellings of (year, month, day).
fn add_date(s: &mut Spellings, y: u32, m: u32, d: u32) {
    let idx = (m - 1) as usize;
    let suf = ordinal_suffix(d);
    for month in [MONTHS[idx], MONTHS_SHORT[idx]] {
        for (day, sfx) in [
            (format!("{d}"), ""),
            (format!("{d}"), suf),
            (format!("{d:02}"), ""),
        ] {
            s.add_strong(&format!("{day}{sfx} {month} {y}"));
            s.add_strong(&format!("{month} {day}{sfx} {y}"));
            s.add_strong(&format!("{day}{sfx} of {month} {y}"));
            s.add_weak(&format!("{day}{sfx} {month}"));
            s.add_weak(&format!("{month} {day}{sfx}"));
            s.add_weak(&format!("{day}{sfx} of {month}"));
        }
        s.add_weak(&format!("{month} {y}"));
    }
    s.add_strong(&format!("{y}-{m:02}-{d:02}"));
    s.add_strong(&format!("{y}-{m}-{d}"));
    // Day-first and month-first numeric dates mean the same day only when
    // they cannot be read the other way round.
    let unambiguous = d > 12 || d == m;
    let numeric = [
        format!("{d}/{m}/{y}"),
        format!("{d:02}/{m:02}/{y}"),
        format!("{m}/{d}/{y}"),
        format!("{m:02}/{d:02}/{y}"),
        format!("{d}.{m}.{y}"),
        format!("{d:02}.{m:02}.{y}"),
    ];
    for form in &numeric {
        if unambiguous {
            s.add_strong(form);
        } else {
            s.add_weak(form);
        }
    }
    for form in [
        format!("{d}/{m}"),
        format!("{m}/{d}"),
        format!("{d:02}/{m:02}"),
        format!("{m:02}/{d:02}"),
        format!("{d}.{m}"),
        format!("{d:02}.{m:02}"),
    ] {
        s.add_weak(&form);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Vec<String> {
        tokens(text)
    }

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn case_fold_nfkc_and_marks() {
        assert_eq!(t("ORIANE"), words("oriane"));
        assert_eq!(t("４８１７"), words("4817"));
        assert_eq!(t("Ｏｒｉａｎｅ"), words("oriane"));
        assert_eq!(t("Straße"), words("strasse"));
        assert_eq!(t("Zoë in Tromsø"), words("zoe in tromsø"));
    }

    /// The ASCII shortcut gives exactly the Unicode passes' characters: on
    /// every ASCII character, and on seeded random ASCII strings.
    #[test]
    fn ascii_shortcut_matches_the_unicode_passes() {
        let all: String = (0u8..=127).map(char::from).collect();
        assert_eq!(ascii_chars(&all), unicode_chars(&all));
        use rand::Rng;
        let mut rng = cb_base::seed::rng(7, "ascii-tokens-test", 0);
        for _ in 0..2000 {
            let len = rng.random_range(0..40);
            let text: String = (0..len)
                .map(|_| char::from(rng.random_range(0u8..=127)))
                .collect();
            assert_eq!(ascii_chars(&text), unicode_chars(&text), "{text:?}");
        }
    }

    #[test]
    fn punctuation_hyphens_and_apostrophes() {
        assert_eq!(t("forty-eight"), t("forty eight"));
        assert_eq!(t("It's Oriane's!"), words("it oriane"));
        assert_eq!(t("I don’t know"), words("i do not know"));
        assert_eq!(
            t("I can't recall; I cannot"),
            words("i can not recall i can not")
        );
        assert_eq!(t("I'm sure you've"), words("i am sure you have"));
        assert_eq!(t("O'Brien"), words("obrien"));
        assert_eq!(t("'quoted'"), words("quoted"));
    }

    #[test]
    fn numbers_keep_their_shape() {
        assert_eq!(t("4,817 units"), words("4817 units"));
        assert_eq!(t("1,2,3"), words("1 2 3"));
        assert_eq!(t("4.5 kg."), words("4.5 kg"));
        assert_eq!(t("14th"), words("14 th"));
        assert_eq!(t("2031-03-14"), words("2031 03 14"));
        assert_eq!(t("14/03/2031"), words("14 03 2031"));
    }

    #[test]
    fn whole_words_only() {
        let hay = t("It was in 2017 with Annabel");
        assert!(find_phrase(&hay, &t("17")).is_empty());
        assert!(find_phrase(&hay, &t("Ann")).is_empty());
        assert_eq!(find_phrase(&hay, &t("2017")), vec![3]);
        assert_eq!(find_phrase(&t("Ann and Ann"), &t("ann")), vec![0, 2]);
    }

    #[test]
    fn cardinal_words() {
        assert_eq!(number_words(48), vec!["forty eight"]);
        assert_eq!(number_words(0), vec!["zero"]);
        assert_eq!(number_words(13), vec!["thirteen"]);
        assert_eq!(
            number_words(4817),
            vec![
                "four thousand eight hundred seventeen",
                "four thousand eight hundred and seventeen"
            ]
        );
        assert_eq!(
            number_words(2005),
            vec!["two thousand five", "two thousand and five"]
        );
        assert_eq!(number_words(300), vec!["three hundred"]);
        assert_eq!(
            number_words(1_000_020),
            vec!["one million twenty", "one million and twenty"]
        );
        assert!(number_words(1_000_000_000).is_empty());
    }

    #[test]
    fn iso_dates_parse_strictly() {
        assert_eq!(parse_iso_date("2031-03-14"), Some((2031, 3, 14)));
        assert_eq!(parse_iso_date("2031-13-14"), None);
        assert_eq!(parse_iso_date("2031-3-14"), None);
        assert_eq!(parse_iso_date("Oriane"), None);
    }

    #[test]
    fn date_spellings_are_conservative() {
        let s = spellings(["2031-03-14"]);
        for form in [
            "14 March 2031",
            "March 14, 2031",
            "14th of March 2031",
            "Mar 14th 2031",
            "14/03/2031",
            "03/14/2031",
            "14.03.2031",
            "2031-03-14",
        ] {
            assert!(s.strong.contains(&t(form)), "{form}");
        }
        assert!(s.weak.contains(&t("14 March")));
        assert!(!s.strong.contains(&t("14 March")));

        // 4 March: 04/03 could be 3 April read month-first.
        let s = spellings(["2031-03-04"]);
        assert!(!s.strong.contains(&t("04/03/2031")));
        assert!(s.weak.contains(&t("04/03/2031")));
        assert!(s.strong.contains(&t("4th March 2031")));
    }

    #[test]
    fn written_dates_and_number_words_parse() {
        assert_eq!(parse_written_date("14 March 2031"), Some((2031, 3, 14)));
        assert_eq!(parse_written_date("March 14, 2031"), Some((2031, 3, 14)));
        assert_eq!(
            parse_written_date("the 9th of Sept 2030"),
            Some((2030, 9, 9))
        );
        assert_eq!(parse_written_date("14 March"), None);
        assert_eq!(parse_written_date("Oriane 14 2031"), None);
        assert_eq!(parse_number_words("three hundred and twelve"), Some(312));
        assert_eq!(parse_number_words("forty-eight"), Some(48));
        assert_eq!(
            parse_number_words("four thousand eight hundred seventeen"),
            Some(4817)
        );
        assert_eq!(parse_number_words("forty chairs"), None);
        assert_eq!(parse_number_words("and"), None);
        // A written distractor gets the other spellings too.
        let s = spellings(["9 May 2031"]);
        assert!(s.strong.contains(&t("May 9th, 2031")));
        let s = spellings(["three hundred and twelve"]);
        assert!(s.strong.contains(&t("312")));
    }

    #[test]
    fn number_spellings() {
        let s = spellings(["48"]);
        assert!(s.strong.contains(&t("forty-eight")));
        let s = spellings(["0417"]);
        assert!(s.strong.contains(&t("zero four one seven")));
        assert!(s.strong.contains(&t("0 4 1 7")));
        assert!(!s.strong.iter().any(|f| f.contains(&"hundred".to_string())));
    }

    #[test]
    fn several_word_values_have_weak_parts() {
        let s = spellings(["Mary Anne"]);
        assert!(s.strong.contains(&t("mary anne")));
        assert!(s.weak.contains(&t("mary")));
        assert!(s.weak.contains(&t("anne")));
    }

    /// Composed anchor values (counts, dates) read back through the
    /// scorer's normalizer as the values they stand for.
    #[test]
    fn drawn_values_have_the_promised_shape_and_parse_back() {
        let mut rng = cb_base::seed::rng(1, "compose-test", 0);
        for _ in 0..500 {
            let code = cb_dataset::compose::Compose::Code(8).draw(&mut rng);
            assert_eq!(code.value.len(), 8);
            assert!(!code.value.starts_with('0'));
            assert_eq!(code.variants, vec![code.value.clone()]);

            let count = cb_dataset::compose::Compose::Count(100_000, 999_999).draw(&mut rng);
            assert_eq!(count.value.len(), 6);
            assert_eq!(count.written.len(), 7);
            // The scorer reads "148,173" as the number 148173.
            assert_eq!(tokens(&count.written), vec![count.value.clone()]);
            assert_eq!(
                count.variants,
                vec![count.value.clone(), count.written.clone()]
            );

            let date = cb_dataset::compose::Compose::Date(1600, 1699).draw(&mut rng);
            let ymd = parse_iso_date(&date.value).unwrap();
            assert!((1600..=1699).contains(&ymd.0));
            assert_eq!(date.variants.len(), 3);
            assert!(date.variants.contains(&date.written));
            for v in &date.variants[1..] {
                assert_eq!(parse_written_date(v), Some(ymd), "{v}");
            }

            let word =
                cb_dataset::compose::Compose::Word(&cb_dataset::syllables::FEMININE).draw(&mut rng);
            assert_eq!(word.variants, vec![word.value.clone()]);
        }
    }
}
