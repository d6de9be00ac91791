//! `language`: the reply is in the conversation's language, without a
//! wholesale switch, a sustained mix of two languages, or mojibake.
//!
//! Expected language: given by the caller (a canary probe knows it), else
//! detected from the user's own words in the last user message, or in all
//! user messages when the last is too short. Own words: the messages
//! without code, URLs and pasted blocks (logs, stack traces, quoted
//! e-mails and their headers, command and git output, paths, code lines;
//! fenced or not), quoted spans in any common quote style, and sentences a
//! colon introduces in another language than the clause before it (the
//! rule is in `pasted.rs`). Pasted text never decides the language: when
//! nothing else is left, the whole text gives at best a weak guess. Once a
//! quote or a colon paste is taken out, [`MIN_MASKED_LETTERS`] letters of
//! the user's own are enough to guess from. A reply in a language the user
//! wrote a sentence of their own in (reliably detected) never fails as a
//! switch. When the guess is weak (confidence at least [`WEAK_CONFIDENCE`]
//! but below the reliable 0.6), it can confirm a reply in the same
//! language but fails none (a disagreement is then undetermined), except a
//! reply reliably in the language the last user message quoted or pasted
//! after a colon when its own words are clearly not in it (see
//! `pasted_language`): that is a switch. Languages the last user message names or asks for ("in
//! Spanish", "translate") are allowed besides it.
//!
//! The reply's prose (code blocks, inline code and URLs removed) is split
//! into sentences; each sentence with at least [`MIN_SEGMENT_LETTERS`]
//! letters is judged on its own: in the expected language when that is the
//! top guess at [`SEGMENT_CONFIDENCE`] or more, in another language `L`
//! when `L` is the top guess at [`SEGMENT_CONFIDENCE`] or more and at least
//! [`FOREIGN_RATIO`] times as likely as the expected one; otherwise the
//! sentence is not counted.
//!
//! - Fail, mojibake: `Ã©`, `â€™`, U+FFFD and the like (see `mojibake.rs`).
//! - Fail, switch: the whole reply is reliably another language and less
//!   than [`SWITCH_SHARE`] of its judged letters are in the expected one.
//! - Fail, mix: at least [`MIN_MIX_SEGMENTS`] sentences reliably in one
//!   other language, holding at least [`MIX_SHARE`] of the judged letters
//!   (in a Chinese, Japanese or Korean conversation, of the judged
//!   characters each counted once: weighed three letters, CJK sentences
//!   hid two short foreign ones under the share),
//!   while the expected language is also there. One foreign sentence (a
//!   quotation) or a borrowed word or proper name inside a sentence is not
//!   a mix.
//! - All-caps Latin runs of two letters or more (`ALTER SUBSCRIPTION`,
//!   `USB`, the `OVERRIDING` of `使用OVERRIDING`) are blanked out of the
//!   reply like names: SQL keywords, constants and acronyms are in no
//!   natural language. In a Portuguese conversation a sentence lingua puts
//!   Spanish first but that holds `ã` or `õ` (which Spanish never writes)
//!   counts for Portuguese.
//! - The proper names the user wrote (see `text::proper_names`) are
//!   blanked out of the reply before any of this: a name the reply repeats
//!   says nothing of the reply's language ("You grew up in Blemiliwych."
//!   reads as Polish by its name alone, "You're moving to Groningen." as
//!   Dutch), so the reply is judged on its own words. When fewer than
//!   [`MIN_REPLY_LETTERS`] letters are left without them, the reply
//!   cannot fail: it passes when what is left (at least
//!   [`MIN_MASKED_LETTERS`] letters) passes, and is undetermined otherwise.
//! - Undetermined: fewer than [`MIN_REPLY_LETTERS`] letters, code or JSON
//!   only, an unknown conversation language, or a detector that is unsure.
//!
//! Japanese and Chinese: short ideographs without kana are either (see
//! `detect.rs`). The conversation's language is then not guessed from
//! them, and a reply sentence written so counts for the conversation's
//! language when that is Japanese or Chinese (a tie that includes the
//! expected language counts for it). A Latin identifier, path or URL in
//! CJK prose does not make the sentence Latin (see `script.rs`).
//!
//! Blind spots: a one-sentence switch inside a long reply; a reply in a
//! language outside the plausible set (it is judged as the closest one in
//! the set); text whose sentences are all too short to judge; a Japanese
//! reply written only in kanji in a Chinese conversation, and the reverse;
//! a translation the user asked for without naming the language makes any
//! language acceptable; in German, every noun is capitalised, so the names
//! the user wrote include the nouns of their messages. Seen on text nobody
//! here wrote (issue 37), not fixed: an Italian sentence full of IT
//! loanwords (`il file di log del server`) can read as English, and
//! European Portuguese in its older spelling (`acção`, `óptimo`) as
//! Spanish; Hindi in Latin letters (Hinglish) and Vietnamese without
//! diacritics are guessed as German, Indonesian or Dutch or left
//! undetermined (neither is a language of the plausible set in that form),
//! so a switch from them to English goes unseen. A
//! pasted English sentence with no mark of a paste (no quote marks, no
//! colon before it) counts as the user's own (see `pasted.rs`), so a reply
//! that switches to English then passes.
//! European Portuguese in the older spelling is read as Portuguese only in
//! a sentence with `ã` or `õ`; without one it may still read as Spanish.
//!
//! Detector: the script first (Cyrillic, Hangul, Arabic, Devanagari, kana,
//! ideographs), then `lingua` 1.8 with the eleven Latin-script language
//! features, restricted to the plausible languages, guesses at confidence
//! 0.6 or more counted (see `detect.rs`, with its English shortcuts: in an
//! English conversation no sentence of the default dataset reaches lingua,
//! and a sentence the English-first path takes counts for English). A
//! reply in an English conversation whose English-first sentences pass it
//! whatever the others are (see `passes_by_english_first`) is passed
//! without judging the others: the same verdict, by the bounds of the
//! pass, switch and mix rules. Chosen over `whatlang` 0.18 on
//! the calibration set of the time (321 cases, twelve languages): with lingua this contract decides 217 of 277 applicable cases
//! and agrees with every label (0 false positives, 0 false negatives, 42 of
//! 46 failures caught, 60 undetermined); with whatlang it decides 163, with
//! 2 false negatives, 34 failures caught and 114 undetermined, because
//! whatlang guesses short English questions as Italian or Portuguese.
//! lingua costs more to build: about 31 s from scratch on 2 cores against
//! 2 to 8 s, about 50 MB more in each binary (the n-gram models), and
//! about 50 MB of memory once the models are loaded (lazily, on first use).

use super::detect::{Detection, Detector};
use super::pasted;
use super::prompt::{self, OtherLanguages};
use super::text::{
    is_blank, proper_names, prose, segments, weighted_letters, without_all_caps, without_names,
};
use super::{mojibake, requested_format, Contract, ContractInput, ContractName, Language, Outcome};
pub use crate::detect::{
    FOREIGN_RATIO, MIN_MASKED_LETTERS, MIN_SEGMENT_LETTERS, SEGMENT_CONFIDENCE, WEAK_CONFIDENCE,
};
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Fewer letters than this in the whole reply: undetermined.
pub const MIN_REPLY_LETTERS: usize = 20;

// The English-first path stands for English first at this confidence or
// more: it must not stand for less than a sentence needs.
const _: () = assert!(super::detect::ENGLISH_FIRST_CONFIDENCE >= SEGMENT_CONFIDENCE);
// The audit of the English shortcuts counts a disagreement by the same ratio.
const _: () = assert!(super::detect::AUDIT_FOREIGN_RATIO == FOREIGN_RATIO);
/// A switch: the expected language holds less than this share of the
/// judged letters.
pub const SWITCH_SHARE: f64 = 0.25;
/// A mix: at least this many sentences in one other language...
pub const MIN_MIX_SEGMENTS: usize = 2;
/// ...holding at least this share of the judged letters.
pub const MIX_SHARE: f64 = 0.2;
/// A pass: the expected language holds at least this share of the judged
/// letters (or the whole reply is reliably in it).
pub const PASS_SHARE: f64 = 0.75;

/// How sure the contract is of the conversation's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Certainty {
    /// Given by the caller or reliably detected.
    Sure,
    /// A weak guess: agreement passes, disagreement is undetermined.
    Weak,
}

/// The `language` contract over a set of plausible languages.
#[derive(Debug)]
pub struct LanguageContract {
    detector: Arc<Detector>,
    /// Outcomes already given, keyed by everything the outcome depends on
    /// (the expected language, the user messages and the reply): a run
    /// checks the same answer to the same conversation once per system and
    /// run.
    memo: Mutex<HashMap<String, Option<Outcome>>>,
}

/// Outcomes the memo keeps; past this it starts again.
const OUTCOME_MEMO_CAPACITY: usize = 16_384;

impl LanguageContract {
    /// The contract choosing among `languages`.
    pub fn new(languages: Vec<Language>) -> Self {
        LanguageContract::with_detector(Arc::new(Detector::new(&languages)))
    }

    /// The contract over `detector`, shared with its owner (whose memo then
    /// serves both).
    pub(crate) fn with_detector(detector: Arc<Detector>) -> Self {
        LanguageContract {
            detector,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The memo's key of `input`: the expected language, every user
    /// message, the system (and developer) instructions (they may name the
    /// reply's language) and the reply, separated by characters no text
    /// holds.
    fn memo_key(input: &ContractInput<'_>) -> String {
        let mut key = String::from(input.expected_language.map_or("-", Language::code));
        for user in prompt::user_texts(input.request) {
            key.push('\u{0}');
            key.push_str(&user);
        }
        for m in &input.request.messages {
            if m.role == "system" || m.role == "developer" {
                key.push('\u{2}');
                key.push_str(&m.text_cow());
            }
        }
        key.push('\u{1}');
        key.push_str(input.text);
        key
    }

    /// The user's own words in `user` (see `pasted.rs`): its prose without
    /// pasted lines, quotes and what a colon introduces in another
    /// language; and the quotes and colon pastes taken out (empty when
    /// there were none).
    fn own_words(&self, user: &str) -> (String, String) {
        let text = prose(user);
        let own = pasted::own_words(&text);
        let (unquoted, mut taken) = pasted::without_quotes(&own);
        let confidences = |t: &str| {
            if self.detector.english_first(t) {
                vec![(Language::En, 1.0)]
            } else {
                self.detector.confidences(t)
            }
        };
        let (left, pasted) = pasted::without_colon_paste(&unquoted, &confidences);
        taken.push_str(&pasted);
        (left.into_owned(), taken)
    }

    /// The language the last user message quoted or pasted after a colon,
    /// reliably detected, when its own words are surely not in it: their
    /// top guess is at least [`WEAK_CONFIDENCE`] and [`FOREIGN_RATIO`]
    /// times as likely as the pasted language. A reply in that language is
    /// a switch even when the own words give only a weak guess.
    fn pasted_language(&self, input: &ContractInput<'_>) -> Option<Language> {
        let users = prompt::user_texts(input.request);
        let (own, taken) = self.own_words(users.last()?);
        let pasted = self.detector.detect(&taken).filter(|d| d.reliable)?;
        let values = self.detector.confidences(&own);
        let &(top, confidence) = values.first()?;
        (top != pasted.language
            && confidence >= WEAK_CONFIDENCE
            && confidence >= FOREIGN_RATIO * pasted::confidence_of(&values, pasted.language))
        .then_some(pasted.language)
    }

    /// The conversation's language from its user messages: the last one
    /// when it is long enough to tell, else all of them together. Their own
    /// words decide; once a quote or a colon paste is taken out of them,
    /// [`MIN_MASKED_LETTERS`] letters of their own are enough.
    fn conversation_language(&self, input: &ContractInput<'_>) -> Option<(Language, Certainty)> {
        if let Some(given) = input.expected_language {
            return Some((given, Certainty::Sure));
        }
        let users = prompt::user_texts(input.request);
        let own: Vec<(String, bool)> = users
            .iter()
            .map(|u| {
                let (own, taken) = self.own_words(u);
                (own, !taken.is_empty())
            })
            .collect();
        let guess = |text: &str, cut: bool| {
            let min = if cut {
                MIN_MASKED_LETTERS
            } else {
                MIN_REPLY_LETTERS
            };
            (weighted_letters(text) >= min)
                .then(|| self.detector.detect(text))
                .flatten()
        };
        let last = own.last().and_then(|(text, cut)| guess(text, *cut));
        let all = || {
            let text: Vec<&str> = own.iter().map(|(t, _)| t.as_str()).collect();
            guess(&text.join("\n"), own.iter().any(|(_, cut)| *cut))
        };
        // Pasted text alone can only make a weak guess.
        let whole = || guess(&prose(&users.join("\n")), false);
        let sure = |d: Detection| d.reliable.then_some((d.language, Certainty::Sure));
        let weak = |d: Detection| {
            (d.confidence >= WEAK_CONFIDENCE).then_some((d.language, Certainty::Weak))
        };
        last.and_then(sure)
            .or_else(|| all().and_then(sure))
            .or_else(|| last.and_then(weak))
            .or_else(|| all().and_then(weak))
            .or_else(|| whole().and_then(weak))
    }

    /// The languages the user wrote a sentence in, in their own words
    /// (reliably detected, [`MIN_SEGMENT_LETTERS`] letters or more): a
    /// reply in one of them never fails as a switch.
    fn user_languages(&self, input: &ContractInput<'_>) -> Vec<Language> {
        let mut out = Vec::new();
        for user in prompt::user_texts(input.request) {
            let (own, _) = self.own_words(&user);
            for segment in segments(&own) {
                if weighted_letters(segment) < MIN_SEGMENT_LETTERS {
                    continue;
                }
                if let Some(d) = self.detector.detect(segment).filter(|d| d.reliable) {
                    if !out.contains(&d.language) {
                        out.push(d.language);
                    }
                }
            }
        }
        out
    }
}

/// Letters per language over the reliably detected sentences.
#[derive(Debug, Default)]
struct Tally {
    letters: BTreeMap<Language, usize>,
    segments: BTreeMap<Language, usize>,
    /// Letters counted one a character, CJK included (for the mix share
    /// of a CJK conversation).
    chars: BTreeMap<Language, usize>,
    judged_letters: usize,
    judged_segments: usize,
    judged_chars: usize,
}

impl Tally {
    fn add(&mut self, language: Language, letters: usize, chars: usize) {
        *self.letters.entry(language).or_default() += letters;
        *self.segments.entry(language).or_default() += 1;
        *self.chars.entry(language).or_default() += chars;
        self.judged_letters += letters;
        self.judged_segments += 1;
        self.judged_chars += chars;
    }

    /// The share of the judged characters, each counted once.
    fn char_share(&self, language: Language) -> f64 {
        if self.judged_chars == 0 {
            return 0.0;
        }
        self.chars.get(&language).copied().unwrap_or(0) as f64 / self.judged_chars as f64
    }

    fn share(&self, language: Language) -> f64 {
        if self.judged_letters == 0 {
            return 0.0;
        }
        self.letters.get(&language).copied().unwrap_or(0) as f64 / self.judged_letters as f64
    }

    fn segments_in(&self, language: Language) -> usize {
        self.segments.get(&language).copied().unwrap_or(0)
    }
}

impl Contract for LanguageContract {
    fn name(&self) -> ContractName {
        ContractName::Language
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        if is_blank(input.text) || requested_format(input.request).is_some() {
            return None;
        }
        let key = Self::memo_key(input);
        let known = {
            let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
            memo.get(&key).cloned()
        };
        if let Some(known) = known {
            return known;
        }
        let outcome = self.judge_reply(input);
        let mut m = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() >= OUTCOME_MEMO_CAPACITY {
            m.clear();
        }
        m.insert(key, outcome.clone());
        outcome
    }
}

impl LanguageContract {
    /// [`Contract::check`] without the memo.
    fn judge_reply(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        if let Some(seq) = mojibake::find(input.text) {
            return Some(Outcome::fail(format!(
                "mojibake {seq:?} in the reply: UTF-8 text was decoded with the wrong encoding somewhere"
            )));
        }
        let trimmed = input.text.trim();
        if (trimmed.starts_with('{') || trimmed.starts_with('['))
            && serde_json::from_str::<serde_json::Value>(trimmed).is_ok()
        {
            return Some(Outcome::undetermined(
                "the reply is JSON, in no natural language",
            ));
        }
        let names = proper_names(&prompt::user_texts(input.request));
        let prose = prose(input.text);
        let masked = without_names(&prose, &names);
        let masked = without_all_caps(&masked);
        let letters = weighted_letters(&prose);
        if letters < MIN_REPLY_LETTERS {
            return Some(Outcome::undetermined(format!(
                "too short to judge the language ({letters} letters of prose; {MIN_REPLY_LETTERS} needed)"
            )));
        }
        let Some((expected, certainty)) = self.conversation_language(input) else {
            return Some(Outcome::undetermined(
                "could not tell the conversation's language from its user messages",
            ));
        };
        let others = prompt::other_languages(input.request, expected);
        // Asked only when a reply would fail as a switch.
        let spoken = |l: Language| self.user_languages(input).contains(&l);
        let masked_letters = weighted_letters(&masked);
        let outcome = if masked_letters >= MIN_REPLY_LETTERS {
            self.judge(&masked, expected, &others, &spoken)
        } else {
            // Little is left without the names: what is left (when there is
            // enough of it) may pass the reply, but it cannot fail it, and
            // the names alone neither pass nor fail it.
            let left = (masked_letters >= MIN_MASKED_LETTERS)
                .then(|| self.judge(&masked, expected, &others, &spoken))
                .filter(|o| *o == Outcome::Pass);
            left.unwrap_or_else(|| {
                Outcome::undetermined(format!(
                    "without the names the user wrote, too short to judge the language \
                     ({masked_letters} letters of prose; {MIN_REPLY_LETTERS} needed)"
                ))
            })
        };
        // A weak guess fails no reply, unless the reply is in the language
        // the user quoted or pasted and their own words are surely not in.
        let in_pasted_language = || {
            self.pasted_language(input).is_some_and(|pasted| {
                self.detector
                    .detect(&masked)
                    .is_some_and(|d| d.reliable && d.language == pasted)
            })
        };
        Some(match (outcome, certainty) {
            (outcome @ Outcome::Fail { .. }, Certainty::Weak) if in_pasted_language() => outcome,
            (Outcome::Fail { reason }, Certainty::Weak) => Outcome::undetermined(format!(
                "{reason}, but the conversation's language is only a weak guess from short user messages"
            )),
            (outcome, _) => outcome,
        })
    }
}

impl LanguageContract {
    /// The language a piece of text counts for, judged against `expected`.
    /// A tie at the top that includes `expected` counts for it: short
    /// ideographs without kana are Japanese or Chinese alike, and the
    /// conversation says which.
    fn classify(&self, text: &str, expected: Language) -> Option<Language> {
        // In an English conversation a sentence the English-first path
        // takes counts for English: where lingua is sure it puts English
        // first at SEGMENT_CONFIDENCE or more there, and it never takes a
        // sentence lingua counts for another language (see `detect.rs`).
        if expected == Language::En && self.detector.english_first(text) {
            return Some(expected);
        }
        let values = self.detector.confidences(text);
        let &(top, confidence) = values.first()?;
        if confidence < SEGMENT_CONFIDENCE {
            return None;
        }
        let of_expected = values
            .iter()
            .find(|(l, _)| *l == expected)
            .map_or(0.0, |&(_, c)| c);
        if top == expected || of_expected >= confidence {
            return Some(expected);
        }
        // Spanish never writes ã or õ: in a Portuguese conversation such a
        // sentence is Portuguese, whatever its older spelling (`acção`,
        // `seleccione`) makes lingua think.
        if expected == Language::Pt && top == Language::Es && text.contains(['ã', 'õ', 'Ã', 'Õ'])
        {
            return Some(expected);
        }
        (confidence >= FOREIGN_RATIO * of_expected).then_some(top)
    }

    /// Whether the sentences the English-first path settles pass the reply
    /// whatever lingua would say of the rest: English holds at least
    /// [`PASS_SHARE`] of the letters even if every other sentence were
    /// judged, and the rest could not make a mix (fewer than
    /// [`MIN_MIX_SEGMENTS`] sentences, or under [`MIX_SHARE`] of the
    /// letters). Then the reply passes without lingua.
    fn passes_by_english_first(&self, judged: &[(&str, usize)]) -> bool {
        let (mut english, mut rest, mut rest_segments) = (0usize, 0usize, 0usize);
        for &(segment, letters) in judged {
            if self.detector.english_first(segment) {
                english += letters;
            } else {
                rest += letters;
                rest_segments += 1;
            }
        }
        let all = (english + rest) as f64;
        english > 0
            && english as f64 >= PASS_SHARE * all
            && (rest_segments < MIN_MIX_SEGMENTS || (rest as f64) < MIX_SHARE * all)
    }

    /// The verdict on `prose` against `expected`; `spoken` says whether the
    /// user wrote a sentence of their own in a language, which a reply may
    /// then be in without failing as a switch.
    fn judge(
        &self,
        prose: &str,
        expected: Language,
        others: &OtherLanguages,
        spoken: &dyn Fn(Language) -> bool,
    ) -> Outcome {
        let judged: Vec<(&str, usize)> = segments(prose)
            .into_iter()
            .map(|s| (s, weighted_letters(s)))
            .filter(|&(_, letters)| letters >= MIN_SEGMENT_LETTERS)
            .collect();
        if expected == Language::En && self.passes_by_english_first(&judged) {
            return Outcome::Pass;
        }
        let mut tally = Tally::default();
        for (segment, letters) in judged {
            if let Some(language) = self.classify(segment, expected) {
                let chars = segment.chars().filter(|c| c.is_alphabetic()).count();
                tally.add(language, letters, chars);
            }
        }
        let foreign = |l: Language| l != expected && !others.allows(l);
        if tally.judged_letters == 0 {
            // Only short sentences: judge the prose as a whole.
            return match self.classify(prose, expected) {
                Some(l) if !foreign(l) || spoken(l) => Outcome::Pass,
                Some(l) => Outcome::fail(format!(
                    "the reply is in {l}; the conversation is in {expected}"
                )),
                None => Outcome::undetermined(format!(
                    "no sentence of the reply could be told reliably from the other languages (conversation in {expected})"
                )),
            };
        }
        let expected_share = tally.share(expected);
        let dominant = tally
            .letters
            .iter()
            .max_by_key(|(_, &n)| n)
            .map(|(&l, _)| l)
            .unwrap_or(expected);
        if foreign(dominant) && expected_share < SWITCH_SHARE && spoken(dominant) {
            return Outcome::Pass;
        }
        if foreign(dominant) && expected_share < SWITCH_SHARE {
            return Outcome::fail(format!(
                "the reply is in {dominant}; the conversation is in {expected} ({:.0} % of the judged text is in {dominant})",
                tally.share(dominant) * 100.0
            ));
        }
        let mixed = tally
            .segments
            .keys()
            .copied()
            .filter(|&l| foreign(l))
            .find(|&l| {
                // In a CJK conversation the share counts each character
                // once: weighed three letters, CJK sentences hide two
                // short foreign ones under the share.
                let share = if matches!(expected, Language::Ja | Language::Zh | Language::Ko) {
                    tally.char_share(l)
                } else {
                    tally.share(l)
                };
                tally.segments_in(l) >= MIN_MIX_SEGMENTS && share >= MIX_SHARE
            });
        if let Some(l) = mixed {
            return Outcome::fail(format!(
                "sustained mix: {} of {} judged sentences are in {l}, the rest mostly in {expected}",
                tally.segments_in(l),
                tally.judged_segments
            ));
        }
        let allowed_share: f64 = tally
            .letters
            .keys()
            .filter(|&&l| !foreign(l))
            .map(|&l| tally.share(l))
            .sum();
        if expected_share >= PASS_SHARE || allowed_share >= PASS_SHARE {
            return Outcome::Pass;
        }
        Outcome::undetermined(format!(
            "the reply is {:.0} % {expected} over {} judged sentences; too mixed to call",
            expected_share * 100.0,
            tally.judged_segments
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phrasebook::sentences;
    use crate::tests::{input_for, request};

    fn judge(user: &str, reply: &str, expected: Option<Language>) -> Outcome {
        let r = request(&[("user", user)]);
        let mut i = input_for(reply, &r);
        i.expected_language = expected;
        LanguageContract::new(Language::ALL.to_vec())
            .check(&i)
            .unwrap()
    }

    const PT_USER: &str = "Quais são os melhores passeios para fazer em Lisboa num fim de semana?";

    /// An English reply to a German user passes when the application's
    /// system prompt asks for English, and fails as a switch when it does
    /// not (the same reply, the same user message).
    #[test]
    fn a_reply_in_the_language_the_system_prompt_sets_is_no_switch() {
        let user =
            "Wie setze ich mein Passwort zurück? Ich habe die E-Mail mit dem Link nicht bekommen.";
        let reply = "Open the sign-in page and choose Forgot password. If the e-mail does not arrive within a few minutes, check your spam folder and make sure the address on your account is correct.";
        let contract = LanguageContract::new(Language::ALL.to_vec());
        for (system, passes) in [
            (
                "You are the support assistant of Acme. Always answer in English.",
                true,
            ),
            (
                "You are the support assistant of Acme. Answer briefly.",
                false,
            ),
        ] {
            let r = request(&[("system", system), ("user", user)]);
            let out = contract.check(&input_for(reply, &r)).unwrap();
            assert_eq!(out == Outcome::Pass, passes, "{system}: {out:?}");
            if !passes {
                assert!(out.is_fail(), "{system}: {out:?}");
            }
        }
    }

    #[test]
    fn portuguese_drifting_into_spanish_fails() {
        let es = sentences(Language::Es)[..3].join(" ");
        let out = judge(PT_USER, &es, None);
        assert!(
            out.is_fail() && out.reason().unwrap().contains("Spanish"),
            "{out}"
        );
        let pt = sentences(Language::Pt);
        let mix = format!("{} {} {} {}", pt[0], es, pt[1], pt[2]);
        let out = judge(PT_USER, &mix, None);
        assert!(out.reason().unwrap().contains("mix"), "{out}");
    }

    #[test]
    fn clean_replies_pass_in_every_language() {
        for l in Language::ALL {
            let s = sentences(l);
            let reply = s[..4].join(" ");
            let out = judge(&s[4..7].join(" "), &reply, None);
            assert_eq!(out, Outcome::Pass, "{l}: {reply}");
        }
    }

    #[test]
    fn proper_names_quotes_and_translations_are_not_a_mix() {
        let name = "O meu amigo Javier Hernández mora em Sevilha e trabalha num banco, mas vem a Lisboa todos os verões.";
        assert_eq!(judge(PT_USER, name, None), Outcome::Pass);
        let asked = judge(
            "Translate into Portuguese: 'The train leaves at eight, so we should hurry.'",
            "O comboio parte às oito, por isso devíamos apressar-nos.",
            None,
        );
        assert_eq!(asked, Outcome::Pass);
    }

    #[test]
    fn a_name_the_user_wrote_is_no_evidence_but_a_translated_reply_still_fails() {
        let user = "I grew up in Blemiliwych, a small town by the river, and I still go back every summer. Where did I grow up?";
        // Seen at 10,000 conversations: the composed name alone reads as Polish.
        assert!(!matches!(
            judge(user, "You grew up in Blemiliwych.", None),
            Outcome::Fail { .. }
        ));
        let polish =
            "Dorastałeś w Blemiliwych, małym miasteczku nad rzeką. Często o nim opowiadasz.";
        let got = judge(user, polish, None);
        assert!(matches!(got, Outcome::Fail { .. }), "{got:?}");
    }

    #[test]
    fn mojibake_fails_short_text_is_undetermined() {
        let out = judge(
            PT_USER,
            "A fotossÃ\u{AD}ntese Ã© o processo das plantas.",
            None,
        );
        assert!(out.reason().unwrap().contains("mojibake"), "{out}");
        let short = judge(PT_USER, "Sim.", None);
        assert!(matches!(short, Outcome::Undetermined { .. }));
        let json = judge(PT_USER, r#"{"nome": "Ana"}"#, None);
        assert!(matches!(json, Outcome::Undetermined { .. }));
    }

    #[test]
    fn a_latin_identifier_path_or_url_in_chinese_prose_does_not_decide() {
        let user = "Python 里怎么把一个嵌套列表展平成一维列表？";
        let reply = "可以用 itertools.chain.from_iterable 来做。";
        assert_eq!(judge(user, reply, None), Outcome::Pass);
        assert_eq!(judge("怎么做？", reply, Some(Language::Zh)), Outcome::Pass);
        let paths = "主配置文件是 /etc/nginx/nginx.conf，说明在 https://nginx.org/en/docs/ 上。";
        assert_eq!(judge(user, paths, None), Outcome::Pass);
        assert_eq!(
            judge(
                user,
                "先用 pip install numpy 安装，然后用 np.mean 算平均值。",
                None
            ),
            Outcome::Pass
        );
        // Positive control: a reply really in English still fails.
        let english = judge(
            user,
            "You can flatten it with itertools.chain.from_iterable, which chains the inner lists together.",
            None,
        );
        assert!(
            english.is_fail() && english.reason().unwrap().contains("English"),
            "{english}"
        );
    }

    #[test]
    fn short_han_only_text_is_undetermined_unless_the_conversation_says() {
        // Han-only user messages: Japanese or Chinese, no guess.
        let out = judge("東京大学", "東京大学は文京区にあります。", None);
        assert!(matches!(out, Outcome::Undetermined { .. }), "{out}");
        // The conversation says Chinese (a simplified-only character) or
        // Japanese (kana): a Han-only reply counts for it.
        let zh = "这个周末去哪里玩比较好？";
        assert_eq!(
            judge(zh, "去颐和园走走，再去北海公园划船。", None),
            Outcome::Pass
        );
        let ja = "京都駅の住所を教えてください。";
        assert_eq!(judge(ja, "京都市下京区東塩小路町。", None), Outcome::Pass);
        assert_eq!(
            judge("住所？", "京都市下京区東塩小路町。", Some(Language::Ja)),
            Outcome::Pass
        );
        // Positive controls: kana in a Chinese conversation, and Han-only
        // text in an English one, still fail.
        assert!(judge(zh, "週末は箱根の温泉に行くのがおすすめです。", None).is_fail());
        let english_user = "What is the address of Kyoto station, please?";
        assert!(judge(english_user, "京都市下京区東塩小路町。", None).is_fail());
    }

    #[test]
    fn korean_arabic_hindi_indonesian_and_vietnamese_are_judged() {
        for l in [
            Language::Ko,
            Language::Ar,
            Language::Hi,
            Language::Id,
            Language::Vi,
        ] {
            let s = sentences(l);
            let reply = s[..4].join(" ");
            assert_eq!(
                judge(&s[4..7].join(" "), &reply, None),
                Outcome::Pass,
                "{l}"
            );
            let english = sentences(Language::En)[..3].join(" ");
            let out = judge(&s[4..7].join(" "), &english, None);
            assert!(out.is_fail(), "{l}: {out}");
            let mix = format!("{} {} {}", s[0], english, s[1]);
            let out = judge(&s[4..7].join(" "), &mix, None);
            assert!(out.is_fail(), "{l}: {out}");
        }
    }

    #[test]
    fn the_outcome_memo_answers_as_the_first_judgement() {
        let contract = LanguageContract::new(Language::ALL.to_vec());
        let r = request(&[("user", PT_USER)]);
        let es = sentences(Language::Es)[..3].join(" ");
        let first = contract.check(&input_for(&es, &r));
        assert_eq!(contract.check(&input_for(&es, &r)), first);
        assert_eq!(contract.memo.lock().unwrap().len(), 1);
        // Another conversation is another key.
        let other = request(&[("user", "¿Qué puedo visitar en Madrid?")]);
        assert_eq!(contract.check(&input_for(&es, &other)), Some(Outcome::Pass));
        assert!(first.unwrap().is_fail());
    }

    #[test]
    fn long_english_passes_without_lingua_only_when_the_rest_cannot_change_it() {
        let user = "How do I keep my flat cool during a heatwave without air conditioning?";
        let english = "If you can, keep the blinds closed during the day and open the windows when \
                       the evening is cool, then put a fan by the window so that it pulls the cooler \
                       air into the room. Keep the lights off as much as you can, and cook in the \
                       evening when it is cooler, or better still eat something that does not need \
                       to be cooked at all.";
        let contract = LanguageContract::new(Language::ALL.to_vec());
        let r = request(&[("user", user)]);
        // One short sentence in Spanish cannot make a switch or a mix.
        let one = format!("{english} {}", sentences(Language::Es)[0]);
        let mut i = input_for(&one, &r);
        i.expected_language = Some(Language::En);
        assert_eq!(contract.check(&i), Some(Outcome::Pass));
        assert!(!contract.detector.lingua_built(), "lingua was built");
        // Two Spanish sentences with more than a fifth of the letters can:
        // lingua judges them, and the reply fails.
        let es = sentences(Language::Es)[..3].join(" ");
        let mixed = format!("{english} {es}");
        let out = contract.check(&input_for(&mixed, &r)).unwrap();
        assert!(out.reason().is_some_and(|r| r.contains("mix")), "{out}");
    }

    #[test]
    fn the_given_language_wins_over_a_short_user_message() {
        let reply = sentences(Language::Es)[..3].join(" ");
        assert!(judge("Oi!", &reply, Some(Language::Pt)).is_fail());
        assert_eq!(judge("Oi!", &reply, Some(Language::Es)), Outcome::Pass);
    }

    #[test]
    fn all_caps_code_words_and_the_older_portuguese_spelling_do_not_fail() {
        let it_user = "Come aggiungo una colonna alla tabella dei clienti senza perdere i dati?";
        let it = "Il nome compare nella finestra. Usa ALTER TABLE ... ADD COLUMN ... WITH (check = false). \
                  Se impostato a VERO, le applicazioni possono leggere la nuova colonna.";
        assert_eq!(judge(it_user, it, None), Outcome::Pass);
        // Positive control: the same answer switched to English still fails.
        let en = "To add the column, run ALTER TABLE CLIENTI ADD COLUMN NOTE TEXT DEFAULT NULL. \
                  Then check that the applications see the new field before you go on.";
        assert!(judge(it_user, en, None).is_fail());
        let pt_user = "Não consigo abrir o ficheiro que a minha colega me enviou ontem.";
        let pt = "Por favor seleccione da lista a seguir a impressora que está a tentar utilizar. \
                  Se não aparecer na lista, seleccione outra opção.";
        assert!(!judge(pt_user, pt, None).is_fail());
        let es = sentences(Language::Es)[..3].join(" ");
        assert!(judge(pt_user, &es, None).is_fail());
        // The mechanisms themselves: all-caps runs are blanked, and a
        // sentence lingua reads as Spanish counts for Portuguese in a
        // Portuguese conversation only when it holds ã or õ.
        let blanked = without_all_caps("Usa ALTER TABLE ... WITH (x). 使用OVERRIDING覆盖 OpenPGP");
        for gone in ["ALTER", "TABLE", "WITH", "OVERRIDING"] {
            assert!(!blanked.contains(gone), "{blanked}");
        }
        assert!(
            blanked.contains("Usa") && blanked.contains("使用 覆盖") && blanked.contains("OpenPGP")
        );
        let contract = LanguageContract::new(Language::ALL.to_vec());
        let spanish = "Seleccione la opción del menú y pulse el botón para continuar.";
        assert_eq!(contract.classify(spanish, Language::Pt), Some(Language::Es));
        let tilde = "Seleccione la opción não del menú y pulse el botón para continuar.";
        assert_eq!(contract.classify(tilde, Language::Pt), Some(Language::Pt));
    }

    #[test]
    fn two_short_foreign_sentences_in_a_cjk_reply_are_a_mix() {
        for l in [Language::Ja, Language::Zh, Language::Ko] {
            let own = sentences(l);
            // Short English sentences lingua is sure of: weighed three
            // letters a CJK character, they hold under a fifth.
            let en = [
                "Check that the cable is plugged in properly.",
                "Make sure that the power is switched on.",
            ];
            let mixed = format!(
                "{} {} {} {} {} {}",
                own[0], en[0], own[1], own[2], en[1], own[3]
            );
            let out = judge(&own[6..9].join(" "), &mixed, None);
            assert!(
                out.reason().is_some_and(|r| r.contains("mix")),
                "{l}: {out}"
            );
            // Negative control: one English sentence is a quotation.
            let one = format!("{} {} {} {} {}", own[0], en[0], own[1], own[2], own[3]);
            assert_eq!(
                judge(&own[6..9].join(" "), &one, None),
                Outcome::Pass,
                "{l}"
            );
        }
    }
}
