//! The load phase (`semantics --load C`): what retries cost when many
//! clients meet a rate-limited primary at once. C requests, each its own
//! conversation, are sent together through the system while the primary
//! answers 429 with `Retry-After` to every attempt and the fallback
//! answers; the upstreams' attempt log says how many attempts each client
//! request cost and when they came.
//!
//! Three figures per system, one definition each:
//!
//! - **attempts per client request**: upstream attempts (primary and
//!   fallback) per request that ended (an answer or an error; those the
//!   bound cut are counted beside), its mean with a Student's t interval and its
//!   99th percentile with a distribution-free interval (an end the sample
//!   cannot bound at 95 % is `n/a`);
//! - **retry synchronisation index**: the largest share of the retries (an
//!   attempt at an upstream after the request's first attempt there) that
//!   fall in any 100 ms window, over the same share for as many retries
//!   spread uniformly over one `Retry-After` (full jitter over the stated
//!   wait, simulated from the seed): about 1 when retries are spread so,
//!   up to `Retry-After` / 100 ms when they all come at once; `n/a` under
//!   two retries;
//! - **time to a definitive answer**: each request's wall time until its
//!   answer or its error, the worst and the 99th percentile.

pub use crate::config::LoadFault;
use crate::observe::{now_ms, send_one, Destination, Sent};
use cb_faults::{Act, CaseScript, ErrorKind, ErrorSpec, Role, Script};
use cb_wire::openai::{ChatMessage, ChatRequest};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The conversation id of load request `k` (from 1).
pub fn conversation_id(k: u32) -> String {
    format!("semantics-load-{k}")
}

/// The message of load request `k` of `c`, unique, asking for the
/// catalogue's answer length.
pub fn message(k: u32, c: u32) -> String {
    format!(
        "continuity-bench semantics check, load request {k} of {c}. Please reply in exactly {} words.",
        crate::case::ANSWER_WORDS
    )
}

/// A 429 with `Retry-After` on every attempt, from `whom`.
fn limited(retry_after: Duration, whom: &str) -> Script {
    Script::always(Act::Error(
        ErrorSpec::new(
            429,
            ErrorKind::RateLimit,
            format!("Rate limit reached for requests ({whom}, simulated load phase)."),
        )
        .with_retry_after(retry_after),
    ))
}

/// What the upstreams do during the phase: the primary answers 429 with
/// `Retry-After` (`retry_after`) to every attempt; the fallback answers,
/// or under [`LoadFault::AllLimited`] answers the same 429.
pub fn script(retry_after: Duration, fault: LoadFault) -> CaseScript {
    CaseScript {
        primary: limited(retry_after, "primary"),
        fallback: match fault {
            LoadFault::PrimaryLimited => Script::answer(),
            LoadFault::AllLimited => limited(retry_after, "fallback"),
        },
        clock: "load".into(),
    }
}

/// `show(v)`, or `n/a` for a figure that could not be measured.
fn or_na<T>(v: Option<T>, show: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| "n/a".to_string(), show)
}

/// One figure with its interval; an end the sample cannot bound is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Lower end of its 95 % interval.
    pub low: Option<f64>,
    /// Upper end of its 95 % interval.
    pub high: Option<f64>,
}

impl Estimate {
    /// `3.02 [2.98, 3.06]`, `n/a` for a missing end.
    pub fn cell(&self, digits: usize) -> String {
        let end = |v: Option<f64>| or_na(v, |v| format!("{v:.digits$}"));
        format!(
            "{:.digits$} [{}, {}]",
            self.value,
            end(self.low),
            end(self.high)
        )
    }
}

/// One system's load phase, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadFigures {
    /// Which upstreams were rate limited.
    pub fault: LoadFault,
    /// Requests sent at once (C).
    pub concurrency: u32,
    /// The primary's `Retry-After`, milliseconds.
    pub retry_after_ms: u64,
    /// Requests answered.
    pub answered: u32,
    /// Requests with neither an answer nor an error when the case's bound
    /// cut them: what they would have cost is unknown, so the attempt and
    /// time figures hold only the requests that ended.
    pub cut_at_bound: u32,
    /// That bound, milliseconds.
    pub bound_ms: u64,
    /// Requests that could not connect to the system at all (it stopped,
    /// or never started): nothing reached it, so they are counted beside
    /// too, never as requests that cost no attempt.
    pub unreached: u32,
    /// Upstream attempts per client request that ended (an answer or an
    /// error): the mean; `None` when none ended.
    pub attempts_mean: Option<Estimate>,
    /// The same: the 99th percentile.
    pub attempts_p99: Option<Estimate>,
    /// The most attempts one request that ended cost.
    pub attempts_max: Option<u32>,
    /// Retries (attempts at an upstream after a request's first there).
    pub retries: u32,
    /// The retry synchronisation index; `None` under two retries.
    pub sync_index: Option<f64>,
    /// The worst time to a definitive answer (answer or error), ms;
    /// `None` when no request ended inside the bound.
    pub worst_ms: Option<f64>,
    /// Its 99th percentile, ms.
    pub p99_ms: Option<f64>,
}

impl LoadFigures {
    /// `, 37 still waiting at the 10.0 s bound (...)` when the bound cut
    /// any request or one could not connect, else nothing.
    pub fn cut_note(&self) -> String {
        let mut beside = Vec::new();
        if self.cut_at_bound > 0 {
            beside.push(format!(
                "{} still waiting at the {:.1} s bound",
                self.cut_at_bound,
                self.bound_ms as f64 / 1000.0
            ));
        }
        if self.unreached > 0 {
            beside.push(format!(
                "{} could not connect to the system",
                self.unreached
            ));
        }
        if beside.is_empty() {
            return String::new();
        }
        format!(
            ", {} (counted beside: the attempt and time figures are those of the requests that ended)",
            beside.join(", ")
        )
    }

    /// The mean attempts per request with its interval, or `n/a`.
    pub fn attempts_cell(&self) -> String {
        or_na(self.attempts_mean, |e| e.cell(2))
    }

    /// The 99th percentile of attempts per request, or `n/a`.
    pub fn p99_cell(&self) -> String {
        or_na(self.attempts_p99, |e| e.cell(0))
    }

    /// The most attempts, or `n/a`.
    pub fn max_cell(&self) -> String {
        or_na(self.attempts_max, |m| m.to_string())
    }

    /// A time in seconds (`2.07 s`), or `n/a`.
    pub fn seconds_cell(ms: Option<f64>) -> String {
        or_na(ms, |ms| format!("{:.2} s", ms / 1000.0))
    }

    /// The grade's cell: `3.00 [2.90, 3.10] at C = 100 (primary-limited);
    /// retries 100, synchronisation x1.1; worst 2.04 s`, and the requests
    /// the bound cut when there were any.
    pub fn overview(&self) -> String {
        format!(
            "{} at C = {} ({}); retries {}, synchronisation {}; worst {}{}",
            self.attempts_cell(),
            self.concurrency,
            self.fault.as_str(),
            self.retries,
            self.sync_cell(),
            Self::seconds_cell(self.worst_ms),
            self.cut_note()
        )
    }

    /// The synchronisation index as `x1.3`, or `n/a` without retries.
    pub fn sync_cell(&self) -> String {
        or_na(self.sync_index, |s| format!("x{s:.1}"))
    }

    /// One line: `C = 100, the primary answers 429 ...: 100/100 answered; attempts per request 3.00 [3.00, 3.00] (p99 ...), synchronisation x1.1; ...`.
    pub fn line(&self) -> String {
        let sync = self.sync_cell();
        format!(
            "C = {}, {}: {}/{} answered{}; attempts per request {} (p99 {}, max {}); retries {}, synchronisation {sync}; time to a definitive answer worst {}, p99 {}",
            self.concurrency,
            self.fault
                .describe(Duration::from_millis(self.retry_after_ms)),
            self.answered,
            self.concurrency,
            self.cut_note(),
            self.attempts_cell(),
            self.p99_cell(),
            self.max_cell(),
            self.retries,
            Self::seconds_cell(self.worst_ms),
            Self::seconds_cell(self.p99_ms)
        )
    }
}

/// Sends the phase's `c` requests through the system at once and measures
/// them. `stream` says whether they stream.
pub async fn run(
    client: &reqwest::Client,
    to: Destination<'_>,
    c: u32,
    stream: bool,
) -> LoadFigures {
    let config = to.config;
    let fault = config.load_fault;
    to.ctx.start_clock(&to.target.name, "load");
    let start = now_ms(to.ctx);
    let sends = (1..=c).map(|k| {
        let request = ChatRequest {
            model: to.target.model(&config.systems.model).to_string(),
            messages: vec![
                ChatMessage::new("system", cb_driver::SYSTEM_PROMPT),
                ChatMessage::new("user", &message(k, c)),
            ],
            stream,
            stream_options: None,
            extra: serde_json::Map::new(),
        };
        let id = conversation_id(k);
        async move {
            send_one(
                client,
                to,
                &id,
                &request,
                config.timing.default_bound,
                start,
            )
            .await
        }
    });
    let sent = futures::future::join_all(sends).await;
    let timing = &config.timing;
    figures(
        &sent,
        c,
        fault,
        (timing.retry_after, timing.default_bound),
        config.seed,
    )
}

/// The phase's figures from its requests, sent against a primary whose
/// 429s state `retry_after`, each cut at `bound`.
pub fn figures(
    sent: &[Sent],
    c: u32,
    fault: LoadFault,
    (retry_after, bound): (Duration, Duration),
    seed: u64,
) -> LoadFigures {
    // What a request cost is known only when it ended: one the bound cut
    // is counted beside, its attempts and time left out, and so is one
    // that found no system to connect to.
    let unreached = sent.iter().filter(|s| is_unreached(s)).count();
    let ended: Vec<&Sent> = sent
        .iter()
        .filter(|s| !s.client.hung && !is_unreached(s))
        .collect();
    let mut attempts: Vec<f64> = ended.iter().map(|s| s.attempts.len() as f64).collect();
    attempts.sort_by(f64::total_cmp);
    let mut latencies: Vec<f64> = ended.iter().map(|s| s.client.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    let estimates = (!attempts.is_empty()).then(|| {
        let mean = attempts.iter().sum::<f64>() / attempts.len() as f64;
        let (low, high) = cb_stats::mean_interval(&attempts, cb_stats::CONFIDENCE)
            .map_or((None, None), |(lo, hi)| (Some(lo), Some(hi)));
        let (p99_low, p99_high) =
            cb_stats::quantile_interval(&attempts, 0.99, cb_stats::CONFIDENCE);
        (
            Estimate {
                value: mean,
                low,
                high,
            },
            Estimate {
                value: cb_stats::percentile_type7(&attempts, 0.99),
                low: p99_low,
                high: p99_high,
            },
        )
    });
    let retries = retry_times(sent);
    LoadFigures {
        fault,
        concurrency: c,
        retry_after_ms: u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
        answered: sent.iter().filter(|s| s.client.answered).count() as u32,
        cut_at_bound: (sent.len() - ended.len() - unreached) as u32,
        unreached: unreached as u32,
        bound_ms: u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
        attempts_mean: estimates.map(|e| e.0),
        attempts_p99: estimates.map(|e| e.1),
        attempts_max: attempts.last().map(|&a| a as u32),
        retries: retries.len() as u32,
        sync_index: sync_index(&retries, retry_after, seed),
        worst_ms: latencies.last().copied(),
        p99_ms: (!latencies.is_empty()).then(|| cb_stats::percentile_type7(&latencies, 0.99)),
    }
}

/// Whether `s` could not connect to the system: no attempt at either
/// upstream, and the client's reason is a connect error.
fn is_unreached(s: &Sent) -> bool {
    s.attempts.is_empty()
        && s.client
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with(cb_client::CONNECT_FAILED))
}

/// When each retry came, in ms on the phase's shared timeline: every
/// attempt at an upstream after the request's first attempt there.
fn retry_times(sent: &[Sent]) -> Vec<f64> {
    let mut times = Vec::new();
    for s in sent {
        for role in [Role::Primary, Role::Fallback] {
            times.extend(s.at(role).skip(1).map(|a| s.sent_ms + a.at_ms));
        }
    }
    times.sort_by(f64::total_cmp);
    times
}

/// Width of the window the synchronisation index counts in.
pub const SYNC_WINDOW_MS: f64 = 100.0;

/// Simulated spreads the full-jitter reference averages.
const JITTER_TRIALS: u64 = 200;

/// The largest share of ascending `times` within any window of
/// [`SYNC_WINDOW_MS`].
fn peak_share(times: &[f64]) -> f64 {
    let mut best = 0;
    let mut first = 0;
    for (last, t) in times.iter().enumerate() {
        while times[first] < t - SYNC_WINDOW_MS {
            first += 1;
        }
        best = best.max(last + 1 - first);
    }
    best as f64 / times.len().max(1) as f64
}

/// The synchronisation index of ascending retry `times` (see the module
/// documentation); `None` under two retries or without a stated wait.
pub fn sync_index(times: &[f64], retry_after: Duration, seed: u64) -> Option<f64> {
    let span = retry_after.as_secs_f64() * 1000.0;
    if times.len() < 2 || span <= 0.0 {
        return None;
    }
    let mut rng = cb_base::seed::rng(seed, "load-jitter", times.len() as u64);
    let mut expected = 0.0;
    for _ in 0..JITTER_TRIALS {
        let mut spread: Vec<f64> = (0..times.len())
            .map(|_| rng.random_range(0.0..span))
            .collect();
        spread.sort_by(f64::total_cmp);
        expected += peak_share(&spread);
    }
    expected /= JITTER_TRIALS as f64;
    Some(peak_share(times) / expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Retries that all come at once score near Retry-After / 100 ms
    /// against full jitter's spread; retries spread as full jitter would
    /// spread them score near 1; a single retry is n/a.
    #[test]
    fn the_index_tells_bunched_retries_from_jittered_ones() {
        let second = Duration::from_secs(1);
        let bunched: Vec<f64> = (0..100).map(|k| 1000.0 + f64::from(k) * 0.1).collect();
        let index = sync_index(&bunched, second, 7).unwrap();
        assert!(index > 4.0, "{index}");
        let even: Vec<f64> = (0..100).map(|k| 1000.0 + f64::from(k) * 10.0).collect();
        let index = sync_index(&even, second, 7).unwrap();
        assert!((0.4..1.2).contains(&index), "{index}");
        assert_eq!(sync_index(&[1000.0], second, 7), None);
        assert_eq!(sync_index(&bunched, Duration::ZERO, 7), None);
        // The same seed, the same reference.
        assert_eq!(sync_index(&even, second, 7), sync_index(&even, second, 7));
    }

    /// A request the bound cut is counted beside: its attempts and its
    /// time are not what it would have cost. None ended: `n/a`, not 0.
    #[test]
    fn requests_cut_at_the_bound_are_counted_beside() {
        use crate::checks::tests::{attempt, sent};
        let ended = sent(
            vec![
                attempt(Role::Primary, 0.0, 429),
                attempt(Role::Fallback, 1.0, 429),
            ],
            false,
        );
        let mut cut = sent(vec![attempt(Role::Primary, 0.0, 429)], false);
        cut.client.hung = true;
        cut.client.latency_ms = 30_000.0;
        let times = (Duration::from_secs(2), Duration::from_secs(30));
        let f = figures(&[ended, cut.clone()], 2, LoadFault::AllLimited, times, 7);
        assert_eq!(f.cut_at_bound, 1);
        assert_eq!(f.attempts_mean.unwrap().value, 2.0);
        assert_eq!(f.worst_ms, Some(100.0));
        assert!(
            f.line().contains("1 still waiting at the 30.0 s bound"),
            "{}",
            f.line()
        );
        let f = figures(&[cut], 1, LoadFault::AllLimited, times, 7);
        assert_eq!(
            (f.attempts_mean, f.worst_ms, f.attempts_max),
            (None, None, None)
        );
        // A stopped system: refused connections cost no attempt, and are
        // not requests that ended at no cost.
        let mut refused = sent(Vec::new(), false);
        refused.client.status = None;
        refused.client.error = Some("connection failed: Connection refused (os error 111)".into());
        let f = figures(
            &[refused.clone(), refused],
            2,
            LoadFault::PrimaryLimited,
            times,
            7,
        );
        assert_eq!((f.unreached, f.cut_at_bound, f.attempts_mean), (2, 0, None));
        assert!(
            f.line().contains("2 could not connect to the system"),
            "{}",
            f.line()
        );
        assert!(
            f.line().contains("attempts per request n/a"),
            "{}",
            f.line()
        );
        assert!(f.line().contains("worst n/a"), "{}", f.line());
    }

    #[test]
    fn the_peak_share_counts_the_fullest_window() {
        assert_eq!(peak_share(&[0.0, 50.0, 99.0, 250.0]), 0.75);
        assert_eq!(peak_share(&[0.0, 200.0, 400.0, 600.0]), 0.25);
    }
}
