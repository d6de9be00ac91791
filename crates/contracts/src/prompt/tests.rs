//! Tests of the prompt readers: continuation, formats, the words and the
//! languages a user message names.

use super::*;
use crate::tests::request as req;

#[test]
fn continuation_is_asked_possible_or_not() {
    let asked = req(&[("user", "Continue this sentence: The door opened and")]);
    assert_eq!(continuation(&asked), Continuation::Asked);
    let system = req(&[
        ("system", "You complete the user's text."),
        ("user", "Once upon a"),
    ]);
    assert_eq!(continuation(&system), Continuation::Asked);
    assert_eq!(
        continuation(&req(&[("user", "what is the capital of france")])),
        Continuation::Possible
    );
    assert_eq!(
        continuation(&req(&[("user", "What is the capital of France?")])),
        Continuation::No
    );
}

#[test]
fn formats_and_words_the_user_wrote() {
    assert!(asks_for_format(&req(&[("user", "List three fruits.")])));
    assert!(!asks_for_format(&req(&[("user", "Why is the sky blue?")])));
    let npm = req(&[("user", "How do I install it with npm?")]);
    assert!(user_wrote_word(&npm, "npm"));
    assert!(!user_wrote_word(&npm, "np"));
    assert!(!user_wrote_word(&req(&[("user", "Hello!")]), "ello"));
}

#[test]
fn other_languages_named_or_any() {
    let named = req(&[(
        "user",
        "Translate into Portuguese: 'The train leaves at eight.'",
    )]);
    assert_eq!(
        other_languages(&named, Language::En),
        OtherLanguages::Named(vec![Language::Pt])
    );
    let own = req(&[("user", "Kannst du mir das auf Deutsch erklären?")]);
    assert_eq!(other_languages(&own, Language::De), OtherLanguages::None);
    let any = req(&[("user", "How do you say 'thank you' in Swahili?")]);
    assert_eq!(other_languages(&any, Language::En), OtherLanguages::Any);
    assert!(OtherLanguages::Any.allows(Language::Ja));
    assert!(!OtherLanguages::None.allows(Language::Ja));
}

#[test]
fn the_five_new_languages_are_named_in_english_and_in_their_own_script() {
    for (language, english, own) in [
        (Language::Ko, "Korean", "한국어로 번역해 주세요."),
        (
            Language::Ar,
            "Arabic",
            "ترجم هذه الجملة إلى العربية من فضلك.",
        ),
        (Language::Hi, "Hindi", "कृपया इसका हिंदी में अनुवाद करें।"),
        (
            Language::Id,
            "Indonesian",
            "Tolong terjemahkan ke bahasa Indonesia.",
        ),
        (
            Language::Vi,
            "Vietnamese",
            "Dịch câu này sang tiếng Việt giúp tôi.",
        ),
    ] {
        let asked = req(&[(
            "user",
            &format!("Translate 'thank you' into {english}, please."),
        )]);
        assert_eq!(
            other_languages(&asked, Language::En),
            OtherLanguages::Named(vec![language]),
            "{english}"
        );
        assert_eq!(
            other_languages(&req(&[("user", own)]), Language::En),
            OtherLanguages::Named(vec![language]),
            "{own}"
        );
        // The conversation's own language is no other language (the
        // message still asks for a translation).
        assert_eq!(
            other_languages(&req(&[("user", own)]), language),
            OtherLanguages::Any,
            "{own}"
        );
    }
    // Negative control: a message that names no language.
    let none = req(&[("user", "What is the capital of Korea?")]);
    assert_eq!(other_languages(&none, Language::En), OtherLanguages::None);
}

/// A language the system prompt sets for the reply is no other language
/// to be surprised by, whatever language the user writes in; a system
/// prompt that names none allows none.
#[test]
fn a_language_the_system_prompt_names_is_allowed() {
    let english = req(&[
        (
            "system",
            "You are a support agent. Always answer in English.",
        ),
        ("user", "Wie setze ich mein Passwort zurück?"),
    ]);
    assert_eq!(
        other_languages(&english, Language::De),
        OtherLanguages::Named(vec![Language::En])
    );
    let german = req(&[
        (
            "system",
            "Antworte immer auf Deutsch, auch wenn der Nutzer Englisch schreibt.",
        ),
        ("user", "How do I reset my password?"),
    ]);
    assert!(other_languages(&german, Language::En).allows(Language::De));
    let japanese = req(&[
        ("developer", "回答は必ず日本語で書いてください。"),
        ("user", "How do I reset my password?"),
    ]);
    assert!(other_languages(&japanese, Language::En).allows(Language::Ja));
    // Negative control: a system prompt that names no language.
    let plain = req(&[
        ("system", "You are a helpful assistant. Answer briefly."),
        ("user", "Wie setze ich mein Passwort zurück?"),
    ]);
    assert_eq!(other_languages(&plain, Language::De), OtherLanguages::None);
}
