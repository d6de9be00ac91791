//! The shapes of a reply's opening that look like junk and are not: a dot
//! name (`.NET`, `.env`), a command or identifier after a mark (`:wq`,
//! `!important`), a command (`kubectl get pods`), a call (`printf()`) and
//! a named subject (`requests is`, `e is`). They live apart from
//! `junk_prefix.rs` because each is a rule of its own, stated here, and
//! tested with the junk it must not let through (`.Your`, `、フランス`,
//! `ello how are you`).
//!
//! **Dot name.** A reply that opens with `.` glued to a token is a name
//! when the token (up to whitespace, trailing punctuation trimmed) is
//! ASCII and
//! - holds an inner capital, a digit or code punctuation (`_` `-` `.` `/`
//!   `+`): `.NET`, `.DS_Store`, `.eslintrc.json`, `.github/workflows`; or
//! - is all lowercase and no English word by the lexicon of `detect.rs`:
//!   `.env`, `.gitignore`, `.bashrc`, `.npmrc`.
//!
//! A dot glued to a capitalised word with no other capital (`.Your`,
//! `.The`), or to a word in another script (`.あなた`, `.Ваша`), is junk.
//! A dot glued to a lowercase English word (`.profile`, `.your`) is
//! undetermined: both a dotfile and junk before a lowercase reply have it.
//!
//! **Command.** A reply opens with a command when its first token is
//! executable-shaped (ASCII lowercase letters, digits and `._+-`, at least
//! two characters) and either
//! - is a known tool ([`SHELL_TOOLS`]) followed by a flag (`-la`), a path
//!   or file (`/`, `~`, `$`, `=` or a leading `.`), a subcommand
//!   ([`SUBCOMMANDS`]), a word in another script (`xargs の`), or a word
//!   that is no English word (`git zeigt`); or
//! - is no English word by the lexicon (`kubectl`, `terraform`) and is
//!   followed by a flag, a path, or a subcommand that an argument follows
//!   (not an English function word, the end of the reply: `kubectl get
//!   pods` is a command, `ust run it`, a clipped `Just run it`, is not).
//!
//! **Mark before a command or identifier.** What separates a command or
//! identifier that opens with a mark (`:wq`, `!!`, `!important`) from a
//! stray mark glued to the answer (`.Your`, `,Ok`, `、フランス`, `;The`) is
//! what the mark is glued to and what comes after. The opening token (up
//! to whitespace) is code when it is ASCII, at least two characters, the
//! mark is glued to it (no space), its first letter, if it has one, is
//! lowercase, the word after it (if any) is not capitalised (the token is
//! the subject of a sentence: `!! expands to`), and its letters are
//! - none at all (`!!`, `:%`), or
//! - no English word by the lexicon (`:wq`, `:q!`, `!==`), or
//! - an English word that is no function word or pronoun (`!important`,
//!   `:set number`, `:hover`, `:root`).
//!
//! So a mark glued to a capitalised word or to another script is junk,
//! and so is one glued to a lowercase function word (`!the`, `,and`). An
//! emoticon (`:)`, `;-)`, `:D`) opening the reply is no stray mark. The
//! dot has its own rule above.
//!
//! **Call.** A first token that is an identifier followed by parentheses
//! (`printf()`, `len(my_list)`, `sort()`) is code, in any language of the
//! reply (`sort() 메서드를`).
//!
//! **Named subject.** A lowercase first word followed by a verb that
//! defines it ([`DEFINING_VERBS`]: `is`, `are`, `means`, `returns`, ...)
//! names a thing (a package, a symbol) rather than a clipped word when
//! - it is no function word or pronoun, and no
//!   English word ends with it after one or two more letters (so it cannot
//!   be a word whose first letters were lost: `requests is` is a name,
//!   `hat is`, from `That is`, is not); or
//! - it is a single letter, a symbol, and its sentence holds a digit (a
//!   quantity defines it: `e is the elementary charge, about 1.602 ×
//!   10⁻¹⁹ C`; `e is a doctor`, from `He is`, has none).
//!
//! The word of a named subject need not be English (`npm is the usual
//! tool`, `ffmpeg is`, `numpy is`): no English word ends with it, so it
//! cannot be one that lost its first letters. A known tool followed by
//! other prose (`find the file`) is no command, so a clipped word before
//! prose still fails.
//!
//! Blind spots: a single-letter clipped word in a sentence with a number
//! (`e is 42`, from `He is 42`) reads as a symbol; a stray mark glued to a
//! lowercase code-like fragment (`:ok so`) reads as code; a stray dot glued to an all-caps word (`.OK`) or to a
//! foreign lowercase word (`.ciao`) reads as a dot name; a dotfile written
//! in title case (`.Xresources`) reads as junk; a clipped word followed by
//! a subcommand-like word (`ello status`) reads as a command.

use crate::detect::is_english_word;

/// Shell tools and CLIs whose name opens a reply that explains them. Listed
/// because several are English words too (`cat`, `find`, `make`), which
/// then count as a command only before a flag, a path, a subcommand or a
/// non-English word.
pub const SHELL_TOOLS: &[&str] = &[
    "ls",
    "cd",
    "cp",
    "mv",
    "rm",
    "mkdir",
    "rmdir",
    "touch",
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "rg",
    "sed",
    "awk",
    "find",
    "xargs",
    "sort",
    "uniq",
    "wc",
    "cut",
    "tr",
    "tee",
    "chmod",
    "chown",
    "ln",
    "ps",
    "kill",
    "top",
    "htop",
    "df",
    "du",
    "tar",
    "gzip",
    "zip",
    "unzip",
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "echo",
    "printf",
    "export",
    "source",
    "sudo",
    "apt",
    "apt-get",
    "yum",
    "dnf",
    "brew",
    "pip",
    "pip3",
    "python",
    "python3",
    "node",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "cargo",
    "rustc",
    "rustup",
    "go",
    "git",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "make",
    "cmake",
    "gcc",
    "clang",
    "java",
    "javac",
    "mvn",
    "gradle",
    "systemctl",
    "journalctl",
    "crontab",
    "ping",
    "dig",
    "ip",
    "netstat",
    "ss",
    "lsof",
    "which",
    "man",
    "vim",
    "nano",
    "bash",
    "sh",
    "zsh",
    "env",
    "jq",
    "openssl",
    "nc",
    "diff",
    "patch",
];

/// Subcommands that follow a tool's name (`git status`, `kubectl get`).
pub const SUBCOMMANDS: &[&str] = &[
    "get",
    "set",
    "describe",
    "apply",
    "delete",
    "logs",
    "log",
    "exec",
    "run",
    "install",
    "uninstall",
    "add",
    "remove",
    "rm",
    "build",
    "test",
    "status",
    "diff",
    "commit",
    "push",
    "pull",
    "fetch",
    "clone",
    "checkout",
    "switch",
    "merge",
    "rebase",
    "reset",
    "init",
    "start",
    "stop",
    "restart",
    "enable",
    "disable",
    "list",
    "ls",
    "show",
    "update",
    "upgrade",
    "create",
    "config",
    "version",
    "search",
    "info",
    "publish",
    "deploy",
    "login",
    "ps",
    "images",
    "compose",
    "cp",
    "mv",
    "up",
    "down",
    "plan",
    "rollout",
    "port-forward",
    "stash",
    "tag",
    "branch",
];

/// What a `.` glued to the first token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DotStart {
    /// A name: `.NET`, `.env`.
    Name,
    /// A lowercase English word: a dotfile or junk, no telling.
    Unsure,
    /// Stray punctuation glued to a word: `.Your`, `.あなた`.
    Junk,
}

/// Classifies `rest`, the text right after a leading `.` that a letter or
/// digit follows.
pub fn dot_start(rest: &str) -> DotStart {
    let token = rest
        .split(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_end_matches(|c: char| !c.is_alphanumeric());
    if token.is_empty() || !token.is_ascii() {
        return DotStart::Junk;
    }
    let coded = token.chars().skip(1).any(|c| c.is_ascii_uppercase())
        || token
            .chars()
            .any(|c| c.is_ascii_digit() || matches!(c, '_' | '-' | '.' | '/' | '+'));
    if coded {
        return DotStart::Name;
    }
    if token.starts_with(|c: char| c.is_ascii_uppercase()) {
        return DotStart::Junk;
    }
    if is_english_word(token) {
        DotStart::Unsure
    } else {
        DotStart::Name
    }
}

/// Whether `text` opens with a command, by the rule in the module's doc.
pub fn opens_with_command(text: &str) -> bool {
    let mut tokens = text.split_whitespace();
    let Some(first) = tokens.next() else {
        return false;
    };
    let shaped = first.len() >= 2
        && first.starts_with(|c: char| c.is_ascii_lowercase())
        && first.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '+' | '-')
        });
    if !shaped {
        return false;
    }
    let Some(next) = tokens.next() else {
        return false;
    };
    let argument = is_flag(next) || is_path(next) || SUBCOMMANDS.contains(&next);
    if SHELL_TOOLS.contains(&first) {
        let bare = next.trim_matches(|c: char| !c.is_alphanumeric());
        let foreign =
            !bare.is_empty() && (!bare.is_ascii() || !is_english_word(&bare.to_lowercase()));
        return argument || foreign;
    }
    // An unlisted word needs more than a subcommand-like word after it:
    // `ust run it` is a clipped `Just run it`, `kubectl get pods` a command.
    let then = tokens
        .next()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()));
    let prose_after = SUBCOMMANDS.contains(&next)
        && then.is_none_or(|t| FUNCTION_WORDS.contains(&t.to_lowercase().as_str()));
    argument && !prose_after && !is_english_word(first)
}

/// Whether `text` opens with a mark glued to a command or identifier
/// (`:wq`, `!!`, `!important`, `:hover`), by the rule in the module's doc.
pub fn code_opening(text: &str) -> bool {
    let mut tokens = text.split_whitespace();
    let Some(token) = tokens.next() else {
        return false;
    };
    if !token.is_ascii() || token.len() < 2 {
        return false;
    }
    let body = &token[1..];
    if body
        .chars()
        .find(char::is_ascii_alphabetic)
        .is_some_and(|c| c.is_ascii_uppercase())
    {
        return false;
    }
    if tokens
        .next()
        .is_some_and(|next| next.starts_with(|c: char| c.is_uppercase()))
    {
        return false;
    }
    let letters: String = body
        .chars()
        .skip_while(|c| !c.is_ascii_alphabetic())
        .take_while(char::is_ascii_alphabetic)
        .collect();
    // A function word glued to a mark (`,and`, `!the`) is a stray mark
    // before prose; any other word is a command or a selector (`:set`,
    // `:hover`, `!important`).
    letters.is_empty()
        || !is_english_word(&letters)
        || !(FUNCTION_WORDS.contains(&letters.as_str()) || PRONOUNS.contains(&letters.as_str()))
}

/// Whether `text` opens with an emoticon (`:)`, `:-)`, `;)`, `:D`, `:P`,
/// `:(`) followed by a space or the end.
pub fn emoticon(text: &str) -> bool {
    const FACES: &[&str] = &[
        ":-)", ":-(", ";-)", ":-D", ":-P", ":)", ":(", ";)", ":D", ":P", ":p", ":/", ":O", ":o",
        "^^", "^_^", "^.^", "^-^", "^o^", "^^;", "\\o/", "o/", "T_T", ";_;", "-_-", ">_<", ">.<",
        "=)", "=D", "<3",
    ];
    FACES.iter().any(|f| {
        text.strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
    })
}

/// `printf()`, `len(my_list)`, `sorted()`: an identifier followed by
/// parentheses.
pub fn is_call(token: &str) -> bool {
    let Some(open) = token.find('(') else {
        return false;
    };
    let name = &token[..open];
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
        && token[open..].contains(')')
}

/// Verbs that define the word before them (`requests is`, `e denotes`).
pub const DEFINING_VERBS: &[&str] = &[
    "is",
    "are",
    "was",
    "means",
    "stands",
    "denotes",
    "refers",
    "represents",
    "returns",
    "=",
];

/// Whether `text` opens with a lowercase word that a defining verb shows
/// to be a name or a symbol, by the rule in the module's doc.
pub fn names_a_subject(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let (Some(word), Some(verb)) = (words.next(), words.next()) else {
        return false;
    };
    let verb = verb.trim_end_matches(',');
    if !DEFINING_VERBS.contains(&verb) || !word.chars().all(|c| c.is_ascii_lowercase()) {
        return false;
    }
    if word.len() == 1 {
        let sentence = text.split(". ").next().unwrap_or(text);
        return sentence.chars().any(|c| c.is_ascii_digit());
    }
    // An English word or not (`requests`, `npm`, `ffmpeg`), what no
    // English word ends with cannot have lost its first letters.
    !FUNCTION_WORDS.contains(&word) && !PRONOUNS.contains(&word) && !could_be_clipped(word)
}

/// Pronouns and auxiliaries FUNCTION_WORDS leaves out: never a name.
const PRONOUNS: &[&str] = &[
    "i", "he", "she", "one", "be", "do", "does", "not", "no", "was", "were", "has", "have", "had",
    "there", "these", "those", "each", "every", "such",
];

/// Whether some English word is `word` with one or two letters before it
/// (`hat` in `that`, `ello` in `hello`): a word that lost its first
/// letters could read so.
fn could_be_clipped(word: &str) -> bool {
    let letters = 'a'..='z';
    letters.clone().any(|a| {
        is_english_word(&format!("{a}{word}"))
            || letters
                .clone()
                .any(|b| is_english_word(&format!("{a}{b}{word}")))
    })
}

/// English function words: after an unlisted word and a subcommand-like
/// word they show prose (`ust run it`), not a command's argument.
const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "an", "it", "its", "you", "your", "to", "of", "and", "or", "in", "on", "at",
    "what", "that", "this", "is", "are", "for", "with", "my", "me", "we", "us", "they", "them",
    "he", "she", "his", "her", "there", "here", "then", "so", "but", "if", "as", "by", "from",
    "how", "when", "where", "which", "who", "why", "all", "some", "any", "more", "out",
];

/// `-la`, `--save-dev`, `-n`.
fn is_flag(token: &str) -> bool {
    token
        .strip_prefix('-')
        .map(|f| f.trim_start_matches('-'))
        .is_some_and(|f| f.starts_with(|c: char| c.is_ascii_alphanumeric()))
}

/// `/etc/hosts`, `~/.bashrc`, `./run.sh`, `$HOME`, `KEY=value`, `.env`.
fn is_path(token: &str) -> bool {
    token.contains('/')
        || token.contains('=')
        || token.starts_with(['~', '$', '.'])
        || token.starts_with("*.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::input;
    use crate::{Contract, JunkPrefix, Outcome};

    fn judge(reply: &'static str, user: &str) -> Outcome {
        JunkPrefix.check(&input(reply, user)).unwrap()
    }

    #[test]
    fn punctuation_glued_to_the_first_word_fails() {
        for (reply, user) in [
            (
                ".Your sister is called Oriane.",
                "What is my sister called?",
            ),
            ("、あなたの妹はオリアンです。", "私の妹の名前は？"),
            (",Ok, here it is.", "Give me the list."),
            (";The answer is four.", "What is two plus two?"),
            ("\u{FEFF}.Your sister is Oriane.", "Who is my sister?"),
            ("**.Your** sister is Oriane.", "Who is my sister?"),
            ("# .Your sister\n\nShe is Oriane.", "Who is my sister?"),
            (".Ваша сестра Ориана.", "Как зовут мою сестру?"),
            (".The capital is Canberra.", "What is the capital?"),
        ] {
            let out = judge(reply, user);
            assert!(out.is_fail(), "{reply:?}: {out}");
        }
    }

    #[test]
    fn dot_names_and_commands_pass() {
        for (reply, user) in [
            (".NET is a developer platform.", "What is it?"),
            (".env holds the secrets. Keep it out of git.", "Where?"),
            (
                ".gitignore lists what git skips. Add target/ to it.",
                "How?",
            ),
            (
                ".DS_Store is a macOS file. Delete it.",
                "What is this file?",
            ),
            (".github/workflows holds the CI files. Add one.", "Where?"),
            ("**.NET** is a platform. It runs C#.", "What is it?"),
            ("kubectl get pods lists them. Add -A for all.", "How?"),
            ("git status zeigt die Änderungen. Dann commit.", "Wie?"),
            ("xargs の使い方です。例を示します。", "xargs とは？"),
            ("npm install left-pad adds it. Then import it.", "How?"),
            ("ls -la shows hidden files. Try it.", "How do I see them?"),
            ("terraform apply runs the plan. Check it first.", "How?"),
            ("cat /etc/hosts prints the file. Edit with sudo.", "How?"),
        ] {
            assert_eq!(judge(reply, user), Outcome::Pass, "{reply:?}");
        }
    }

    #[test]
    fn prose_after_a_tool_name_and_clipped_words_still_fail() {
        for (reply, user) in [
            ("find the file first. Then open it.", "How do I start?"),
            ("ello how are you? I am fine.", "Hello!"),
            ("ust run it again. It should work.", "It failed."),
            ("ite down what you did. Then ask.", "How do I prepare?"),
        ] {
            let out = judge(reply, user);
            assert!(out.is_fail(), "{reply:?}: {out}");
        }
    }

    #[test]
    fn a_dot_before_a_lowercase_english_word_is_undetermined() {
        assert_eq!(dot_start("profile is read by bash."), DotStart::Unsure);
        let out = judge(".profile is read by login shells. It sets PATH.", "What?");
        assert!(matches!(out, Outcome::Undetermined { .. }), "{out}");
    }
}
