//! End-to-end tests of the judge against the simulated endpoint (no
//! network), and of the calibration on the committed set. Until the real
//! fast path lands, a conservative test-only stand-in plays its part.

use super::calibrate::{calibrate, load_cases, CalibrationCase, CalibrationError};
use super::sim::{self, Behaviour};
use super::*;
use crate::VerdictMethod;
use cb_dataset::Dataset;
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;

/// A deliberately conservative stand-in for `score_fast`: preserved only
/// when an accepted variant appears and no cue of negation, doubt or
/// distraction does; lost only for a distractor alone or a plain refusal;
/// undetermined otherwise.
pub(crate) fn stand_in_fast(c: &Conversation, answer: Option<&str>, _: &AnchorIndex) -> Scored {
    let scored = |verdict, reason: &str| Scored {
        verdict,
        method: VerdictMethod::FastPath,
        reason: reason.into(),
        bleed_from: vec![],
    };
    let Some(answer) = answer.filter(|a| !a.trim().is_empty()) else {
        return scored(Verdict::Error, "no answer");
    };
    let words = sim::words(answer);
    let has = |phrase: &str| {
        let p = sim::words(phrase);
        !p.is_empty() && words.windows(p.len()).any(|w| w == p.as_slice())
    };
    const CUES: &[&str] = &[
        "not", "no", "never", "n't", "isn't", "don't", "didn't", "doesn't", "can't", "cannot",
        "wasn't", "maybe", "perhaps", "possibly", "might", "guess", "think", "believe", "recall",
        "remember", "sure", "certain", "or", "probably", "if", "wait", "about",
    ];
    let cue = answer.contains('?') || words.iter().any(|w| CUES.contains(&w.as_str()));
    let value = c.anchor.variants.iter().any(|v| has(v));
    let distractor = c.distractors().any(has);
    if value && !cue && !distractor {
        return scored(Verdict::Preserved, "states the value");
    }
    if !value && distractor && !cue {
        return scored(Verdict::Lost, "names a distractor");
    }
    const REFUSALS: &[&str] = &[
        "don't know",
        "don't have",
        "can't tell",
        "not able to",
        "rather not",
    ];
    if !value && REFUSALS.iter().any(|r| has(r)) {
        return scored(Verdict::Lost, "refusal");
    }
    scored(Verdict::Undetermined, "left for the judge")
}

fn cases_path() -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(calibrate::DEFAULT_CASES)
}

fn case(answer: &str) -> CalibrationCase {
    let mut c = load_cases(&cases_path()).unwrap().remove(0);
    c.answer = answer.into();
    c
}

fn fast_settings(url: &str, key: Option<cb_base::secret::Secret>) -> JudgeSettings {
    let mut s = JudgeSettings::new(url, "test-model", key, 7);
    s.backoff_base = Duration::from_millis(1);
    s.backoff_cap = Duration::from_millis(5);
    s.timeout = Duration::from_secs(5);
    s
}

async fn judge_once(behaviour: Behaviour, timeout: Duration, answer: &str) -> (Scored, u64) {
    let sim = sim::start(behaviour).await.unwrap();
    let mut settings = fast_settings(&sim.url(), None);
    settings.timeout = timeout;
    let judge = LlmJudge::new(settings, None).unwrap();
    let conv = case(answer).conversation();
    let scored = judge.judge(&conv, answer).await;
    (scored, sim.requests())
}

#[tokio::test(start_paused = true)]
async fn sensible_judge_decides_both_ways() {
    let (s, n) = judge_once(
        Behaviour::Sensible,
        Duration::from_secs(5),
        "Oriane, if I remember right.",
    )
    .await;
    assert_eq!(
        (s.verdict, s.method, n),
        (Verdict::Preserved, VerdictMethod::Judge, 1)
    );
    let (s, _) = judge_once(
        Behaviour::Sensible,
        Duration::from_secs(5),
        "I don't recall, maybe Oriane?",
    )
    .await;
    assert_eq!(s.verdict, Verdict::Lost);
}

#[tokio::test(start_paused = true)]
async fn garbage_judge_gives_undetermined_after_bounded_retries() {
    let (s, n) = judge_once(Behaviour::Garbage, Duration::from_secs(5), "Oriane.").await;
    assert_eq!(
        (s.verdict, s.method),
        (Verdict::Undetermined, VerdictMethod::Judge)
    );
    assert!(s.reason.contains("unreadable verdict"), "{}", s.reason);
    assert_eq!(n, 3);
}

#[tokio::test(start_paused = true)]
async fn error_500_judge_gives_undetermined() {
    let (s, n) = judge_once(Behaviour::Error500, Duration::from_secs(5), "Oriane.").await;
    assert_eq!(s.verdict, Verdict::Undetermined);
    assert!(s.reason.contains("HTTP 500"), "{}", s.reason);
    assert_eq!(n, 3);
}

#[tokio::test(start_paused = true)]
async fn hanging_judge_times_out_within_bounded_time() {
    let started = Instant::now();
    let (s, n) = tokio::time::timeout(
        Duration::from_secs(10),
        judge_once(Behaviour::Hang, Duration::from_millis(150), "Oriane."),
    )
    .await
    .expect("the judge must give up on its own");
    assert_eq!(s.verdict, Verdict::Undetermined);
    assert!(s.reason.contains("timed out"), "{}", s.reason);
    assert_eq!(n, 3);
    // 3 attempts of 150 ms plus at most 1 + 2 ms of backoff, on the paused
    // clock: exact, whatever the machine's load.
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_millis(460),
        "{took:?}"
    );
}

/// A server that answers 401 and records the Authorization header it saw.
async fn unauthorized_server() -> (
    cb_wire::server::ServerHandle,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    use axum::http::{HeaderMap, StatusCode};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |headers: HeaderMap| {
            let log = log.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                log.lock().unwrap().push(auth);
                (
                    StatusCode::UNAUTHORIZED,
                    "{\"error\":{\"message\":\"bad key\"}}",
                )
            }
        }),
    );
    let handle = cb_wire::server::serve("127.0.0.1:0".parse().unwrap(), router)
        .await
        .unwrap();
    (handle, seen)
}

#[tokio::test(start_paused = true)]
async fn client_errors_are_not_retried_and_the_key_never_leaks() {
    let secret = "sk-test-NEVER-PRINT-5150";
    let (server, seen) = unauthorized_server().await;
    let judge = LlmJudge::new(
        fast_settings(&server.url(), Some(cb_base::secret::Secret::new(secret))),
        None,
    )
    .unwrap();
    let conv = case("Oriane.").conversation();
    let s = judge.judge(&conv, "Oriane.").await;
    assert_eq!(s.verdict, Verdict::Undetermined);
    assert!(s.reason.contains("HTTP 401"), "{}", s.reason);
    // Sent once, as a Bearer token.
    assert_eq!(*seen.lock().unwrap(), vec![format!("Bearer {secret}")]);
    for text in [s.reason.clone(), format!("{s:?}"), format!("{judge:?}")] {
        assert!(!text.contains(secret), "key leaked in {text}");
    }
    assert_eq!(judge.stats().failed, 1);
}

#[tokio::test(start_paused = true)]
async fn cache_prevents_a_second_request_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verdicts.jsonl");
    let conv = case("Oriane.").conversation();
    {
        let sim = sim::start(Behaviour::Sensible).await.unwrap();
        let cache = VerdictCache::open(&path).unwrap();
        let judge = LlmJudge::new(fast_settings(&sim.url(), None), Some(cache)).unwrap();
        let first = judge.judge(&conv, "Oriane.").await;
        let second = judge.judge(&conv, "Oriane.").await;
        assert_eq!(first, second);
        assert_eq!(sim.requests(), 1);
        assert_eq!(judge.stats().cache_hits, 1);
    }
    // A rerun with a judge that would fail still answers from the cache.
    let sim = sim::start(Behaviour::Error500).await.unwrap();
    let cache = VerdictCache::open(&path).unwrap();
    let judge = LlmJudge::new(fast_settings(&sim.url(), None), Some(cache)).unwrap();
    assert_eq!(
        judge.judge(&conv, "Oriane.").await.verdict,
        Verdict::Preserved
    );
    assert_eq!(sim.requests(), 0);
    // A different answer is a different question; failures are not cached.
    assert_eq!(
        judge.judge(&conv, "Maelis.").await.verdict,
        Verdict::Undetermined
    );
    assert_eq!(VerdictCache::open(&path).unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn judge_sees_only_what_the_fast_path_leaves() {
    let sim = sim::start(Behaviour::Sensible).await.unwrap();
    let judge = LlmJudge::new(fast_settings(&sim.url(), None), None).unwrap();
    let conv = case("x").conversation();
    let index = AnchorIndex::new(&Dataset {
        conversations: vec![conv.clone()],
    });
    let j: &dyn Judge = &judge;
    let s = score_with(
        stand_in_fast,
        &conv,
        Some("Your sister is Oriane."),
        &index,
        Some(j),
    )
    .await;
    assert_eq!(
        (s.verdict, s.method),
        (Verdict::Preserved, VerdictMethod::FastPath)
    );
    let s = score_with(stand_in_fast, &conv, None, &index, Some(j)).await;
    assert_eq!(
        (s.verdict, s.method),
        (Verdict::Error, VerdictMethod::FastPath)
    );
    assert_eq!(sim.requests(), 0);
    let s = score_with(
        stand_in_fast,
        &conv,
        Some("Oriane, I think?"),
        &index,
        Some(j),
    )
    .await;
    assert_eq!((s.verdict, s.method), (Verdict::Lost, VerdictMethod::Judge));
    assert_eq!(sim.requests(), 1);
    // Without a judge, undetermined stays undetermined.
    let s = score_with(stand_in_fast, &conv, Some("Oriane, I think?"), &index, None).await;
    assert_eq!(s.verdict, Verdict::Undetermined);
}

#[test]
fn calibration_set_is_large_varied_and_valid() {
    let cases = load_cases(&cases_path()).unwrap();
    assert!(cases.len() >= 120, "{} cases", cases.len());
    for cat in cb_dataset::Category::ALL {
        let n = cases.iter().filter(|c| c.category == cat).count();
        assert!(n >= 15, "{} has {n} cases", cat.as_str());
    }
    let preserved = cases
        .iter()
        .filter(|c| c.label == calibrate::Label::Preserved)
        .count();
    assert!(preserved >= 40 && cases.len() - preserved >= 40);
}

#[test]
fn stand_in_fast_path_never_decides_wrongly() {
    let cases = load_cases(&cases_path()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let cal = rt.block_on(calibrate(&cases, stand_in_fast, None, 1));
    let wrong: Vec<_> = cal.fast_wrong().iter().map(|o| o.id.clone()).collect();
    assert!(wrong.is_empty(), "stand-in decided wrongly: {wrong:?}");
    assert!(cal.fast.decided() > 0 && cal.fast.undetermined() > 0);
    let text = cal.render("set");
    assert!(text.contains("wrong decisions: none"));
    assert!(text.contains(&format!("left {} undetermined", cal.fast.undetermined())));
}

#[test]
fn real_fast_path_never_decides_wrongly() {
    let cases = load_cases(&cases_path()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let cal = rt.block_on(calibrate(&cases, crate::score_fast, None, 1));
    let wrong: Vec<_> = cal
        .fast_wrong()
        .iter()
        .map(|o| format!("{}: {}", o.id, o.fast.reason))
        .collect();
    assert!(wrong.is_empty(), "fast path decided wrongly: {wrong:#?}");
}

#[tokio::test(start_paused = true)]
async fn calibrate_against_the_simulated_judge_prints_agreement_and_kappa() {
    let config = calibrate::CalibrateConfig {
        cases: cb_base::source::Source::BuiltIn(&calibrate::BUILT_IN_CASES),
        judge: Some(JudgeConfig {
            endpoint: JudgeEndpoint::Sim,
            model: SIM_MODEL.into(),
            key: None,
            cache: None,
            timeout: Duration::from_secs(5),
        }),
        seed: 1,
        concurrency: 8,
    };
    let out = calibrate::run(&config, stand_in_fast).await.unwrap();
    let t = out.calibration.combined.unwrap();
    assert_eq!(t.undetermined(), 0, "{}", out.report);
    assert!(t.agreement().unwrap() > 0.8, "{}", out.report);
    assert!(t.kappa().unwrap() > 0.6, "{}", out.report);
    assert!(out.report.contains("Fast path plus judge"));
    assert!(out.report.contains("Cohen's kappa"));
    assert!(out.report.contains("by judge:"));
    println!("{}", out.report);
}

#[tokio::test(start_paused = true)]
async fn failing_judges_give_undetermined_and_a_finished_report() {
    let cases: Vec<CalibrationCase> = load_cases(&cases_path())
        .unwrap()
        .into_iter()
        .take(30)
        .collect();
    for behaviour in [Behaviour::Garbage, Behaviour::Error500, Behaviour::Hang] {
        let sim = sim::start(behaviour).await.unwrap();
        let mut settings = fast_settings(&sim.url(), None);
        settings.timeout = Duration::from_millis(100);
        let judge = LlmJudge::new(settings, None).unwrap();
        let cal = tokio::time::timeout(
            Duration::from_secs(20),
            calibrate(&cases, stand_in_fast, Some((&judge, "failing".into())), 30),
        )
        .await
        .expect("calibration must finish");
        let t = cal.combined.unwrap();
        assert_eq!(t.undetermined(), cal.fast.undetermined(), "{behaviour:?}");
        assert!(t.undetermined() > 0);
        let text = cal.render("set");
        assert!(text.contains("undetermined: judge failed"), "{text}");
        assert!(text.contains("first judge failure"), "{text}");
    }
}

#[test]
fn case_file_errors_name_the_line() {
    let parse = |text: &str| cb_report::calibration::parse::<CalibrationCase>(text, "cases.jsonl");
    let good = std::fs::read_to_string(cases_path()).unwrap();
    let first = good.lines().next().unwrap();
    let err = parse(&format!("{first}\n\n{{nope\n")).unwrap_err();
    assert!(
        matches!(err, CalibrationError::Parse { line: 3, .. }),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with("cases.jsonl:3: not a judge calibration case:"));
    let err = parse(&format!("{first}\n{first}\n")).unwrap_err();
    assert!(err.to_string().contains("duplicate id"), "{err}");
    let bad_label = first.replace("\"label\": \"preserved\"", "\"label\": \"maybe\"");
    assert!(parse(&bad_label).is_err());
    let mut case: serde_json::Value = serde_json::from_str(first).unwrap();
    case["variants"] = serde_json::json!(["someone else"]);
    let err = parse(&case.to_string()).unwrap_err().to_string();
    assert!(
        err.ends_with("`variants` must include `value` itself"),
        "{err}"
    );
    assert!(matches!(parse("\n"), Err(CalibrationError::Empty { .. })));
    assert!(load_cases(Path::new("/nonexistent/cases.jsonl"))
        .unwrap_err()
        .to_string()
        .contains("--cases"));
}
