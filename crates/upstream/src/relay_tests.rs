//! Loopback tests of the live relay: a responder whose answer arrives over
//! time is relayed piece by piece (the first content reaches the client
//! long before the answer ends), a broken provider stream is a broken
//! stream to the client and a `provider_error` attempt, a slow first token
//! applies live, a text degradation keeps the buffered path, and a cut or
//! a stall counts relayed pieces as a whole answer's frames are counted.

use super::relay::{relay, LiveShape};
use super::responder::{Answer, Call, Ending, LiveAnswer, Piece, Responder};
use super::*;
use cb_base::record::{AttemptAction, AttemptRecord};
use cb_dataset::{Dataset, TurnKind};
use cb_faults::{End, ErrorKind, ErrorSpec, FaultProfile, Shape};
use cb_testkit::conversation as kit;
use cb_wire::openai::{ChatMessage, Usage};
use cb_wire::sse::{assemble, read_all};
use futures::future::BoxFuture;
use futures::StreamExt;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Gap between the fake provider's pieces.
const GAP: Duration = Duration::from_millis(150);

const MODEL: &str = "fake-provider-model";

/// A provider whose answer comes as `pieces`, each after its delay.
#[derive(Debug)]
struct Fake {
    pieces: Vec<(Duration, Result<Piece, ErrorSpec>)>,
    whole: AtomicU32,
    live: AtomicU32,
}

impl Fake {
    fn new(pieces: Vec<(Duration, Result<Piece, ErrorSpec>)>) -> Arc<Self> {
        Arc::new(Fake {
            pieces,
            whole: AtomicU32::new(0),
            live: AtomicU32::new(0),
        })
    }

    fn text(&self) -> String {
        self.pieces
            .iter()
            .filter_map(|(_, p)| match p {
                Ok(Piece::Text(t)) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl Responder for Fake {
    fn respond<'a>(&'a self, call: Call<'a>) -> BoxFuture<'a, Result<Answer, ErrorSpec>> {
        self.whole.fetch_add(1, Ordering::SeqCst);
        let text = self.text();
        Box::pin(async move {
            Ok(Answer {
                usage: Usage::new(call.input_tokens, 5),
                text,
                finish_reason: "stop".into(),
                ttft: Duration::ZERO,
                tokens_per_second: 0.0,
                model: Some(MODEL.into()),
            })
        })
    }

    fn respond_live<'a>(
        &'a self,
        _call: Call<'a>,
    ) -> Option<BoxFuture<'a, Result<LiveAnswer, ErrorSpec>>> {
        self.live.fetch_add(1, Ordering::SeqCst);
        let pieces = self.pieces.clone();
        Some(Box::pin(async move {
            Ok(LiveAnswer {
                model: MODEL.into(),
                pieces: futures::stream::iter(pieces)
                    .then(|(delay, piece)| async move {
                        // The fake provider's pace (paused clock: virtual gaps).
                        tokio::time::sleep(delay).await;
                        piece
                    })
                    .boxed(),
            })
        }))
    }
}

fn text(t: &str) -> Result<Piece, ErrorSpec> {
    Ok(Piece::Text(t.into()))
}

fn end() -> Result<Piece, ErrorSpec> {
    Ok(Piece::End(Ending {
        finish_reason: "stop".into(),
        usage: None,
    }))
}

/// A role chunk and the first words at once, then two pieces `GAP` apart.
fn slow_answer() -> Vec<(Duration, Result<Piece, ErrorSpec>)> {
    vec![
        (Duration::ZERO, text("")),
        (Duration::ZERO, text("Your sister ")),
        (GAP, text("is called ")),
        (GAP, text("Oriane.")),
        (Duration::ZERO, end()),
    ]
}

fn dataset() -> Dataset {
    let turn = |kind, user: &str| kit::turn(kind, user, Some("Noted."));
    Dataset {
        conversations: vec![kit::conversation(
            "c000",
            kit::sister("Oriane"),
            vec![
                turn(TurnKind::Anchor, "My sister's name is Oriane."),
                turn(TurnKind::Filler, "What is a good tea?"),
                turn(TurnKind::Probe, "What is my sister called?"),
            ],
        )],
    }
}

fn context(profile: &str, responder: Arc<Fake>) -> UpstreamContext {
    let profile = FaultProfile::parse(profile, "test.toml").unwrap();
    let d = dataset();
    let plan = FaultPlan::new(profile, 42, vec![3]);
    UpstreamContext::with_responder(plan, ConversationIndex::of_dataset(&d), responder, 1)
}

/// Chunks of a streamed answer to turn 1 at `system`'s primary, each with
/// when it arrived, and how the body ended (`Err` when it broke off).
async fn stream_turn_one(ctx: &UpstreamContext) -> (Vec<(Duration, String)>, Result<(), String>) {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let pair = start_pair("sut", any, any, ctx.clone()).await.unwrap();
    let body = json!({
        "model": "asked-model",
        "stream": true,
        "messages": [ChatMessage::new("user", "My sister's name is Oriane.")],
    });
    let sent = Instant::now();
    let mut resp = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", pair.primary.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut chunks = Vec::new();
    let ended = loop {
        match resp.chunk().await {
            Ok(Some(c)) => chunks.push((sent.elapsed(), String::from_utf8_lossy(&c).into_owned())),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.to_string()),
        }
    };
    (chunks, ended)
}

/// When the first chunk with content text arrived.
fn first_content(chunks: &[(Duration, String)]) -> Duration {
    chunks
        .iter()
        .find(|(_, c)| c.contains("\"content\":\"Your"))
        .map(|(at, _)| *at)
        .expect("a content chunk")
}

fn joined(chunks: &[(Duration, String)]) -> String {
    chunks.iter().map(|(_, c)| c.as_str()).collect()
}

/// Polls the log until the attempt is finished, for at most 5 s.
async fn finished_row(log: &AttemptLog) -> AttemptRecord {
    for _ in 0..500 {
        if let Some(r) = log.snapshot().into_iter().find(|r| r.duration_ms > 0.0) {
            return r;
        }
        // A poll of the log, bounded by the loop: the row decides, not the sleep.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no finished row in {:?}", log.snapshot());
}

#[tokio::test(start_paused = true)]
async fn a_live_answer_reaches_the_client_as_it_arrives() {
    let fake = Fake::new(slow_answer());
    let ctx = context("[modes.api_error]\n", Arc::clone(&fake));
    let (chunks, ended) = stream_turn_one(&ctx).await;
    ended.unwrap();
    let total = chunks.last().unwrap().0;
    let first = first_content(&chunks);
    assert!(total >= 2 * GAP, "the answer took {total:?}");
    assert!(first < total / 2, "first content at {first:?} of {total:?}");
    let raw = joined(&chunks);
    let assembled = assemble(&read_all(raw.as_bytes())).unwrap();
    assert_eq!(assembled.text, "Your sister is called Oriane.");
    assert_eq!(assembled.model.as_deref(), Some(MODEL));
    assert_eq!(assembled.finish_reason.as_deref(), Some("stop"));
    assert!(raw.trim_end().ends_with("data: [DONE]"));
    assert_eq!(fake.live.load(Ordering::SeqCst), 1);
    assert_eq!(fake.whole.load(Ordering::SeqCst), 0);
    let row = finished_row(&ctx.log).await;
    assert_eq!((row.action, row.status), (AttemptAction::Ok, Some(200)));
    assert_eq!(row.answer, "Your sister is called Oriane.");
    assert_eq!(row.answered_by, MODEL);
    assert!(
        row.duration_ms >= attempt::millis(2 * GAP) - 1.0,
        "{}",
        row.duration_ms
    );
}

#[tokio::test(start_paused = true)]
async fn a_broken_provider_stream_breaks_the_clients_and_is_a_provider_error() {
    let broke = ErrorSpec::new(
        502,
        ErrorKind::Server,
        "the provider at 127.0.0.1:9 broke its reply off",
    );
    let fake = Fake::new(vec![
        (Duration::ZERO, text("Your sister ")),
        (GAP, Err(broke)),
    ]);
    let ctx = context("[modes.api_error]\n", fake);
    let (chunks, ended) = stream_turn_one(&ctx).await;
    assert!(ended.is_err(), "the body broke off");
    let raw = joined(&chunks);
    assert!(raw.contains("Your sister "), "{raw}");
    assert!(
        !raw.contains("[DONE]") && !raw.contains("finish_reason\":\"stop"),
        "{raw}"
    );
    let row = finished_row(&ctx.log).await;
    assert_eq!(
        (row.action, row.status),
        (AttemptAction::ProviderError, Some(200))
    );
    assert!(
        row.provider_error.contains("broke its reply off"),
        "{}",
        row.provider_error
    );
    assert_eq!(row.answer, "Your sister ");
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_token_applies_live_and_a_text_degradation_waits_for_the_whole() {
    let slow = "[degrade]\nupstream = \"primary\"\nturns = \"all\"\n[degrade.slow_first_token]\nrate = 1.0\ndelay = \"400ms\"\n";
    let fake = Fake::new(slow_answer());
    let ctx = context(slow, Arc::clone(&fake));
    let (chunks, ended) = stream_turn_one(&ctx).await;
    ended.unwrap();
    let first = first_content(&chunks);
    assert!(
        first >= Duration::from_millis(400),
        "first content at {first:?}"
    );
    assert!(
        chunks[0].0 < Duration::from_millis(300),
        "the role chunk at once"
    );
    assert_eq!(fake.live.load(Ordering::SeqCst), 1);

    let refusal =
        "[degrade]\nupstream = \"primary\"\nturns = \"all\"\n[degrade.refusal]\nrate = 1.0\n";
    let fake = Fake::new(slow_answer());
    let ctx = context(refusal, Arc::clone(&fake));
    let (chunks, ended) = stream_turn_one(&ctx).await;
    ended.unwrap();
    assert_eq!(
        (
            fake.live.load(Ordering::SeqCst),
            fake.whole.load(Ordering::SeqCst)
        ),
        (0, 1)
    );
    let text = assemble(&read_all(joined(&chunks).as_bytes()))
        .unwrap()
        .text;
    assert_ne!(text, "Your sister is called Oriane.");
}

/// An attempt row for an in-process relay.
fn row() -> AttemptRecord {
    AttemptRecord {
        status: None,
        approx_tokens: 8,
        model: "asked".into(),
        stream: true,
        duration_ms: 0.0,
        ..cb_testkit::record::attempt(1, "sut", cb_faults::Role::Primary, "c000", 1, 0.0)
    }
}

/// The body of `slow_answer` relayed with `shape`, and its attempt row.
async fn relayed(shape: &Shape) -> (String, Result<(), String>, AttemptRecord) {
    let log = AttemptLog::new();
    let guard = attempt::AttemptGuard::new(log.clone(), row(), Instant::now());
    let envelope = cb_wire::openai::Envelope {
        id: "chatcmpl-1",
        model: MODEL,
        created: 0,
    };
    let framer = cb_dialect::frames::Framer::new(cb_dialect::Dialect::Openai, envelope, 8, false);
    let pieces = slow_answer()
        .into_iter()
        .map(|(_, p)| p)
        .collect::<Vec<_>>();
    let live = LiveAnswer {
        model: MODEL.into(),
        pieces: futures::stream::iter(pieces).boxed(),
    };
    let response = relay(framer, guard, LiveShape::of(shape, Duration::ZERO), live, 8);
    let mut body = response.into_body().into_data_stream();
    let mut raw = String::new();
    let ended = loop {
        match body.next().await {
            Some(Ok(bytes)) => raw.push_str(&String::from_utf8_lossy(&bytes)),
            Some(Err(e)) => break Err(e.to_string()),
            None => break Ok(()),
        }
    };
    drop(body);
    (raw, ended, log.snapshot().remove(0))
}

#[tokio::test(start_paused = true)]
async fn cuts_stalls_and_lost_ends_count_relayed_pieces() {
    let content = |raw: &str| raw.matches("\"content\":\"").count() - 1;
    let cut = Shape {
        end: End::CutAfter(1),
        ..Shape::default()
    };
    let (raw, ended, row) = relayed(&cut).await;
    assert!(ended.is_err(), "{raw}");
    assert_eq!(content(&raw), 1, "{raw}");
    assert!(!raw.contains("[DONE]"));
    assert_eq!(
        (row.answer.as_str(), row.status),
        ("Your sister ", Some(200))
    );

    let stall = Shape {
        end: End::StallAfter {
            tokens: 2,
            silent: Duration::from_millis(50),
        },
        ..Shape::default()
    };
    let (raw, ended, row) = relayed(&stall).await;
    assert!(ended.is_err(), "a stall ends aborted: {raw}");
    assert_eq!(content(&raw), 2, "{raw}");
    assert!(!raw.contains("[DONE]"));
    assert!(row.duration_ms >= 50.0);

    // Ended cleanly too early: no finish, no [DONE].
    let truncated = Shape {
        end: End::TruncatedAfter(2),
        ..Shape::default()
    };
    let (raw, ended, _) = relayed(&truncated).await;
    ended.unwrap();
    assert_eq!(content(&raw), 2, "{raw}");
    assert!(
        !raw.contains("[DONE]") && !raw.contains("finish_reason\":\""),
        "{raw}"
    );

    // An error event after the pieces, then a clean end.
    let error = Shape {
        end: End::ErrorAfter(2),
        ..Shape::default()
    };
    let (raw, ended, _) = relayed(&error).await;
    ended.unwrap();
    assert_eq!(content(&raw), 2, "{raw}");
    assert!(
        raw.contains("overloaded_error") && !raw.contains("[DONE]"),
        "{raw}"
    );

    // Stopped with `length`, the stream otherwise complete.
    let length = Shape {
        end: End::LengthAfter(2),
        ..Shape::default()
    };
    let (raw, ended, _) = relayed(&length).await;
    ended.unwrap();
    assert_eq!(content(&raw), 2, "{raw}");
    assert!(
        raw.contains("finish_reason\":\"length") && raw.contains("[DONE]"),
        "{raw}"
    );

    let no_done = Shape {
        end: End::NoDone,
        reasoning: true,
        malformed_after: Some(1),
        ..Shape::default()
    };
    let (raw, ended, row) = relayed(&no_done).await;
    ended.unwrap();
    assert!(!raw.contains("[DONE]") && raw.contains("finish_reason\":\"stop"));
    assert!(raw.contains("reasoning_content"));
    let malformed = raw
        .find(cb_wire::openai::frame::MALFORMED_EVENT)
        .expect("a malformed event");
    assert!(
        malformed > raw.find("Your sister").unwrap() && malformed < raw.find("is called").unwrap()
    );
    assert_eq!(row.answer, "Your sister is called Oriane.");
}
