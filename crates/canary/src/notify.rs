//! Notifications of the canary's state changes: a quarantine, a release
//! (early, at expiry, by hand), an alert (the capacity floor, a round in
//! which no route could be scored), a weak probe and a mode change, each as
//! one JSON event (the decision log's record). `--notify CMD` runs `sh -c
//! CMD` with the event on its standard input, killed after
//! [`COMMAND_LIMIT`]; `--webhook URL` POSTs it with a [`WEBHOOK_TIMEOUT`]
//! per attempt, [`WEBHOOK_ATTEMPTS`] attempts at most, and no redirect
//! followed. A notifier that fails is reported (the caller prints it) and
//! never stops the canary.

use super::record::{LogRecord, RecordKind};
use cb_base::secret::redact_owned;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt as _;

/// How long a `--notify` command may run before it is killed.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(10);

/// Deadline of one webhook attempt.
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(5);

/// Webhook attempts per event (the first and two retries).
pub const WEBHOOK_ATTEMPTS: u32 = 3;

/// Wait before the first webhook retry; doubled before the next.
pub const WEBHOOK_BACKOFF: Duration = Duration::from_millis(500);

/// Whether a record of this kind is a state change people are told of.
pub fn notifies(kind: RecordKind) -> bool {
    matches!(
        kind,
        RecordKind::Quarantine
            | RecordKind::EarlyRelease
            | RecordKind::Expiry
            | RecordKind::ManualRelease
            | RecordKind::CapacityAlert
            | RecordKind::NoRouteScored
            | RecordKind::ProbeWeak
            | RecordKind::ModeChange
    )
}

/// Where notifications go.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    /// `--notify`: a shell command.
    pub command: Option<String>,
    /// `--webhook`: a URL.
    pub webhook: Option<String>,
    client: Option<reqwest::Client>,
}

impl Notifier {
    /// A notifier to `command` and `webhook` (either may be absent).
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn new(command: Option<String>, webhook: Option<String>) -> Result<Self, String> {
        let client = match &webhook {
            Some(_) => Some(
                cb_client::hardened()
                    .timeout(WEBHOOK_TIMEOUT)
                    .build()
                    .map_err(|e| e.to_string())?,
            ),
            None => None,
        };
        Ok(Notifier {
            command,
            webhook,
            client,
        })
    }

    /// Whether anything is configured.
    pub fn is_active(&self) -> bool {
        self.command.is_some() || self.webhook.is_some()
    }

    /// Sends every record of `records` that [`notifies`], in order; returns
    /// one line per failure, for the caller to print and go on.
    pub async fn send_all(&self, records: &[LogRecord]) -> Vec<String> {
        let mut failures = Vec::new();
        if !self.is_active() {
            return failures;
        }
        for record in records.iter().filter(|r| notifies(r.kind)) {
            let event = match serde_json::to_string(record) {
                Ok(text) => redact_owned(text),
                Err(e) => {
                    failures.push(format!("cannot write the event as JSON: {e}"));
                    continue;
                }
            };
            let (command, webhook) =
                futures::join!(self.run_command(&event), self.post_webhook(&event));
            failures.extend(command.err().map(|e| format!("--notify failed: {e}")));
            failures.extend(webhook.err().map(|e| format!("--webhook failed: {e}")));
        }
        failures
    }

    async fn run_command(&self, event: &str) -> Result<(), String> {
        let Some(command) = &self.command else {
            return Ok(());
        };
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start `sh -c`: {e}"))?;
        let mut stdin = child.stdin.take();
        let run = async {
            if let Some(stdin) = stdin.as_mut() {
                // A command that does not read its input is not an error.
                let _ = stdin.write_all(event.as_bytes()).await;
                let _ = stdin.write_all(b"\n").await;
            }
            drop(stdin.take());
            child.wait().await
        };
        match tokio::time::timeout(COMMAND_LIMIT, run).await {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(format!("the command exited with {status}")),
            Ok(Err(e)) => Err(format!("cannot wait for the command: {e}")),
            Err(_) => {
                let _ = child.kill().await;
                Err(format!(
                    "the command ran longer than {} s and was killed",
                    COMMAND_LIMIT.as_secs()
                ))
            }
        }
    }

    async fn post_webhook(&self, event: &str) -> Result<(), String> {
        let (Some(url), Some(client)) = (&self.webhook, &self.client) else {
            return Ok(());
        };
        let mut wait = WEBHOOK_BACKOFF;
        let mut last = String::new();
        for attempt in 1..=WEBHOOK_ATTEMPTS {
            let sent = client
                .post(url)
                .header("content-type", "application/json")
                .body(event.to_string())
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if r.status().is_redirection() => {
                    return Err(format!(
                        "HTTP {} redirect: redirects are not followed; give --webhook the URL that answers",
                        r.status().as_u16()
                    ))
                }
                Ok(r) => last = format!("HTTP {}", r.status().as_u16()),
                Err(e) if e.is_timeout() => {
                    last = format!("no answer within {} s", WEBHOOK_TIMEOUT.as_secs())
                }
                Err(e) if e.is_connect() => last = "connection failed".to_string(),
                Err(_) => last = "request failed".to_string(),
            }
            if attempt < WEBHOOK_ATTEMPTS {
                // The backoff between bounded retries of one event.
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
        Err(format!("{last} after {WEBHOOK_ATTEMPTS} attempts"))
    }
}
