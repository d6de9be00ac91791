//! Tests of the detector: scripts, the Latin detector, the Japanese and
//! Chinese tie, and the English path checked against lingua.

use super::*;
use crate::calibrate::{load_part, Part};
use crate::phrasebook::sentences;

#[test]
fn tells_portuguese_from_spanish_in_short_sentences() {
    let d = Detector::new(&Language::ALL);
    for (text, lang) in [
        ("O mais importante é manter a constância.", Language::Pt),
        (
            "En la mayoría de los casos, la solución más sencilla también es la mejor.",
            Language::Es,
        ),
        (
            "Normalmente leva algumas semanas até você notar uma diferença.",
            Language::Pt,
        ),
        (
            "Normalmente pasan unas semanas antes de que notes la diferencia.",
            Language::Es,
        ),
    ] {
        let got = d.detect(text).unwrap();
        assert_eq!(got.language, lang, "{text}");
        assert!(got.reliable, "{text}: {got:?}");
    }
    let short = d.detect("How do I reverse a list in Python?").unwrap();
    assert_eq!(short.language, Language::En);
}

#[test]
fn script_decides_cjk_cyrillic_hangul_arabic_and_devanagari() {
    let d = Detector::new(&Language::ALL);
    let lang = |t: &str| d.detect(t).map(|x| (x.language, x.reliable));
    assert_eq!(
        lang("始める前に説明書をよく読んでください。"),
        Some((Language::Ja, true))
    );
    assert_eq!(
        lang("每天散步三十分钟是最容易坚持的运动。"),
        Some((Language::Zh, true))
    );
    assert_eq!(lang("Привет, как дела?"), Some((Language::Ru, true)));
    assert_eq!(
        lang("좋은 질문인데요, 답은 몇 가지 조건에 따라 달라져요."),
        Some((Language::Ko, true))
    );
    assert_eq!(
        lang("هذا سؤال جيد، والإجابة تعتمد على بضعة أمور."),
        Some((Language::Ar, true))
    );
    assert_eq!(
        lang("यह अच्छा प्रश्न है, और इसका उत्तर कुछ बातों पर निर्भर करता है।"),
        Some((Language::Hi, true))
    );
    let de = d
        .detect("„Danke“ heißt auf Japanisch „arigatō“ (ありがとう).")
        .unwrap();
    assert_eq!(de.language, Language::De);
}

#[test]
fn indonesian_and_vietnamese_are_told_apart_from_the_others() {
    let d = Detector::new(&Language::ALL);
    for l in [Language::Id, Language::Vi] {
        for s in sentences(l) {
            let got = d.detect(s).unwrap();
            assert_eq!((got.language, got.reliable), (l, true), "{s}");
        }
    }
}

#[test]
fn short_han_only_text_is_a_tie_and_no_guess() {
    let d = Detector::new(&Language::ALL);
    // No kana, no simplified-only character: Japanese and Chinese alike.
    let values = d.confidences("富士山 北岳");
    assert_eq!(values, vec![(Language::Ja, 0.5), (Language::Zh, 0.5)]);
    assert_eq!(d.detect("富士山 北岳"), None);
    assert_eq!(d.detect("東京大学"), None);
    // Positive controls: kana decides Japanese, a simplified character or
    // a long run decides Chinese.
    assert_eq!(d.detect("東京へ").unwrap().language, Language::Ja);
    assert_eq!(d.detect("这个问题").unwrap().language, Language::Zh);
    // Where only one of the two is plausible, there is no tie.
    let zh_only = Detector::new(&[Language::En, Language::Zh]);
    assert_eq!(zh_only.detect("東京大学").unwrap().language, Language::Zh);
}

#[test]
fn restricted_to_the_plausible_languages() {
    let d = Detector::new(&[Language::Pt]);
    assert_eq!(
        d.detect("Obrigado pela ajuda, foi muito útil.")
            .unwrap()
            .language,
        Language::Pt
    );
    assert_eq!(
        d.detect("Thank you very much for all of your help today."),
        None
    );
    assert_eq!(Detector::new(&[Language::Pt]).detect("Привет"), None);
    assert_eq!(
        Detector::new(&[Language::Pt]).detect("좋은 질문이에요"),
        None
    );
    assert_eq!(d.detect("123 !!"), None);
}

#[test]
fn the_memo_gives_the_same_answer_as_the_first_look() {
    let d = Detector::new(&Language::ALL);
    let text = "Zwykle mija kilka tygodni, zanim zauważysz różnicę.";
    let first = d.confidences(text);
    assert_eq!(d.memo.lock().unwrap().len(), 1);
    assert_eq!(d.confidences(text), first);
    assert_eq!(d.memo.lock().unwrap().len(), 1);
}

#[test]
fn the_english_path_agrees_with_lingua_wherever_it_fires() {
    let mut texts: Vec<String> = Vec::new();
    for part in [Part::Development, Part::HeldOut] {
        let Ok((_, cases)) = load_part(part, None) else {
            continue;
        };
        for case in &cases {
            texts.push(case.reply.text.clone());
            for m in &case.request.messages {
                texts.push(m.text_cow().into_owned());
            }
        }
    }
    for l in Language::ALL {
        texts.extend(sentences(l).iter().map(|s| s.to_string()));
    }
    // The joined user messages too, as the conversation's language reads
    // them.
    let joined: Vec<String> = texts.chunks(4).map(|c| c.join(" ")).collect();
    texts.extend(joined);
    let audit = audit_english_path(&texts);
    for (name, path) in [
        ("decisive", &audit.decisive),
        ("English-first", &audit.english_first),
    ] {
        assert!(path.fired > 50, "the {name} path fired on only {path:?}");
        assert!(
            path.disagreements.is_empty(),
            "{name}: {:#?}",
            path.disagreements
        );
    }
}

#[test]
fn the_english_first_path_needs_an_english_conversation_and_long_plain_english() {
    let d = Detector::new(&Language::ALL);
    let english = "Keep the blinds closed during the day and open the windows in the evening.";
    assert!(d.english_first(english));
    // A name or two is allowed; a sentence that is mostly names is not.
    assert!(d.english_first(
        "Your grandmother Zuriñe lives near the sea and she still walks there every morning."
    ));
    assert!(!d.english_first("You're moving to Groningen with Maastricht friends."));
    // Short English words count by the lexicon; words it does not know,
    // another language, or English only in part: lingua decides.
    assert!(d.english_first("Larger holes need a mesh patch first."));
    assert!(!d.english_first("Try the gazpacho or the salmorejo."));
    for l in Language::ALL.into_iter().filter(|&l| l != Language::En) {
        for s in sentences(l) {
            assert!(!d.english_first(s), "{l}: {s}");
        }
    }
    let mixed = format!("{} {}", sentences(Language::Id)[0], english);
    assert!(!d.english_first(&mixed), "{mixed}");
    // A detector without English never takes it.
    assert!(!Detector::new(&[Language::Pt, Language::Es]).english_first(english));
}

#[test]
fn a_detector_pages_lingua_in_only_when_a_sentence_needs_it() {
    let d = Detector::new(&Language::ALL);
    let long = "If you can, keep the blinds closed during the day and open the windows when the \
                evening is cool, then put a fan by the window so that it pulls the cooler air in.";
    assert_eq!(d.confidences(long), vec![(Language::En, 1.0)]);
    assert!(d.latin.get().is_none(), "the decisive path built lingua");
    d.confidences("Zwykle mija kilka tygodni, zanim zauważysz różnicę.");
    assert!(d.latin.get().is_some());
}

#[test]
fn the_english_path_stays_out_of_other_languages() {
    for l in Language::ALL.into_iter().filter(|&l| l != Language::En) {
        for s in sentences(l) {
            assert!(!decisively_english(s), "{l}: {s}");
        }
    }
    assert!(decisively_english(
        "Give it as much sun as you can, and water it when the top of the soil feels dry."
    ));
    // Long, with a name or two and a letter outside ASCII in a name.
    assert!(decisively_english(
        "Your grandmother Zuriñe still lives by the sea, and she walks along it every morning \
         before the shops open, whatever the weather is like."
    ));
    // Too short, or with a letter outside ASCII: lingua decides.
    assert!(!decisively_english("You grew up in Blemiliwych."));
    assert!(!decisively_english(
        "The café is open and the staff are kind to you."
    ));
}
