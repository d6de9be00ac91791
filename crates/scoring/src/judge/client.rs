//! The LLM judge client: asks any OpenAI-compatible chat-completions endpoint
//! the fixed prompt and turns its reply into a verdict.
//!
//! Network trouble never stops a run: 5xx, 429, timeouts, connection errors
//! and unreadable replies are retried a bounded number of times with
//! full-jitter exponential backoff (seeded, so reruns wait the same); other
//! 4xx are not retried. When every attempt fails the event is `undetermined`
//! with a reason naming the status or error kind, and the run goes on. The
//! API key only ever reaches the `Authorization` header: redirects are not
//! followed (a 3xx is a failure, not retried), and a reply is read up to
//! [`MAX_REPLY_BYTES`] and redacted before anything of it is kept, so a
//! judge that echoes the key back cannot put it in a verdict's reason or the
//! cache.

use super::cache::{cache_key, VerdictCache};
use super::parse::{parse_reply, JudgeReply};
use super::prompt::{build_messages, JudgeCase};
use crate::{Judge, Scored, Verdict, VerdictMethod};
use cb_base::secret::Secret;
use cb_dataset::Conversation;
use rand::Rng;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Largest judge reply read; a verdict is a few hundred bytes.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// Why the judge client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The HTTP client could not be built (TLS backend unavailable).
    #[error("cannot build the judge HTTP client: {0}")]
    Http(String),
    /// `--judge` is not an http(s) URL.
    #[error("--judge {0:?} is not an http:// or https:// URL; pass the base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1, or `sim`")]
    BadUrl(String),
}

/// How to reach the judge and how hard to try.
#[derive(Debug, Clone)]
pub struct JudgeSettings {
    /// Base URL of the API (`https://api.openai.com/v1`), or the full
    /// `.../chat/completions` URL.
    pub endpoint: String,
    /// Model id sent in every request.
    pub model: String,
    /// Bearer key; `None` sends no `Authorization` header.
    pub key: Option<Secret>,
    /// Deadline of one request, headers and body.
    pub timeout: Duration,
    /// Most requests per verdict (first try included).
    pub max_attempts: u32,
    /// Backoff before retry k is uniform in [0, min(cap, base · 2^k)].
    pub backoff_base: Duration,
    /// Upper bound of one backoff.
    pub backoff_cap: Duration,
    /// Master seed of the backoff jitter.
    pub seed: u64,
}

impl JudgeSettings {
    /// Settings with the defaults: 30 s timeout, 3 attempts, backoff from
    /// 500 ms capped at 8 s.
    pub fn new(endpoint: &str, model: &str, key: Option<Secret>, seed: u64) -> Self {
        JudgeSettings {
            endpoint: endpoint.to_string(),
            model: model.to_string(),
            key,
            timeout: Duration::from_secs(30),
            max_attempts: 3,
            backoff_base: Duration::from_millis(500),
            backoff_cap: Duration::from_secs(8),
            seed,
        }
    }
}

/// `.../chat/completions` for a base URL.
fn chat_url(endpoint: &str) -> Result<String, ClientError> {
    let trimmed = endpoint.trim().trim_end_matches('/');
    if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
        return Err(ClientError::BadUrl(endpoint.to_string()));
    }
    Ok(if trimmed.ends_with("/chat/completions") {
        trimmed.to_string()
    } else if trimmed.ends_with("/v1") {
        format!("{trimmed}/chat/completions")
    } else {
        format!("{trimmed}/v1/chat/completions")
    })
}

/// Counts of what the judge did, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JudgeStats {
    /// HTTP requests sent (retries included).
    pub requests: u64,
    /// Verdicts answered from the cache.
    pub cache_hits: u64,
    /// Verdicts decided by the judge in this process.
    pub decided: u64,
    /// Verdicts left undetermined after every attempt failed.
    pub failed: u64,
}

/// One attempt's outcome.
enum Attempt {
    Decided(JudgeReply),
    /// Worth retrying; the text names the status or error kind.
    Retry(String),
    /// Not worth retrying (a 4xx other than 408 and 429).
    GiveUp(String),
}

/// An LLM judge over an OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct LlmJudge {
    http: reqwest::Client,
    url: String,
    settings: JudgeSettings,
    cache: Option<VerdictCache>,
    requests: AtomicU64,
    cache_hits: AtomicU64,
    decided: AtomicU64,
    failed: AtomicU64,
}

impl LlmJudge {
    /// A judge with `settings`, reading and filling `cache` when given.
    ///
    /// # Errors
    /// When the URL is not http(s) or the HTTP client cannot be built.
    pub fn new(settings: JudgeSettings, cache: Option<VerdictCache>) -> Result<Self, ClientError> {
        let url = chat_url(&settings.endpoint)?;
        let http = cb_client::hardened()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .build()
            .map_err(|e| ClientError::Http(e.to_string()))?;
        Ok(LlmJudge {
            http,
            url,
            settings,
            cache,
            requests: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
            decided: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        })
    }

    /// The model id the judge asks.
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// What the judge has done so far.
    pub fn stats(&self) -> JudgeStats {
        JudgeStats {
            requests: self.requests.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            decided: self.decided.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }

    async fn attempt(&self, body: &Value) -> Attempt {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut request = self.http.post(&self.url).json(body);
        if let Some(key) = &self.settings.key {
            request = request.bearer_auth(key.expose());
        }
        let mut response = match request.send().await {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(error_kind(&e, self.settings.timeout)),
        };
        let status = response.status();
        if !status.is_success() {
            let kind = format!("HTTP {}", status.as_u16());
            return if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
                Attempt::Retry(kind)
            } else {
                Attempt::GiveUp(kind)
            };
        }
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if bytes.len() + chunk.len() > MAX_REPLY_BYTES => {
                    return Attempt::Retry(format!("reply larger than {MAX_REPLY_BYTES} bytes"));
                }
                Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) => return Attempt::Retry(error_kind(&e, self.settings.timeout)),
            }
        }
        let text = cb_base::secret::redact_owned(String::from_utf8_lossy(&bytes).into_owned());
        let Ok(body) = serde_json::from_str::<Value>(&text) else {
            return Attempt::Retry("response body is not JSON".into());
        };
        let Some(content) = cb_wire::openai::response_text(&body) else {
            return Attempt::Retry("response has no message content".into());
        };
        match parse_reply(&content) {
            Ok(reply) => Attempt::Decided(reply),
            Err(e) => Attempt::Retry(format!("unreadable verdict ({e})")),
        }
    }

    async fn judge_case(&self, conversation: &Conversation, answer: &str) -> Scored {
        let key = cache_key(
            &self.settings.model,
            &conversation.anchor.value,
            conversation.probe(),
            answer,
        );
        if let Some(reply) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
            return decided(reply);
        }
        let body = json!({
            "model": self.settings.model,
            "messages": build_messages(&JudgeCase::new(conversation, answer)),
            "temperature": 0,
        });
        let mut rng = cb_base::seed::rng(self.settings.seed, "judge-backoff", key_index(&key));
        let attempts = self.settings.max_attempts.max(1);
        let mut last = String::new();
        for n in 0..attempts {
            if n > 0 {
                let exp = self
                    .settings
                    .backoff_base
                    .saturating_mul(1u32 << (n - 1).min(16));
                let ceiling = exp.min(self.settings.backoff_cap).as_millis() as u64;
                // Backoff between judge attempts (seeded jitter), not a phase wait.
                tokio::time::sleep(Duration::from_millis(rng.random_range(0..=ceiling))).await;
            }
            match self.attempt(&body).await {
                Attempt::Decided(reply) => {
                    self.decided.fetch_add(1, Ordering::Relaxed);
                    if let Some(cache) = &self.cache {
                        // A cache that cannot be written only costs a second
                        // question on the next run; the verdict stands.
                        let _ = cache.put(&key, &self.settings.model, &reply);
                    }
                    return decided(reply);
                }
                Attempt::Retry(kind) => last = kind,
                Attempt::GiveUp(kind) => {
                    self.failed.fetch_add(1, Ordering::Relaxed);
                    return failed(&format!("judge failed: {kind} (not retried)"));
                }
            }
        }
        self.failed.fetch_add(1, Ordering::Relaxed);
        failed(&format!("judge failed after {attempts} attempts: {last}"))
    }
}

impl Judge for LlmJudge {
    fn judge<'a>(
        &'a self,
        conversation: &'a Conversation,
        answer: &'a str,
    ) -> Pin<Box<dyn Future<Output = Scored> + Send + 'a>> {
        Box::pin(self.judge_case(conversation, answer))
    }
}

/// A stable jitter-stream index from a cache key, so the backoff of one
/// question does not depend on the order concurrent questions run in.
fn key_index(key: &str) -> u64 {
    u64::from_str_radix(key.get(..16).unwrap_or("0"), 16).unwrap_or(0)
}

/// The error kind of a failed request, without URL or headers.
fn error_kind(e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_timeout() {
        format!("timed out after {}", humantime::format_duration(timeout))
    } else if e.is_connect() {
        "connection failed".into()
    } else if e.is_body() || e.is_decode() {
        "response body could not be read".into()
    } else {
        "request failed".into()
    }
}

fn decided(reply: JudgeReply) -> Scored {
    Scored {
        verdict: if reply.preserved {
            Verdict::Preserved
        } else {
            Verdict::Lost
        },
        method: VerdictMethod::Judge,
        reason: if reply.reason.is_empty() {
            "judge gave no reason".into()
        } else {
            reply.reason
        },
        bleed_from: Vec::new(),
    }
}

fn failed(reason: &str) -> Scored {
    Scored {
        verdict: Verdict::Undetermined,
        method: VerdictMethod::Judge,
        reason: reason.to_string(),
        bleed_from: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_url_accepts_base_or_full_urls() {
        assert_eq!(
            chat_url("https://api.openai.com/v1").unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            chat_url("http://127.0.0.1:8000/").unwrap(),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        assert_eq!(
            chat_url("http://h/openai/chat/completions").unwrap(),
            "http://h/openai/chat/completions"
        );
        assert!(chat_url("api.openai.com").is_err());
    }

    #[test]
    fn key_is_redacted_everywhere() {
        let secret = "sk-test-DO-NOT-PRINT-1234";
        let settings = JudgeSettings::new("http://127.0.0.1:1", "m", Some(Secret::new(secret)), 1);
        let judge = LlmJudge::new(settings.clone(), None).unwrap();
        assert!(!format!("{settings:?}").contains(secret));
        assert!(!format!("{judge:?}").contains(secret));
        assert!(format!("{settings:?}").contains(cb_base::secret::REDACTED));
    }
}
