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

const CAPITAL: &str = "What is the capital of France?";

fn assert_fails(cases: &[(&'static str, &str)]) {
    for (reply, user) in cases {
        let out = judge_reply(reply, user);
        assert!(out.is_fail(), "{reply:?}: {out}");
    }
}

fn assert_passes(cases: &[(&'static str, &str)]) {
    for (reply, user) in cases {
        assert_eq!(judge_reply(reply, user), Outcome::Pass, "{reply:?}");
    }
}

#[test]
fn a_serialised_empty_value_before_the_answer_fails() {
    assert_fails(&[
        ("undefinedThe capital of France is Paris.", CAPITAL),
        ("nullThe capital of France is Paris.", CAPITAL),
        ("NaNThe capital of France is Paris.", CAPITAL),
        ("null The capital of France is Paris.", CAPITAL),
        ("[object Object]The capital of France is Paris.", CAPITAL),
        ("(null)The capital of France is Paris.", CAPITAL),
        ("<nil>The capital of France is Paris.", CAPITAL),
        ("NULLThe capital of France is Paris.", CAPITAL),
        ("nilThe capital of France is Paris.", CAPITAL),
        (
            "nullBonjour ! La capitale de la France est Paris.",
            "Quelle est la capitale de la France ?",
        ),
        (
            "undefinedDie Hauptstadt von Frankreich ist Paris.",
            "Was ist die Hauptstadt von Frankreich?",
        ),
        (
            "undefinedフランスの首都はパリです。",
            "フランスの首都はどこですか？",
        ),
    ]);
    let out = judge_reply("undefinedThe capital is Paris.", CAPITAL);
    assert!(out.reason().unwrap().contains("\"undefined\""), "{out}");
}

#[test]
fn the_words_null_none_and_nan_in_an_answer_pass() {
    assert_passes(&[
        (
            "Null hypothesis testing starts by assuming there is no effect.",
            "What is the null hypothesis?",
        ),
        (
            "None of them. 21 is 3 times 7 and 33 is 3 times 11.",
            "Which of these is a prime: 21, 27 or 33?",
        ),
        (
            "null is a value you assign on purpose. It means no object.",
            "What does null mean in JavaScript?",
        ),
        (
            "undefined means a variable was declared but never given a value.",
            "What's the difference between undefined and null?",
        ),
        (
            "NaN stands for Not a Number. It comes from 0/0.",
            "What is NaN?",
        ),
        (
            "nullable types can hold null. Mark them with a question mark.",
            "What are nullable types in C#?",
        ),
        (
            "Nonetheless, Paris stayed the capital. It still is.",
            "Did the capital ever move?",
        ),
        (
            "Undefined behaviour in C means the standard sets no rule. Avoid it.",
            "What is UB?",
        ),
        (
            "NoneType is the type of None. Check it with `is None`.",
            "What is NoneType?",
        ),
        (
            "None\nThe function returns None because it has no return statement.",
            "What does print(f()) print?",
        ),
        (
            "NULLIF returns NULL when both arguments are equal. Use it to avoid division by zero.",
            "How do I avoid dividing by zero in SQL?",
        ),
        // The value named again is the topic, whatever it is glued to.
        (
            "NoneType is the type of None. It has one value.",
            "What type does a function without a return statement give?",
        ),
        // `None` then a space is an English sentence.
        (
            "None I know of. The two are commonly taken together without trouble.",
            "Are there any interactions between ibuprofen and paracetamol?",
        ),
    ]);
    // The value rule itself reads none of these openings as a value.
    for text in [
        "nullable types",
        "Nonetheless, it",
        "None of them",
        "NaN stands for",
        "NULLIF returns",
        "null is a value",
        "None.",
    ] {
        assert_eq!(empty_value(text), None, "{text:?}");
    }
}

#[test]
fn a_value_glued_to_a_particle_of_a_caseless_script_passes() {
    // Negative controls: CJK and Korean write particles and the copula on a
    // Latin word; Chinese spaces it.
    assert_passes(&[
        (
            "Noneを返します。この関数は値を返しません。",
            "この関数は何を返しますか？",
        ),
        (
            "None을 반환합니다. 이 함수는 값을 반환하지 않습니다.",
            "이 함수는 무엇을 반환하나요?",
        ),
        (
            "nil입니다. Go에서 포인터의 영값입니다.",
            "Go에서 포인터의 기본값은 무엇인가요?",
        ),
        (
            "undefined입니다. 변수가 선언만 되었습니다.",
            "이 변수의 값은 무엇인가요?",
        ),
        (
            "NULLと呼びます。ポインタが何も指さないことです。",
            "何も指さないポインタを何と呼びますか？",
        ),
        (
            "None 是这种函数的返回值。它表示没有值。",
            "没有 return 语句的函数返回什么？",
        ),
    ]);
    // A value glued to Han may be a sentence about it: undetermined.
    let out = judge_reply(
        "None是这种函数的返回值。",
        "没有 return 语句的函数返回什么？",
    );
    assert!(matches!(out, Outcome::Undetermined { .. }), "{out}");
    // Positive controls: glued to the answer's first word, in any script.
    assert_fails(&[
        ("undefinedThe capital of France is Paris.", CAPITAL),
        ("NaNThe capital of France is Paris.", CAPITAL),
        ("[object Object]The capital of France is Paris.", CAPITAL),
        (
            "nullBonjour ! La capitale de la France est Paris.",
            "Quelle est la capitale de la France ?",
        ),
        (
            "undefinedフランスの首都はパリです。",
            "フランスの首都はどこですか？",
        ),
        (
            "undefined프랑스의 수도는 파리입니다.",
            "프랑스의 수도는 어디인가요?",
        ),
    ]);
}

#[test]
fn a_role_label_left_by_the_template_fails() {
    assert_fails(&[
        ("Assistant: The capital of France is Paris.", CAPITAL),
        ("Assistant:The capital of France is Paris.", CAPITAL),
        ("ASSISTANT: The capital of France is Paris.", CAPITAL),
        ("AI: The capital of France is Paris.", CAPITAL),
        ("Bot: The capital of France is Paris.", CAPITAL),
        ("### Response:\nThe capital of France is Paris.", CAPITAL),
        ("### Assistant:\nThe capital of France is Paris.", CAPITAL),
        ("<|assistant|>The capital of France is Paris.", CAPITAL),
    ]);
}

#[test]
fn words_that_look_like_role_labels_pass() {
    assert_passes(&[
        (
            "Assistant professors in Germany are paid on the W1 scale.",
            "How much do assistant professors earn in Germany?",
        ),
        (
            "AI is the field of making machines reason. It is broad.",
            "What is AI?",
        ),
        (
            "### Steps\n1. Open the settings.\n2. Choose Reset.",
            "How do I reset it?",
        ),
        (
            "Response: 200 OK means the request succeeded. The body holds the result.",
            "What does the HTTP response 200 OK mean?",
        ),
        (
            "User: Hi!\nAssistant: Hello, how can I help?",
            "Write a two-line dialogue between a user and an assistant.",
        ),
        ("Answer: Paris. It is also the largest city.", CAPITAL),
    ]);
}

#[test]
fn a_label_among_other_label_lines_is_a_transcript_glossary_or_example() {
    // Negative controls: the user asked for a dialogue without writing
    // "user"; a worked example; a glossary.
    assert_passes(&[
        (
            "User: Hi, my order is late.\nBot: Sorry to hear that! Can you share the order number?",
            "Write a short dialogue between a customer and a support chatbot",
        ),
        (
            "User: Hallo, meine Bestellung ist zu spät.\nBot: Das tut mir leid! Wie lautet die Bestellnummer?",
            "Schreibe einen kurzen Dialog zwischen einem Kunden und einem Support-Chatbot.",
        ),
        (
            "User: 注文が届きません。\nBot: 申し訳ありません。注文番号を教えてください。",
            "顧客とサポートチャットボットの短い会話を書いてください。",
        ),
        (
            "### Output:\n```\n12\n```",
            "What will this print?\n\nprint(3 * 4)",
        ),
        (
            "### Input:\n[3, 1, 2]\n\n### Output:\n[1, 2, 3]\n\nThe function sorts the list in place.",
            "Show a worked example of the sort function.",
        ),
        (
            "### Input:\nThe list [3, 1, 2].\nSorting it gives [1, 2, 3].",
            "Show a worked example of the sort function.",
        ),
        (
            "AI: Artificial Intelligence.\nML: Machine Learning.",
            "Expand these abbreviations for a glossary.",
        ),
        (
            "## Answer: the mean is 4.\nAdd the values and divide by their count.",
            "What is the mean of 2, 4 and 6?",
        ),
    ]);
    // Positive controls: a lone label, or a heading that names the turn.
    assert_fails(&[
        ("Assistant: The capital of France is Paris.", CAPITAL),
        ("Assistant:The capital of France is Paris.", CAPITAL),
        ("ASSISTANT: The capital of France is Paris.", CAPITAL),
        ("AI: The capital of France is Paris.", CAPITAL),
        ("### Response:\nThe capital of France is Paris.", CAPITAL),
        ("### Answer:\nThe capital of France is Paris.", CAPITAL),
        (
            "Assistant: The capital of France is Paris.\nIt is also the largest city.",
            CAPITAL,
        ),
    ]);
}

#[test]
fn a_leaked_reasoning_block_fails_whole_or_unclosed() {
    assert_fails(&[
        (
            "<think>\nThe user asks for the capital. That is Paris.\n</think>\n\nThe capital of France is Paris.",
            CAPITAL,
        ),
        ("<thinking>Paris.</thinking>The capital is Paris.", CAPITAL),
        ("<think>\nThe user asks for the capital.", CAPITAL),
    ]);
    let out = judge_reply("<think>x</think>Paris.", CAPITAL);
    assert!(out.reason().unwrap().contains("reasoning block"), "{out}");
    // Negative control: the user asked about the tag.
    assert_passes(&[(
        "<think> tags wrap a model's reasoning. Strip them before display.",
        "What are <think> tags in model output?",
    )]);
}

#[test]
fn tokenizer_leaks_fail() {
    assert_fails(&[
        ("<0x0A>The capital of France is Paris.", CAPITAL),
        ("▁The▁capital▁of▁France▁is▁Paris.", CAPITAL),
        ("ĠThe Ġcapital of France is Paris.", CAPITAL),
        ("ĊThe capital of France is Paris.", CAPITAL),
    ]);
    // Negative controls: Maltese words that open with Ġ and Ċ.
    assert_passes(&[
        (
            "Ġenerali, il-belt kapitali hija Valletta.",
            "X'inhi l-kapitali?",
        ),
        ("Ċertament, Valletta hija l-kapitali.", "X'inhi l-kapitali?"),
    ]);
}

#[test]
fn a_code_fence_never_closed_before_prose_fails() {
    assert_fails(&[
        (
            "```json\nThe capital of France is Paris. It is old.",
            CAPITAL,
        ),
        ("```\nThe capital of France is Paris. It is old.", CAPITAL),
    ]);
    assert_passes(&[
        (
            "```json\n{\"name\": \"Ana\", \"age\": 31}\n```",
            "What does a JSON object for a person look like?",
        ),
        ("```python\nprint(\"hello\")\n```", "How do I print hello?"),
        (
            "```\nThe capital of France is Paris.\n```",
            "Put the answer in a code block.",
        ),
        // A code block cut short: code follows the fence, not prose.
        (
            "```python\ndef reverse(s):\n    return s[::",
            "Write a function that reverses a string.",
        ),
    ]);
    // Cut at the token limit: `truncated` says so, not `junk_prefix`.
    let mut cut = input("```\nThe capital of France is Paris. It is", CAPITAL);
    cut.finish_reason = Some("MAX_TOKENS");
    assert_eq!(JunkPrefix.check(&cut), Some(Outcome::Pass));
}

#[test]
fn an_unclosed_fence_fails_only_when_the_reply_says_it_ended() {
    let letter =
        "```\nDear Mr. Smith, the heater in my flat has not worked since Monday.\nCould you";
    let user = "Write a complaint letter to my landlord about the heater.";
    // Negative control: a stream cut with no finish_reason, scored as given.
    let mut streamed = input(letter, user);
    streamed.finish_reason = None;
    let out = JunkPrefix.check(&streamed).unwrap();
    assert!(matches!(out, Outcome::Undetermined { .. }), "{out}");
    // Positive controls: the same reply said to have ended normally.
    for reason in ["stop", "end_turn", "STOP"] {
        let mut ended = input(letter, user);
        ended.finish_reason = Some(reason);
        assert!(JunkPrefix.check(&ended).unwrap().is_fail(), "{reason}");
    }
}

#[test]
fn invisible_format_characters_first_fail_unless_they_steer_rtl_text() {
    assert_fails(&[
        ("\u{200E}The capital of France is Paris.", CAPITAL),
        ("\u{200F}The capital of France is Paris.", CAPITAL),
        ("\u{00AD}The capital of France is Paris.", CAPITAL),
        ("\u{2060}The capital of France is Paris.", CAPITAL),
        ("\u{2063}The capital of France is Paris.", CAPITAL),
        ("\u{202E}The capital of France is Paris.", CAPITAL),
    ]);
    assert_passes(&[
        ("\u{200F}API هي واجهة برمجة تطبيقات.", "ما هو الـ API؟"),
        ("\u{200E}API هي واجهة برمجة تطبيقات.", "ما هو الـ API؟"),
        ("\u{2067}שלום\u{2069} means hello.", "What does שלום mean?"),
    ]);
    // A directional mark before RTL text still lets glued junk be seen.
    assert_fails(&[("\u{200F}،عاصمة فرنسا هي باريس.", "ما هي عاصمة فرنسا؟")]);
}

#[test]
fn clause_marks_of_other_scripts_glued_first_fail() {
    assert_fails(&[
        (
            "،عاصمة فرنسا هي باريس، وهي أكبر مدنها.",
            "ما هي عاصمة فرنسا؟",
        ),
        (
            "।फ्रांस की राजधानी पेरिस है। यह सबसे बड़ा शहर है।",
            "फ्रांस की राजधानी क्या है?",
        ),
        ("؟ عاصمة فرنسا هي باريس.", "ما هي عاصمة فرنسا؟"),
    ]);
}

#[test]
fn a_mark_glued_to_a_command_or_identifier_passes() {
    assert_passes(&[
        (
            ":wq saves the file and quits. Use :q! to quit without saving.",
            "How do I save and quit in vim?",
        ),
        (
            "!! expands to the previous command, so `sudo !!` runs it again.",
            "How do I rerun the last command with sudo in bash?",
        ),
        (
            "!important overrides normal specificity rules. Use it sparingly.",
            "What's the most important thing to remember about CSS specificity?",
        ),
        (".NET is a developer platform. It runs C#.", "What is it?"),
        (".env holds the secrets. Keep it out of git.", "Where?"),
        ("kubectl get pods lists them. Add -A for all.", "How?"),
    ]);
    // Positive controls: the same marks glued to the answer.
    assert_fails(&[
        (
            ".Your sister is called Oriane.",
            "What is my sister called?",
        ),
        (
            "、フランスの首都はパリです。",
            "フランスの首都はどこですか？",
        ),
        (":The capital of France is Paris. It is old.", CAPITAL),
        ("!! The capital of France is Paris.", CAPITAL),
        ("!the capital of France is Paris. It is old.", CAPITAL),
        (",and the capital is Paris. It is old.", CAPITAL),
    ]);
}

#[test]
fn calls_and_named_subjects_pass_clipped_words_do_not() {
    assert_passes(&[
        (
            "printf() takes a format string followed by the values. It prints to standard output.",
            "How do I format output in C?",
        ),
        (
            "requests is the classic choice. For async code, httpx offers the same API.",
            "Name a good Python HTTP library.",
        ),
        (
            "e is the elementary charge, about 1.602 × 10⁻¹⁹ coulombs. The SI unit is the coulomb.",
            "What is the unit of electric charge?",
        ),
        (
            "sort() 메서드를 쓰면 됩니다. Python에서 리스트를 정렬합니다.",
            "리스트를 어떻게 정렬하나요?",
        ),
        (
            "len(my_list) returns the number of items. It works on strings too.",
            "How do I get the length of a list?",
        ),
    ]);
    // Positive controls: clipped words before the same verbs.
    assert_fails(&[
        ("hat is the capital of France. It is Paris.", CAPITAL),
        (
            "e is a doctor. She works in Lyon.",
            "What does your brother do?",
        ),
        (
            "he is a doctor. She works in Lyon.",
            "What does your brother do?",
        ),
        ("apital of France is Paris. It is old.", CAPITAL),
    ]);
}

#[test]
fn a_reply_of_only_invisible_characters_is_left_to_empty() {
    for reply in ["\u{200E}", "\u{3164}", "\u{2800}\u{00AD}"] {
        assert_eq!(JunkPrefix.check(&input(reply, CAPITAL)), None, "{reply:?}");
    }
}

/// A value alone on its first line is as often the answer as a leak, and a
/// value glued to a capitalised word that opens no sentence is a name;
/// both pass (the review's cases, each a correct reply).
#[test]
fn a_value_that_is_the_answer_or_part_of_a_name_passes() {
    assert_passes(&[
        (
            "NULL\n\nAn aggregate over zero rows returns it, except COUNT, which returns 0.",
            "What does SELECT MAX(price) return on an empty table?",
        ),
        (
            "undefined\n\nIt returns that when no element passes the test.",
            "What does Array.prototype.find return when nothing matches?",
        ),
        (
            "NaN\n\nIt is the only value that is not equal to itself.",
            "What is 0.0/0.0 in IEEE floating point?",
        ),
        (
            "nil\n\nEvery pointer starts with it until it is assigned.",
            "What is the zero value of a pointer in Go?",
        ),
        (
            "None\n\nPython adds an implicit return at the end of every function.",
            "What does a Python function without a return statement give back?",
        ),
        (
            "NoneType is its type. There is exactly one instance.",
            "In Python, what type does the null singleton have?",
        ),
        (
            "NoneSuch Records released it in 2002.",
            "Which label released that album?",
        ),
        (
            "NullPointerException is thrown when you dereference a null reference.",
            "Which exception does Java throw here?",
        ),
    ]);
    // Positive controls: a value glued to a word that opens a sentence, or
    // to another script.
    assert_fails(&[
        ("undefinedThe capital of France is Paris.", CAPITAL),
        ("nullIt is Paris.", CAPITAL),
        (
            "nullПривет! Столица Франции — Париж.",
            "Какая столица у Франции?",
        ),
        (
            "NaNEl capital de Francia es París.",
            "¿Cuál es la capital de Francia?",
        ),
    ]);
}

/// Labels that are not a speaker's: a credential, an acronym spelt out,
/// a heading among headings; a tag the user asked about, or named as the
/// subject of a sentence. The template's leaks still fail.
#[test]
fn labels_and_tags_the_reply_is_about_pass() {
    assert_passes(&[
        (
            "user:password@host is the form. Percent-encode special characters.",
            "How do I put credentials in a curl URL?",
        ),
        (
            "AI: artificial intelligence. It is sometimes written A.I.",
            "What's the short form of artificial intelligence?",
        ),
        (
            "GPT: Generative Pre-trained Transformer. The model predicts the next token.",
            "What does the T in ChatGPT stand for?",
        ),
        (
            "## Answer:\n391\n\n## Working\n17 times 20 is 340, plus 17 times 3 is 51.",
            "What is 17 times 23? Give the result first, then the working.",
        ),
        (
            "<think> marks the start of the model's reasoning, which ends at the closing tag.",
            "What does the think tag do in DeepSeek R1?",
        ),
        (
            "<reasoning> works well as a custom element name, but it has no meaning to the browser.",
            "Can I use my own XML tags in HTML?",
        ),
    ]);
    assert_fails(&[
        ("Assistant: The capital of France is Paris.", CAPITAL),
        ("Assistant:The capital of France is Paris.", CAPITAL),
        ("AI: The capital of France is Paris.", CAPITAL),
        ("### Response:\nThe capital of France is Paris.", CAPITAL),
        (
            "<think>\nThe user asks for the capital.</think>\n\nThe capital of France is Paris.",
            CAPITAL,
        ),
    ]);
}

/// Openings a reviewer found failing on correct replies: commands and
/// selectors after a mark, an emoticon, a tool or a symbol named as the
/// subject, a Latin suffix written glued to Japanese, Chinese or Korean.
/// A stray mark before a function word, a clipped word and a fragment
/// glued to an English capital still fail.
#[test]
fn commands_tools_emoticons_and_cjk_terms_pass() {
    assert_passes(&[
        (
            ":set number turns them on. Put it in your vimrc to keep it.",
            "How do I show line numbers in vim?",
        ),
        (
            ":help opens the manual. Type a topic after it.",
            "How do I get help in vim?",
        ),
        (
            ":hover is the pseudo-class for it. It applies while the pointer is over the element.",
            "How do I style a link when the mouse is over it?",
        ),
        (
            ":) Congratulations! That is great news.",
            "I passed my exam!",
        ),
        (
            "npm is the usual tool. It comes with Node.",
            "How do I add a package?",
        ),
        (
            "ffmpeg is the tool for that. It converts almost anything.",
            "How do I convert a video?",
        ),
        (
            "numpy is what you want. It has fast arrays.",
            "Which library for matrices?",
        ),
        (
            "nullptr is the null pointer literal of C++11.",
            "What should I use instead of NULL?",
        ),
    ]);
    // Latin suffixes glued to CJK: never failed (a lowercase opening with
    // no capital in the reply may stay undetermined).
    for (reply, user) in [
        (
            "ing形は動詞の進行形を作ります。",
            "英語の ing はどういう意味ですか？",
        ),
        ("ing형은 진행형을 만듭니다.", "영어의 ing는 무슨 뜻인가요?"),
        ("ed形式表示过去式。", "英语里的 ed 是什么意思？"),
    ] {
        let out = judge_reply(reply, user);
        assert!(!out.is_fail(), "{reply:?}: {out}");
    }
    assert_fails(&[
        (",and the capital is Paris.", CAPITAL),
        ("!the capital is Paris.", CAPITAL),
        (
            ".Your sister is called Oriane.",
            "What is my sister's name?",
        ),
        ("ello how are you? I am fine.", "Hello!"),
        ("ingThe capital is Paris.", CAPITAL),
    ]);
}

/// Junk nobody listed fails by what it is not: control bytes, escapes
/// and entities written out, stray markup, pieces of the wire, symbols
/// that mark nothing, tokens before the first sentence; glued, spaced
/// or on a line of their own, before replies in several scripts.
#[test]
fn an_opening_no_convention_explains_fails_in_every_shape() {
    let replies = [
        ("The capital of France is Paris.", CAPITAL),
        (
            "La capitale de la France est Paris.",
            "Quelle est la capitale de la France ?",
        ),
        (
            "Die Hauptstadt von Frankreich ist Paris.",
            "Was ist die Hauptstadt von Frankreich?",
        ),
        ("Столица Франции — Париж.", "Какая столица Франции?"),
        ("フランスの首都はパリです。", "フランスの首都はどこですか？"),
    ];
    // Junk that fails before any reply, glued, spaced or on its own line.
    let anywhere = [
        "\u{0}",
        "\u{7}",
        "\u{1b}[0m",
        "\u{8}",
        "\u{9f}",
        "\u{FFFD}",
        "\\n",
        "\\n\\n",
        "\\t",
        "\\\"",
        "\\u00a0",
        "&nbsp;",
        "&#39;",
        "&#x27;",
        "&quot;",
        "<br>",
        "<br/>",
        "<p>",
        "<div>",
        "data: {\"id\":\"1\"}",
        "data: [DONE]",
        "{\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\"}",
        "{\"choices\":[{\"delta\":{\"content\":\"",
        "[SEP]",
        "[CLS]",
        "#$%@!",
        "|",
        "^^^^",
        "\\",
        "¤",
    ];
    let mut wrong = Vec::new();
    for junk in anywhere {
        for sep in ["", " ", "\n"] {
            for (reply, user) in replies {
                let text: &'static str = Box::leak(format!("{junk}{sep}{reply}").into_boxed_str());
                let out = judge_reply(text, user);
                if !out.is_fail() {
                    wrong.push(format!("{text:?}: {out}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "passed:\n{}", wrong.join("\n"));
    // Tokens before the first sentence, glued or spaced, before a word
    // that opens sentences; an opening quote or bracket never closed.
    assert_all_fail(&[
        ("asdfThe capital of France is Paris.", CAPITAL),
        ("~The capital of France is Paris.", CAPITAL),
        ("^The capital of France is Paris.", CAPITAL),
        ("~ The capital of France is Paris.", CAPITAL),
        ("~\nThe capital of France is Paris.", CAPITAL),
        ("~ Столица Франции — Париж.", "Какая столица Франции?"),
        ("0The capital of France is Paris.", CAPITAL),
        ("0x1fThe capital of France is Paris.", CAPITAL),
        ("xyz123 The capital of France is Paris.", CAPITAL),
        ("qwerty The capital of France is Paris.", CAPITAL),
        ("0x1f La capitale est Paris.", "Quelle est la capitale ?"),
        ("#The capital of France is Paris.", CAPITAL),
        ("--The capital of France is Paris.", CAPITAL),
        ("/The capital of France is Paris.", CAPITAL),
        ("__The capital of France is Paris.", CAPITAL),
        ("__ The capital of France is Paris.", CAPITAL),
        ("~Столица Франции — Париж.", "Какая столица Франции?"),
        (
            "|フランスの首都はパリです。",
            "フランスの首都はどこですか？",
        ),
        ("\"The capital of France is Paris.", CAPITAL),
        ("(The capital of France is Paris.", CAPITAL),
        (
            "«La capitale de la France est Paris.",
            "Quelle est la capitale ?",
        ),
        (
            "```The capital of France is Paris, and it is lovely.",
            CAPITAL,
        ),
        ("Â The capital of France is Paris.", CAPITAL),
        ("</div>The capital of France is Paris.", CAPITAL),
        (
            "</p>フランスの首都はパリです。",
            "フランスの首都はどこですか？",
        ),
        ("\"\"The capital of France is Paris.", CAPITAL),
        ("\"content\":\"The capital of France is Paris.", CAPITAL),
        ("data:The capital of France is Paris.", CAPITAL),
        ("TODO The capital of France is Paris.", CAPITAL),
        ("☐☐☐The capital of France is Paris.", CAPITAL),
        ("%20The capital of France is Paris.", CAPITAL),
        (
            "Assistant : La capitale est Paris.",
            "Quelle est la capitale ?",
        ),
        ("助手：法国的首都是巴黎。", "法国的首都是哪里？"),
        (
            "Ассистент: Столица Франции — Париж.",
            "Какая столица Франции?",
        ),
        ("المساعد: عاصمة فرنسا هي باريس.", "ما هي عاصمة فرنسا؟"),
        (
            "undefinedPhotosynthesis is how plants make sugar.",
            "What is photosynthesis?",
        ),
        ("NaNSalt is sodium chloride.", "What is salt?"),
        ("nullGold is a chemical element.", "What is gold?"),
        (
            "xK9qZ2vLp The violin is a bowed instrument.",
            "What is a violin?",
        ),
        ("3f9ZqPw1 Neon is a noble gas.", "What is neon?"),
        ("zq7Yb1 सूर्य एक तारा है।", "सूर्य क्या है?"),
        (
            "<br/><br/>A cloud is a visible mass of droplets.",
            "What is a cloud?",
        ),
        (
            "User: what is a tree\nAssistant: A tree is a woody plant.",
            "what is a tree",
        ),
        (
            "ďż˝ďż˝Stolicą Czech jest Praga.",
            "Jaka jest stolica Czech?",
        ),
        ("ï¿½The capital of France is Paris.", CAPITAL),
    ]);
}

/// The negative controls of the rule above: what replies open with by a
/// convention, and odd characters the user wrote first.
#[test]
fn openings_a_convention_explains_pass() {
    assert_all_pass(&[
        ("- Paris\n- Lyon", "List two French cities."),
        ("• Paris is the capital.", CAPITAL),
        ("•Paris is the capital.", CAPITAL),
        ("# Paris\n\nThe capital of France.", CAPITAL),
        ("> The capital is Paris.", CAPITAL),
        ("| City | Country |\n|---|---|\n| Paris | France |", CAPITAL),
        ("— Bonjour, dit-il.", "Écris une réplique."),
        ("—Hola —dijo ella.", "Escribe un diálogo."),
        ("«Да», — сказал он.", "Напиши реплику."),
        ("„Ja“, sagte sie.", "Schreib einen Satz."),
        ("「はい」と彼は言った。", "例文を書いてください。"),
        ("¿La capital? Es París.", "¿Cuál es la capital de Francia?"),
        ("✅ Done: the file is saved.", "Did it save?"),
        ("⚠️ Back up first. Then run it.", "How do I reset it?"),
        ("→ Paris is the capital.", CAPITAL),
        ("※注意：火を使います。", "作り方は？"),
        ("・東京\n・大阪", "日本の都市を二つ挙げて。"),
        ("~5 km, about an hour on foot.", "How far is it?"),
        ("~ 5 km, about an hour on foot.", "How far is it?"),
        ("= 42, since 6 × 7 = 42.", "What is 6 times 7?"),
        ("$5 a month, billed yearly.", "How much is it?"),
        ("#1 is Paris by visitors.", "Which city is most visited?"),
        (
            "#include <stdio.h> brings in printf.",
            "How do I print in C?",
        ),
        (
            "#hashtag campaigns work best on Tuesdays.",
            "When should I post?",
        ),
        ("@Anna thanks, that fixed it.", "Reply to Anna."),
        (
            "-Wall turns on most warnings.",
            "What does the gcc flag do?",
        ),
        ("--help prints the options.", "How do I see the options?"),
        ("/usr/bin holds most commands.", "Where are the commands?"),
        (
            "~/Documents is your documents folder.",
            "Where are my files?",
        ),
        (
            "%PATH% lists the folders Windows searches.",
            "What is the path?",
        ),
        (
            "\\frac{a}{b} writes a fraction.",
            "How do I write a fraction in LaTeX?",
        ),
        ("\\theta is the angle.", "What is theta?"),
        ("\\nabla f is the gradient.", "What is the gradient?"),
        ("&mut x borrows it mutably.", "How do I borrow mutably?"),
        ("`ls` lists the files.", "How do I list files?"),
        ("`N' must be positive.", "What does the error mean?"),
        ("_Le Monde_ is a French newspaper.", "Name a French paper."),
        ("(1) Paris, (2) Lyon.", "List two French cities."),
        ("\"Bonjour\" means hello.", "What does bonjour mean?"),
        ("0 errors were found.", "Did the build pass?"),
        ("1A fuses are common in plugs.", "Which fuse do I need?"),
        ("10nA flows through it.", "How much current leaks?"),
        ("3D printing builds layer by layer.", "How does it work?"),
        ("iPhone 15 has USB-C.", "Which iPhone has USB-C?"),
        ("eBay The marketplace is down.", "Is eBay down?"),
        ("mp3 files are compressed audio.", "What is an mp3?"),
        ("x86 is Intel's instruction set.", "What is x86?"),
        ("1. Paris\n2. Lyon", "List two French cities."),
        ("&nbsp; is a non-breaking space.", "What is &nbsp; in HTML?"),
        ("<br> breaks a line.", "What does the br tag do?"),
        ("<p>The capital is Paris.</p>", "Answer in HTML."),
        ("\\n is a newline.", "What does \\n mean?"),
        (
            "data: {\"x\":1} is one event.",
            "What does an SSE data: line look like?",
        ),
        (
            "{\"id\":\"chatcmpl-1\",\"choices\":[]} is the shape.",
            "What does the chat completions API return?",
        ),
        ("{\"name\": \"Ada\"}", "Give me a JSON object with a name."),
        ("$A = \\pi r^2$, where $r$ is the radius.", "What is the area of a circle?"),
        ("./configure && make is the classic sequence.", "How do I build it?"),
        ("-> int after the parameter list.", "How do I annotate a return type?"),
        ("*args unpacks the list.", "What does * do before a list?"),
        ("*p dereferences; declare it with `int *p;`.", "How do I use a pointer in C?"),
        ("p {\n  margin: 0;\n}\n\nThis applies to every paragraph.", "Write a CSS rule."),
        (
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\nEach chunk is a line like this one.",
            "Show me what a streamed chunk looks like.",
        ),
        ("Assistant: is the label many prompt formats use.", "Which role label do prompts use?"),
        ("&copy; renders as ©.", "What is the HTML entity for the copyright sign?"),
        ("☐ Buy milk\n☐ Call Anna", "Make me a checklist."),
        ("^^ Right? Pretty impressive.", "wow"),
        ("^_^ Here you go!", "a cute emoticon please"),
        ("~ hey there! works in a casual message.", "how do I greet casually"),
        ("^ anchors the match to the start.", "what's the caret for in regex"),
        ("! marks a macro, as in println!.", "What does ! do in Rust macros?"),
        ("؟ يبدو أن رسالتك فارغة.", "؟"),
        ("*/5 * * * * /path/to/script.sh", "cron for every 5 minutes"),
        ("*.txt matches every text file.", "How do I match text files?"),
        ("〜申し訳ありませんが、時刻は取得できません。", "今何時？"),
        ("～还不错！你呢？", "怎么样？"),
        ("——因为这个方法更简单。", "为什么？"),
        ("~좋아요! 당신은요?", "어때?"),
        ("।। ॐ नमः शिवाय ।। — यह एक मंत्र है।", "क्या?"),
        ("SOCKSv5 プロキシを使います。", "どのプロキシ？"),
        ("iPhone15 は USB-C です。", "どの iPhone？"),
        ("Fe2O3 は酸化鉄です。", "錆の化学式は？"),
        ("NoneType is the type of None.", "What is NoneType?"),
        ("NullPointerException means a null reference.", "What is an NPE?"),
        ("^C stops the program.", "How do I stop it?"),
    ]);
    // What a review found the rules above failed: percentages written
    // before the number, escapes as subjects, display maths, more
    // pictographs, dialogue hyphens, formulas in another script, more
    // quotes and brackets, elisions, hashes, times and versions, a word
    // quoted and defined, JSON the user asked for, line markers.
    assert_all_pass(&[
        (
            "%20 KDV uygulanır; bazı ürünlerde daha düşüktür.",
            "Türkiye'de KDV oranı nedir?",
        ),
        ("%100 doğal ürünler kullanıyoruz.", "Ürünleriniz doğal mı?"),
        (
            "%20 is the URL encoding of a space.",
            "How is a space encoded in a URL?",
        ),
        (
            "\\t inserts a tab; \\n starts a new line.",
            "How do I add a tab in a Python string?",
        ),
        (
            "\\r\\n on Windows, \\n on Linux and macOS.",
            "What line endings do Windows and Linux use?",
        ),
        (
            "\\[ A = \\pi r^2 \\]\n\nwhere r is the radius.",
            "Area of a circle?",
        ),
        (
            "\\[\nF = ma\n\\]\n\nForce equals mass times acceleration.",
            "State Newton's second law.",
        ),
        ("$$ E = mc^2 $$ relates mass and energy.", "Energy?"),
        ("\\( E = mc^2 \\) relates mass and energy.", "Energy?"),
        (
            "‼️ Warning: never mix bleach and ammonia.",
            "Can I mix bleach and ammonia?",
        ),
        ("⁉️ Really? That is surprising.", "Really?"),
        ("㊗️ おめでとうございます！", "合格しました！"),
        (
            "-Hola, ¿cómo estás?\n-Bien, ¿y tú?",
            "Escribe un diálogo corto",
        ),
        ("-Olá, tudo bem?\n-Tudo ótimo!", "Escreva um diálogo"),
        ("-Bonjour, ça va ?\n-Oui, merci.", "Écris un dialogue"),
        (
            "=СУММ(A1:A10) — эта формула складывает значения.",
            "Как посчитать сумму в Excel?",
        ),
        ("»Guten Morgen«, sagte sie.", "Zitat?"),
        ("‚Faust' ist ein Drama von Goethe.", "Drama?"),
        ("［注］この方法は古いです。", "注意点は？"),
        ("〔注〕 本文を参照。", "注意点は？"),
        ("＜まとめ＞\n大事な点は三つです。", "まとめて"),
        ("≪重要≫ 必ず保存してください。", "重要？"),
        ("＊注意：この操作は元に戻せません。", "注意？"),
        ("'90s music, in my opinion.", "Favourite music?"),
        ("'Tis the season to be jolly.", "Greeting?"),
        (
            "a3f5b2c Fix login bug\n9e1d4f2 Add tests",
            "Show me an example of git log --oneline output.",
        ),
        ("9h Le musée ouvre.\n12h Déjeuner.", "Programme ?"),
        ("14h30 Le train part de Lyon.", "Horaire ?"),
        ("8am The museum opens.", "Schedule?"),
        ("v2 The new API is faster.", "What changed?"),
        (
            "\"Hygge\": a Danish word for cosiness.",
            "What does hygge mean?",
        ),
        ("\"Ciao\": it means both hello and goodbye.", "Ciao?"),
        (
            "{\"question\": \"2+2?\", \"choices\": [\"3\", \"4\"]}",
            "Create a multiple-choice quiz question I can paste into my app.",
        ),
        (
            "{\"id\": \"cus_123\", \"object\": \"customer\", \"email\": \"a@b.c\"}",
            "Show me what a Stripe customer object looks like.",
        ),
        (
            "== Geschichte ==\nDie Stadt wurde 1200 gegründet.",
            "Geschichte?",
        ),
        ("/// Returns the sum of a and b.", "Doc comment?"),
        ("%% Section 1\nx = 1;", "Matlab?"),
        ("==> Installing dependencies", "Install?"),
        ("∑ The sum runs over all i.", "Sum?"),
        ("—— 鲁迅", "名言？"),
        ("・ 東京\n・ 大阪", "都市？"),
        (
            "*args collects positional arguments.",
            "What is args in Python?",
        ),
    ]);
}

/// Every case fails; the message lists each that did not.
fn assert_all_fail(cases: &[(&'static str, &str)]) {
    let wrong: Vec<String> = cases
        .iter()
        .map(|(reply, user)| (reply, judge_reply(reply, user)))
        .filter(|(_, out)| !out.is_fail())
        .map(|(reply, out)| format!("{reply:?}: {out}"))
        .collect();
    assert!(wrong.is_empty(), "passed:\n{}", wrong.join("\n"));
}

/// Every case passes; the message lists each that did not.
fn assert_all_pass(cases: &[(&'static str, &str)]) {
    let wrong: Vec<String> = cases
        .iter()
        .map(|(reply, user)| (reply, judge_reply(reply, user)))
        .filter(|(_, out)| *out != Outcome::Pass)
        .map(|(reply, out)| format!("{reply:?}: {out}"))
        .collect();
    assert!(wrong.is_empty(), "not passed:\n{}", wrong.join("\n"));
}
