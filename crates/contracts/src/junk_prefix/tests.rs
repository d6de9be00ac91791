//! The cases of `junk_prefix`: every kind of junk fails, what the prompt
//! calls for passes, unsure cases are undetermined.

use super::*;
use crate::tests::{input, input_for, request};

fn judge_reply(reply: &'static str, user: &str) -> Outcome {
    JunkPrefix.check(&input(reply, user)).unwrap()
}

#[test]
fn particles_commands_and_the_dutch_genitive_are_rules_not_lists() {
    let user = "Which painting is the most famous?";
    assert_eq!(
        judge_reply(
            "van Gogh's Starry Night, most likely. It hangs in New York.",
            user
        ),
        Outcome::Pass
    );
    assert_eq!(
        judge_reply(
            "npm install left-pad adds it. Run `npm install left-pad` in the project.",
            "How do I add a package?"
        ),
        Outcome::Pass
    );
    assert_eq!(
        judge_reply(
            "'s Ochtends is het rustig. Dan loop ik.",
            "Wanneer loop je?"
        ),
        Outcome::Pass
    );
    // Positive controls: a clipped "it's", a fragment before a name, a
    // command word the reply never shows as code.
    for (reply, user) in [
        (
            "'s always been that way. It depends on the tide.",
            "Why is it so?",
        ),
        ("ing Paris first. Then go south.", "Where should I start?"),
        ("and I think so. It works.", "Does it work?"),
        (
            "npm is the usual tool. It comes with Node.",
            "How do I add a package?",
        ),
    ] {
        let out = judge_reply(reply, user);
        assert!(out.is_fail(), "{reply}: {out}");
    }
}

#[test]
fn every_kind_of_junk_fails() {
    for (reply, user) in [
        (", Sure! Here it is.", "Give me a recipe."),
        (
            ". The capital is Canberra.",
            "What is the capital of Australia?",
        ),
        ("。日本の首都は東京です。", "日本の首都はどこですか？"),
        ("」はい、そうです。", "本当ですか？"),
        ("<|im_start|>assistant\nHello.", "Hi there."),
        ("</s> Water boils at 100 °C.", "When does water boil?"),
        ("[INST] Hold the button.", "How do I reset it?"),
        ("<|weird_token|>Hello.", "Hi there."),
        (
            "assistant\n\nPlay more games.",
            "How do I get better at chess?",
        ),
        ("\u{FEFF}Prepare well.", "Any advice?"),
        (
            "ï»¿Halo! Ada yang bisa saya bantu?",
            "Halo, bisa bantu saya?",
        ),
        ("Ù…Ø±Ø\u{AD}Ø¨Ù‹Ø§! أنا بخير.", "مرحبًا، كيف حالك؟"),
        ("*Sure, here is a poem:\n\nLeaves fall.", "Write a poem."),
        (
            "**Because of scattering. Blue light scatters more.",
            "Why is the sky blue?",
        ),
        (
            "ing the answer is yes. Let it cool first.",
            "Can I freeze rice?",
        ),
        ("ello! How can I help you today?", "Hello!"),
        (
            "'s a good question. Whales breathe air.",
            "Why do whales surface?",
        ),
    ] {
        let out = judge_reply(reply, user);
        assert!(out.is_fail(), "{reply:?}: {out}");
    }
}

#[test]
fn what_the_prompt_calls_for_passes() {
    for (reply, user) in [
        (
            "*smiles* Ahoy there! Grab a rope.",
            "*waves* Ahoy, captain!",
        ),
        ("\"Hygge\" is a Danish word.", "What does hygge mean?"),
        (
            "«Guernica» fue pintado por Picasso.",
            "¿Quién pintó el Guernica?",
        ),
        ("「木漏れ日」とは日の光のことです。", "「木漏れ日」とは？"),
        // Accented capitals before closing quotes are no mojibake.
        ("ÇA VA… oui, très bien.", "Ça va ?"),
        ("Ông ấy đến Hà Nội hôm qua.", "Ông ấy đến khi nào?"),
        ("- Go to bed early.\n- Keep it dark.", "Tips for sleep?"),
        ("* Water\n* Sun cream", "What should I bring?"),
        (
            "**Short answer:** yes. It is fine.",
            "Can I charge overnight?",
        ),
        (
            "saw a boat. He ran to the shore.",
            "Continue this sentence: He opened the door and",
        ),
        (".NET is a developer platform.", "What is .NET?"),
        ("iPhones are easy to learn. Pixels too.", "Which phone?"),
        (
            "npm install adds the package. Use --save-dev too.",
            "How do I install with npm?",
        ),
        (
            "van Gogh painted it in 1889. It hangs in New York.",
            "Who painted The Starry Night?",
        ),
        (
            "'s Ochtends is het rustig. Dan loop ik.",
            "Wanneer loop je?",
        ),
        ("— ¡Marta! ¡Cuánto tiempo!", "Escribe un diálogo."),
        (
            "<|im_start|> marks a message in ChatML. It opens it.",
            "What does <|im_start|> mean?",
        ),
        ("¡Hola! ¿Qué tal?", "¡Hola!"),
        (
            "(Fun fact!) Octopuses have three hearts.",
            "Tell me a fun fact.",
        ),
    ] {
        assert_eq!(judge_reply(reply, user), Outcome::Pass, "{reply:?}");
    }
}

#[test]
fn unsure_cases_are_undetermined() {
    for (reply, user) in [
        ("…a soft patter on the roof.", "Describe the rain."),
        ("sure, here you go", "Tell me something."),
        (
            "then it rained. It was cold.",
            "so yesterday i went out and",
        ),
    ] {
        let out = judge_reply(reply, user);
        assert!(
            matches!(out, Outcome::Undetermined { .. }),
            "{reply:?}: {out}"
        );
    }
}

#[test]
fn structured_output_and_empty_replies_are_not_judged() {
    let mut r = request(&[("user", "Weather as JSON.")]);
    r.extra.insert(
        "response_format".into(),
        serde_json::json!({"type": "json_object"}),
    );
    assert_eq!(JunkPrefix.check(&input_for(", {}", &r)), None);
    assert_eq!(JunkPrefix.check(&input("  ", "Hi?")), None);
}
