//! Where the values of curated datasets come from (the default and anything
//! up to 300 conversations; larger ones are composed, see
//! [`super::compose`]): fixed lists of uncommon names, places and tastes,
//! and seeded generators for codes, quantities, dates and invented words,
//! each with the spellings a scorer should accept.
//!
//! Values are chosen to be hard to guess (no "blue", no two-digit numbers) and
//! easy to recognise in an answer (no value is an ordinary English word).

use super::words::{MONTHS, ONES, TENS};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use unicode_normalization::UnicodeNormalization;

/// How the values of one subject are produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// A fixed list; each anchor takes an entry no other conversation uses.
    List(&'static [&'static str]),
    /// A numeric code of exactly this many digits (first digit not zero).
    Code(u32),
    /// A three-digit quantity, written in digits or words.
    Quantity,
    /// A calendar date between these years (inclusive).
    Date(i32, i32),
    /// A made-up word built from syllables.
    Invented,
}

/// One drawn value: canonical form, the form the sentence uses, and every
/// accepted spelling (always including the canonical form and the written one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    /// The canonical value stored as `Anchor::value`.
    pub value: String,
    /// How the user writes it in the sentence.
    pub written: String,
    /// Every accepted spelling, canonical first.
    pub variants: Vec<String>,
}

impl Drawn {
    /// A value written as it is and accepted in that one spelling.
    pub fn plain(value: String) -> Drawn {
        Drawn {
            written: value.clone(),
            variants: vec![value.clone()],
            value,
        }
    }

    /// A date stored as `iso`, accepted in its British and American
    /// spellings, and written in one of the two, drawn evenly.
    pub(super) fn date(
        rng: &mut ChaCha8Rng,
        iso: String,
        british: String,
        american: String,
    ) -> Drawn {
        let written = if rng.random_bool(0.5) {
            british.clone()
        } else {
            american.clone()
        };
        Drawn {
            written,
            variants: vec![iso.clone(), british, american],
            value: iso,
        }
    }
}

/// A numeric code of exactly `digits` digits (first digit not zero) that
/// does not look guessable ([`looks_guessable`]), accepted as written.
pub(super) fn draw_code(rng: &mut ChaCha8Rng, digits: u32) -> Drawn {
    let (low, high) = (10u64.pow(digits - 1), 10u64.pow(digits));
    let value = loop {
        let n = rng.random_range(low..high).to_string();
        if !looks_guessable(&n) {
            break n;
        }
    };
    Drawn::plain(value)
}

impl Pool {
    /// Number of distinct values a list offers; `None` for generated pools,
    /// which are effectively unbounded.
    pub fn capacity(self) -> Option<usize> {
        match self {
            Pool::List(values) => Some(values.len()),
            _ => None,
        }
    }

    /// Draws a fresh candidate value. For lists, `index` picks the entry (the
    /// caller walks a shuffled order); generated pools ignore it.
    pub fn draw(self, rng: &mut ChaCha8Rng, index: usize) -> Drawn {
        match self {
            Pool::List(values) => {
                let value = values[index % values.len()].to_string();
                let mut variants = vec![value.clone()];
                let folded = fold_ascii(&value);
                if folded != value {
                    variants.push(folded);
                }
                Drawn {
                    written: value.clone(),
                    value,
                    variants,
                }
            }
            Pool::Code(digits) => draw_code(rng, digits),
            Pool::Quantity => {
                let n = loop {
                    let n: u32 = rng.random_range(120..1000);
                    if n % 50 != 0 && !looks_guessable(&n.to_string()) {
                        break n;
                    }
                };
                let value = n.to_string();
                let british = number_words(n, true);
                let american = number_words(n, false);
                // Most people write quantities in digits; some spell them out.
                let written = if rng.random_bool(0.25) {
                    british.clone()
                } else {
                    value.clone()
                };
                Drawn {
                    written,
                    variants: vec![value.clone(), british, american],
                    value,
                }
            }
            Pool::Date(from, to) => {
                let year = rng.random_range(from..=to);
                let month = rng.random_range(1..=12usize);
                let day = rng.random_range(1..=28u32);
                let name = MONTHS[month - 1];
                let iso = format!("{year:04}-{month:02}-{day:02}");
                let british = format!("{day} {name} {year}");
                let american = format!("{name} {day}, {year}");
                Drawn::date(rng, iso, british, american)
            }
            Pool::Invented => {
                let first = INVENTED_FIRST[rng.random_range(0..INVENTED_FIRST.len())];
                let middle = INVENTED_MIDDLE[rng.random_range(0..INVENTED_MIDDLE.len())];
                let last = INVENTED_LAST[rng.random_range(0..INVENTED_LAST.len())];
                Drawn::plain(format!("{first}{middle}{last}"))
            }
        }
    }
}

/// True for digit strings a person might guess: runs like 12345, or one
/// digit repeated.
pub(super) fn looks_guessable(digits: &str) -> bool {
    let bytes = digits.as_bytes();
    let all_same = bytes.iter().all(|b| *b == bytes[0]);
    let ascending = bytes.windows(2).all(|w| w[1] == w[0] + 1);
    let descending = bytes.windows(2).all(|w| w[0] == w[1] + 1);
    all_same || ascending || descending
}

/// English words for 100..=999: "three hundred and forty-seven" (British,
/// with "and") or "three hundred forty-seven".
pub fn number_words(n: u32, with_and: bool) -> String {
    let below_hundred = |m: u32| -> String {
        if m < 20 {
            ONES[m as usize].to_string()
        } else if m % 10 == 0 {
            TENS[(m / 10) as usize].to_string()
        } else {
            format!("{}-{}", TENS[(m / 10) as usize], ONES[(m % 10) as usize])
        }
    };
    let hundreds = n / 100;
    let rest = n % 100;
    match (hundreds, rest) {
        (0, r) => below_hundred(r),
        (h, 0) => format!("{} hundred", ONES[h as usize]),
        (h, r) if with_and => format!("{} hundred and {}", ONES[h as usize], below_hundred(r)),
        (h, r) => format!("{} hundred {}", ONES[h as usize], below_hundred(r)),
    }
}

/// The value with diacritics removed ("Tromsø" -> "Tromso"), so that an
/// answer typed on a plain keyboard still counts.
pub fn fold_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.nfd() {
        if unicode_normalization::char::is_combining_mark(c) {
            continue;
        }
        match c {
            'ø' => out.push('o'),
            'Ø' => out.push('O'),
            'ł' => out.push('l'),
            'Ł' => out.push('L'),
            'đ' => out.push('d'),
            'æ' => out.push_str("ae"),
            'ß' => out.push_str("ss"),
            other => out.push(other),
        }
    }
    out
}

const INVENTED_FIRST: &[&str] = &[
    "Vel", "Quor", "Thal", "Zeph", "Brin", "Kael", "Sorv", "Tav", "Ulv", "Xan", "Yor", "Drev",
    "Fenn", "Hesk", "Isk", "Jorv", "Lum", "Nev", "Orv", "Pell", "Rask", "Sil", "Vask", "Wyn",
    "Zor", "Mirr", "Cal", "Ebr",
];
const INVENTED_MIDDLE: &[&str] = &["a", "i", "o", "e", "u", "ae", "ia", "ou"];
const INVENTED_LAST: &[&str] = &[
    "nor", "wick", "dris", "vane", "mir", "thas", "rell", "quin", "dorn", "lisk", "vor", "zell",
    "bryn", "ssa", "mont", "rith", "phel", "gard",
];

/// Sisters' names.
pub const SISTER_NAMES: &[&str] = &[
    "Oriane",
    "Maelis",
    "Ysolde",
    "Eulalie",
    "Ottoline",
    "Saoirse",
    "Fionnuala",
    "Gwenllian",
    "Solveig",
    "Ragnhild",
    "Ludmila",
    "Femke",
    "Benedetta",
    "Apolline",
    "Honorine",
    "Itziar",
];
/// Brothers' names.
pub const BROTHER_NAMES: &[&str] = &[
    "Thibaut", "Caius", "Tadhg", "Oisín", "Emrys", "Halvard", "Brynjar", "Eskil", "Radomir",
    "Sjoerd", "Ottavio", "Cosimo", "Gaspard", "Ambroise", "Iñaki", "Aitor",
];
/// Managers' names (any gender).
pub const MANAGER_NAMES: &[&str] = &[
    "Wiremu", "Anahera", "Tsering", "Ciarán", "Ailbhe", "Bronagh", "Dilys", "Meinir", "Sigrun",
    "Torvald", "Vesna", "Miroslav", "Anouk", "Wouter", "Ludovica", "Leandro",
];
/// Best friends' names (any gender).
pub const FRIEND_NAMES: &[&str] = &[
    "Niamh",
    "Anwen",
    "Cadfael",
    "Ingeborg",
    "Konstantin",
    "Zdenka",
    "Svetozar",
    "Maarten",
    "Beatrijs",
    "Fiammetta",
    "Gianmarco",
    "Clémence",
    "Séraphin",
    "Blandine",
    "Amaia",
    "Xabier",
];
/// Grandmothers' names.
pub const GRANDMOTHER_NAMES: &[&str] = &[
    "Leocadia",
    "Wilhelmina",
    "Leopoldine",
    "Ottilie",
    "Hedda",
    "Bogdana",
    "Dragana",
    "Perrine",
    "Thaïs",
    "Ainhoa",
    "Nerea",
    "Zuriñe",
    "Donatella",
    "Philippa",
    "Henrietta",
    "Eulalia",
];

/// Home towns.
pub const GREW_UP_PLACES: &[&str] = &[
    "Tromsø",
    "Ljubljana",
    "Valparaíso",
    "Trondheim",
    "Ghent",
    "Bergamo",
    "Aarhus",
    "Cluj-Napoca",
    "Sintra",
    "Matera",
    "Tbilisi",
    "Hobart",
    "Dunedin",
    "Galway",
    "Tallinn",
    "Plovdiv",
];
/// Where parents live.
pub const PARENTS_PLACES: &[&str] = &[
    "Lviv",
    "Ushuaia",
    "Arequipa",
    "Cuenca",
    "Puebla",
    "Nantes",
    "Lecce",
    "Cádiz",
    "Salzburg",
    "Graz",
    "Uppsala",
    "Tampere",
    "Stavanger",
    "Gdańsk",
    "Brno",
    "Košice",
];
/// Where the user is moving.
pub const MOVING_PLACES: &[&str] = &[
    "Kotor",
    "Mostar",
    "Ohrid",
    "Leuven",
    "Maastricht",
    "Groningen",
    "Freiburg",
    "Annecy",
    "Girona",
    "Zaragoza",
    "Coimbra",
    "Évora",
    "Trieste",
    "Bolzano",
    "Lausanne",
    "Innsbruck",
];
/// Honeymoon destinations.
pub const HONEYMOON_PLACES: &[&str] = &[
    "Essaouira",
    "Luxor",
    "Aqaba",
    "Yerevan",
    "Samarkand",
    "Luang Prabang",
    "Hoi An",
    "Chiang Mai",
    "Kanazawa",
    "Matsumoto",
    "Gyeongju",
    "Rotorua",
    "Mendoza",
    "Cusco",
    "Cartagena",
    "Zanzibar",
];

/// Cuisines (as adjectives).
pub const CUISINES: &[&str] = &[
    "Georgian",
    "Ethiopian",
    "Peruvian",
    "Burmese",
    "Uzbek",
    "Basque",
    "Sardinian",
    "Laotian",
    "Oaxacan",
    "Filipino",
    "Eritrean",
    "Yemeni",
    "Tibetan",
    "Senegalese",
    "Sri Lankan",
    "Taiwanese",
];
/// Teas.
pub const TEAS: &[&str] = &[
    "genmaicha",
    "lapsang souchong",
    "rooibos",
    "hojicha",
    "sencha",
    "pu-erh",
    "keemun",
    "tulsi",
    "oolong",
    "kukicha",
    "gyokuro",
    "bancha",
];
/// Composers.
pub const COMPOSERS: &[&str] = &[
    "Sibelius",
    "Janáček",
    "Satie",
    "Fauré",
    "Poulenc",
    "Telemann",
    "Rameau",
    "Grieg",
    "Dvořák",
    "Borodin",
    "Scriabin",
    "Respighi",
    "Gesualdo",
    "Bruckner",
    "Buxtehude",
    "Smetana",
];
/// Board games.
pub const BOARD_GAMES: &[&str] = &[
    "Agricola",
    "Carcassonne",
    "Azul",
    "Wingspan",
    "Hanabi",
    "Tichu",
    "Dixit",
    "Codenames",
    "Kingdomino",
    "Everdell",
    "Citadels",
    "Cribbage",
    "Backgammon",
    "Mahjong",
    "Takenoko",
    "Quoridor",
];
/// Flowers (plural, as people name favourites).
pub const FLOWERS: &[&str] = &[
    "ranunculus",
    "hellebores",
    "anemones",
    "foxgloves",
    "snapdragons",
    "freesias",
    "proteas",
    "lisianthus",
    "alstroemerias",
    "hyacinths",
    "gardenias",
    "cornflowers",
    "zinnias",
    "delphiniums",
    "nasturtiums",
    "camellias",
];

#[cfg(test)]
mod tests {
    use super::*;
    use cb_base::seed;

    #[test]
    fn number_words_read_naturally() {
        assert_eq!(number_words(347, true), "three hundred and forty-seven");
        assert_eq!(number_words(347, false), "three hundred forty-seven");
        assert_eq!(number_words(120, true), "one hundred and twenty");
        assert_eq!(number_words(913, true), "nine hundred and thirteen");
        assert_eq!(number_words(700, true), "seven hundred");
    }

    #[test]
    fn folding_removes_diacritics() {
        assert_eq!(fold_ascii("Tromsø"), "Tromso");
        assert_eq!(fold_ascii("Dvořák"), "Dvorak");
        assert_eq!(fold_ascii("Iñaki"), "Inaki");
        assert_eq!(fold_ascii("Ghent"), "Ghent");
    }

    #[test]
    fn guessable_digit_runs_are_recognised() {
        assert!(looks_guessable("12345"));
        assert!(looks_guessable("777777"));
        assert!(looks_guessable("987"));
        assert!(!looks_guessable("48173"));
    }

    #[test]
    fn generated_values_have_the_promised_shape() {
        let mut rng = seed::rng(1, "pools-test", 0);
        for _ in 0..200 {
            let code = Pool::Code(5).draw(&mut rng, 0);
            assert_eq!(code.value.len(), 5);
            assert!(code.value.bytes().all(|b| b.is_ascii_digit()));
            assert_eq!(code.variants, vec![code.value.clone()]);

            let q = Pool::Quantity.draw(&mut rng, 0);
            assert_eq!(q.value.len(), 3);
            assert!(q.variants.contains(&q.written));

            let d = Pool::Date(2027, 2030).draw(&mut rng, 0);
            assert_eq!(d.value.len(), 10);
            assert_eq!(d.variants.len(), 3);
            assert!(d.variants.contains(&d.written));
        }
    }
}
