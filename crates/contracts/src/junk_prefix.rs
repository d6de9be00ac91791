//! `junk_prefix`: the reply begins with punctuation or a token fragment the
//! prompt does not call for. One host of a model did this in 19 of 20
//! replies while 14 others did it in 0 of 49: a tokenizer or template bug
//! on a route, invisible to uptime monitoring.
//!
//! Checked on the start of the reply, leading whitespace ignored, in order:
//!
//! 1. An invisible character by `text::is_invisible` (a format
//!    character such as a byte-order mark, zero-width space, LRM, RLM, soft
//!    hyphen, word joiner; a Hangul or Braille filler): fail. A
//!    bidirectional mark or isolate is fine when the reply holds
//!    right-to-left letters (`\u{200F}API هي`), and what follows it is
//!    judged. A reply with no visible character at all is left to `empty`.
//! 2. A chat-template or special token (`<|im_start|>`, `<|assistant|>`,
//!    `</s>`, `[INST]`, `<start_of_turn>`, `</think>`, ...): fail, unless
//!    the user's message contains it. A bare role label line (`assistant`,
//!    `model`, `gpt`, `bot`, `ai`, lowercase, alone on the first line) with
//!    more lines after it: fail.
//!    Then, what a broken template, serialiser or tokenizer leaves:
//!    - a reasoning block: `<think>` (`<thinking>`, `<reasoning>`, ...)
//!      opening the reply, closed or not, unless a user message names the
//!      tag (`the think tag`) or the reply makes it the subject of its
//!      sentence (`<think> marks…`: a space and a lowercase word follow);
//!    - a byte-fallback token (`<0x0A>`) or a tokenizer's space marker
//!      glued to the first word (`▁The`, and `ĠThe`/`ĊThe` before a
//!      capitalised ASCII word only: `Ġ` and `Ċ` are Maltese letters);
//!    - the user's last message written back behind a user label on the
//!      first line (`User: what is a tree`, then the answer);
//!    - a role label with a colon: a speaker (`Assistant:`, `AI:`, `Bot:`,
//!      `User:`, `Human:`, the assistant's label in the seventeen
//!      languages, `Assistent:`, `Ассистент:`, `助手：`, `المساعد:`; any
//!      case, a space before the colon or a full-width colon, spaced, or
//!      glued to a capital, optionally a heading) then the answer, or a template heading that
//!      names the
//!      assistant's turn alone on its line (`### Response:`,
//!      `### Assistant:`, `### Answer:`, then a line break). It is junk
//!      only as the reply's one label line: a later line that opens with a
//!      label of the same shape (a word and a colon, `Bot:`, `ML:`, after
//!      optional `#` or `*`), or for a heading a later heading, makes the
//!      reply a transcript, a glossary or a worked example. Fine too when
//!      the user wrote the label's word, when the words after it spell the
//!      label out (`AI: artificial intelligence`, `GPT: Generative
//!      Pre-trained Transformer`: a definition), when a defining verb
//!      follows (`Assistant: is the label…`), or when a lowercase
//!      letter is glued to the colon (`user:password@host`); a
//!      label without its colon (`Assistant professors`, `AI is`), a plain
//!      `Response:`, a heading with text after its colon (`## Answer: 4`)
//!      and `### Input:`, `### Output:`, `### Instruction:` are no label;
//!    - a serialised empty value (`undefined`, `null`, `NULL`, `nil`,
//!      `<nil>`, `NaN`, `None`, `[object Object]`, `(null)`, `""`, with their
//!      case) before the answer, in one of three shapes:
//!      glued to the answer's first word: a word that opens sentences
//!      (an article, a pronoun, a greeting, yes or no, in the Latin-script
//!      languages: `nullThe`, `undefinedDie`, `nullBonjour`), a capital of
//!      another script (`nullПривет`), or a letter of a script without
//!      case that opens a
//!      word: katakana (`undefinedフランス`), Hangul other than a particle
//!      or the copula (`undefined프랑스`), a letter of a script that
//!      separates words by spaces (Arabic, Devanagari, ...); after a
//!      bracketed value, any letter or digit. Hiragana or a Korean particle
//!      glued to it is the grammar of a sentence about the value
//!      (`Noneを返します`, `None을`, `nil입니다`, `NULLと`): fine. Glued to
//!      Han or a script written without spaces (Thai, Lao, Khmer, Myanmar)
//!      it may be either (`None是`, `NULL値`): undetermined;
//!      followed by a space and a word that opens sentences
//!      (`null The capital…`), for the values that are no English word
//!      (all but `None`: `None I know of.` is English; a space and a
//!      letter of a script without case, `None 是…`, is a sentence about
//!      the value).
//!      Fine when the user wrote the value or the glued token, or the
//!      reply names the value again as a word after its opening token (it
//!      is then the topic: `NoneType is the type of None`); glued to any
//!      other capitalised word it is a name (`NoneType`,
//!      `NullPointerException`, `NoneSuch`), unless that word is an English
//!      word of four letters or more no name builds on a value
//!      (`undefinedPhotosynthesis`, `NaNSalt`: a leak); alone on its first line it is
//!      as often the answer (`NULL` for an aggregate over no rows, then
//!      why) and is never taken for a leak. `nullable`,
//!      `Nonetheless`, `None of them`, `NaN stands for`, `NULLIF` are no
//!      value: a lowercase word or all capitals follows;
//!    - an opening code fence never closed, its next line prose (a capital,
//!      three words, a sentence mark, no code punctuation): fail when the
//!      provider says the reply ended normally (a `finish_reason` that
//!      cuts nothing by `truncated`'s reading: `stop`, `end_turn`, ...);
//!      undetermined when no `finish_reason` was received (a stream cut
//!      short, which `run --stream` scores as given); not judged here when
//!      the provider cut it for length or by a filter (that is
//!      `truncated`'s). A closed fence is a code block; code after an open
//!      fence is a cut code block.
//! 3. A garbled prefix: a first word that opens with mojibake (a byte-order
//!    mark read as Windows-1252, `ï»¿`, or a word whose UTF-8 was read so,
//!    `Ù…Ø±Ø­Ø¨Ù‹Ø§`) while the rest of the reply has words and no
//!    mojibake: fail. A reply garbled throughout is left to `language`.
//! 4. Stray punctuation: `,` `.` `;` `:` `!` `?` `)` `]` `}`, their
//!    full-width forms, `、` `。` `」` `』` `】` `》`, and the clause marks of
//!    other scripts (`،` `؛` `؟` `۔` `।` `॥` `።` `၊` `။`), spaced (`. The`) or
//!    glued (`.The`, `、あなた`), at the start or inside the Markdown that
//!    opens the reply (`**.Your**`, `# .Your`): fail. A dot that starts a
//!    name (`.NET`, `.env`) is fine by the rule in `junk_prefix/shapes.rs`
//!    (ASCII token with an inner capital, digit or code punctuation, or a
//!    lowercase non-English word); another mark glued to a command or an
//!    identifier (`:wq`, `!!`, `!important`) is fine by the rule stated in
//!    `junk_prefix/shapes.rs`: ASCII, no capital after the mark, no
//!    capitalised word after the token, and letters that are none, no
//!    English word, or a word the user wrote; a dot before a lowercase English word
//!    (`.profile`) is undetermined; `...` and `…` are undetermined. After a
//!    byte-order mark the rest is judged too and its junk named. A mark the
//!    user wrote as a word of their message (`What does ! do?`) or that
//!    the first line closes with (`।। … ।।`) is fine.
//! 5. A lone `*` or `**` whose emphasis is not closed in the first
//!    paragraph: fail. A roleplay action (`*smiles*`), bold (`**Yes.**`), a
//!    bullet (`* item`) or an operator on an identifier the user wrote or
//!    the reply shows again (`*args`, `*p`), a cron field or a glob
//!    (`*/5`, `*.txt`) is fine. So are a relative path
//!    (`./configure`) and a first line of code that opens a block (`p {`).
//! 6. What no convention explains (`junk_prefix/opening.rs`): a control
//!    character or U+FFFD, an escape or HTML entity written out, a stray
//!    HTML tag, a piece of the wire (`data: {`, a chat API's JSON
//!    envelope), an opening quote or bracket never closed, symbols that
//!    are no marker before the text or glued to its first word (`~The`,
//!    `#$%@! The`), a token glued to or before a word that opens
//!    sentences (`asdfThe`, `0x1f The`): fail.
//! 7. A word fragment: the reply starts with a lowercase letter. A suffix
//!    fragment glued to a capitalised word or a word of another script
//!    (`ingYour`, `'sThe`, `tionÉ`, `tionمرحبا`; not an acronym,
//!    `lyNASA`; not a suffix the user asked about, which Japanese,
//!    Chinese and Korean write glued to their own words: `ing形は…` after
//!    "what does ing mean?") fails, as does one inside the opening Markdown
//!    (`**ing Your**`, `**lyA**`). Fine when
//!    the prompt asks for a continuation, a list, a format or lowercase, when
//!    the user wrote that very word, when the word is an identifier (an
//!    inner capital, a digit or code punctuation: `iPhone`, `e.g.`), a
//!    call (`printf()`, `sort() 메서드를`), a named subject (`requests is`,
//!    `e is …, about 1.602 × 10⁻¹⁹ C`: a word no clipping could leave, or
//!    a symbol defined with a quantity, by the rule in `shapes.rs`), a
//!    surname's particle before a capitalised word (one of `van von de da
//!    di du del della der den ter ten le la dos das zu`: `van Gogh`,
//!    `de Gaulle`), an ASCII term glued to hiragana or a Korean particle
//!    (`nil입니다`, the subject of the sentence), or a command the reply
//!    also shows as code,
//!    opening an inline span or a fenced line (`npm install` over
//!    `` `npm install left-pad` ``), or a command by its shape (a known
//!    tool or an executable-shaped non-English word before a flag, a path
//!    or a subcommand: `kubectl get pods`, `ls -la`, `xargs の`; the rule
//!    and lists are in `junk_prefix/shapes.rs`). A leading `'s` is fine before a word
//!    that ends in `s` and is no English word by the lexicon of `detect.rs`
//!    (the Dutch genitive article: `'s ochtends`, `'s avonds`; `'s always`
//!    is a clipped `it's`). Fail
//!    when the first word is a known suffix fragment (`ing`, `tion`, `'s`)
//!    or when a later sentence starts with a capital (so the text does use
//!    capitals); undetermined otherwise (an all-lowercase style).
//!
//! Prompts that end mid-sentence make stray punctuation and fragments
//! undetermined rather than failures. Structured-output requests are left
//! to `schema`, empty replies to `empty`.
//!
//! Blind spots: a name that starts with a suffix and a capital (`edX`)
//! reads as a glued fragment; fragments in scripts without case (Japanese, Chinese); the
//! Dutch genitive before a word English also has (`'s winters`); a
//! clipped word that is still a word with a capital (`Ello` for `Hello`);
//! junk in the middle or at the end of a reply; a value leaked alone on
//! the first line (`None` then the answer) or glued to a capitalised word
//! that opens no sentence passes; a reply that is only a serialised value
//! (`null`, `None`, `{}`) is not judged a leak (it may be the answer); a
//! value glued to a katakana or Hangul compound (`NULLポインタ`, `None값`)
//! reads as a leak unless the user or the reply names it; a leaked value
//! glued to a particle-like syllable (`undefined이탈리아`) passes; a
//! leaked label followed by a later `Word:` line (`Note:`) passes; a
//! leaked reasoning block whose first word is lowercase after a space
//! (`<think> the user asks…`) passes.

mod opening;
mod shapes;

use super::prompt::{self, Continuation};
use super::text::{has_visible, is_invisible, segments};

use super::truncated::{stop_kind, StopKind};
use super::{requested_format, Contract, ContractInput, ContractName, Outcome};
use shapes::DotStart;

/// Chat-template and special tokens that never belong in a reply.
pub const TEMPLATE_TOKENS: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|begin_of_text|>",
    "<|assistant|>",
    "<|user|>",
    "<|system|>",
    "<|end|>",
    "<|eos|>",
    "<｜Assistant｜>",
    "<｜end▁of▁sentence｜>",
    "</s>",
    "<s>",
    "<eos>",
    "<bos>",
    "<pad>",
    "<unk>",
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "<</SYS>>",
    "<start_of_turn>",
    "<end_of_turn>",
    "</think>",
    "<|channel|>",
    "<|message|>",
    "<|return|>",
    "[SEP]",
    "[CLS]",
    "[MASK]",
    "[PAD]",
    "[UNK]",
    "<mask>",
    "<sep>",
    "<cls>",
];

/// Role labels a broken template leaves on a line of their own.
const ROLE_LABELS: &[&str] = &["assistant", "model", "gpt", "bot", "ai"];

/// Punctuation that cannot open a reply: the Latin marks, their
/// full-width forms and the clause and sentence marks of other scripts
/// (Arabic `،` `؛` `؟` `۔`, Devanagari `।` `॥`, Ethiopic `።` `፣`,
/// Myanmar `၊` `။`).
const STRAY: &[char] = &[
    ',', '.', ';', ':', '!', '?', ')', ']', '}', '、', '。', '，', '．', '；', '：', '！', '？',
    '）', '」', '』', '】', '》', '〉', '］', '｝', '،', '؛', '؟', '۔', '।', '॥', '።', '፣', '၊',
    '။',
];

/// Speaker labels a chat template leaves before the answer with a colon
/// (`Assistant: The`), matched case-insensitively.
const SPEAKER_LABELS: &[&str] = &[
    "assistant",
    "ai",
    "bot",
    "chatbot",
    "gpt",
    "chatgpt",
    "user",
    "human",
    // The assistant's label in the seventeen languages' templates.
    "assistent",
    "asistente",
    "assistente",
    "asystent",
    "asistan",
    "asisten",
    "ассистент",
    "помощник",
    "アシスタント",
    "助手",
    "어시스턴트",
    "المساعد",
    "सहायक",
];

/// Section headings of instruction templates (Alpaca, Vicuna) that name
/// the assistant's turn, a label only as a heading alone on its line with a
/// colon (`### Response:`): plain `Response:` is prose, and `### Input:`,
/// `### Output:`, `### Instruction:` head a worked example as well.
const SECTION_LABELS: &[&str] = &["response", "answer", "assistant"];

/// Korean particles and copula forms, written on the word before them
/// (`None을`, `nil입니다`, `NULL인`): a closed class, matched at the start
/// of the Hangul glued to a value.
const KOREAN_PARTICLES: &[&str] = &[
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "의",
    "에",
    "와",
    "과",
    "도",
    "만",
    "로",
    "으로",
    "라",
    "란",
    "랑",
    "나",
    "인",
    "입니다",
    "일",
    "임",
    "야",
    "여",
    "께",
    "처럼",
    "보다",
    "까지",
    "부터",
    "조차",
    "마저",
    "하고",
    "요",
];

/// Tags that wrap a model's reasoning (`<think>…</think>`).
const REASONING_TAGS: &[&str] = &[
    "think",
    "thinking",
    "reasoning",
    "reflection",
    "scratchpad",
    "thought",
];

/// How a serialiser writes an empty or unset value: JavaScript
/// (`undefined`, `null`, `NaN`, `[object Object]`), Python (`None`), SQL
/// (`NULL`), Go (`nil`, `<nil>`), C's `printf` (`(null)`). Matched with
/// their case: `Null hypothesis` and `Undefined behaviour` are prose.
const EMPTY_VALUES: &[&str] = &[
    "[object Object]",
    "\"\"",
    "undefined",
    "(null)",
    "<nil>",
    "null",
    "NULL",
    "nil",
    "NaN",
    "None",
];

/// Markers a tokenizer puts for a space when its tokens are printed raw:
/// SentencePiece `▁`, byte-level BPE `Ġ` (space) and `Ċ` (newline).
const SPACE_MARKERS: &[char] = &['\u{2581}', 'Ġ', 'Ċ'];

/// Word endings that are never a word of their own at the start of a reply.
const SUFFIX_FRAGMENTS: &[&str] = &[
    "ing", "ed", "tion", "sion", "ment", "ness", "ly", "ity", "ous", "ive", "able", "ible", "'s",
    "'re", "'ll", "'ve", "'m", "'d", "n't",
];

/// The `junk_prefix` contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct JunkPrefix;

impl Contract for JunkPrefix {
    fn name(&self) -> ContractName {
        ContractName::JunkPrefix
    }

    fn check(&self, input: &ContractInput<'_>) -> Option<Outcome> {
        if !has_visible(input.text) || requested_format(input.request).is_some() {
            return None;
        }
        Some(judge(input))
    }
}

fn judge(input: &ContractInput<'_>) -> Outcome {
    let mut text = input.text.trim_start_matches(|c: char| c.is_whitespace());
    if has_rtl_letter(text) {
        // Directional marks steer right-to-left text: `\u{200F}API هي`.
        text = text.trim_start_matches(|c: char| c.is_whitespace() || is_bidi_mark(c));
    }
    if let Some(first) = text.chars().next().filter(|c| is_invisible(*c)) {
        // Judge what follows too, so junk after a byte-order mark is named.
        let rest = text.trim_start_matches(is_invisible);
        let after = match judge_visible(input, rest) {
            Outcome::Fail { reason } => format!(", then: {reason}"),
            _ => String::new(),
        };
        return Outcome::fail(format!(
            "the reply starts with the invisible character U+{:04X}{after}",
            first as u32
        ));
    }
    judge_visible(input, text)
}

/// The checks after the invisible characters, on `text` (the reply from its
/// first visible character).
fn judge_visible(input: &ContractInput<'_>, text: &str) -> Outcome {
    let request = input.request;
    if let Some(word) = mojibake_prefix(text) {
        return Outcome::fail(format!(
            "the reply starts with the mojibake {word:?} and the rest is clean: its first bytes were decoded with the wrong encoding"
        ));
    }
    if let Some(token) = TEMPLATE_TOKENS.iter().find(|t| text.starts_with(**t)) {
        if prompt::user_mentions(request, token) {
            return Outcome::Pass;
        }
        return Outcome::fail(format!("the reply starts with the template token {token}"));
    }
    if let Some(generic) = generic_special_token(text) {
        if !prompt::user_mentions(request, generic) {
            return Outcome::fail(format!("the reply starts with the special token {generic}"));
        }
    }
    if let Some(out) = leaked_markup(input, text) {
        return out;
    }
    let first_line = text.lines().next().unwrap_or("").trim();
    if ROLE_LABELS.contains(&first_line) && text.lines().nth(1).is_some() {
        return Outcome::fail(format!(
            "the reply starts with the role label {first_line:?} left by the chat template"
        ));
    }
    let continuation = prompt::continuation(request);
    let Some(first) = text.chars().next() else {
        return Outcome::Pass;
    };
    if first == '*' && star_operator(request, text) {
        return Outcome::Pass;
    }
    if let Some(inner) = markdown_inner(text) {
        if let Some(out) = junk_in_markdown(input, inner, continuation) {
            return out;
        }
    }
    if first == '*' {
        return asterisk(text);
    }
    if text.starts_with("./") || text.starts_with("../") {
        return Outcome::Pass; // a relative path: ./configure
    }
    if first.is_lowercase() && first_line.trim_end().ends_with('{') {
        return Outcome::Pass; // a block of code: `p {`, `func add(a, b int) int {`
    }
    if first == '…' && continuation != Continuation::Asked {
        return Outcome::undetermined("the reply starts with an ellipsis");
    }
    if STRAY.contains(&first) {
        if first != '.' && (shapes::code_opening(text) || shapes::emoticon(text)) {
            return Outcome::Pass; // :wq, !!, !important
        }
        // The mark the user asked about (`What does ! do?`, a message of
        // `؟` alone), or one the first line closes with (`।। … ।।`).
        let token = text.split_whitespace().next().unwrap_or("");
        let asked = prompt::user_texts(request)
            .iter()
            .any(|t| t.split_whitespace().any(|w| w == token));
        let closed = token.chars().count() >= 2 && first_line[token.len()..].contains(token);
        if asked || closed {
            return Outcome::Pass;
        }
        return punctuation(text, first, continuation);
    }
    if let Some(out) = opening::judge(input, text, continuation) {
        return out;
    }
    if first.is_lowercase() || text.starts_with('\'') {
        return fragment(input, text, continuation);
    }
    Outcome::Pass
}

/// What a broken template, serialiser or tokenizer leaves before the
/// answer: a reasoning block, a byte token, a role label with a colon, a
/// serialised empty value, a tokenizer's space marker, an opening code
/// fence never closed before prose. `None` when there is none.
fn leaked_markup(input: &ContractInput<'_>, text: &str) -> Option<Outcome> {
    let request = input.request;
    if let Some((tag, closed)) = reasoning_block(text) {
        // Asked about the tag (by name, in any user message), or naming it
        // as the subject of a sentence (`<think> marks ...`), the reply
        // discusses it.
        let asked = user_ever_wrote(request, tag);
        let subject = text[tag.len() + 2..].starts_with(' ')
            && text[tag.len() + 2..]
                .trim_start()
                .starts_with(|c: char| c.is_lowercase());
        if !asked && !subject {
            return Some(Outcome::fail(match closed {
                Some(len) => format!(
                    "the reply starts with a leaked reasoning block <{tag}>…</{tag}> ({len} characters) before the answer"
                ),
                None => format!("the reply starts with a reasoning tag <{tag}> that is never closed"),
            }));
        }
    }
    if let Some(token) = byte_token(text) {
        if !prompt::user_mentions(request, token) {
            return Some(Outcome::fail(format!(
                "the reply starts with the tokenizer's byte token {token}, printed instead of decoded"
            )));
        }
    }
    if let Some(echo) = echoed_user_turn(input, text) {
        return Some(Outcome::fail(format!(
            "the reply starts by echoing the user's turn as {echo:?}: the chat template leaked"
        )));
    }
    if let Some(label) = role_label(text) {
        let word = label.trim_start_matches(['#', ' ']).trim_end_matches(':');
        // A later `Word:` line makes a transcript, a glossary or a worked
        // example of it: only a lone label is the template's.
        let lone = !text
            .lines()
            .skip(1)
            .any(|line| opens_with_label(line) || (label.starts_with('#') && is_heading(line)));
        if lone && !user_wrote_any_case(request, word) {
            return Some(Outcome::fail(format!(
                "the reply starts with the role label {label:?} left by the chat template"
            )));
        }
    }
    if let Some(found) = empty_value(text) {
        let EmptyValue { value, glued, sure } = found;
        let opening = glued.unwrap_or(value);
        // The value named again elsewhere is the reply's topic.
        let named_again = mentions_word(&text[opening.len()..], value);
        let user_wrote = user_wrote_any_case(request, value)
            || glued.is_some_and(|token| {
                let token = token.to_lowercase();
                prompt::last_user(request).to_lowercase().contains(&token)
            });
        if !named_again && !user_wrote {
            let shape = match glued {
                Some(token) => format!(
                    "the serialised empty value {value:?} glued to {:?}",
                    &token[value.len()..]
                ),
                None => format!("the serialised empty value {value:?} before the answer"),
            };
            return Some(if sure {
                Outcome::fail(format!(
                    "the reply starts with {shape}: an unset variable was printed before the answer"
                ))
            } else {
                Outcome::undetermined(format!(
                    "the reply starts with {shape}: a leaked value, or a sentence about the value in a script written without spaces"
                ))
            });
        }
    }
    if let Some(marker) = space_marker(text) {
        return Some(Outcome::fail(format!(
            "the reply starts with the tokenizer's space marker {marker:?} (U+{:04X}), printed instead of decoded",
            marker as u32
        )));
    }
    if let Some(fence) = leftover_fence(text) {
        match input.finish_reason.map(stop_kind) {
            Some(StopKind::Other) => {
                return Some(Outcome::fail(format!(
                    "the reply opens a code fence {fence:?} that is never closed, and prose follows it, though it ended normally"
                )));
            }
            // Cut for length or by a filter: that is `truncated`'s.
            Some(StopKind::Length | StopKind::Filtered) => {}
            None => {
                return Some(Outcome::undetermined(format!(
                    "the reply opens a code fence {fence:?} that is never closed before prose, and no finish_reason says whether it ended or was cut"
                )));
            }
        }
    }
    None
}

/// `<think>…</think>`: the tag that opens `text`, with the length of the
/// block when it is closed.
fn reasoning_block(text: &str) -> Option<(&'static str, Option<usize>)> {
    let rest = text.strip_prefix('<')?;
    let tag = REASONING_TAGS.iter().copied().find(|t| {
        rest.get(..t.len() + 1)
            .is_some_and(|head| head.eq_ignore_ascii_case(&format!("{t}>")))
    })?;
    let lower = text.to_ascii_lowercase();
    let closing = format!("</{tag}>");
    Some((
        tag,
        lower.find(&closing).map(|at| text[..at].chars().count()),
    ))
}

/// `<0x0A>`: a SentencePiece byte-fallback token.
fn byte_token(text: &str) -> Option<&str> {
    let token = text.get(..6)?;
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    hex.chars().all(|c| c.is_ascii_hexdigit()).then_some(token)
}

/// `Assistant: The`, `AI:The`, `### Response:`: a speaker label (any
/// case, optionally as a heading) then a colon and the answer, or a
/// template heading that names the assistant's turn alone on its line
/// (`### Response:` then a line break). The label as written, colon
/// included.
fn role_label(text: &str) -> Option<&str> {
    let hashes = text.len() - text.trim_start_matches('#').len();
    let heading = (1..=6).contains(&hashes) && text[hashes..].starts_with(' ');
    let body = if heading {
        text[hashes..].trim_start_matches(' ')
    } else {
        text
    };
    let colon = body.find([':', '：'])?;
    // French typography puts a space before the colon (`Assistant :`).
    let word = body[..colon].strip_suffix(' ').unwrap_or(&body[..colon]);
    if word.is_empty() || !word.chars().all(char::is_alphabetic) {
        return None;
    }
    let lower = word.to_lowercase();
    let colon_len = body[colon..].chars().next().map_or(1, char::len_utf8);
    let after = &body[colon + colon_len..];
    let alone = after
        .trim_start_matches([' ', '\t'])
        .starts_with(['\n', '\r']);
    // Glued to what follows, only a capital opens an answer
    // (`Assistant:The`); `user:password@host` is a credential. A defining
    // verb after it makes the label the subject (`Assistant: is the
    // label…`).
    let glued_lower = after.starts_with(|c: char| c.is_lowercase());
    let subject = shapes::DEFINING_VERBS.iter().any(|v| {
        after
            .trim_start()
            .strip_prefix(v)
            .is_some_and(|r| r.starts_with(' '))
    });
    let label = !glued_lower
        && !subject
        && !expands(&lower, after)
        && (SPEAKER_LABELS.contains(&lower.as_str())
            || (heading && alone && SECTION_LABELS.contains(&lower.as_str())));
    let answer_follows = after.trim_start().chars().next().is_some();
    let label_end = text.len() - body.len() + colon + colon_len;
    (label && answer_follows && !after.starts_with(['/', ':'])).then(|| &text[..label_end])
}

/// `User: what is a tree` then the answer: the user's last message
/// written back behind a user label, as a broken template does. The label
/// on the first line, the message (any case, its words in order) after
/// it, and more lines after.
fn echoed_user_turn<'a>(input: &ContractInput<'_>, text: &'a str) -> Option<&'a str> {
    let first = text.lines().next()?;
    let (label, said) = first.split_once(':')?;
    let label = label.trim();
    let user_label = [
        "user",
        "human",
        "utilisateur",
        "benutzer",
        "usuario",
        "пользователь",
    ]
    .contains(&label.to_lowercase().as_str());
    let asked = prompt::last_user(input.request);
    let norm = |s: &str| {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let echo = !said.trim().is_empty() && norm(said) == norm(&asked);
    (user_label && echo && text.lines().nth(1).is_some()).then_some(first)
}

/// Whether `line` is a Markdown heading (`## Working`).
fn is_heading(line: &str) -> bool {
    let hashes = line.len() - line.trim_start_matches('#').len();
    (1..=6).contains(&hashes) && line[hashes..].starts_with(' ')
}

/// Whether the words after a label spell it out (`AI: artificial
/// intelligence`, `GPT: Generative Pre-trained Transformer`): a
/// definition, not a speaker.
fn expands(label: &str, after: &str) -> bool {
    let initials: String = after
        .split(|c: char| c.is_whitespace() || c == '-')
        .filter(|w| !w.is_empty())
        .take(label.len())
        .filter_map(|w| w.chars().next())
        .flat_map(char::to_lowercase)
        .collect();
    label.len() >= 2 && initials == label
}

/// Whether `line` opens with a label of a role label's shape: one word of
/// letters (any script) and a colon, after optional heading or emphasis
/// markers (`Bot:`, `ML:`, `**Kunde:**`, `### Input:`, `ユーザー：`).
fn opens_with_label(line: &str) -> bool {
    let body = line.trim_start_matches(['#', ' ', '\t', '*', '_']);
    let word_end = body
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(body.len());
    (1..=30).contains(&body[..word_end].chars().count())
        && body[word_end..].starts_with([':', '：'])
}

/// A serialised empty value that opens the reply, by [`empty_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EmptyValue<'a> {
    /// The value, one of [`EMPTY_VALUES`].
    value: &'static str,
    /// The value with the word it is glued to (`nullThe`, `undefinedフランス`);
    /// `None` when a space or a line break follows the value.
    glued: Option<&'a str>,
    /// `false` when the value is glued to a Han character or a letter of a
    /// script written without spaces (Thai, Lao, Khmer, Myanmar), where a
    /// sentence about the value reads the same (`None是`, `NULL値`).
    sure: bool,
}

/// What a letter glued to a value shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Glue {
    /// The answer's first word: a leaked value.
    Word,
    /// A word or a particle: no telling.
    Unsure,
    /// Grammar of the sentence about the value, or no word: no leak.
    No,
}

/// `undefinedThe`, `nullBonjour`, `None\nThe`, `undefinedフランス`: a
/// serialised empty value ([`EMPTY_VALUES`]) that opens the reply, by the
/// rule in the module's doc:
/// - glued to the answer's first word: a capitalised word, or a letter of
///   a script without case that opens a word: katakana, Hangul other than
///   a particle or the copula ([`KOREAN_PARTICLES`]), a letter of a script
///   that separates words by spaces (Arabic, Devanagari, ...); after a
///   bracketed value, any letter or digit of a cased script. Hiragana and a
///   Korean particle are the grammar of a sentence about the value
///   (`Noneを返します`, `None을 반환합니다`); Han and the scripts written
///   without spaces are unsure;
/// - alone on its first line, then a sentence (`None\nThe capital…`);
/// - followed by a space and a capitalised word opening a sentence, for a
///   value that is no English word (all but `None`: `None I know of` is an
///   English sentence). A space and a letter of a script without case is a
///   sentence about the value (`None 是…`).
///
/// `Nonetheless`, `nullable`, `None of them`, `NaN stands` and `NULLIF` are
/// none: the next letter is lowercase or all capitals.
fn empty_value(text: &str) -> Option<EmptyValue<'_>> {
    let value = EMPTY_VALUES
        .iter()
        .copied()
        .find(|v| text.starts_with(*v))?;
    let rest = &text[value.len()..];
    let next = rest.chars().next()?;
    if !next.is_whitespace() {
        let glue = glue(rest, value.starts_with(['[', '(', '<', '"']));
        if glue == Glue::No {
            return None;
        }
        let caseless = is_caseless_letter(next);
        let len = rest
            .find(|c: char| {
                if caseless {
                    !is_caseless_letter(c) || is_hiragana(c)
                } else {
                    !c.is_alphanumeric()
                }
            })
            .unwrap_or(rest.len());
        return Some(EmptyValue {
            value,
            glued: Some(&text[..value.len() + len]),
            sure: glue == Glue::Word,
        });
    }
    let after = rest.trim_start();
    let sentence = after.split_whitespace().nth(1).is_some() || !after.is_ascii();
    let own_line = rest
        .trim_start_matches([' ', '\t'])
        .starts_with(['\n', '\r']);
    // A value alone on its first line is as often the answer itself
    // (`NULL` for an aggregate over no rows, then why): never taken for a
    // leak.
    let leaked = !own_line
        && value != "None"
        && after.starts_with(char::is_uppercase)
        && starts_word(after)
        && opens_sentence(after);
    (leaked && sentence).then_some(EmptyValue {
        value,
        glued: None,
        sure: true,
    })
}

/// Words a name builds on a value (`NoneType`, `NullPointerException`,
/// `NaNSafety`): glued to one, the value starts a name.
const NAME_PARTS: &[&str] = &[
    "type",
    "types",
    "error",
    "exception",
    "pointer",
    "object",
    "value",
    "values",
    "safety",
    "able",
    "handler",
    "ref",
    "reference",
    "set",
    "list",
    "class",
    "check",
    "string",
    "like",
    "such",
    "coalescing",
    "boxing",
    "guard",
];

/// `Photosynthesis is…` glued to a value (`undefinedPhotosynthesis`): a
/// capitalised English word of four letters or more, with no capital
/// after its first, that no name builds on a value ([`NAME_PARTS`]),
/// then the word's end: a value before a sentence.
fn glued_english_word(rest: &str) -> bool {
    let end = rest
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(rest.len());
    let word = &rest[..end];
    let lower = word.to_lowercase();
    word.chars().count() >= 4
        && word.chars().skip(1).all(|c| c.is_lowercase())
        && !NAME_PARTS.contains(&lower.as_str())
        && super::detect::is_english_word(&lower)
        && rest[end..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_')
}

/// What the text glued to a value (`rest`) shows, by the rule of
/// [`empty_value`].
fn glue(rest: &str, bracketed: bool) -> Glue {
    let Some(first) = rest.chars().next() else {
        return Glue::No;
    };
    if is_hiragana(first) {
        return Glue::No;
    }
    if is_hangul(first) {
        let particle = KOREAN_PARTICLES.iter().any(|p| rest.starts_with(p));
        return if particle { Glue::No } else { Glue::Word };
    }
    if is_han(first) || is_unspaced_script(first) {
        return Glue::Unsure;
    }
    if is_caseless_letter(first) {
        return Glue::Word; // katakana, Arabic, Devanagari, ...
    }
    let word = if bracketed {
        first.is_alphanumeric()
    } else {
        // `undefinedThe`, `nullBonjour`, `nullПривет` are a value and a
        // sentence; `NoneType`, `NullPointerException`, `NoneSuch` are
        // names: glued to a Latin capital, the word must be one that opens
        // sentences, or the glue must change script.
        first.is_uppercase()
            && starts_word(rest)
            && (!is_latin(first) || opens_sentence(rest) || glued_english_word(rest))
    };
    if word {
        Glue::Word
    } else {
        Glue::No
    }
}

/// A letter of a script without case (`フ`, `ع`, `한`).
fn is_caseless_letter(c: char) -> bool {
    c.is_alphabetic() && !c.is_uppercase() && !c.is_lowercase()
}

/// Hiragana, in which Japanese writes particles, the copula and endings.
fn is_hiragana(c: char) -> bool {
    ('\u{3041}'..='\u{309F}').contains(&c)
}

/// A Hangul syllable or jamo.
fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF)
}

/// A Han ideograph (Chinese, Japanese kanji).
fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

/// A letter of a script written without spaces between words: Thai, Lao,
/// Myanmar, Khmer.
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32, 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF)
}

/// Whether `text` opens with a word of the answer: a capital then a
/// lowercase letter or the word's end (`The`, `I`), or a letter of a
/// script without case (`フ`, `ع`).
fn starts_word(text: &str) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let caseless = first.is_alphabetic() && !first.is_uppercase() && !first.is_lowercase();
    let titled = first.is_uppercase() && chars.next().is_none_or(|c| !c.is_uppercase());
    caseless || titled
}

/// Words that open a reply's first sentence in the seventeen languages'
/// Latin scripts: articles, pronouns, greetings, yes and no. A value glued
/// to one of them is a value before a sentence; glued to any other
/// capitalised word it is a name (`NoneType`).
const SENTENCE_OPENERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "it", "its", "i", "you", "your", "we",
    "my", "he", "she", "they", "there", "here", "yes", "no", "sure", "hello", "hi", "thanks", "of",
    "in", "on", "to", "for", "if", "when", "what", "le", "la", "les", "un", "une", "je", "il",
    "elle", "oui", "non", "bonjour", "voici", "der", "die", "das", "ein", "eine", "ich", "es",
    "sie", "wir", "ja", "nein", "hallo", "el", "los", "las", "una", "uno", "yo", "sí", "si",
    "hola", "lo", "gli", "io", "ciao", "o", "os", "as", "um", "uma", "eu", "sim", "não", "olá",
    "de", "het", "een", "dit", "dat", "hoi", "ten", "ta", "to", "tak", "nie", "cześć", "bu",
    "evet", "hayır", "merhaba", "bir", "ini", "itu", "saya", "ya", "tidak", "halo", "đây", "tôi",
    "có", "không", "xin",
];

/// Whether `text` opens with a word of [`SENTENCE_OPENERS`] (any case),
/// followed by a space, punctuation or the end.
fn opens_sentence(text: &str) -> bool {
    let end = text
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(text.len());
    let word = text[..end].to_lowercase();
    SENTENCE_OPENERS.contains(&word.as_str())
}

/// Whether `text` holds `word` as a whole word (case-insensitively): no
/// Latin letter, digit or `_` touches it, so a particle of a script without
/// case may (`Noneは`).
fn mentions_word(text: &str, word: &str) -> bool {
    let text = text.to_lowercase();
    let word = word.to_lowercase();
    let joins = |c: char| c == '_' || c.is_ascii_digit() || is_latin(c);
    text.match_indices(&word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(joins) && !after.is_some_and(joins)
    })
}

/// Whether the last user message holds `word` as a whole word, any case.
fn user_wrote_any_case(request: &cb_wire::openai::ChatRequest, word: &str) -> bool {
    mentions_word(&prompt::last_user(request), word)
}

/// Whether any user message of the conversation holds `word` as a whole
/// word, any case (a topic named in an earlier turn is still the topic).
fn user_ever_wrote(request: &cb_wire::openai::ChatRequest, word: &str) -> bool {
    prompt::user_texts(request)
        .iter()
        .any(|t| mentions_word(t, word))
}

/// `▁The▁capital`, `ĠThe Ġcapital`: a tokenizer's space marker glued to
/// the first word. `▁` is never text; `Ġ` and `Ċ` are Maltese letters
/// too, so they count only before a capitalised ASCII word (`ĠThe`; a
/// Maltese word goes on in lowercase: `Ġenerali`).
fn space_marker(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let marker = chars.next().filter(|c| SPACE_MARKERS.contains(c))?;
    let rest = chars.as_str();
    let word = rest.chars().next()?;
    let leaked = if marker == '\u{2581}' {
        word.is_alphanumeric()
    } else {
        word.is_ascii_uppercase() && starts_word(rest)
    };
    leaked.then_some(marker)
}

/// ```` ```json ```` then prose and no closing fence: a code fence the
/// template opened and never closed. A closed fence is a real code block;
/// code after an open fence is a cut code block (`truncated` judges the
/// cut). The opening fence as written.
fn leftover_fence(text: &str) -> Option<&str> {
    if !text.starts_with("```") && !text.starts_with("~~~") {
        return None;
    }
    let (fence, rest) = text.split_once('\n')?;
    let info = fence[3..].trim();
    if info.contains(char::is_whitespace) || info.contains(['`', '~']) {
        return None; // ```json The… on one line, or an inline span
    }
    let closed = rest.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("```") || l.starts_with("~~~")
    });
    let line = rest.lines().map(str::trim).find(|l| !l.is_empty())?;
    (!closed && is_prose_line(line)).then_some(fence)
}

/// A line of prose, not code: it opens with a capital or a letter of a
/// script without case, holds no code punctuation, has at least three
/// words (or eight letters of a script written without spaces) and ends
/// a sentence somewhere.
fn is_prose_line(line: &str) -> bool {
    let opens = line
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() && !c.is_lowercase());
    let code = line.contains([
        '{', '}', '(', ')', ';', '=', '<', '>', '[', ']', '`', '$', '\\',
    ]);
    let words = line.split_whitespace().count() >= 3
        || line
            .chars()
            .filter(|c| c.is_alphabetic() && !c.is_ascii())
            .count()
            >= 8;
    let sentence = line.contains(['.', '!', '?', '。', '！', '？', '।']);
    opens && !code && words && sentence
}

/// A letter of a right-to-left script (Hebrew, Arabic, Syriac, Thaana,
/// N'Ko and their presentation forms).
fn has_rtl_letter(text: &str) -> bool {
    text.chars().any(|c| {
        c.is_alphabetic() && matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFC)
    })
}

/// A bidirectional mark or control: LRM, RLM, ALM, embeddings, overrides
/// and isolates. Fine before right-to-left text, junk before other text.
fn is_bidi_mark(c: char) -> bool {
    matches!(c as u32, 0x200E | 0x200F | 0x061C | 0x202A..=0x202E | 0x2066..=0x2069)
}

/// The first word, when it opens with a mis-decoded UTF-8 lead byte and
/// holds mojibake while the rest of the reply holds none (a garbled prefix;
/// a reply garbled throughout is the `language` contract's).
fn mojibake_prefix(text: &str) -> Option<&str> {
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let opens = word
        .chars()
        .next()
        .is_some_and(super::mojibake::is_lead_reading);
    let clean_rest = rest.chars().any(char::is_alphabetic) && super::mojibake::find(rest).is_none();
    (opens && clean_rest && super::mojibake::find(word).is_some()).then_some(word)
}

/// The text inside the Markdown that opens `text`: after a heading's `#`s
/// and up to three emphasis markers (`**.Your**` gives `.Your**`); `None`
/// when nothing opens it.
fn markdown_inner(text: &str) -> Option<&str> {
    let hashes = text.len() - text.trim_start_matches('#').len();
    let after_heading = if (1..=6).contains(&hashes) && text[hashes..].starts_with([' ', '\t']) {
        text[hashes..].trim_start_matches([' ', '\t'])
    } else {
        text
    };
    let markers = after_heading.len() - after_heading.trim_start_matches(['*', '_']).len();
    let inner = &after_heading[markers.min(3)..];
    (inner.len() < text.len()).then_some(inner)
}

/// Junk right inside the Markdown that opens the reply (`inner`, after
/// the markers): stray punctuation, a template token, a suffix fragment
/// spaced or glued. `None` when there is none, so the usual checks run.
fn junk_in_markdown(
    input: &ContractInput<'_>,
    inner: &str,
    continuation: Continuation,
) -> Option<Outcome> {
    let first = inner.chars().next()?;
    if STRAY.contains(&first) {
        let out = punctuation(inner, first, continuation);
        return (out != Outcome::Pass).then_some(out);
    }
    let token = TEMPLATE_TOKENS
        .iter()
        .copied()
        .find(|t| inner.starts_with(*t))
        .or_else(|| generic_special_token(inner));
    if let Some(token) = token.filter(|t| !prompt::user_mentions(input.request, t)) {
        return Some(Outcome::fail(format!(
            "the reply's opening Markdown starts with the template token {token}"
        )));
    }
    let word = inner
        .split(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_end_matches(|c: char| !c.is_alphanumeric());
    let fragment = SUFFIX_FRAGMENTS.contains(&word) || glued_fragment(word).is_some();
    (fragment && continuation != Continuation::Asked).then(|| {
        Outcome::fail(format!(
            "the reply's opening Markdown starts with the word fragment {word:?}"
        ))
    })
}

/// `ingYour`, `'sThe`, `tionあなた`: a suffix fragment glued to a
/// capitalised word or to a word in a script without Latin letters.
fn glued_fragment(word: &str) -> Option<&'static str> {
    let fragment = SUFFIX_FRAGMENTS
        .iter()
        .copied()
        .filter(|f| word.starts_with(*f))
        .max_by_key(|f| f.len())?;
    let remainder = &word[fragment.len()..];
    let next = remainder.chars().next()?;
    // `ingThe`, `tionÉ`, `'sC'est`; not an acronym (`lyNASA`).
    let acronym = remainder.chars().filter(|c| c.is_uppercase()).count() > 1;
    let capitalised = next.is_uppercase() && !acronym;
    let foreign = next.is_alphabetic() && !next.is_ascii() && !is_latin(next);
    (capitalised || foreign).then_some(fragment)
}

/// A letter of the Latin script (ASCII or Latin-1/Extended).
fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
        || ('\u{00C0}'..='\u{024F}').contains(&c)
        || ('\u{1E00}'..='\u{1EFF}').contains(&c)
}

/// A `<|...|>` or `<｜...｜>` token not in the list.
fn generic_special_token(text: &str) -> Option<&str> {
    for (open, close) in [("<|", "|>"), ("<｜", "｜>")] {
        if let Some(rest) = text.strip_prefix(open) {
            let end = rest.find(close)?;
            if end <= 40 && !rest[..end].contains(char::is_whitespace) {
                return Some(&text[..open.len() + end + close.len()]);
            }
        }
    }
    None
}

/// `*args`, `*p`: an operator on an identifier the user wrote (or asked
/// about `*` itself, as a word of its message) or the reply shows again; `*/5 * * * *` (cron), `*.txt` (a glob): no emphasis.
fn star_operator(request: &cb_wire::openai::ChatRequest, text: &str) -> bool {
    let ident: String = text[1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let operator = !ident.is_empty()
        && ident.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && (user_ever_wrote(request, &ident)
            || prompt::user_texts(request)
                .iter()
                .any(|t| t.split_whitespace().any(|w| w == "*"))
            || text[1..].contains(&format!("*{ident}")));
    operator || text[1..].starts_with(['/', '.'])
}

fn asterisk(text: &str) -> Outcome {
    let paragraph = text.split("\n\n").next().unwrap_or(text);
    let after = &paragraph[1..];
    if after.starts_with([' ', '\t']) || text.starts_with("***") || text.starts_with("* ") {
        return Outcome::Pass; // bullet or horizontal rule
    }
    let (marker, body) = match after.strip_prefix('*') {
        Some(body) => ("**", body),
        None => ("*", after),
    };
    if body.starts_with(char::is_whitespace) {
        return Outcome::Pass;
    }
    let closed = body.match_indices(marker).any(|(i, _)| {
        body[..i]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
    });
    if closed {
        Outcome::Pass
    } else {
        Outcome::fail(format!(
            "the reply starts with {marker} that is never closed, which breaks Markdown emphasis"
        ))
    }
}

fn punctuation(text: &str, first: char, continuation: Continuation) -> Outcome {
    if continuation == Continuation::Asked {
        return Outcome::Pass;
    }
    if text.starts_with("..") {
        return Outcome::undetermined("the reply starts with an ellipsis");
    }
    if first == '.' && text[1..].starts_with(|c: char| c.is_alphanumeric()) {
        match shapes::dot_start(&text[1..]) {
            DotStart::Name => return Outcome::Pass, // .NET, .env, .gitignore
            DotStart::Unsure if continuation != Continuation::Asked => {
                return Outcome::undetermined(
                    "the reply starts with a dot before a lowercase English word: a dotfile's name or a stray dot",
                );
            }
            _ => {}
        }
    }
    if continuation == Continuation::Possible {
        return Outcome::undetermined(format!(
            "the reply starts with {first:?}, and the user's message ends mid-sentence"
        ));
    }
    Outcome::fail(format!("the reply starts with a stray {first:?}"))
}

fn fragment(input: &ContractInput<'_>, text: &str, continuation: Continuation) -> Outcome {
    let request = input.request;
    let word: &str = text
        .split(|c: char| c.is_whitespace())
        .next()
        .unwrap_or("")
        .trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    if let Some(fragment) = glued_fragment(word) {
        // A suffix the user asked about, written glued to the words of a
        // script without spaces (`ing形は…` after "what does ing mean?"),
        // is the topic.
        let asked = user_ever_wrote(request, fragment);
        if continuation != Continuation::Asked && !asked {
            return Outcome::fail(format!(
                "the reply starts with the word fragment {fragment:?} glued to {:?}",
                &word[fragment.len()..]
            ));
        }
    }
    if text.starts_with('\'') {
        // 's, 're, n't: contraction fragments; 'quoted' words are fine.
        let lower = word.to_lowercase();
        let next = text[word.len()..].split_whitespace().next().unwrap_or("");
        let dutch = lower == "'s" && is_dutch_genitive(next);
        if !SUFFIX_FRAGMENTS.contains(&lower.as_str()) || dutch {
            return Outcome::Pass;
        }
        if continuation == Continuation::Asked {
            return Outcome::Pass;
        }
        return Outcome::fail(format!("the reply starts with the word fragment {word:?}"));
    }
    let raw = text.split_whitespace().next().unwrap_or("");
    // A whole empty-value literal (`undefined`, `nil`) is no clipped word:
    // the rules of `empty_value` have judged it already.
    if EMPTY_VALUES.contains(&word) {
        return Outcome::Pass;
    }
    if continuation == Continuation::Asked
        || prompt::user_wrote_word(request, word)
        || looks_like_identifier(word)
        || shapes::is_call(raw)
        || shapes::names_a_subject(text)
        || is_name_particle(word, text)
        || glued_to_particle(word)
        || shown_as_code(word, text)
        || shapes::opens_with_command(text)
    {
        return Outcome::Pass;
    }
    if continuation == Continuation::Possible {
        return Outcome::undetermined(format!(
            "the reply starts with the lowercase word {word:?}, and the user's message ends mid-sentence"
        ));
    }
    if SUFFIX_FRAGMENTS.contains(&word) {
        return Outcome::fail(format!("the reply starts with the word fragment {word:?}"));
    }
    if prompt::asks_for_format(request) {
        return Outcome::Pass;
    }
    let last = prompt::last_user(request);
    let user_lowercase =
        last.chars().any(char::is_lowercase) && !last.chars().any(char::is_uppercase);
    let capitalised_later = !user_lowercase
        && segments(text).iter().skip(1).any(|s| {
            s.chars()
                .find(|c| c.is_alphabetic())
                .is_some_and(char::is_uppercase)
        });
    if capitalised_later {
        Outcome::fail(format!(
            "the reply starts with the lowercase fragment {word:?} although its other sentences start with a capital"
        ))
    } else {
        Outcome::undetermined(format!(
            "the reply starts with the lowercase word {word:?}, and nothing shows that the reply or the user writes with capitals"
        ))
    }
}

/// `'s ochtends`, `'s avonds`: the Dutch genitive article before a word
/// that ends in `s` and is no English word (`'s always` and `'s Squats`
/// are a clipped `it's` and a broken start).
fn is_dutch_genitive(next: &str) -> bool {
    let next = next
        .trim_end_matches(|c: char| !c.is_alphabetic())
        .to_lowercase();
    next.len() > 2 && next.ends_with('s') && !crate::detect::is_english_word(&next)
}

/// `nil입니다`, `nullを`: an ASCII term glued to a particle or the copula of
/// a script without case (hiragana, or one of [`KOREAN_PARTICLES`]), the
/// subject of a Japanese or Korean sentence, not a clipped word.
fn glued_to_particle(word: &str) -> bool {
    let term = word
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(word.len());
    let rest = &word[term..];
    term > 0 && rest.starts_with(is_caseless_letter) && glue(rest, false) == Glue::No
}

/// The particles of European surnames, written lowercase before the name.
const NAME_PARTICLES: &[&str] = &[
    "van", "von", "de", "da", "di", "du", "del", "della", "der", "den", "ter", "ten", "le", "la",
    "dos", "das", "zu",
];

/// `van Gogh`, `de Gaulle`, `von Trier`, `da Vinci`: a surname's particle
/// right before a capitalised word.
fn is_name_particle(word: &str, text: &str) -> bool {
    let mut words = text.split_whitespace();
    words.next() == Some(word)
        && NAME_PARTICLES.contains(&word)
        && words
            .next()
            .is_some_and(|next| next.starts_with(char::is_uppercase))
}

/// `npm install left-pad` over a code block that runs it: a command the
/// reply also shows as code (inline or fenced), where it opens the code.
fn shown_as_code(word: &str, text: &str) -> bool {
    let opens = |code: &str| code.split_whitespace().next() == Some(word);
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence && opens(line) {
            return true;
        }
        if !in_fence && line.split('`').skip(1).step_by(2).any(opens) {
            return true;
        }
    }
    false
}

/// `iPhone`, `eBay`, `x86`, `node_modules`, `user@example.com`: a word with
/// an inner capital, a digit or code punctuation is a name or an identifier.
fn looks_like_identifier(word: &str) -> bool {
    word.chars().skip(1).any(char::is_uppercase)
        || word.chars().any(|c| {
            c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | '@' | '(' | '=' | '<' | '-' | ':')
        })
}

#[cfg(test)]
mod tests;
