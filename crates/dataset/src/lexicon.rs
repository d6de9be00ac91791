//! Sentence templates shared by the generator and the simulated model.
//!
//! The grammar is data: [`SUBJECTS`] lists, per anchor subject, the
//! first-person statements (`{v}` marks the value), the probes, the answer and
//! the third-person distractor sentences (`{d}`). The generator renders
//! sentences from these templates; the simulated model parses messages with
//! the same templates, so a statement it can read is exactly a statement the
//! generator can write, and a distractor never parses as a statement.
//!
//! The words numbers and dates are written in ([`words`]) are the lexicon's
//! too: the generator spells values with them and the scorer reads answers
//! with them.

pub use crate::words;

use super::filler;
pub use super::subjects::{Subject, SUBJECTS};
pub use crate::words::{
    month_number, ordinal_suffix, MONTHS, MONTHS_SHORT, ONES, SCALES, TENS, WEEKDAYS,
};
use aho_corasick::AhoCorasick;
use memchr::memmem;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Placeholder of the anchor value in statements and answers.
pub const VALUE: &str = "{v}";
/// Placeholder of the distractor value in distractor sentences.
pub const DISTRACTOR: &str = "{d}";

/// Acknowledgements of an anchor statement; `{about}` is [`Subject::unknown`].
const ACKNOWLEDGEMENTS: &[&str] = &[
    "Thanks for telling me. I'll remember {about}. What would you like to talk about?",
    "Noted, I'll remember {about}. How can I help today?",
    "Got it. I'll remember {about} in case it comes up later.",
    "Thanks, that's good to know, and I'll remember {about}. What's on your mind?",
];

/// Refusals when the statement is missing; every one starts with "I don't know".
const REFUSALS: &[&str] = &[
    "I don't know {about}; you haven't mentioned it in this conversation.",
    "I don't know {about}. You haven't told me in this conversation, and I'd rather not guess.",
];

/// Characters that cannot occur inside an extracted value (they end a sentence
/// or a clause).
const VALUE_STOPS: &[char] = &['.', '!', '?', ';', ':', '\n', '"'];

/// Longest value the parser accepts, in characters.
const MAX_VALUE_CHARS: usize = 48;

/// Fills the first `placeholder` of `template` with `value`.
pub fn render(template: &str, placeholder: &str, value: &str) -> String {
    template.replacen(placeholder, value, 1)
}

/// Picks an entry of `pool` deterministically from `text` and `salt`.
pub fn pick<'a>(pool: &[&'a str], text: &str, salt: u64) -> &'a str {
    let h = cb_base::seed::derive(0, text, salt);
    pool[(h % pool.len() as u64) as usize]
}

/// Lower-cases ASCII letters and straightens typographic apostrophes, keeping
/// byte offsets aligned with the input where possible.
fn fold(text: &str) -> String {
    text.replace('\u{2019}', "'").to_ascii_lowercase()
}

/// True when `idx` in `text` starts a word (no letter or digit just before).
fn at_word_start(text: &str, idx: usize) -> bool {
    text[..idx]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric())
}

/// Finds `template` (with one `placeholder`) in `text` and returns the text
/// in the placeholder's position, as written. Matching ignores ASCII case;
/// the literal before the placeholder must start a word; the value must be a
/// short phrase without sentence punctuation.
pub fn extract(template: &str, placeholder: &str, text: &str) -> Option<String> {
    extract_in(template, placeholder, &Prepared::new(text))
}

/// A message prepared once for matching against many templates: typographic
/// apostrophes straightened, its ASCII-lower-cased form (same byte offsets),
/// and which of the lexicon's literals (probes, template prefixes) occur in
/// it, found in one pass. The simulated model matches each message against
/// every template of the lexicon; preparing it once keeps that cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    text: String,
    folded: String,
    /// Bit `i` set when literal `i` of [`COMPILED`] occurs in `folded`.
    seen: Vec<u64>,
}

impl Prepared {
    /// Prepares `text`.
    pub fn new(text: &str) -> Self {
        let text = if text.contains('\u{2019}') {
            text.replace('\u{2019}', "'")
        } else {
            text.to_string()
        };
        let folded = text.to_ascii_lowercase();
        let compiled = &*COMPILED;
        let mut seen = vec![0u64; compiled.literals.patterns_len().div_ceil(64)];
        for m in compiled.literals.find_overlapping_iter(folded.as_str()) {
            let i = m.pattern().as_usize();
            seen[i / 64] |= 1 << (i % 64);
        }
        Prepared { text, folded, seen }
    }

    /// Whether literal `id` of [`COMPILED`] occurs in the message.
    fn has(&self, id: usize) -> bool {
        self.seen[id / 64] & (1 << (id % 64)) != 0
    }
}

/// A template split at its placeholder and folded, with searchers built once.
#[derive(Debug)]
struct Template {
    /// Folded literal before the placeholder.
    pre: memmem::Finder<'static>,
    /// Folded literal after the placeholder without its final full stops;
    /// `None` when empty.
    post_core: Option<memmem::Finder<'static>>,
    /// Index of `pre` among [`Compiled::literals`]; `None` when `pre` is
    /// empty (it occurs everywhere).
    literal: Option<usize>,
}

impl Template {
    /// Splits `template` at `placeholder`; `None` without the placeholder.
    /// `literal` gives the id of a folded prefix.
    fn new(template: &str, placeholder: &str, literal: impl FnOnce(&str) -> usize) -> Option<Self> {
        let (pre, post) = template.split_once(placeholder)?;
        let pre = fold(pre);
        let post = fold(post);
        // The literal after the value without its final full stop, so that a
        // statement at the very end of a message without punctuation still parses.
        let post_core = post.trim_end_matches('.');
        Some(Template {
            literal: (!pre.is_empty()).then(|| literal(&pre)),
            pre: memmem::Finder::new(pre.as_bytes()).into_owned(),
            post_core: (!post_core.is_empty())
                .then(|| memmem::Finder::new(post_core.as_bytes()).into_owned()),
        })
    }

    /// The value in the placeholder's position in `prepared`, as written.
    fn extract(&self, prepared: &Prepared) -> Option<String> {
        if self.literal.is_some_and(|id| !prepared.has(id)) {
            return None;
        }
        let (text, folded) = (&prepared.text, &prepared.folded);
        let pre_len = self.pre.needle().len();
        let mut from = 0;
        while let Some(rel) = self.pre.find(&folded.as_bytes()[from..]) {
            let start = from + rel;
            from = start + pre_len.max(1);
            if !at_word_start(folded, start) {
                continue;
            }
            let value_start = start + pre_len;
            let rest = &folded[value_start..];
            let end = match &self.post_core {
                None => rest.find(VALUE_STOPS).unwrap_or(rest.len()),
                Some(post) => match post.find(rest.as_bytes()) {
                    Some(e) => e,
                    None => continue,
                },
            };
            // Folding only changes ASCII letters, so a match of a whole
            // UTF-8 literal always sits on character boundaries.
            let Some(value) = text.get(value_start..value_start + end) else {
                continue;
            };
            let value = value.trim();
            if value.is_empty()
                || value.chars().count() > MAX_VALUE_CHARS
                || value.contains(VALUE_STOPS)
            {
                continue;
            }
            return Some(value.to_string());
        }
        None
    }
}

/// The lexicon compiled once for parsing: one automaton over every distinct
/// folded literal (probes and template prefixes), and each subject's
/// templates split and folded.
#[derive(Debug)]
struct Compiled {
    /// Every distinct folded literal.
    literals: AhoCorasick,
    /// Per subject, the literal ids of its folded probes.
    probes: Vec<Vec<usize>>,
    /// Per subject, its statements in table order.
    statements: Vec<Vec<Template>>,
    /// Per subject, its distractor sentences in table order.
    distractors: Vec<Vec<Template>>,
}

impl Compiled {
    fn new() -> Self {
        let mut literals: Vec<String> = Vec::new();
        let mut ids: HashMap<String, usize> = HashMap::new();
        let mut id_of = |lit: &str| -> usize {
            *ids.entry(lit.to_string()).or_insert_with(|| {
                literals.push(lit.to_string());
                literals.len() - 1
            })
        };
        let mut probes = Vec::new();
        let mut statements = Vec::new();
        let mut distractors = Vec::new();
        for s in SUBJECTS {
            probes.push(s.probes.iter().map(|p| id_of(&fold(p))).collect());
            statements.push(
                s.statements
                    .iter()
                    .filter_map(|t| Template::new(t, VALUE, &mut id_of))
                    .collect(),
            );
            distractors.push(
                s.distractors
                    .iter()
                    .filter_map(|(t, _)| Template::new(t, DISTRACTOR, &mut id_of))
                    .collect(),
            );
        }
        Compiled {
            // Standard match semantics (the default) report every
            // occurrence of every literal in an overlapping search.
            literals: AhoCorasick::new(&literals)
                .unwrap_or_else(|e| panic!("the lexicon's literals do not compile: {e}")),
            probes,
            statements,
            distractors,
        }
    }

    /// Where `subject` sits in [`SUBJECTS`]; `None` for a subject built
    /// elsewhere (parsed without the compiled tables).
    fn subject_index(subject: &Subject) -> Option<usize> {
        SUBJECTS.iter().position(|s| {
            s.key == subject.key
                && s.statements == subject.statements
                && s.distractors == subject.distractors
        })
    }
}

/// The lexicon compiled for parsing, built on first use.
static COMPILED: LazyLock<Compiled> = LazyLock::new(Compiled::new);

/// [`extract`] on a prepared message.
pub fn extract_in(template: &str, placeholder: &str, prepared: &Prepared) -> Option<String> {
    // An ad-hoc template is not among the compiled literals: no prefilter.
    let mut t = Template::new(template, placeholder, |_| 0)?;
    t.literal = None;
    t.extract(prepared)
}

impl Subject {
    /// The value the user stated in `text` with one of this subject's
    /// statements, as written.
    pub fn stated_value(&self, text: &str) -> Option<String> {
        self.stated_value_in(&Prepared::new(text))
    }

    /// [`Subject::stated_value`] on a prepared message.
    pub fn stated_value_in(&self, prepared: &Prepared) -> Option<String> {
        match Compiled::subject_index(self) {
            Some(i) => COMPILED.statements[i]
                .iter()
                .find_map(|t| t.extract(prepared)),
            None => self
                .statements
                .iter()
                .find_map(|t| extract_in(t, VALUE, prepared)),
        }
    }

    /// True when `text` asks this subject's probe.
    pub fn is_probed_by(&self, text: &str) -> bool {
        let folded = fold(text);
        self.probes.iter().any(|p| folded.contains(&fold(p)))
    }

    /// The answer naming `value`.
    pub fn answer_with(&self, value: &str) -> String {
        render(self.answer, VALUE, value)
    }

    /// The refusal when the statement is missing; starts with "I don't know".
    pub fn refusal(&self, probe: &str) -> String {
        render(pick(REFUSALS, probe, 1), "{about}", self.unknown)
    }

    /// The acknowledgement of the anchor statement `text` (never repeats the value).
    pub fn acknowledgement(&self, text: &str) -> String {
        render(pick(ACKNOWLEDGEMENTS, text, 2), "{about}", self.unknown)
    }

    /// If `text` is one of this subject's distractor sentences, its scripted reply.
    pub fn distractor_reply(&self, text: &str) -> Option<&'static str> {
        self.distractor_reply_in(&Prepared::new(text))
    }

    /// [`Subject::distractor_reply`] on a prepared message.
    pub fn distractor_reply_in(&self, prepared: &Prepared) -> Option<&'static str> {
        match Compiled::subject_index(self) {
            Some(i) => COMPILED.distractors[i]
                .iter()
                .zip(self.distractors)
                .find(|(t, _)| t.extract(prepared).is_some())
                .map(|(_, (_, reply))| *reply),
            None => self
                .distractors
                .iter()
                .find(|(t, _)| extract_in(t, DISTRACTOR, prepared).is_some())
                .map(|(_, reply)| *reply),
        }
    }
}

/// The subject whose probe `text` asks, if any.
pub fn probed_subject(text: &str) -> Option<&'static Subject> {
    probed_subject_in(&Prepared::new(text))
}

/// [`probed_subject`] on a prepared message: the first subject in table
/// order with a probe in the message.
pub fn probed_subject_in(prepared: &Prepared) -> Option<&'static Subject> {
    SUBJECTS
        .iter()
        .zip(COMPILED.probes.iter())
        .find(|(_, probes)| probes.iter().any(|&id| prepared.has(id)))
        .map(|(s, _)| s)
}

/// The subject and value `text` states in the first person, if any.
pub fn stated_subject(text: &str) -> Option<(&'static Subject, String)> {
    stated_subject_in(&Prepared::new(text))
}

/// [`stated_subject`] on a prepared message.
pub fn stated_subject_in(prepared: &Prepared) -> Option<(&'static Subject, String)> {
    SUBJECTS
        .iter()
        .zip(COMPILED.statements.iter())
        .find_map(|(s, templates)| {
            templates
                .iter()
                .find_map(|t| t.extract(prepared))
                .map(|v| (s, v))
        })
}

/// The scripted reply of the first subject (in table order) whose
/// distractor sentence `prepared` is, if any.
pub fn distractor_reply_in(prepared: &Prepared) -> Option<&'static str> {
    SUBJECTS
        .iter()
        .zip(COMPILED.distractors.iter())
        .find_map(|(s, templates)| {
            templates
                .iter()
                .zip(s.distractors)
                .find(|(t, _)| t.extract(prepared).is_some())
                .map(|(_, (_, reply))| *reply)
        })
}

/// Lower-case word tokens of `text` (letters and digits; everything else
/// separates words).
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// True when `needle` occurs as a run of whole words in `haystack`.
pub fn contains_words(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty()
        && haystack.len() >= needle.len()
        && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Every fixed sentence of the lexicon (templates, filler, replies, the
/// pieces of composed probes), for checking that no value hides in ordinary
/// text.
pub fn fixed_texts() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for s in SUBJECTS {
        out.extend(s.statements);
        out.extend(s.probes);
        out.push(s.answer);
        out.push(s.unknown);
        for (u, a) in s.distractors {
            out.push(u);
            out.push(a);
        }
    }
    for (q, a) in filler::all_pairs() {
        out.push(q);
        out.push(a);
    }
    out.extend(filler::FILLER_OPENERS);
    out.extend(filler::ANCHOR_OPENERS);
    out.extend(filler::ANCHOR_CLOSERS);
    out.extend(filler::PROBE_OPENERS);
    out.extend(super::probes::texts());
    out.extend(filler::GENERIC_REPLIES);
    out.extend(ACKNOWLEDGEMENTS);
    out.extend(REFUSALS);
    out
}

/// Words that negate or doubt what an answer says. Any of them anywhere in
/// the answer keeps the fast path from calling it `preserved`, and no composed
/// anchor value may be one of them.
pub const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "nor",
    "neither",
    "none",
    "nobody",
    "nothing",
    "dont",
    "doesnt",
    "didnt",
    "isnt",
    "wasnt",
    "arent",
    "werent",
    "havent",
    "hasnt",
    "hadnt",
    "cant",
    "wont",
    "wouldnt",
    "couldnt",
    "shouldnt",
    "without",
    "unknown",
    "unsure",
    "wrong",
    "incorrect",
    "mistaken",
    "instead",
    "rather",
];

/// Words that hedge. Like [`NEGATIONS`] they block `preserved`, but a
/// hedged distractor ("maybe Maya") is still a wrong answer.
pub const HEDGES: &[&str] = &[
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "might",
    "could",
    "guess",
    "guessing",
    "think",
    "believe",
    "suppose",
    "assume",
    "presumably",
    "seems",
    "seem",
    "likely",
    "unlikely",
    "if",
    "unless",
    "or",
    "either",
    "but",
    "however",
    "although",
    "though",
    "sorry",
    "apologize",
    "apologise",
    "uncertain",
    "unclear",
    "recall",
    "forgot",
    "forget",
    "hmm",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pools::Pool;
    use crate::Category;

    #[test]
    fn statements_parse_back_to_the_value() {
        for s in SUBJECTS {
            for t in s.statements {
                for v in [
                    "Oriane",
                    "14 March 2031",
                    "March 14, 2031",
                    "two hundred and forty-seven",
                    "Sri Lankan",
                ] {
                    let text = format!(
                        "Hi! {} Anyway, I have a few questions.",
                        render(t, VALUE, v)
                    );
                    assert_eq!(s.stated_value(&text).as_deref(), Some(v), "{t}");
                }
            }
        }
    }

    #[test]
    fn every_probe_belongs_to_exactly_its_subject() {
        for s in SUBJECTS {
            for p in s.probes {
                let owners: Vec<&str> = SUBJECTS
                    .iter()
                    .filter(|o| o.is_probed_by(p))
                    .map(|o| o.key)
                    .collect();
                assert_eq!(owners, vec![s.key], "probe {p:?}");
                assert!(
                    stated_subject(p).is_none(),
                    "probe parses as a statement: {p}"
                );
            }
        }
    }

    #[test]
    fn distractors_never_parse_as_statements_or_probes() {
        for s in SUBJECTS {
            for (t, reply) in s.distractors {
                let text = render(t, DISTRACTOR, "Maelis");
                assert!(stated_subject(&text).is_none(), "distractor parses: {text}");
                assert!(
                    probed_subject(&text).is_none(),
                    "distractor is a probe: {text}"
                );
                assert_eq!(s.distractor_reply(&text), Some(*reply));
                assert!(!reply.contains(DISTRACTOR));
            }
        }
    }

    #[test]
    fn filler_is_neither_statement_nor_probe_and_has_no_digits() {
        for (q, a) in filler::all_pairs() {
            for text in [q, a] {
                assert!(stated_subject(text).is_none(), "{text}");
                assert!(probed_subject(text).is_none(), "{text}");
                assert!(!text.chars().any(|c| c.is_ascii_digit()), "{text}");
            }
        }
    }

    #[test]
    fn every_category_has_subjects_with_statements_and_probes() {
        for c in Category::ALL {
            let subjects: Vec<_> = SUBJECTS.iter().filter(|s| s.category == c).collect();
            assert!(subjects.len() >= 4, "{c:?}");
            for s in subjects {
                assert!(
                    !s.statements.is_empty() && !s.probes.is_empty() && !s.distractors.is_empty()
                );
                assert!(s.statements.iter().all(|t| t.matches(VALUE).count() == 1));
                assert!(s
                    .distractors
                    .iter()
                    .all(|(t, _)| t.matches(DISTRACTOR).count() == 1));
                assert!(s.answer.contains(VALUE));
            }
        }
        let keys: std::collections::HashSet<_> = SUBJECTS.iter().map(|s| s.key).collect();
        assert_eq!(keys.len(), SUBJECTS.len());
    }

    #[test]
    fn no_list_value_hides_in_lexicon_text_or_another_value() {
        let texts: Vec<Vec<String>> = fixed_texts().iter().map(|t| tokens(t)).collect();
        let mut all: Vec<(String, Vec<String>)> = Vec::new();
        for s in SUBJECTS {
            if let Some(Pool::List(values)) = s.pool {
                for v in values {
                    let tv = tokens(v);
                    for t in &texts {
                        assert!(!contains_words(t, &tv), "{v:?} occurs in lexicon text");
                    }
                    all.push((v.to_string(), tv));
                }
            }
        }
        // Plain-text containment, the strictest reading of "inside".
        for (a, _) in &all {
            for (b, _) in &all {
                if a != b {
                    assert!(
                        !b.to_lowercase().contains(&a.to_lowercase()),
                        "{a:?} inside {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn extraction_requires_word_start_and_the_whole_template() {
        assert_eq!(
            extract("I grew up in {v}.", VALUE, "My colleague grew up in Lviv."),
            None
        );
        assert_eq!(
            extract("I grew up in {v}.", VALUE, "i grew up in Ghent"),
            Some("Ghent".into())
        );
        assert_eq!(
            extract(
                "I need {v} tiles for the bathroom floor.",
                VALUE,
                "I need a drill. Tiles for the bathroom floor?"
            ),
            None
        );
    }
}
