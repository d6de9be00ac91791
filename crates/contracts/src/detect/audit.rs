//! The audit of the two English shortcuts against lingua: on a corpus,
//! where each path fires, where lingua agrees, where it is unsure, and
//! where it disagrees. The bench (`cargo bench --bench contracts`) prints
//! it for the default dataset, 10,000 generated conversations and the
//! calibration set; a test holds the calibration set and the phrasebook to
//! no disagreement.

use super::{
    decisively_english, latin_only, script_vote, Detector, Language, Script,
    ENGLISH_FIRST_CONFIDENCE, RELIABLE_CONFIDENCE,
};
use std::collections::HashMap;

/// The `language` contract's foreign ratio (a sentence counts for another
/// language only when that one is this many times as likely as English);
/// `language.rs` asserts that the two are equal.
pub const FOREIGN_RATIO: f64 = 4.0;
use std::sync::OnceLock;

/// How one shortcut compares with lingua on some texts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathAudit {
    /// Pieces looked at: every sentence of each text's prose, and the
    /// prose whole (a piece seen again is counted again, and judged once).
    pub pieces: usize,
    /// Pieces the path decided.
    pub fired: usize,
    /// Pieces it decided where lingua is unsure: no language at
    /// `ENGLISH_FIRST_CONFIDENCE` (0.35) or more, or no top language
    /// `FOREIGN_RATIO` times as likely as English (the
    /// English-first path only: there a sentence lingua cannot place
    /// counts for no language, and the path counts it for English).
    pub unsure: Vec<String>,
    /// Pieces it decided where lingua reaches another verdict, with
    /// lingua's figures.
    pub disagreements: Vec<String>,
}

/// How the two English shortcuts compare with lingua on some texts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnglishPathAudit {
    /// The decisive English path: agreement is lingua putting English
    /// first, reliable, and every other language under a quarter of it.
    pub decisive: PathAudit,
    /// The English-first path: agreement is lingua putting English first
    /// at `ENGLISH_FIRST_CONFIDENCE` (0.35) or more; a disagreement is lingua
    /// counting the sentence for another language (first at that
    /// confidence and four times as likely as English).
    pub english_first: PathAudit,
}

impl EnglishPathAudit {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: EnglishPathAudit) {
        for (mine, theirs) in [
            (&mut self.decisive, other.decisive),
            (&mut self.english_first, other.english_first),
        ] {
            mine.pieces += theirs.pieces;
            mine.fired += theirs.fired;
            mine.unsure.extend(theirs.unsure);
            mine.disagreements.extend(theirs.disagreements);
        }
    }
}

/// What lingua says of a piece where a shortcut fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Agrees,
    Unsure,
    Disagrees,
}

/// Runs both English shortcuts and lingua, over all seventeen languages,
/// on every Latin-script sentence of `texts` (and each prose whole): the
/// measure that the shortcuts agree with lingua where they fire. lingua
/// runs only where a shortcut fires, once for each distinct piece.
pub fn audit_english_path<S: AsRef<str>>(texts: &[S]) -> EnglishPathAudit {
    static DETECTOR: OnceLock<Detector> = OnceLock::new();
    let detector = DETECTOR.get_or_init(|| Detector::new(&Language::ALL));
    let mut audit = EnglishPathAudit::default();
    let mut seen: HashMap<String, (Option<Verdict>, Option<Verdict>, String)> = HashMap::new();
    for text in texts {
        let prose = crate::text::prose(text.as_ref());
        let mut pieces = crate::text::segments(&prose);
        pieces.push(&prose);
        for piece in pieces {
            if script_vote(piece) != Some(Script::Latin) {
                continue;
            }
            audit.decisive.pieces += 1;
            audit.english_first.pieces += 1;
            let latin = latin_only(piece);
            let (decisive, first, found) = seen
                .entry(latin.clone())
                .or_insert_with(|| audit_piece(detector, piece, &latin))
                .clone();
            for (path, verdict) in [
                (&mut audit.decisive, decisive),
                (&mut audit.english_first, first),
            ] {
                let Some(verdict) = verdict else { continue };
                path.fired += 1;
                match verdict {
                    Verdict::Agrees => {}
                    Verdict::Unsure => path.unsure.push(found.clone()),
                    Verdict::Disagrees => path.disagreements.push(found.clone()),
                }
            }
        }
    }
    audit
}

/// The verdicts of the decisive and English-first paths on one piece
/// (`None` where a path does not fire), and lingua's figures.
fn audit_piece(
    detector: &Detector,
    piece: &str,
    latin: &str,
) -> (Option<Verdict>, Option<Verdict>, String) {
    let decisive = decisively_english(latin);
    let first = detector.english_first(piece);
    if !decisive && !first {
        return (None, None, String::new());
    }
    let values = detector.lingua_only(latin);
    let top = values.first().copied();
    let second = values.get(1).map_or(0.0, |&(_, c)| c);
    let english = values
        .iter()
        .find(|(l, _)| *l == Language::En)
        .map_or(0.0, |&(_, c)| c);
    let english_top = |min: f64| top.is_some_and(|(l, c)| l == Language::En && c >= min);
    let found = format!("{latin:?}: lingua says {values:?}");
    let decisive = decisive.then(|| {
        let agrees =
            english_top(RELIABLE_CONFIDENCE) && top.is_some_and(|(_, c)| c >= 4.0 * second);
        if agrees {
            Verdict::Agrees
        } else {
            Verdict::Disagrees
        }
    });
    let first = first.then(|| {
        let foreign = top.is_some_and(|(l, c)| {
            l != Language::En && c >= ENGLISH_FIRST_CONFIDENCE && c >= FOREIGN_RATIO * english
        });
        if english_top(ENGLISH_FIRST_CONFIDENCE) {
            Verdict::Agrees
        } else if foreign {
            Verdict::Disagrees
        } else {
            Verdict::Unsure
        }
    });
    (decisive, first, found)
}
