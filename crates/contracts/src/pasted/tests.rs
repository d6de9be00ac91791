//! The pasted-text rule's controls. A seeded generator writes, in each of
//! the 17 languages, user messages that hold one or two sentences of the
//! user's own and an unfenced English block of each kind a user pastes
//! (log, stack trace, quoted e-mail, e-mail headers, command output, git
//! output, paths, code, a bare error line), placed before, after or around
//! the user's words, with a correct reply in the user's language: none may
//! fail (negative control). The same messages with a reply switched to
//! English must fail where the paste carries a mark of a paste (positive
//! control): the rule removes the paste, it does not blind the contract.

use super::*;
use crate::phrasebook::sentences;
use crate::tests::{input_for, request};
use crate::{Contract, Language, LanguageContract, Outcome};
use rand::Rng;

/// The kinds of pasted English block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paste {
    Log,
    StackTrace,
    QuotedEmail,
    EmailHeaders,
    CommandOutput,
    GitOutput,
    Paths,
    Code,
    ErrorLine,
}

const PASTES: [Paste; 9] = [
    Paste::Log,
    Paste::StackTrace,
    Paste::QuotedEmail,
    Paste::EmailHeaders,
    Paste::CommandOutput,
    Paste::GitOutput,
    Paste::Paths,
    Paste::Code,
    Paste::ErrorLine,
];

/// Lines of each kind; the generator draws a run of them.
fn lines(kind: Paste) -> &'static [&'static str] {
    match kind {
        Paste::Log => &[
            "2024-03-01 12:04:55 ERROR Connection refused while connecting to the upstream server",
            "2024-03-01 12:04:56 WARN Retrying the request in five seconds because the pool is exhausted",
            "[main] INFO Starting the application with the default profile and no active configuration",
            "12:05:01 DEBUG the cache was cleared and the session will be created again from scratch",
            "Mar 01 12:05:02 host systemd[1]: Failed to start the web server because the port is already in use",
        ],
        Paste::StackTrace => &[
            "Exception in thread \"main\" java.lang.NullPointerException: Cannot invoke the method because the value is null",
            "    at com.example.service.UserService.findUser(UserService.java:42)",
            "    at com.example.controller.UserController.show(UserController.java:17)",
            "Traceback (most recent call last):",
            "  File \"/srv/app/main.py\", line 12, in <module>",
            "TypeError: cannot read the property of an undefined value in the request handler",
            "thread 'main' panicked at src/main.rs:10:5: called unwrap on an error value that was not expected",
        ],
        Paste::QuotedEmail => &[
            "> Thank you for your message. We have received your request and will get back to you shortly.",
            "> Please make sure that the invoice number is included in every reply to this message.",
            "> The delivery has been delayed because the warehouse is closed for the holidays this week.",
            "On Monday, John Smith <john@example.com> wrote:",
        ],
        Paste::EmailHeaders => &[
            "From: Support Team <support@example.com>",
            "Subject: Your account has been suspended because of unusual activity on the login page",
            "Date: Mon, 4 Mar 2024 10:12:00 +0000",
            "To: customer@example.com",
        ],
        Paste::CommandOutput => &[
            "$ npm install --save-dev typescript",
            "npm ERR! code ERESOLVE unable to resolve the dependency tree for the current project",
            "user@server:~$ ls -la /var/www",
            "drwxr-xr-x  5 www-data www-data 4096 Mar  1 12:00 html",
            "error: could not compile the project because of previous errors in the main module",
            "fatal: not a git repository (or any of the parent directories): .git",
        ],
        Paste::GitOutput => &[
            "On branch main",
            "Your branch is ahead of 'origin/main' by 2 commits.",
            "Changes not staged for commit:",
            "  (use \"git add <file>...\" to update what will be committed)",
            "\tmodified:   src/main.rs",
            "Untracked files:",
            "nothing to commit, working tree clean",
        ],
        Paste::Paths => &[
            "/home/user/projects/website/node_modules/react/index.js",
            "./config/production/settings.yaml",
            "~/Library/Application Support/Code/User/settings.json",
            "C:\\Users\\Admin\\Documents\\report_final_v2.docx",
        ],
        Paste::Code => &[
            "const result = await fetch(url, { method: 'POST', body: JSON.stringify(data) });",
            "if (user == null) { throw new Error(\"user not found in the database\"); }",
            "for item in items: print(item['name'], item['price'])",
            "SELECT name, email FROM users WHERE created_at > NOW() - INTERVAL 7 DAY;",
        ],
        Paste::ErrorLine => &[
            "Error: the requested resource could not be found on this server",
            "ValueError: invalid literal for int() with base 10",
            "warning: the variable is assigned but its value is never used anywhere",
        ],
    }
}

/// One generated case: the user message and the paste's kind.
struct Case {
    language: Language,
    kind: Paste,
    user: String,
}

/// The seeded set: every language, every kind, `per` messages each.
fn generate(seed: u64, per: usize) -> Vec<Case> {
    let mut out = Vec::new();
    for (li, language) in Language::ALL.into_iter().enumerate() {
        let own = sentences(language);
        for (ki, kind) in PASTES.into_iter().enumerate() {
            for n in 0..per {
                let mut rng =
                    cb_base::seed::rng(seed, "pasted-set", (li * 1000 + ki * 100 + n) as u64);
                let pool = lines(kind);
                let start = rng.random_range(0..pool.len());
                let count = rng.random_range(1..=pool.len().min(4));
                let paste: Vec<&str> = (0..count).map(|i| pool[(start + i) % pool.len()]).collect();
                let first = words(own, &mut rng);
                let user = match rng.random_range(0..3) {
                    0 => format!("{first}\n\n{}", paste.join("\n")),
                    1 => format!("{}\n\n{first}", paste.join("\n")),
                    _ => format!("{first}\n{}\n{}", paste.join("\n"), words(own, &mut rng)),
                };
                out.push(Case {
                    language,
                    kind,
                    user,
                });
            }
        }
    }
    out
}

/// One or two of the user's own sentences, never the reply's first three.
fn words(own: &[&str], rng: &mut impl Rng) -> String {
    let k = rng.random_range(1..=2);
    let at = rng.random_range(3..own.len() - 1);
    own[at..(at + k).min(own.len())].join(" ")
}

fn verdict(contract: &LanguageContract, user: &str, reply: &str) -> Outcome {
    let r = request(&[("user", user)]);
    contract
        .check(&input_for(reply, &r))
        .expect("text replies are judged")
}

#[test]
fn every_kind_of_paste_is_recognised_and_own_sentences_are_not() {
    for kind in PASTES {
        for line in lines(kind) {
            // Bare error lines are prose: only their prefix marks them.
            assert!(is_pasted(line), "{kind:?}: {line:?}");
        }
    }
    for language in Language::ALL {
        for s in sentences(language) {
            assert!(!is_pasted(s), "{language}: {s:?}");
        }
    }
}

#[test]
fn a_reply_in_the_users_language_never_fails_beside_a_paste() {
    let contract = LanguageContract::new(Language::ALL.to_vec());
    let cases = generate(37, 6);
    let mut failed = Vec::new();
    let mut caught = 0;
    let mut switched = 0;
    let mut missed = std::collections::BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        let own = sentences(case.language);
        let reply = own[i % 3..i % 3 + 3].join(" ");
        let out = verdict(&contract, &case.user, &reply);
        if out.is_fail() {
            failed.push(format!(
                "{} {:?}: {out}\n{}",
                case.language, case.kind, case.user
            ));
        }
        if case.language != Language::En {
            switched += 1;
            let english = sentences(Language::En)[i % 3..i % 3 + 3].join(" ");
            if verdict(&contract, &case.user, &english).is_fail() {
                caught += 1;
            } else {
                *missed.entry(format!("{:?}", case.kind)).or_insert(0) += 1;
            }
        }
    }
    eprintln!(
        "pasted set: {} clean replies, {} failed; {caught} of {switched} switches to English caught; missed by kind: {missed:?}",
        cases.len(),
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {}:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n\n")
    );
    // The paste is taken out, not the contract blinded.
    assert!(
        caught * 10 >= switched * 9,
        "{caught} of {switched} switches caught"
    );
}

#[test]
fn own_words_keep_the_users_lines() {
    let user = "Perché non funziona?\n2024-03-01 12:04:55 ERROR Connection refused\nplain line of the log\n2024-03-01 12:04:56 WARN Retrying\n\nGrazie mille per l'aiuto.";
    let own = own_words(user);
    assert!(own.contains("Perché") && own.contains("Grazie"), "{own}");
    assert!(
        !own.contains("Connection") && !own.contains("plain line"),
        "{own}"
    );
    assert_eq!(own_words("Nothing pasted here."), "Nothing pasted here.");
}

/// The user's own words around a quote or a colon paste, by language: a
/// clause that introduces it and a question about it.
const FRAMES: [(Language, &str, &str); 16] = [
    (
        Language::Fr,
        "Mon patron m'a écrit",
        "Qu'est-ce qu'il veut dire exactement ?",
    ),
    (
        Language::It,
        "Il mio collega ha scritto",
        "Cosa vuol dire di preciso?",
    ),
    (
        Language::Pt,
        "O meu chefe escreveu",
        "O que quer dizer isto exatamente?",
    ),
    (
        Language::Es,
        "Mi jefe me escribió",
        "¿Qué quiere decir exactamente?",
    ),
    (
        Language::De,
        "Mein Chef hat mir geschrieben",
        "Was meint er damit genau?",
    ),
    (
        Language::Nl,
        "Mijn baas schreef mij",
        "Wat bedoelt hij daar precies mee?",
    ),
    (
        Language::Pl,
        "Mój szef napisał do mnie",
        "Co on dokładnie ma na myśli?",
    ),
    (
        Language::Tr,
        "Patronum bana şunu yazdı",
        "Tam olarak ne demek istiyor?",
    ),
    (
        Language::Id,
        "Atasan saya menulis pesan ini",
        "Apa maksudnya sebenarnya?",
    ),
    (
        Language::Vi,
        "Sếp của tôi đã viết cho tôi",
        "Ý của anh ấy là gì vậy?",
    ),
    (
        Language::Ru,
        "Мой начальник написал мне",
        "Что он имеет в виду?",
    ),
    (
        Language::Ja,
        "上司からこう書かれました",
        "これはどういう意味ですか？",
    ),
    (Language::Zh, "我的老板给我写了这句话", "这是什么意思？"),
    (
        Language::Ko,
        "상사가 이렇게 썼어요",
        "정확히 무슨 뜻인가요?",
    ),
    (
        Language::Ar,
        "كتب لي مديري هذه الرسالة",
        "ماذا يقصد بالضبط؟",
    ),
    (Language::Hi, "मेरे बॉस ने मुझे लिखा", "इसका मतलब क्या है?"),
];

/// English sentences a user pastes; the second holds an apostrophe.
const ENGLISH: [&str; 2] = [
    "Please make sure the report is on my desk by Monday morning.",
    "Let's circle back on this next week, I need to check with legal first.",
];

/// Every quote style: the opening and the closing mark.
const STYLES: [(&str, &str); 8] = [
    ("\"", "\""),
    ("'", "'"),
    ("“", "”"),
    ("‘", "’"),
    ("«", "»"),
    ("„", "“"),
    ("「", "」"),
    ("『", "』"),
];

/// Where the quote stands among the user's own words.
#[derive(Debug, Clone, Copy)]
enum Place {
    Start,
    Middle,
    End,
}

fn quoted_message(frame: (&str, &str), quote: &str, style: (&str, &str), place: Place) -> String {
    let (intro, question) = frame;
    let (open, close) = style;
    match place {
        Place::Start => format!("{open}{quote}{close} {intro}. {question}"),
        Place::Middle => format!("{intro} {open}{quote}{close} {question}"),
        Place::End => format!("{question} {intro} {open}{quote}{close}"),
    }
}

#[test]
fn every_quote_style_is_a_quote_and_an_apostrophe_is_not() {
    for (open, close) in STYLES {
        for quote in ENGLISH {
            let text = format!("Il a écrit {open}{quote}{close} hier soir.");
            let spans = quoted_spans(&text);
            assert_eq!(spans.len(), 1, "{text}");
            assert_eq!(&text[spans[0].clone()], format!("{open}{quote}{close}"));
            let (own, taken) = without_quotes(&text);
            assert_eq!(own, "Il a écrit   hier soir.");
            assert_eq!(taken.trim(), format!("{open}{quote}{close}"));
        }
    }
    // Apostrophes inside words, typographic or not, quote nothing.
    for text in [
        "Mon patron m'a dit qu'il l'homme de l'année, aujourd'hui.",
        "Let's see what we've got, it isn't much.",
        "Let’s see what we’ve got, it isn’t much.",
        "Ik werk 's avonds en 's ochtends thuis.",
        "The users' settings are kept in the teachers' folder.",
        "A 5\" screen and a 7' board.",
    ] {
        assert!(
            quoted_spans(text).is_empty(),
            "{text}: {:?}",
            quoted_spans(text)
        );
        assert_eq!(without_quotes(text).0, text);
    }
    // A closing mark straight against the next word of another script.
    let ko = "영어 면접에서 'Tell me about yourself'라는 질문에 어떻게 대답하면 좋을까요?";
    assert_eq!(quoted_spans(ko).len(), 1);
    assert!(!without_quotes(ko).0.contains("Tell"));
}

#[test]
fn a_quote_stays_when_too_little_is_left_of_the_users_own_words() {
    for text in [
        "\"The meeting has been moved to Thursday afternoon.\" ok?",
        "«Please make sure the report is on my desk by Monday morning.»",
        "'Let's circle back on this next week, I need to check with legal first.'",
    ] {
        assert_eq!(without_quotes(text), (text.into(), String::new()));
    }
    // Enough of their own: the quote goes.
    let text = "What does 'je ne sais quoi' mean?";
    assert_eq!(without_quotes(text).0, "What does   mean?");
}

#[test]
fn a_quoted_english_sentence_does_not_decide_the_conversation() {
    let contract = LanguageContract::new(Language::ALL.to_vec());
    let english = sentences(Language::En)[..3].join(" ");
    let mut failed = Vec::new();
    let mut places = [0; 3];
    for (fi, &(language, intro, question)) in FRAMES.iter().enumerate() {
        let own = sentences(language)[..3].join(" ");
        for (si, style) in STYLES.into_iter().enumerate() {
            let (place, p) = match (fi + si) % 3 {
                0 => (Place::Start, 0),
                1 => (Place::Middle, 1),
                _ => (Place::End, 2),
            };
            places[p] += 1;
            let quote = ENGLISH[si % 2];
            let user = quoted_message((intro, question), quote, style, place);
            // Negative control: the reply in the user's language passes.
            let out = verdict(&contract, &user, &own);
            if out != Outcome::Pass {
                failed.push(format!("{language} {place:?} own reply: {out}\n  {user}"));
            }
            // Positive control: the reply switched to English fails.
            let out = verdict(&contract, &user, &english);
            if !out.is_fail() {
                failed.push(format!(
                    "{language} {place:?} English reply: {out}\n  {user}"
                ));
            }
        }
    }
    assert!(places.iter().all(|&n| n > 0), "{places:?}");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn an_english_user_quoting_another_language_is_still_english() {
    let contract = LanguageContract::new(Language::ALL.to_vec());
    let user = "What does 'je ne sais quoi' mean?";
    let reply = "It describes an appealing quality that is hard to put into words, \
                 a certain charm that you notice but cannot quite explain.";
    assert_eq!(verdict(&contract, user, reply), Outcome::Pass);
    let french = sentences(Language::Fr)[..3].join(" ");
    assert!(verdict(&contract, user, &french).is_fail());
    let user = "My teacher wrote: Il faut que tu révises le subjonctif avant lundi prochain. What does she want?";
    assert_eq!(verdict(&contract, user, reply), Outcome::Pass);
    assert!(verdict(&contract, user, &french).is_fail());
}

fn confidences(text: &str) -> Vec<(Language, f64)> {
    crate::detect::Detector::new(&Language::ALL).confidences(text)
}

#[test]
fn an_english_paste_a_colon_introduces_is_not_the_users_own() {
    let contract = LanguageContract::new(Language::ALL.to_vec());
    let english = sentences(Language::En)[..3].join(" ");
    let mut failed = Vec::new();
    for (fi, &(language, intro, question)) in FRAMES.iter().enumerate() {
        let paste = format!("{} {}", ENGLISH[0], ENGLISH[1]);
        let user = if fi % 2 == 0 {
            format!("{intro}: {paste} {question}")
        } else {
            format!("{intro}:\n{paste}\n{question}")
        };
        let (own, _) = without_colon_paste(&user, &confidences);
        if own.contains("Monday") || own.contains("legal") || !own.contains(question) {
            failed.push(format!("{language}: own words {own:?}"));
        }
        let reply = sentences(language)[..3].join(" ");
        let out = verdict(&contract, &user, &reply);
        if out != Outcome::Pass {
            failed.push(format!("{language} own reply: {out}\n  {user}"));
        }
        let out = verdict(&contract, &user, &english);
        if !out.is_fail() {
            failed.push(format!("{language} English reply: {out}\n  {user}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn a_colon_before_the_same_language_or_a_short_label_takes_nothing_out() {
    for text in [
        "Ich habe zwei Fragen: Wie lange kocht man Nudeln? Und wie viel Salz braucht man dafür?",
        "J'ai une question : comment est-ce qu'on prépare une vraie pâte à crêpes ?",
        "Hinweis: The meeting has been moved to Thursday afternoon.",
        "Wir treffen uns um 12:30 Uhr vor dem Bahnhof, The meeting has been moved.",
        "I have a question: how long should I boil an egg for a soft yolk?",
        "Pythonで ModuleNotFoundError: No module named 'numpy' と出ます。どうすればいいですか？",
    ] {
        assert_eq!(without_colon_paste(text, &confidences).0, text);
    }
    // The identifier before the colon does not make the clause Latin: the
    // Japanese reply to the Japanese question passes.
    let contract = LanguageContract::new(Language::ALL.to_vec());
    let user =
        "Pythonで ModuleNotFoundError: No module named 'numpy' と出ます。どうすればいいですか？";
    let reply = "numpy がインストールされていないという意味です。ターミナルで pip install numpy を実行してから、もう一度スクリプトを動かしてください。";
    assert_eq!(verdict(&contract, user, reply), Outcome::Pass);
}

#[test]
fn the_probes_quoted_and_colon_shapes_are_judged_in_the_users_language() {
    let contract = LanguageContract::new(Language::ALL.to_vec());
    let cases: [(&str, &str, &str); 6] = [
        (
            "Mon patron m'a écrit \"Please make sure the report is on my desk by Monday morning.\" Qu'est-ce qu'il veut dire exactement ?",
            "Il veut que le rapport soit sur son bureau lundi matin au plus tard. Autrement dit, tu dois le terminer avant le week-end.",
            "He wants the report on his desk by Monday morning at the latest, so you should finish it before the weekend.",
        ),
        (
            "Il mio collega ha scritto 'Let's circle back on this next week, I need to check with legal first.' Cosa vuol dire?",
            "Vuol dire che preferisce riparlarne la settimana prossima, perché prima deve sentire l'ufficio legale.",
            "It means he would rather discuss it again next week because he first needs to check with the legal team.",
        ),
        (
            "O que quer dizer 'Your account has been temporarily suspended due to unusual activity'?",
            "Quer dizer que a sua conta foi suspensa temporariamente porque o sistema detectou uma atividade fora do normal.",
            "It means your account was temporarily suspended because the system noticed unusual activity.",
        ),
        (
            "Apa maksud kalimat ini: Your parcel could not be delivered because nobody was available to sign for it.",
            "Artinya paket Anda tidak bisa diantar karena tidak ada orang di rumah yang bisa menandatangani penerimaannya.",
            "It means your parcel could not be delivered because nobody was home to sign for it.",
        ),
        (
            "Что значит фраза из договора: The tenant shall be responsible for all minor repairs not exceeding one hundred pounds.",
            "Это значит, что арендатор сам оплачивает мелкий ремонт, если он стоит не больше ста фунтов.",
            "It means the tenant pays for small repairs that cost up to one hundred pounds.",
        ),
        (
            "Was bedeutet dieser Satz: The meeting has been moved to Thursday afternoon. Erklär es mir bitte.",
            "Das heißt, dass das Treffen jetzt am Donnerstagnachmittag stattfindet und nicht mehr am ursprünglichen Tag.",
            "It means the meeting will now take place on Thursday afternoon instead of the day originally planned.",
        ),
    ];
    for (user, own, english) in cases {
        assert_eq!(verdict(&contract, user, own), Outcome::Pass, "{user}");
        let out = verdict(&contract, user, english);
        assert!(out.is_fail(), "{user}: {out}");
    }
}
