//! `language_drift`: the reply switches wholesale to a neighbouring
//! language, or a share of its sentences are replaced by sentences of that
//! language (a sustained mix), as a route with a broken language setting
//! or a drifting fine-tune does (Portuguese into Spanish, Italian into
//! Spanish, Dutch into German).

use super::{language_of, Completion};
use cb_contracts::Language;
use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How the reply drifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Drift {
    /// Every sentence in the other language.
    Switch,
    /// Sentences of the other language interleaved with the reply's own:
    /// at least two, about one for every two of the reply's sentences.
    Mix,
}

/// Sentences of `text`: split after `.`, `!`, `?` followed by a space,
/// after `。！？`, and at line breaks.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let next_is_space = chars.peek().is_none_or(|n| n.is_whitespace());
        if c == '\n' || "。！？".contains(c) || (".!?".contains(c) && next_is_space) {
            let s = current.trim().to_string();
            if !s.is_empty() {
                out.push(s);
            }
            current.clear();
        }
    }
    let s = current.trim().to_string();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// `count` sentences of `to`: the parallel translations when the reply's
/// sentences come from the phrasebook of `from`, else distinct sentences
/// drawn from `rng`.
fn foreign(
    own: &[String],
    from: Language,
    to: Language,
    count: usize,
    rng: &mut impl Rng,
) -> Vec<String> {
    let source = cb_contracts::phrasebook::sentences(from);
    let target = cb_contracts::phrasebook::sentences(to);
    let mut parallel: Vec<String> = own
        .iter()
        .filter_map(|s| source.iter().position(|p| p == s))
        .map(|i| target[i].to_string())
        .collect();
    if parallel.len() >= count {
        parallel.truncate(count);
        return parallel;
    }
    let mut drawn: Vec<&str> = target.to_vec();
    drawn.shuffle(rng);
    drawn.into_iter().take(count).map(str::to_string).collect()
}

/// Drifts the reply into `to` (the neighbour of its language when `None`)
/// as `drift` says (drawn when `None`).
pub fn apply(
    drift: Option<Drift>,
    to: Option<Language>,
    reply: Completion,
    rng: &mut impl Rng,
) -> Completion {
    let drift = drift.unwrap_or(if rng.random_bool(0.5) {
        Drift::Switch
    } else {
        Drift::Mix
    });
    let from = language_of(&reply.text);
    let to = to.filter(|&t| t != from).unwrap_or(from.neighbour());
    let own = sentences(&reply.text);
    let separator = if matches!(to, Language::Ja | Language::Zh)
        && matches!(from, Language::Ja | Language::Zh)
    {
        ""
    } else {
        " "
    };
    let text = match drift {
        Drift::Switch => foreign(&own, from, to, own.len().max(2), rng).join(separator),
        Drift::Mix => {
            let count = own.len().div_ceil(2).max(2);
            let others = foreign(&own, from, to, count, rng);
            let mut mixed = Vec::new();
            for i in 0..own.len().max(others.len()) {
                if let Some(s) = own.get(i) {
                    mixed.push(s.clone());
                }
                if let Some(s) = others.get(i) {
                    mixed.push(s.clone());
                }
            }
            mixed.join(separator)
        }
    };
    Completion { text, ..reply }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences() {
        assert_eq!(
            sentences("One. Two! 3.5 is fine.\nFour"),
            vec!["One.", "Two!", "3.5 is fine.", "Four"]
        );
        assert_eq!(sentences("はい。いいえ。"), vec!["はい。", "いいえ。"]);
    }

    #[test]
    fn phrasebook_replies_are_translated_in_parallel() {
        let pt = cb_contracts::phrasebook::sentences(Language::Pt);
        let own = vec![pt[3].to_string(), pt[8].to_string()];
        let mut rng = cb_base::seed::rng(1, "t", 0);
        let es = foreign(&own, Language::Pt, Language::Es, 2, &mut rng);
        let book = cb_contracts::phrasebook::sentences(Language::Es);
        assert_eq!(es, vec![book[3].to_string(), book[8].to_string()]);
    }
}
