//! What the prompt calls for: the few facts about a request that decide
//! whether an odd-looking reply is in fact what the user asked for (a
//! continuation, a list, lowercase, a translation, a token the user asked
//! about). Keyword lists cover the languages the contracts know; a prompt
//! they miss makes the contracts stricter, never more lenient.

use super::text::fold;
use super::Language;
use cb_wire::openai::{ChatMessage, ChatRequest};
use std::borrow::Cow;

/// The text of the user messages, oldest first.
pub fn user_texts(request: &ChatRequest) -> Vec<Cow<'_, str>> {
    request
        .messages
        .iter()
        .filter(|m| m.role == "user")
        .map(ChatMessage::text_cow)
        .collect()
}

/// The text of the last user message, empty when there is none.
pub fn last_user(request: &ChatRequest) -> Cow<'_, str> {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(ChatMessage::text_cow)
        .unwrap_or(Cow::Borrowed(""))
}

/// The system (or developer) instructions and the last user message,
/// folded: where a request for a format or a continuation would be.
fn instructions(request: &ChatRequest) -> String {
    let mut out = String::new();
    for m in &request.messages {
        if m.role == "system" || m.role == "developer" {
            out.push_str(&m.text_cow());
            out.push('\n');
        }
    }
    out.push_str(&last_user(request));
    fold(&out)
}

/// Phrases that ask the model to continue or complete the user's text.
const CONTINUATION: &[&str] = &[
    "continue",
    "complete the",
    "complete this",
    "complete my",
    "finish the",
    "finish this",
    "finish my",
    "next line",
    "next word",
    "carry on",
    "keep going",
    "fill in",
    "autocomplete",
    "continua",
    "continúa",
    "complete a",
    "completa a",
    "completa la",
    "completa el",
    "completa il",
    "termine a",
    "termina a",
    "termina la",
    "termina el",
    "continuez",
    "complète",
    "complétez",
    "termine la",
    "terminez",
    "finisci",
    "setze",
    "fortsetzen",
    "fortführen",
    "vervollständige",
    "ergänze",
    "beende den satz",
    "ga verder",
    "maak de zin af",
    "vul aan",
    "kontynuuj",
    "dokończ",
    "uzupełnij",
    "devam et",
    "tamamla",
    "続き",
    "続けて",
    "完成させて",
    "продолжи",
    "закончи",
    "допиши",
    "继续",
    "接着写",
    "补全",
    "完成这句",
];

/// How far the prompt invites a reply that starts mid-sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuation {
    /// The prompt asks to continue or complete a text.
    Asked,
    /// The last user message ends without closing punctuation (mid-word or
    /// mid-sentence), so a continuation is plausible.
    Possible,
    /// Neither.
    No,
}

/// Whether the prompt asks for, or invites, a continuation.
pub fn continuation(request: &ChatRequest) -> Continuation {
    let folded = instructions(request);
    if CONTINUATION.iter().any(|k| folded.contains(k)) {
        return Continuation::Asked;
    }
    let last = last_user(request);
    let last = last.trim_end();
    if last.ends_with("...") || last.ends_with('…') || last.ends_with(':') {
        return Continuation::Asked;
    }
    match last.chars().next_back() {
        Some(c) if c.is_alphanumeric() || c == ',' || c == '-' => Continuation::Possible,
        _ => Continuation::No,
    }
}

/// Phrases that ask for a list, a machine format, lowercase or a bare word.
const FORMATS: &[&str] = &[
    "list",
    "lista",
    "liste",
    "elenco",
    "elenca",
    "lijst",
    "wymień",
    "listę",
    "sırala",
    "say ",
    "json",
    "csv",
    "yaml",
    "xml",
    "lowercase",
    "lower case",
    "lower-case",
    "minúscula",
    "minuscule",
    "kleinbuchstaben",
    "kleine letters",
    "one word",
    "single word",
    "only the word",
    "just the word",
    "only answer",
    "箇条書き",
    "列出",
    "списк",
];

/// Whether the prompt asks for a list, a machine-readable format, lowercase
/// or a bare word, any of which may start a reply without a capital.
pub fn asks_for_format(request: &ChatRequest) -> bool {
    let folded = instructions(request);
    FORMATS.iter().any(|k| folded.contains(k))
}

/// True when `word` occurs in the last user message as a whole word, with
/// the same case: the user wrote it, so a reply may start with it.
pub fn user_wrote_word(request: &ChatRequest, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let last = last_user(request);
    last.match_indices(word).any(|(i, _)| {
        let before = last[..i].chars().next_back();
        let after = last[i + word.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// True when the last user message contains `needle` verbatim.
pub fn user_mentions(request: &ChatRequest, needle: &str) -> bool {
    last_user(request).contains(needle)
}

/// Phrases that ask for a translation or for a word in another language.
const TRANSLATION: &[&str] = &[
    "translat",
    "how do you say",
    "how do i say",
    "traduz",
    "tradu",
    "como se diz",
    "cómo se dice",
    "como se dice",
    "comment dit-on",
    "comment on dit",
    "come si dice",
    "übersetz",
    "wie sagt man",
    "wie heißt",
    "vertaal",
    "hoe zeg je",
    "przetłumacz",
    "jak powiedzieć",
    "çevir",
    "nasıl denir",
    "翻訳",
    "訳して",
    "翻译",
    "переведи",
    "перевод",
    "как сказать",
    "번역",
    "ترجم",
    "अनुवाद",
    "terjemah",
    "dịch sang",
    "dịch câu",
    "bản dịch",
];

/// Stems of language names, in the languages the contracts know.
const LANGUAGE_NAMES: &[(Language, &[&str])] = &[
    (
        Language::En,
        &[
            "english",
            "inglês",
            "ingles",
            "inglés",
            "anglais",
            "inglese",
            "englisch",
            "engels",
            "angielsk",
            "ingilizce",
            "英語",
            "英语",
            "английск",
        ],
    ),
    (
        Language::Pt,
        &[
            "portuguese",
            "português",
            "portugues",
            "portugués",
            "portugais",
            "portoghese",
            "portugiesisch",
            "portugees",
            "portugalsk",
            "portekizce",
            "ポルトガル語",
            "葡萄牙语",
            "португальск",
        ],
    ),
    (
        Language::Es,
        &[
            "spanish",
            "espanhol",
            "español",
            "espagnol",
            "spagnolo",
            "spanisch",
            "spaans",
            "hiszpańsk",
            "ispanyolca",
            "スペイン語",
            "西班牙语",
            "испанск",
        ],
    ),
    (
        Language::Fr,
        &[
            "french",
            "francês",
            "francés",
            "français",
            "francese",
            "französisch",
            "frans",
            "francusk",
            "fransızca",
            "フランス語",
            "法语",
            "французск",
        ],
    ),
    (
        Language::It,
        &[
            "italian",
            "italiano",
            "italien",
            "italienisch",
            "italiaans",
            "włosk",
            "italyanca",
            "イタリア語",
            "意大利语",
            "итальянск",
        ],
    ),
    (
        Language::De,
        &[
            "german",
            "alemão",
            "alemán",
            "allemand",
            "tedesco",
            "deutsch",
            "duits",
            "niemieck",
            "almanca",
            "ドイツ語",
            "德语",
            "немецк",
        ],
    ),
    (
        Language::Nl,
        &[
            "dutch",
            "holandês",
            "neerlandês",
            "holandés",
            "neerlandés",
            "néerlandais",
            "olandese",
            "niederländisch",
            "holländisch",
            "nederlands",
            "niderlandzk",
            "holendersk",
            "felemenkçe",
            "hollandaca",
            "オランダ語",
            "荷兰语",
            "нидерландск",
            "голландск",
        ],
    ),
    (
        Language::Pl,
        &[
            "polish",
            "polonês",
            "polaco",
            "polonais",
            "polacco",
            "polnisch",
            "polsk",
            "lehçe",
            "ポーランド語",
            "波兰语",
            "польск",
        ],
    ),
    (
        Language::Tr,
        &[
            "turkish",
            "turco",
            "turc",
            "türkisch",
            "turks",
            "tureck",
            "türkçe",
            "トルコ語",
            "土耳其语",
            "турецк",
        ],
    ),
    (
        Language::Ja,
        &[
            "japanese",
            "japonês",
            "japonés",
            "japonais",
            "giapponese",
            "japanisch",
            "japans",
            "japońsk",
            "japonca",
            "日本語",
            "日语",
            "японск",
        ],
    ),
    (
        Language::Ru,
        &[
            "russian",
            "russo",
            "ruso",
            "russe",
            "russisch",
            "rosyjsk",
            "rusça",
            "ロシア語",
            "俄语",
            "русск",
        ],
    ),
    (
        Language::Zh,
        &[
            "chinese",
            "chinês",
            "chino",
            "chinois",
            "cinese",
            "chinesisch",
            "chinees",
            "chińsk",
            "çince",
            "中国語",
            "中文",
            "汉语",
            "китайск",
        ],
    ),
    (
        Language::Ko,
        &[
            "korean",
            "한국어",
            "한국말",
            "coreano",
            "coréen",
            "koreanisch",
            "koreaans",
            "koreańsk",
            "korece",
            "韓国語",
            "韩语",
            "корейск",
            "الكورية",
            "कोरियाई",
            "bahasa korea",
            "tiếng hàn",
        ],
    ),
    (
        Language::Ar,
        &[
            "arabic",
            "العربية",
            "árabe",
            "arabe",
            "arabo",
            "arabisch",
            "arabsk",
            "arapça",
            "アラビア語",
            "阿拉伯语",
            "арабск",
            "अरबी",
            "bahasa arab",
            "tiếng ả rập",
        ],
    ),
    (
        Language::Hi,
        &[
            "hindi",
            "हिन्दी",
            "हिंदी",
            "hintçe",
            "ヒンディー語",
            "印地语",
            "хинди",
            "الهندية",
        ],
    ),
    (
        Language::Id,
        &[
            "indonesian",
            "bahasa indonesia",
            "indonésio",
            "indonesio",
            "indonésien",
            "indonesiano",
            "indonesisch",
            "indonezyjsk",
            "endonezce",
            "インドネシア語",
            "印尼语",
            "индонезийск",
            "الاندونيسية",
            "इंडोनेशियाई",
            "tiếng indonesia",
        ],
    ),
    (
        Language::Vi,
        &[
            "vietnamese",
            "tiếng việt",
            "vietnamita",
            "vietnamien",
            "vietnamesisch",
            "vietnamees",
            "wietnamsk",
            "vietnamca",
            "ベトナム語",
            "越南语",
            "вьетнамск",
            "الفيتنامية",
            "वियतनामी",
            "bahasa vietnam",
        ],
    ),
];

/// Which other languages the request (its last user message and its
/// system instructions) makes legitimate in the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherLanguages {
    /// None: the reply must be in the conversation's language.
    None,
    /// These, named in the message or the instructions ("in Spanish",
    /// "auf Englisch").
    Named(Vec<Language>),
    /// A translation or a foreign word was asked without naming a known
    /// language: any language may appear.
    Any,
}

impl OtherLanguages {
    /// Whether `language` may appear in the reply besides the expected one.
    pub fn allows(&self, language: Language) -> bool {
        match self {
            OtherLanguages::None => false,
            OtherLanguages::Named(list) => list.contains(&language),
            OtherLanguages::Any => true,
        }
    }
}

/// The languages other than `expected` that the last user message or the
/// system (and developer) instructions name or ask for: an application
/// whose system prompt says "Always answer in English" or "Antworte immer
/// auf Deutsch" makes that language's reply no switch, whatever language
/// the user writes in. (A prompt that names a language to forbid it,
/// "never answer in English", allows it too: a missed switch there is the
/// price of no false alarm on the commoner instruction.)
pub fn other_languages(request: &ChatRequest, expected: Language) -> OtherLanguages {
    let folded = instructions(request);
    let (automaton, owners) = language_names();
    // One pass over the message for every stem of every language (each
    // stem searched on its own was most of the language contract's time).
    let mut found = [false; LANGUAGE_NAMES.len()];
    for m in automaton.find_overlapping_iter(folded.as_str()) {
        let (index, cjk) = owners[m.pattern().as_usize()];
        if found[index] {
            continue;
        }
        found[index] = cjk || at_word_start(&folded, m.start());
    }
    let named: Vec<Language> = LANGUAGE_NAMES
        .iter()
        .zip(found)
        .filter(|((l, _), found)| *found && *l != expected)
        .map(|((l, _), _)| *l)
        .collect();
    if !named.is_empty() {
        OtherLanguages::Named(named)
    } else if TRANSLATION.iter().any(|k| folded.contains(k)) {
        OtherLanguages::Any
    } else {
        OtherLanguages::None
    }
}

/// Every stem of [`LANGUAGE_NAMES`] in one automaton, and per pattern the
/// index of its language there and whether it is CJK (no word boundaries:
/// it counts anywhere).
fn language_names() -> &'static (aho_corasick::AhoCorasick, Vec<(usize, bool)>) {
    static NAMES: std::sync::OnceLock<(aho_corasick::AhoCorasick, Vec<(usize, bool)>)> =
        std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut stems = Vec::new();
        let mut owners = Vec::new();
        for (index, (_, names)) in LANGUAGE_NAMES.iter().enumerate() {
            for stem in *names {
                stems.push(*stem);
                owners.push((index, stem.chars().next().is_some_and(super::text::is_cjk)));
            }
        }
        // The stems are a fixed list of short words: they always build.
        let automaton = aho_corasick::AhoCorasick::new(&stems)
            .unwrap_or_else(|e| panic!("the language-name automaton: {e}"));
        (automaton, owners)
    })
}

/// True when the text at byte `i` of `haystack` starts a word.
fn at_word_start(haystack: &str, i: usize) -> bool {
    haystack[..i]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric())
}

#[cfg(test)]
mod tests;
