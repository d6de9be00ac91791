//! Tests of the fast-path scorer: anchors, distractors, refusals, bleed.
use super::*;
use cb_dataset::{Anchor, Category, Turn, TurnKind};
use cb_testkit::conversation as kit;

fn conv(
    id: &str,
    category: Category,
    value: &str,
    variants: &[&str],
    distractor: Option<&str>,
) -> Conversation {
    let mut all: Vec<String> = vec![value.to_string()];
    all.extend(variants.iter().map(|v| v.to_string()));
    let anchor = Anchor {
        category,
        subject: "the thing".into(),
        value: value.into(),
        variants: all,
    };
    let filler = match distractor {
        Some(d) => format!("Unrelated, but my colleague mentioned {d} today."),
        None => "How do I descale a kettle?".into(),
    };
    kit::conversation(
        id,
        anchor,
        vec![
            kit::turn(
                TurnKind::Anchor,
                format!("Please remember: the thing is {value}."),
                Some("Noted."),
            ),
            Turn {
                distractor: distractor.map(String::from),
                ..kit::turn(
                    TurnKind::Filler,
                    filler,
                    Some("Use vinegar and rinse well."),
                )
            },
            kit::turn(TurnKind::Probe, "What was the thing again?", None),
        ],
    )
}

fn dataset() -> Dataset {
    Dataset {
        conversations: vec![
            conv("c001", Category::PersonName, "Oriane", &[], Some("Maya")),
            conv(
                "c002",
                Category::Date,
                "2031-03-14",
                &["14 March 2031", "March 14, 2031"],
                Some("9 May 2031"),
            ),
            conv(
                "c003",
                Category::Number,
                "48",
                &["forty-eight"],
                Some("three hundred and twelve"),
            ),
            conv("c004", Category::PersonName, "Ann", &[], None),
            conv("c005", Category::Number, "4817", &[], None),
            conv("c006", Category::Place, "Tromsø", &[], Some("Bergen")),
            conv("c007", Category::InventedWord, "Vellinor", &[], None),
            conv("c008", Category::Number, "17", &[], None),
            conv("c009", Category::Number, "2031", &[], None),
            conv(
                "c010",
                Category::Date,
                "2031-03-04",
                &["4 March 2031"],
                None,
            ),
        ],
    }
}

fn score(id: &str, answer: &str) -> Scored {
    let ds = dataset();
    let index = AnchorIndex::new(&ds);
    let c = ds.conversations.iter().find(|c| c.id == id).unwrap();
    score_fast(c, Some(answer), &index)
}

fn verdict(id: &str, answer: &str) -> Verdict {
    let s = score(id, answer);
    assert_eq!(s.method, VerdictMethod::FastPath);
    s.verdict
}

use Verdict::{Error, Lost, Preserved, Undetermined};

#[test]
fn exact_value_is_preserved() {
    let s = score("c001", "Your sister is called Oriane.");
    assert_eq!(s.verdict, Preserved, "{s:?}");
    assert!(s.bleed_from.is_empty());
    assert_eq!(
        verdict("c001", "Oriane's birthday is coming up, you said."),
        Preserved
    );
}

#[test]
fn unrelated_answer_is_undetermined() {
    assert_eq!(
        verdict("c001", "Your sister is called Orianne."),
        Undetermined
    );
    assert_eq!(verdict("c001", "Let me help you with that."), Undetermined);
}

#[test]
fn case_and_nfkc() {
    assert_eq!(verdict("c001", "ORIANE"), Preserved);
    assert_eq!(verdict("c005", "The locker code is ４８１７."), Preserved);
    assert_eq!(verdict("c005", "The locker code is 4,817."), Preserved);
    assert_eq!(verdict("c006", "You grew up in TROMSØ."), Preserved);
    assert_eq!(verdict("c005", "The locker code is 4818."), Undetermined);
}

#[test]
fn whole_words_only() {
    assert_eq!(verdict("c008", "You have 17 plants."), Preserved);
    assert_eq!(verdict("c008", "That was back in 2017."), Undetermined);
    assert_eq!(verdict("c004", "Your friend is Ann."), Preserved);
    assert_eq!(verdict("c004", "Your friend is Annabel."), Undetermined);
}

#[test]
fn dataset_variants_and_date_formats() {
    for answer in [
        "The recital is on 14 March 2031.",
        "The recital is on March 14, 2031.",
        "It is 2031-03-14.",
        "It's on the 14th of March, 2031.",
        "It's on 14/03/2031.",
        "It's on 03/14/2031.",
        "Friday, Mar 14 2031.",
    ] {
        assert_eq!(verdict("c002", answer), Preserved, "{answer}");
    }
    // Without the year, or numerically ambiguous: not confirmed.
    assert_eq!(verdict("c002", "The recital is on 14 March."), Undetermined);
    assert_eq!(verdict("c010", "It's on 04/03/2031."), Undetermined);
    assert_eq!(verdict("c010", "It's on 4 March 2031."), Preserved);
    // A different date is not a match.
    assert_eq!(verdict("c002", "It is on 15 March 2031."), Undetermined);
}

#[test]
fn numbers_in_words() {
    assert_eq!(verdict("c003", "You need forty-eight chairs."), Preserved);
    assert_eq!(verdict("c003", "You need forty eight chairs."), Preserved);
    assert_eq!(verdict("c003", "You need 48 chairs."), Preserved);
    assert_eq!(verdict("c005", "It is four eight one seven."), Preserved);
    assert_eq!(
        verdict("c005", "Four thousand eight hundred and seventeen."),
        Preserved
    );
    assert_eq!(verdict("c003", "You need forty chairs."), Undetermined);
}

#[test]
fn another_conversations_anchor_is_bleed() {
    let s = score("c001", "Your boat is called Vellinor.");
    assert_eq!(s.verdict, Lost);
    assert_eq!(s.bleed_from, vec!["c007".to_string()]);
    let (ds, index) = (dataset(), AnchorIndex::new(&dataset()));
    let bleed = |answer: &str| bleed_in(&ds.conversations[0], answer, &index);
    assert_eq!(bleed("Your boat is called Vellinor."), vec!["c007"]);
    assert!(bleed("Press in a little filler with a knife.").is_empty());
    // Even with the right value present.
    let s = score("c001", "Oriane. Also, your boat Vellinor and code 4817.");
    assert_eq!(s.verdict, Lost);
    assert_eq!(s.bleed_from, vec!["c005".to_string(), "c007".to_string()]);
}

#[test]
fn no_bleed_without_a_foreign_anchor() {
    // "2031" is c009's anchor but here it is part of c002's own date.
    let s = score("c002", "The recital is on 14 March 2031.");
    assert_eq!(s.verdict, Preserved);
    assert!(s.bleed_from.is_empty());
    // Short anchors ("17") are not bleed evidence.
    assert_eq!(
        score("c001", "Oriane turns 17 soon.").bleed_from,
        Vec::<String>::new()
    );
    // A foreign value that occurs in this conversation's own history.
    let mut ds = dataset();
    ds.conversations[0].turns[1].user = "We watched Vellinor, a film.".into();
    let index = AnchorIndex::new(&ds);
    let s = score_fast(&ds.conversations[0], Some("You watched Vellinor."), &index);
    assert_eq!(s.verdict, Undetermined, "{s:?}");
    assert!(s.bleed_from.is_empty());
}

#[test]
fn refusals_are_lost() {
    for answer in [
        "I don't know what your sister is called.",
        "I do not know.",
        "You haven't told me her name.",
        "I don't have that information.",
        "I don't recall you mentioning that.",
        "I’m afraid I have no idea.",
    ] {
        let s = score("c001", answer);
        assert_eq!(s.verdict, Lost, "{answer}: {s:?}");
    }
    // A refusal next to something that may be the date is not decided.
    assert_eq!(
        verdict("c002", "I don't know the year, only 14 March."),
        Undetermined
    );
}

#[test]
fn distractor_instead_of_anchor_is_lost() {
    assert_eq!(verdict("c001", "Your sister is called Maya."), Lost);
    assert_eq!(verdict("c001", "Maybe Maya."), Lost);
    assert_eq!(verdict("c002", "The recital is on 9 May 2031."), Lost);
    // The distractor in another spelling than the history used.
    assert_eq!(verdict("c002", "The recital is on May 9th, 2031."), Lost);
    assert_eq!(verdict("c003", "You need 312 chairs."), Lost);
    assert_eq!(verdict("c006", "You grew up in Bergen."), Lost);
    // Negated distractor, or both values: not decided.
    assert_eq!(verdict("c001", "It is not Maya."), Undetermined);
    assert_eq!(verdict("c001", "Oriane, not Maya."), Undetermined);
    assert_eq!(
        verdict("c001", "Your sister is Oriane and your colleague is Maya."),
        Undetermined
    );
}

#[test]
fn hedges_and_negations_are_undetermined() {
    for answer in [
        "I don't know, maybe Oriane?",
        "It is not Oriane.",
        "I'm not sure. It's Oriane.",
        "Oriane?",
        "I think it's Oriane.",
        "Oriane or Orianne.",
    ] {
        assert_eq!(verdict("c001", answer), Undetermined, "{answer}");
    }
    assert_eq!(verdict("c001", "I'm not sure."), Undetermined);
}

#[test]
fn empty_answers_are_errors() {
    let ds = dataset();
    let index = AnchorIndex::new(&ds);
    let c = &ds.conversations[0];
    for answer in [None, Some(""), Some("  \n\t")] {
        let s = score_fast(c, answer, &index);
        assert_eq!(s.verdict, Error);
        assert_eq!(s.method, VerdictMethod::FastPath);
    }
    assert_eq!(score_fast(c, Some("..."), &index).verdict, Undetermined);
}

#[test]
fn index_leaves_out_short_values() {
    let ds = dataset();
    let index = AnchorIndex::new(&ds);
    assert!(!index.is_empty());
    let ids: Vec<&str> = index
        .owner
        .values()
        .chain(index.owners.values().flatten())
        .map(|&o| index.id(o))
        .collect();
    assert!(ids.iter().all(|id| *id != "c003" && *id != "c008"));
    assert!(ids.contains(&"c004"));
}

/// Many anchors spelled with the same first word (every date has a form
/// starting with "the"): each is still found, with its owner, and a
/// phrase two conversations share names both.
#[test]
fn anchors_are_found_by_their_whole_spelling_among_many_alike() {
    let mut ds = dataset();
    let template = ds.conversations[0].clone();
    for i in 0..500 {
        let mut c = template.clone();
        c.id = format!("x{i:03}");
        c.anchor.value = format!("the lantern of {i} stones");
        c.anchor.variants.clear();
        ds.conversations.push(c);
    }
    let mut twin = template.clone();
    twin.id = "x-twin".into();
    twin.anchor.value = "the lantern of 250 stones".into();
    twin.anchor.variants.clear();
    ds.conversations.push(twin);
    let index = AnchorIndex::new(&ds);
    let c = &ds.conversations[0];
    let bleed = bleed_in(
        c,
        "I recall the lantern of 250 stones, and the rest.",
        &index,
    );
    assert_eq!(bleed, ["x-twin", "x250"]);
    assert!(bleed_in(c, "the the the lantern of stones", &index).is_empty());
}

/// Spellings of 64 words (the last bit of the mask of word counts), 65
/// and 70 words (outside it) are indexed too, and found whole, never in
/// part.
#[test]
fn anchors_of_many_words_are_found_whole() {
    let mut ds = dataset();
    let words: Vec<String> = (0..70).map(|i| format!("w{i}")).collect();
    for n in [64, 65, 70] {
        let mut long = ds.conversations[0].clone();
        long.id = format!("x-{n}");
        // Each starts its own way, so that no spelling is a part of another.
        long.anchor.value = format!("v{n} {}", words[..n - 1].join(" "));
        long.anchor.variants.clear();
        ds.conversations.push(long);
    }
    let index = AnchorIndex::new(&ds);
    let c = &ds.conversations[1];
    for n in [64, 65, 70] {
        let spelled = format!("v{n} {}", words[..n - 1].join(" "));
        let whole = format!("You said {spelled} once.");
        assert_eq!(bleed_in(c, &whole, &index), [format!("x-{n}")], "{n}");
        let part = format!("You said v{n} {} once.", words[..n - 2].join(" "));
        assert!(bleed_in(c, &part, &index).is_empty(), "{n}");
    }
}

/// A spelling three conversations share names all three, in dataset
/// order, and a spelling of one names it alone.
#[test]
fn a_spelling_shared_by_three_names_all_of_them_in_order() {
    let mut ds = dataset();
    for id in ["x-b", "x-a", "x-c"] {
        let mut c = ds.conversations[0].clone();
        c.id = id.into();
        c.anchor.value = "the copper kettle".into();
        c.anchor.variants.clear();
        ds.conversations.push(c);
    }
    let index = AnchorIndex::new(&ds);
    let words = tokens("the copper kettle");
    let owners: Vec<&str> = index
        .at(&words, 0)
        .iter()
        .flat_map(|(_, owners)| owners.iter().map(|&o| index.id(o)))
        .collect();
    assert_eq!(owners, ["x-b", "x-a", "x-c"]);
    let own = &ds.conversations[0];
    let own_words = tokens(&own.anchor.value);
    let found = index.at(&own_words, 0);
    assert!(found
        .iter()
        .any(|(len, owners)| *len == own_words.len()
            && owners.iter().all(|&o| index.id(o) == own.id)));
}
