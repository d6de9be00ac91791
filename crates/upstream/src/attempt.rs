//! Recording one attempt exactly once: it is registered in the log on
//! arrival (so a snapshot shows it while it is in flight), and finished
//! through [`AttemptGuard::finish`] when the upstream is done, or on drop
//! when the client went away first (hyper drops the handler future or the
//! body stream on disconnect), so a held connection the gateway abandons is
//! logged with how long it waited.

use super::log::PendingId;
use super::AttemptLog;
use cb_base::record::{AttemptAction, AttemptRecord};
use std::time::Duration;
use tokio::time::Instant;

/// Milliseconds of a duration, as the attempt log writes them.
pub fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The attempt being served, recorded once.
pub struct AttemptGuard {
    log: AttemptLog,
    id: Option<PendingId>,
    start: Instant,
    /// Status already committed to the wire (a stream's 200), for the drop path.
    sent: Option<u16>,
}

impl AttemptGuard {
    /// Registers `row`, which arrived at `start`, as in flight.
    pub fn new(log: AttemptLog, row: AttemptRecord, start: Instant) -> Self {
        let id = log.begin(row, start);
        AttemptGuard {
            log,
            id: Some(id),
            start,
            sent: None,
        }
    }

    /// Records the attempt as finished with `status`.
    pub fn finish(mut self, status: Option<u16>) {
        if let Some(id) = self.id.take() {
            let duration_ms = millis(self.start.elapsed());
            self.log.finish(id, |row| {
                row.status = status;
                row.duration_ms = duration_ms;
            });
        }
    }

    /// Notes the status already sent, should the client go away before the
    /// body ends.
    pub fn set_sent(&mut self, status: u16) {
        self.sent = Some(status);
    }

    /// Notes the `Retry-After` sent, in milliseconds.
    pub fn set_retry_after(&mut self, ms: u64) {
        if let Some(id) = self.id {
            self.log.update(id, |row| row.retry_after_ms = Some(ms));
        }
    }

    /// Notes the degradation the answer gets (its name).
    pub fn set_degradation(&mut self, name: &str) {
        if let Some(id) = self.id {
            self.log.update(id, |row| {
                row.action = AttemptAction::Degraded;
                row.degradation = cb_base::record::bounded_field(name);
            });
        }
    }

    /// Notes the answer produced (cut at
    /// [`cb_base::record::ATTEMPT_ANSWER_BOUND`] characters) and the model
    /// that produced it.
    pub fn set_answer(&mut self, text: &str, answered_by: &str) {
        if let Some(id) = self.id {
            let kept = cb_base::record::bounded_to(text, cb_base::record::ATTEMPT_ANSWER_BOUND);
            self.log.update(id, |row| {
                kept.clone_into(&mut row.answer);
                row.answered_by = cb_base::record::bounded_field(answered_by);
            });
        }
    }

    /// Notes why the provider behind the upstream gave no answer.
    pub fn set_provider_error(&mut self, reason: &str) {
        if let Some(id) = self.id {
            self.log.update(id, |row| {
                row.action = AttemptAction::ProviderError;
                row.provider_error = cb_base::record::bounded_field(reason);
            });
        }
    }

    /// Notes what the upstream did.
    pub fn set_action(&mut self, action: AttemptAction) {
        if let Some(id) = self.id {
            self.log.update(id, |row| row.action = action);
        }
    }
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let (sent, duration_ms) = (self.sent, millis(self.start.elapsed()));
            self.log.finish(id, |row| {
                row.status = sent;
                row.client_gave_up = true;
                row.duration_ms = duration_ms;
            });
        }
    }
}
