//! A simulated judge: an OpenAI-compatible `POST /v1/chat/completions`
//! server that reads the case out of the judge prompt and answers by a small
//! rule set, or misbehaves on purpose. Tests and `judge calibrate --judge sim`
//! use it, so the judge path runs end to end with no network and no key.
//!
//! The `Sensible` rule set, applied to the answer sentence by sentence:
//! 1. A *mention* is the expected value or an accepted variant appearing as
//!    whole words (case-insensitive, punctuation and a possessive 's ignored).
//! 2. A mention is *denied* when a negation word (not, no, never, isn't, ...)
//!    precedes it in its clause (clauses end at , ; : — and "but").
//! 3. A mention is *doubted* when its sentence holds a hedge word (maybe,
//!    perhaps, possibly, might, guess, or), ends with "?", or says it does
//!    not know (not sure, don't recall, don't remember, can't remember, no
//!    idea, not certain).
//! 4. Preserved when there is at least one mention and none is denied or
//!    doubted; lost otherwise. Mild hedges ("I think", "if I remember
//!    right") are not doubt.
//!
//! The reply is the JSON verdict, plain, in a ```json fence, or inside a
//! sentence of prose (chosen from the answer's bytes), to exercise the parser.

use super::parse::JudgeReply;
use super::prompt::{JudgeCase, CASE_PREAMBLE};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use cb_wire::openai::{completion_body, error_body, ChatRequest, Usage};
use cb_wire::server::{serve, ServerHandle};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How the simulated judge behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Reads the case and decides by the documented rule set.
    Sensible,
    /// Answers 200 with a completion whose text is not a JSON verdict.
    Garbage,
    /// Answers 500 with an OpenAI-style error body.
    Error500,
    /// Never answers; holds the connection until the client gives up.
    Hang,
}

#[derive(Clone)]
struct SimState {
    behaviour: Behaviour,
    requests: Arc<AtomicU64>,
}

/// The simulated judge's router.
pub fn router(behaviour: Behaviour) -> Router {
    router_counting(behaviour, Arc::new(AtomicU64::new(0)))
}

/// The simulated judge's router, counting every request it receives in
/// `requests`.
pub fn router_counting(behaviour: Behaviour, requests: Arc<AtomicU64>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(handle))
        .with_state(SimState {
            behaviour,
            requests,
        })
}

/// A running simulated judge.
#[derive(Debug)]
pub struct SimJudge {
    /// The server; dropping it stops the judge.
    pub handle: ServerHandle,
    requests: Arc<AtomicU64>,
}

impl SimJudge {
    /// Base URL to pass as the judge endpoint.
    pub fn url(&self) -> String {
        self.handle.url()
    }

    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// Serves a simulated judge on 127.0.0.1 at a free port.
///
/// # Errors
/// When no local port can be bound.
pub async fn start(behaviour: Behaviour) -> std::io::Result<SimJudge> {
    let requests = Arc::new(AtomicU64::new(0));
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let handle = serve(addr, router_counting(behaviour, requests.clone())).await?;
    Ok(SimJudge { handle, requests })
}

async fn handle(State(state): State<SimState>, Json(request): Json<ChatRequest>) -> Response {
    state.requests.fetch_add(1, Ordering::Relaxed);
    let model = request.model.clone();
    let reply = |text: &str| {
        Json(completion_body(
            "sim-judge",
            &model,
            0,
            text,
            "stop",
            Usage::new(100, 20),
        ))
        .into_response()
    };
    match state.behaviour {
        Behaviour::Hang => {
            std::future::pending::<()>().await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Behaviour::Error500 => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(error_body("simulated judge failure", "server_error", None)),
        )
            .into_response(),
        Behaviour::Garbage => reply("Hmm, hard to say. The user probably remembered, I guess."),
        Behaviour::Sensible => {
            let case = request
                .messages
                .iter()
                .rev()
                .find(|m| m.role == "user")
                .and_then(|m| {
                    let text = m.text();
                    serde_json::from_str::<JudgeCase>(text.strip_prefix(CASE_PREAMBLE)?).ok()
                });
            let Some(case) = case else {
                return (
                    StatusCode::BAD_REQUEST,
                    Json(error_body(
                        "no judge case found in the last user message",
                        "invalid_request_error",
                        None,
                    )),
                )
                    .into_response();
            };
            let verdict = sensible_verdict(&case);
            let json =
                serde_json::json!({"preserved": verdict.preserved, "reason": verdict.reason})
                    .to_string();
            let text = match case.answer.bytes().map(u64::from).sum::<u64>() % 3 {
                0 => json,
                1 => format!("```json\n{json}\n```"),
                _ => format!("Here is my assessment: {json} Let me know if you need more."),
            };
            reply(&text)
        }
    }
}

const NEGATIONS: &[&str] = &[
    "not", "no", "never", "nor", "neither", "isn't", "wasn't", "aren't", "weren't", "don't",
    "doesn't", "didn't", "can't", "cannot", "won't", "wouldn't", "isnt", "wasnt", "dont",
];
const HEDGES: &[&str] = &["maybe", "perhaps", "possibly", "might", "guess", "or"];
const UNKNOWING: &[&[&str]] = &[
    &["not", "sure"],
    &["not", "certain"],
    &["don't", "recall"],
    &["do", "not", "recall"],
    &["don't", "remember"],
    &["do", "not", "remember"],
    &["can't", "remember"],
    &["cannot", "remember"],
    &["can't", "recall"],
    &["no", "idea"],
    &["unsure"],
];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Break,
}

/// Sentences of `text`, each as tokens plus whether it ended with "?".
fn sentences(text: &str) -> Vec<(Vec<Tok>, bool)> {
    let norm: String = text
        .chars()
        .map(|c| if c == '\u{2019}' { '\'' } else { c })
        .flat_map(char::to_lowercase)
        .collect();
    let chars: Vec<char> = norm.chars().collect();
    let mut out = Vec::new();
    let mut toks = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, toks: &mut Vec<Tok>| {
        if !word.is_empty() {
            let mut w = std::mem::take(word);
            if let Some(stem) = w.strip_suffix("'s") {
                w = stem.to_string();
            }
            toks.push(if w == "but" { Tok::Break } else { Tok::Word(w) });
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        if c.is_alphanumeric() || (c == '\'' && alnum(prev) && alnum(next)) {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut toks);
        let ends = next.is_none_or(char::is_whitespace);
        match c {
            '?' | '!' | '\n' => out.push((std::mem::take(&mut toks), c == '?')),
            '.' if ends => out.push((std::mem::take(&mut toks), false)),
            ',' | ';' | ':' | '\u{2014}' | '\u{2013}' | '(' | ')' => toks.push(Tok::Break),
            _ => {}
        }
    }
    flush(&mut word, &mut toks);
    out.push((toks, false));
    out.retain(|(t, _)| t.iter().any(|t| matches!(t, Tok::Word(_))));
    out
}

pub(crate) fn words(text: &str) -> Vec<String> {
    sentences(text)
        .into_iter()
        .flat_map(|(t, _)| t)
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w),
            Tok::Break => None,
        })
        .collect()
}

fn contains_seq(hay: &[&str], needle: &[&str]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The `Sensible` behaviour's decision (the rule set in the module doc).
pub fn sensible_verdict(case: &JudgeCase) -> JudgeReply {
    let mut values: Vec<Vec<String>> = std::iter::once(&case.expected_value)
        .chain(&case.accepted_variants)
        .map(|v| words(v))
        .filter(|w| !w.is_empty())
        .collect();
    values.sort();
    values.dedup();
    let mut mentions = 0;
    for (toks, question) in sentences(&case.answer) {
        // Positions of words in `toks`, to match across breaks ("March 14, 2031").
        let word_pos: Vec<usize> = (0..toks.len())
            .filter(|&i| matches!(toks[i], Tok::Word(_)))
            .collect();
        let word_at = |i: usize| match &toks[i] {
            Tok::Word(w) => w.as_str(),
            Tok::Break => "",
        };
        let all: Vec<&str> = word_pos.iter().map(|&i| word_at(i)).collect();
        let doubt = question
            || UNKNOWING.iter().any(|p| contains_seq(&all, p))
            || all.iter().any(|w| HEDGES.contains(w));
        for value in &values {
            let needle: Vec<&str> = value.iter().map(String::as_str).collect();
            for start in 0..all.len() {
                if all.len() - start < needle.len()
                    || all[start..start + needle.len()] != needle[..]
                {
                    continue;
                }
                mentions += 1;
                let first = word_pos[start];
                let clause_start = (0..first)
                    .rev()
                    .find(|&i| toks[i] == Tok::Break)
                    .map_or(0, |i| i + 1);
                let before: Vec<&str> = (clause_start..first)
                    .filter(|&i| toks[i] != Tok::Break)
                    .map(word_at)
                    .collect();
                if before.iter().any(|w| NEGATIONS.contains(w)) {
                    return lost(&format!("the answer denies {}", case.expected_value));
                }
                if doubt {
                    return lost(&format!(
                        "the answer only guesses {}, with doubt",
                        case.expected_value
                    ));
                }
            }
        }
    }
    if mentions == 0 {
        lost(&format!(
            "the answer does not state {}",
            case.expected_value
        ))
    } else {
        JudgeReply {
            preserved: true,
            reason: format!("the answer states {}", case.expected_value),
        }
    }
}

fn lost(reason: &str) -> JudgeReply {
    JudgeReply {
        preserved: false,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(value: &str, variants: &[&str], answer: &str) -> JudgeCase {
        JudgeCase {
            subject: "x".into(),
            expected_value: value.into(),
            accepted_variants: variants.iter().map(|s| s.to_string()).collect(),
            question: "?".into(),
            answer: answer.into(),
        }
    }

    fn preserved(value: &str, variants: &[&str], answer: &str) -> bool {
        sensible_verdict(&case(value, variants, answer)).preserved
    }

    #[test]
    fn sensible_rules_positive() {
        assert!(preserved(
            "Oriane",
            &[],
            "Your sister? Oriane, if I remember right."
        ));
        assert!(preserved("Oriane", &[], "I think it's ORIANE."));
        assert!(preserved("Oriane", &[], "It's Oriane, not Maelis."));
        assert!(preserved("Teodor", &[], "Teodor's the name."));
        assert!(preserved(
            "2031-03-14",
            &["March 14, 2031"],
            "It's on March 14, 2031. Anything else?"
        ));
        assert!(preserved("48", &["forty-eight"], "Forty-eight steps."));
    }

    #[test]
    fn sensible_rules_negative() {
        assert!(!preserved("Oriane", &[], "I don't recall, maybe Oriane?"));
        assert!(!preserved("Oriane", &[], "It's not Oriane."));
        assert!(!preserved("Oriane", &[], "It's Maelis."));
        assert!(!preserved("Oriane", &[], "Oriane or Maelis, one of those."));
        assert!(!preserved(
            "Oriane",
            &[],
            "I'm not sure, but I think Oriane."
        ));
        assert!(!preserved("17", &[], "It was 2017."));
        assert!(!preserved(
            "oolong",
            &[],
            "I believe it was oolong, but I might be confusing it."
        ));
    }
}
