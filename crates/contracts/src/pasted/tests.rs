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
