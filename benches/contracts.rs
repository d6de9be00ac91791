//! `cargo bench --bench contracts`: what the answer contracts cost, in
//! microseconds per answer (p50 and p99), on three sets:
//! - the default dataset's answers (150 conversations, every turn answered
//!   by the simulated model as the `history` gateway would pass it on,
//!   each request with its whole history), checked twice: the first pass
//!   as a run's first system meets them, the second as every later system
//!   and run does (the detector's memo then holds their sentences);
//! - the answers of a generated 10,000-conversation dataset, checked once
//!   (the checks of `run --conversations 10000`, on one core);
//! - both parts of the labelled calibration set, every case once.
//!
//! It also audits the two English shortcuts (the decisive path and the
//! English-first path, see `crates/contracts/src/detect.rs`) against lingua
//! on the default dataset's answers and user messages, the large dataset's,
//! and the calibration set's: where each fires, and every disagreement. Timing comes from
//! `std::time::Instant` around each check only (building the requests is
//! not counted).

use continuity_bench::contracts::calibrate::{load_part, Part};
use continuity_bench::contracts::{audit_english_path, ContractInput, Contracts, Language};
use continuity_bench::dataset::generate::{generate, GenerateOptions};
use continuity_bench::dataset::{messages::client_messages, model, Conversation, Dataset};
use continuity_bench::driver::SYSTEM_PROMPT;
use continuity_bench::openai::ChatRequest;
use std::time::{Duration, Instant};

/// Conversations of the large dataset.
const LARGE: usize = 10_000;

/// Per-answer timings of one pass.
struct Pass {
    name: String,
    micros: Vec<f64>,
    total: Duration,
    /// Texts left to lingua by the end of the pass (on its detector).
    lingua: usize,
}

impl Pass {
    fn new(name: impl Into<String>) -> Self {
        Pass {
            name: name.into(),
            micros: Vec::new(),
            total: Duration::ZERO,
            lingua: 0,
        }
    }

    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        let took = start.elapsed();
        self.total += took;
        self.micros.push(took.as_secs_f64() * 1e6);
        out
    }

    /// Percentile `p` (0 to 1), linear between closest ranks (type 7).
    fn percentile(&self, p: f64) -> f64 {
        let mut v = self.micros.clone();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return f64::NAN;
        }
        let h = (v.len() - 1) as f64 * p;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        v[lo] + (h - lo as f64) * (v[hi] - v[lo])
    }

    fn row(&self) -> String {
        format!(
            "{:<44} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>9.2} {:>8}",
            self.name,
            self.micros.len(),
            self.percentile(0.5),
            self.percentile(0.99),
            self.micros.iter().sum::<f64>() / self.micros.len().max(1) as f64,
            self.total.as_secs_f64(),
            self.lingua
        )
    }
}

/// One answered turn: the request as sent and the simulated model's reply.
struct Answer {
    request: ChatRequest,
    reply: String,
}

/// Every turn of `conversation`, answered by the simulated model, with the
/// replies it gave before in the history (a gateway that forwards it).
fn answers(conversation: &Conversation) -> Vec<Answer> {
    let mut replies: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for index in 0..conversation.turns.len() {
        let messages = client_messages(conversation, SYSTEM_PROMPT, index, |k| {
            replies.get(k).map_or("", String::as_str)
        });
        let reply = model::reply(&messages);
        replies.push(reply.clone());
        out.push(Answer {
            request: ChatRequest {
                model: "bench".into(),
                messages,
                stream: false,
                stream_options: None,
                extra: serde_json::Map::new(),
            },
            reply,
        });
    }
    out
}

fn input<'a>(answer: &'a Answer, language: Option<Language>) -> ContractInput<'a> {
    ContractInput {
        request: &answer.request,
        expected_language: language,
        status: 200,
        stream: false,
        text: &answer.reply,
        finish_reason: Some("stop"),
        ttft: None,
        ttfb: None,
    }
}

/// The conversation's language, decided once, as `run` does.
fn language_of(contracts: &Contracts, conversation: &Conversation) -> Option<Language> {
    let users: Vec<&str> = conversation.turns.iter().map(|t| &*t.user).collect();
    contracts.conversation_language(&users)
}

/// Checks every answer of `dataset`, `passes` times, on one `contracts`.
fn check_dataset(name: &str, dataset: &Dataset, passes: usize) -> Vec<Pass> {
    let contracts = Contracts::default();
    let all: Vec<(Vec<Answer>, &Conversation)> = dataset
        .conversations
        .iter()
        .map(|c| (answers(c), c))
        .collect();
    (1..=passes)
        .map(|n| {
            let before = contracts.lingua_calls();
            let mut pass = Pass::new(format!("{name}, pass {n}"));
            for (answers, conversation) in &all {
                let language = pass.time(|| language_of(&contracts, conversation));
                // The language is decided once per conversation: its cost
                // is spread over the conversation's answers.
                let once = pass.micros.pop().unwrap_or(0.0) / answers.len().max(1) as f64;
                for answer in answers {
                    pass.time(|| contracts.check(&input(answer, language)));
                    if let Some(last) = pass.micros.last_mut() {
                        *last += once;
                    }
                }
            }
            pass.lingua = contracts.lingua_calls() - before;
            pass
        })
        .collect()
}

/// Checks every answer of a generated dataset of `n` conversations once,
/// building each conversation's requests just before checking them.
fn check_large(n: usize, texts: &mut Vec<String>) -> Pass {
    let dataset = generate(&GenerateOptions {
        seed: 42,
        conversations: n,
        min_turns: 7,
        max_turns: 11,
    });
    let contracts = Contracts::default();
    let mut pass = Pass::new(format!("generated {n} conversations, once"));
    for conversation in &dataset.conversations {
        let answers = answers(conversation);
        texts.extend(answers.iter().map(|a| a.reply.clone()));
        texts.extend(conversation.turns.iter().map(|t| t.user.to_string()));
        let language = pass.time(|| language_of(&contracts, conversation));
        let once = pass.micros.pop().unwrap_or(0.0) / answers.len().max(1) as f64;
        for answer in &answers {
            pass.time(|| contracts.check(&input(answer, language)));
            if let Some(last) = pass.micros.last_mut() {
                *last += once;
            }
        }
    }
    pass.lingua = contracts.lingua_calls();
    pass
}

fn check_calibration(part: Part) -> Pass {
    let (_, cases) = load_part(part, None).expect("the built-in calibration set loads");
    let contracts = Contracts::default();
    let mut pass = Pass::new(format!("calibration, {} part", part.name()));
    for case in &cases {
        let request = case.chat_request();
        pass.time(|| contracts.check(&case.input(&request)));
    }
    pass.lingua = contracts.lingua_calls();
    pass
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let default = Dataset::builtin_default();
    println!(
        "{:<44} {:>8} {:>10} {:>10} {:>10} {:>9} {:>8}",
        "set", "answers", "p50 µs", "p99 µs", "mean µs", "total s", "lingua"
    );
    for pass in check_dataset("default dataset's answers", &default, 2) {
        println!("{}", pass.row());
    }
    println!("{}", check_calibration(Part::Development).row());
    println!("{}", check_calibration(Part::HeldOut).row());
    let mut large_texts = Vec::new();
    println!("{}", check_large(LARGE, &mut large_texts).row());
    let mut texts: Vec<String> = Vec::new();
    for conversation in &default.conversations {
        for answer in answers(conversation) {
            texts.push(answer.reply);
        }
        let users: Vec<String> = conversation
            .turns
            .iter()
            .map(|t| t.user.to_string())
            .collect();
        texts.push(users.join(" "));
        texts.extend(users);
    }
    let mut calibration: Vec<String> = Vec::new();
    for part in [Part::Development, Part::HeldOut] {
        let (_, cases) = load_part(part, None).expect("the built-in calibration set loads");
        for case in &cases {
            calibration.push(case.reply.text.clone());
            let users: Vec<String> = case
                .chat_request()
                .messages
                .iter()
                .map(|m| m.text_cow().into_owned())
                .collect();
            calibration.push(users.join(" "));
            calibration.extend(users);
        }
    }
    println!();
    for (name, texts) in [
        ("the default dataset's answers and user messages", texts),
        (
            "the 10,000 generated conversations' answers and user messages",
            large_texts,
        ),
        ("the calibration set's replies and messages", calibration),
    ] {
        let audit = audit_english_path(&texts);
        for (path, a) in [
            ("decisive English path", &audit.decisive),
            ("English-first path", &audit.english_first),
        ] {
            println!(
                "{path} on {name}: decided {} of {} Latin-script sentences, lingua unsure on {}, disagreed on {}",
                a.fired,
                a.pieces,
                a.unsure.len(),
                a.disagreements.len()
            );
            for d in a.disagreements.iter().take(10) {
                println!("  disagreed: {d}");
            }
            let mut unsure = a.unsure.clone();
            unsure.sort();
            unsure.dedup();
            for d in unsure.iter().take(10) {
                println!("  unsure: {d}");
            }
        }
    }
}
